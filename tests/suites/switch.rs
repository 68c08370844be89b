//! `nerdr switch` end to end with the real CLIs (`$NERDR_AGENT_CLIS`)
//! against the fake model, in a private `systemd --user` (issue 19,
//! acceptance 3 and the switch rows of 4):
//! - claude does a turn whose answer holds a word nothing else says; the
//!   person switches its tab to codex: the tab keeps its id, name,
//!   worktree and branch, every process of claude's scope is gone, codex
//!   runs there, its first request to the model carries the handoff built
//!   from claude's conversation log, and `nerdr tabs` shows claude→codex,
//!   after a core restart too;
//! - a sandboxed agent's tab (bash in bubblewrap) is not switched to
//!   codex, outside every sandbox: not by the person, not by the agent
//!   itself through the real CLI; its program still runs.

use std::path::Path;
use std::time::Duration;

use crate::suites::agent_turns::Turns;
use crate::suites::handoff::{both, codex_asked, log_holds};
use crate::support::fake_model::Turn;
use crate::support::poll;

/// A node program's start on a loaded machine, then a turn.
const START: Duration = Duration::from_secs(150);

/// The word claude's answer holds, and so its log, and nothing else.
const WORD: &str = "CLOUDBERRY-77";

/// Every process of the cgroup `pid` is in (its systemd scope), with its
/// start time (a PID used again later is another process); `pid` alone
/// when the cgroup cannot be read.
fn scope_processes(pid: u32) -> Vec<(u32, String)> {
    let cgroup = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
    let path = cgroup
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .map(|p| format!("/sys/fs/cgroup{p}/cgroup.procs"));
    let pids: Vec<u32> = path
        .and_then(|p| std::fs::read_to_string(p).ok())
        .map(|s| s.lines().filter_map(|l| l.trim().parse().ok()).collect())
        .filter(|v: &Vec<u32>| !v.is_empty())
        .unwrap_or_else(|| vec![pid]);
    pids.into_iter()
        .filter_map(|p| started(p).map(|s| (p, s)))
        .collect()
}

/// A process's start time (field 22 of its stat), if it runs.
fn started(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces: fields count after its `)`.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split(' ').nth(19).map(str::to_string)
}

#[test]
fn claude_s_tab_switches_to_codex_with_its_handoff() {
    let Some(t) = Turns::setup_with_hooks("claude", both) else {
        return;
    };
    t.model.when_user_says(
        "LIMIT-TURN",
        Turn::Say(format!(
            "The scanner is done; the code word is {WORD}. Next: the emitter."
        )),
    );
    let tab = t.ok(&["agent", "claude"]);
    t.wait_idle(&tab);
    t.prompt(&tab, "LIMIT-TURN: write the scanner");
    t.wait_screen(&tab, "claude's answer", START, |s| s.contains(WORD));
    t.wait_idle(&tab);
    let logged = poll(START, || {
        log_holds(&t.env.home().join(".claude/projects"), WORD)
    });
    assert!(logged, "claude's log never held its answer");

    let before = t.tab_json(&tab);
    let pid = before["pid"].as_u64().expect("claude runs") as u32;
    let claude_procs = scope_processes(pid);
    assert!(!claude_procs.is_empty(), "claude's processes");

    let out = t.ok(&["switch", "--force", &tab, "codex"]);
    assert_eq!(out, tab, "the same tab");

    let after = t.tab_json(&tab);
    assert_eq!(after["agent"], "codex", "{after}");
    for key in ["id", "name", "worktree", "folder"] {
        assert_eq!(after[key], before[key], "{key}: {after}");
    }
    assert!(before["worktree"].is_string(), "{before}");
    let wt = before["worktree"].as_str().unwrap();
    let branch = |dir: &str| {
        let out = t.user_cmd(&["git", "-C", dir, "rev-parse", "--abbrev-ref", "HEAD"]);
        let out = crate::support::sysenv::output_of(&mut { out });
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert!(branch(wt).starts_with("nerdr/"), "{}", branch(wt));

    // Every process claude's scope had is gone.
    let gone = poll(Duration::from_secs(30), || {
        claude_procs
            .iter()
            .all(|(p, s)| started(*p).as_ref() != Some(s))
    });
    let left: Vec<_> = claude_procs
        .iter()
        .filter(|(p, s)| started(*p).as_ref() == Some(s))
        .collect();
    assert!(gone, "claude's processes still run: {left:?}");

    let needles = [
        "Handoff from tab",
        // Its source named: the handoff is built from claude's words.
        "The agent claude hands this work over to you",
        "LIMIT-TURN: write the scanner",
        WORD,
        "Next: the emitter.",
    ];
    t.model
        .wait_for("codex's first request, with the handoff", START, |r| {
            codex_asked(r, &needles)
        });
    let now = t.tab_json(&tab);
    assert_ne!(now["pid"], before["pid"], "{now}");
    let switches = now["switches"].as_array().expect("switches listed");
    assert_eq!(switches.len(), 1, "{now}");
    assert_eq!(switches[0]["from"], "claude");
    assert_eq!(switches[0]["to"], "codex");
    let at = switches[0]["at"].as_str().expect("at in RFC 3339");
    assert!(at.starts_with("20") && at.ends_with('Z'), "{now}");
    let table = t.ok(&["tabs"]);
    assert!(table.contains("claude→codex"), "{table}");
    assert!(Path::new(wt).is_dir(), "{wt} is gone");

    // The history outlives the core.
    let core = t.env.unit_prop("nerdr.service", "MainPID");
    t.env.systemctl(&["restart", "nerdr.service"]);
    assert_ne!(t.env.unit_prop("nerdr.service", "MainPID"), core);
    let again = t.tab_json(&tab);
    assert_eq!(again["switches"], now["switches"], "{again}");
    assert_eq!(again["pid"], now["pid"], "codex kept running: {again}");
}

/// The sandboxed agent switching its own tab, through the real CLI.
const SWITCH_OWN: &str =
    "\"$NERDR_BIN\" switch --force 1 codex 'done: the lexer' > switch.out 2>&1; \
                          echo switch-rc=$?";

#[test]
fn a_sandboxed_tab_is_not_switched_to_an_agent_outside_every_sandbox() {
    let Some(t) = Turns::setup_with_hooks("claude", both) else {
        return;
    };
    let boxed = t
        .env
        .write_user_file("bin/boxed", "#!/bin/sh\nexec bash --norc --noprofile\n");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&boxed, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let runtime = t.env.runtime_dir().display().to_string();
    let work = t.env.write_user_file("work/.keep", "");
    let work = work.parent().unwrap().to_path_buf();
    let w = work.display().to_string();
    let boxed = boxed.display().to_string();
    let words = [
        "bwrap",
        "--ro-bind",
        "/",
        "/",
        "--dev-bind",
        "/dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        &runtime,
        "--bind",
        &w,
        &w,
        "--unshare-pid",
        "--die-with-parent",
        "--",
        &boxed,
    ]
    .iter()
    .map(|w| format!("{w:?}"))
    .collect::<Vec<_>>()
    .join(", ");
    t.env.write_user_file(
        ".config/nerdr/config.toml",
        format!("[agents.boxed]\ncommand = [{words}]\nsandboxed = true\n"),
    );
    let tab = t.ok(&["agent", "boxed", "--folder", &w]);
    t.wait_screen(&tab, "bash's prompt", START, |s| !s.trim().is_empty());
    let pid = t.tab_json_in(&w, &tab)["pid"].clone();

    // The person: refused, saying why, with a handoff given or not.
    for extra in [&[][..], &["--no-handoff"][..]] {
        let args = [
            &["switch", "--force", "--folder", &w, &tab, "codex"][..],
            extra,
        ]
        .concat();
        let out = t.nerdr(&args);
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "switched: {said}");
        assert!(said.contains("switches only to sandboxed agents"), "{said}");
    }

    // The agent itself, from inside its sandbox: refused too.
    t.ok(&["send", &tab, SWITCH_OWN]);
    let screen = t.wait_screen(&tab, "the switch's answer", START, |s| {
        s.lines().any(|l| l.starts_with("switch-rc="))
    });
    let out = std::fs::read_to_string(work.join("switch.out")).unwrap_or_default();
    assert!(
        screen.lines().any(|l| l == "switch-rc=1"),
        "{out}\n{screen}"
    );
    assert!(out.contains("refused `nerdr switch`"), "{out}");

    let row = t.tab_json_in(&w, &tab);
    assert_eq!(row["agent"], "boxed", "{row}");
    assert_eq!(row["state"], "running", "{row}");
    assert_eq!(row["pid"], pid, "its program was not stopped: {row}");
    assert!(row.get("switches").is_none(), "{row}");
}
