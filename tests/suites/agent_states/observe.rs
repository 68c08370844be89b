//! What nerdr says about a real agent's tab, read the way a person or a
//! script reads it: `agent_state` in `nerdr tabs --json`, `nerdr wait`,
//! `nerdr explain --json`, and a window (the real `nerdr` in tmux, as the
//! test user) that shows the tab. Failures print everything that explains
//! them: the tab's row, its screen, `nerdr explain`, the core's log and
//! the fake model's log.

use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::suites::agent_turns::Turns;
use crate::suites::sandbox::text;
use crate::support::poll;

/// The tab's row and everything else that tells why it is in its state.
pub fn report(t: &Turns, tab: &str) -> String {
    let log = std::fs::read_to_string(t.home_file(".local/state/nerdr/core.log"))
        .unwrap_or_else(|e| format!("(no core.log: {e})"));
    // The sandbox's audit lines drown the rest.
    let tail: Vec<String> = log
        .lines()
        .filter(|l| !l.contains(" AUDIT "))
        .rev()
        .take(30)
        .map(|l| l.chars().take(400).collect())
        .collect();
    let tail: Vec<String> = tail.into_iter().rev().collect();
    format!(
        "row: {}\nscreen:\n{}\nexplain:\n{}\ncore.log (last lines):\n{}\nthe fake model's log:\n{}",
        t.tab_json(tab),
        t.screen(tab),
        text(&t.nerdr(&["explain", tab]).stdout),
        tail.join("\n"),
        t.model.dump()
    )
}

pub fn agent_state(t: &Turns, tab: &str) -> Value {
    t.tab_json(tab)["agent_state"].clone()
}

/// What went wrong so far in a scenario that goes on after a wrong state
/// (so one run tells every step that fails); [`Findings::finish`] fails
/// the test listing them all.
#[derive(Default)]
pub struct Findings(Vec<String>);

impl Findings {
    pub fn add(&mut self, what: String) {
        eprintln!("FINDING: {what}");
        self.0.push(what);
    }

    pub fn finish(self, agent: &str) {
        assert!(
            self.0.is_empty(),
            "{agent}: {} step(s) went wrong:\n\n{}",
            self.0.len(),
            self.0.join("\n\n")
        );
    }
}

/// Poll `nerdr tabs --json` until the tab's `agent_state` is `want`;
/// after `timeout`, a finding with [`report`]. Whether it came.
pub fn wait_state(t: &Turns, tab: &str, want: &str, timeout: Duration, f: &mut Findings) -> bool {
    let ok = poll(timeout, || t.tab_json(tab)["agent_state"] == want);
    if !ok {
        f.add(format!(
            "{}: agent_state never became {want:?} within {timeout:?}\n{}",
            t.agent,
            report(t, tab)
        ));
    }
    ok
}

/// `nerdr wait TAB --until STATE --timeout S`, and how long it took.
pub fn nerdr_wait(t: &Turns, tab: &str, until: &str, timeout: Duration) -> (Output, Duration) {
    let start = Instant::now();
    let out = t.nerdr(&[
        "wait",
        tab,
        "--until",
        until,
        "--timeout",
        &timeout.as_secs().to_string(),
    ]);
    (out, start.elapsed())
}

/// `nerdr wait --until STATE` must return 0 and `nerdr tabs --json` then
/// show STATE; a finding otherwise. Whether both held.
pub fn wait_returns(
    t: &Turns,
    tab: &str,
    until: &str,
    timeout: Duration,
    f: &mut Findings,
) -> bool {
    let (out, took) = nerdr_wait(t, tab, until, timeout);
    if !out.status.success() {
        f.add(format!(
            "{}: nerdr wait --until {until} failed after {took:?}: {}\nstdout: {}\nstderr: {}\n{}",
            t.agent,
            out.status,
            text(&out.stdout),
            text(&out.stderr),
            report(t, tab)
        ));
        return false;
    }
    eprintln!(
        "{}: nerdr wait --until {until} returned after {took:?}",
        t.agent
    );
    let row = t.tab_json(tab);
    if row["agent_state"] != until {
        f.add(format!(
            "{}: nerdr wait --until {until} returned 0 but nerdr tabs says {}\n{}",
            t.agent,
            row["agent_state"],
            report(t, tab)
        ));
        return false;
    }
    true
}

/// `nerdr explain TAB --json`.
pub fn explain(t: &Turns, tab: &str) -> Value {
    let out = t.ok(&["explain", tab, "--json"]);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("nerdr explain --json: {e}:\n{out}"))
}

/// `nerdr explain` of a tab a rule put in `state`: names the rule and
/// shows matched lines holding `needle`; a finding otherwise. The rule
/// may come second: an OSC 7501 or a report can set the state first, and
/// the screen agrees at its next look (within about 100 ms), when the
/// rule becomes the cause (`report Stop, and rule "prompt"` names both).
pub fn explained_by_a_rule(t: &Turns, tab: &str, state: &str, needle: &str, f: &mut Findings) {
    let by_the_rule = |e: &Value| {
        let lines: Vec<&str> = e["lines"]
            .as_array()
            .map(|l| l.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        e["agent_state"] == state
            && e["cause"]
                .as_str()
                .is_some_and(|c| c.starts_with("rule \"") || c.contains(", and rule \""))
            && lines.iter().any(|l| l.contains(needle))
    };
    let mut e = explain(t, tab);
    let until = std::time::Instant::now() + std::time::Duration::from_secs(2);
    while !by_the_rule(&e) && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(100));
        e = explain(t, tab);
    }
    if !by_the_rule(&e) {
        f.add(format!(
            "{}: nerdr explain does not name a rule for {state} with a line holding {needle:?}:\n{e:#}\n{}",
            t.agent,
            report(t, tab)
        ));
    }
    let human = t.ok(&["explain", tab]);
    eprintln!("{}: nerdr explain {tab}:\n{human}", t.agent);
}

/// A window on the session: the real `nerdr` in tmux, run as the test
/// user; it shows the session's tab.
pub struct Window<'a> {
    t: &'a Turns,
    sock: String,
}

impl<'a> Window<'a> {
    pub fn open(t: &'a Turns) -> Window<'a> {
        let w = Window {
            t,
            sock: t.home_file(".window-tmux.sock").display().to_string(),
        };
        w.tmux(&[
            "new-session",
            "-d",
            "-x",
            "120",
            "-y",
            "40",
            "nerdr; echo EXITED=$?; sleep 600",
        ]);
        w
    }

    fn tmux(&self, args: &[&str]) -> String {
        let mut argv = vec!["tmux", "-f", "/dev/null", "-S", &self.sock];
        argv.extend_from_slice(args);
        let out = self.t.user_cmd(&argv).output().unwrap();
        assert!(out.status.success(), "tmux {args:?}: {out:?}");
        text(&out.stdout)
    }

    pub fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "0"])
    }

    /// Wait until the window shows `needle`.
    pub fn shows(&self, needle: &str, timeout: Duration) {
        let mut last = String::new();
        let ok = poll(timeout, || {
            last = self.screen();
            last.contains(needle)
        });
        assert!(ok, "the window never showed {needle:?}:\n{last}");
    }
}

impl Drop for Window<'_> {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}
