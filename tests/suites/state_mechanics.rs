//! The core's side of agent states, with the real binary and a real
//! program in a tab: bash, read by rules from a user's rules file through
//! `detect = "NAME"` (the real agents' states are `agent_states`'s). What
//! `nerdr tabs --json` shows, `nerdr wait` (reached, out of time, an
//! unknown state or tab), `nerdr explain`, a user file replacing a
//! built-in one, a malformed one leaving the built-in in force, and hook
//! reports (out of order, only for their own tab).

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::local::Local;
use crate::support::poll;

/// A custom agent: bash whose prompt is `READY> `, read by the `mine`
/// rules.
const AGENT: &str = "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n\
                     env = { PS1 = \"READY> \" }\ndetect = \"mine\"\n";

/// `mine`: blocked on `PROCEED?`, idle at the prompt (also read by
/// `notifications::per_agent`).
pub const RULES: &str = r#"agent = "mine"
quiet_ms = 300
verified_with = ["bash 5 in a nerdr test"]

[[rule]]
name = "asks to proceed"
state = "blocked"
priority = 100
region = "last_lines"
lines = 5
contains = "PROCEED?"
verified = true

[[rule]]
name = "at the prompt"
state = "idle"
priority = 10
region = "last_lines"
lines = 1
contains = "READY>"
verified = true
"#;

fn with_rules(name: &str, text: &str) -> Local {
    let mut l = Local::empty();
    l.write_config(AGENT);
    let dir = l.path("config/nerdr/detect");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.toml")), text).unwrap();
    l.start_core();
    l
}

fn row(l: &Local, tab: &str) -> serde_json::Value {
    l.tabs_json(&[])
        .into_iter()
        .find(|t| t["id"] == tab)
        .unwrap_or_else(|| panic!("tab {tab} not listed"))
}

/// Wait until `nerdr tabs --json` shows `tab` in `want` (a JSON value:
/// a state's word, or null).
fn wait_state(l: &Local, tab: &str, want: serde_json::Value) -> serde_json::Value {
    let mut last = serde_json::Value::Null;
    let reached = poll(Duration::from_secs(20), || {
        last = row(l, tab);
        last["agent_state"] == want
    });
    assert!(
        reached,
        "tab {tab} never reached agent_state {want}; last row: {last}\nscreen:\n{}\ncore.log:\n{}",
        l.ok(&["read", tab]),
        l.core_log()
    );
    last
}

/// `printf` with the needle cut in two, so the typed command line does
/// not hold it; only the output does.
pub const ASK: &str = "printf 'PRO''CEED?\\n'";

#[test]
fn tabs_json_shows_the_agent_state_and_since_when() {
    let l = with_rules("mine", RULES);
    let tab = l.ok(&["agent", "sh"]);
    let idle = wait_state(&l, &tab, "idle".into());
    let since = idle["agent_state_since"].as_str().unwrap().to_string();
    // RFC 3339, UTC, milliseconds: 2026-12-01T18:41:38.123Z.
    let shape = since.len() == 24
        && since.ends_with('Z')
        && since.as_bytes()[10] == b'T'
        && since.as_bytes()[19] == b'.';
    assert!(shape, "agent_state_since {since:?}");
    assert_eq!(idle["bells"], 0);

    l.ok(&["send", &tab, ASK]);
    let blocked = wait_state(&l, &tab, "blocked".into());
    assert!(
        blocked["agent_state_since"].as_str().unwrap() > since.as_str(),
        "{blocked}"
    );
    let human = l.ok(&["tabs"]);
    assert!(human.contains("BLOCKED"), "{human}");

    l.ok(&["send", &tab, "clear"]);
    wait_state(&l, &tab, "idle".into());

    // A terminal has none; an exited agent none either.
    let term = l.ok(&["terminal", &tab]);
    assert_eq!(row(&l, &term)["agent_state"], serde_json::Value::Null);
    l.ok(&["send", &tab, "exit"]);
    let gone = wait_state(&l, &tab, serde_json::Value::Null);
    assert_eq!(gone["state"], "exited", "{gone}");
    assert_eq!(gone["agent_state_since"], serde_json::Value::Null);
}

#[test]
fn wait_returns_when_the_state_is_reached_and_not_before() {
    let l = with_rules("mine", RULES);
    let tab = l.ok(&["agent", "sh"]);
    wait_state(&l, &tab, "idle".into());

    // Already there: at once.
    let t0 = Instant::now();
    l.ok(&["wait", &tab, "--until", "idle", "--timeout", "10"]);
    assert!(t0.elapsed() < Duration::from_secs(5));

    // Waits for a change, then returns 0.
    let waiter = l
        .cmd(&["wait", &tab, "--until", "blocked", "--timeout", "30"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    l.ok(&["send", &tab, ASK]);
    let out = waiter.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "wait --until blocked: {:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(row(&l, &tab)["agent_state"], "blocked");

    // Out of time: 124 and the state it saw.
    let out = l.run(&["wait", &tab, "--until", "working", "--timeout", "0.5"]);
    assert_eq!(out.status.code(), Some(124), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "nerdr wait: tab {tab} is still blocked after 0.5s"
        )),
        "{err}"
    );

    // An unknown state and an unknown tab are clear errors.
    let err = l.fails(&["wait", &tab, "--until", "sleeping"]);
    assert!(err.contains("sleeping") && err.contains("blocked"), "{err}");
    let err = l.fails(&["wait", "nope", "--until", "idle"]);
    assert!(err.contains("no tab `nope`"), "{err}");

    // `exited`, and an agent state that can no longer come.
    let waiter = l
        .cmd(&["wait", &tab, "--until", "exited", "--timeout", "30"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    l.ok(&["send", &tab, "exit"]);
    let out = waiter.wait_with_output().unwrap();
    assert!(out.status.success(), "wait --until exited: {out:?}");
    let out = l.run(&["wait", &tab, "--until", "idle", "--timeout", "5"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("exited"),
        "{out:?}"
    );
}

#[test]
fn explain_names_the_rule_its_file_and_the_lines() {
    let l = with_rules("mine", RULES);
    let tab = l.ok(&["agent", "sh"]);
    wait_state(&l, &tab, "idle".into());
    l.ok(&["send", &tab, ASK]);
    wait_state(&l, &tab, "blocked".into());
    let file = l.path("config/nerdr/detect/mine.toml");
    let text = l.ok(&["explain", &tab]);
    assert!(
        text.contains(&format!("tab {tab} (sh): blocked since ")),
        "{text}"
    );
    assert!(text.contains("asks to proceed"), "{text}");
    assert!(text.contains(&file.display().to_string()), "{text}");
    assert!(text.contains("| PROCEED?"), "{text}");

    let json: serde_json::Value =
        serde_json::from_str(&l.ok(&["explain", &tab, "--json"])).unwrap();
    assert_eq!(json["agent_state"], "blocked", "{json}");
    assert!(
        json["cause"].as_str().unwrap().contains("asks to proceed"),
        "{json}"
    );
    let lines: Vec<&str> = json["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(lines.contains(&"PROCEED?"), "{json}");
    assert_eq!(
        json["rules"],
        format!("mine ({})", file.display()),
        "{json}"
    );
}

/// A user's `claude.toml` replaces the built-in claude rules for an agent
/// that detects as claude.
#[test]
fn a_user_file_replaces_the_built_in_rules() {
    let mut l = Local::empty();
    l.write_config(&AGENT.replace("detect = \"mine\"", "detect = \"claude\""));
    let dir = l.path("config/nerdr/detect");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("claude.toml"),
        RULES.replace("\"mine\"", "\"claude\""),
    )
    .unwrap();
    l.start_core();
    let tab = l.ok(&["agent", "sh"]);
    wait_state(&l, &tab, "idle".into());
    l.ok(&["send", &tab, ASK]);
    wait_state(&l, &tab, "blocked".into());
    let json: serde_json::Value =
        serde_json::from_str(&l.ok(&["explain", &tab, "--json"])).unwrap();
    assert_eq!(
        json["rules"],
        format!("claude ({})", dir.join("claude.toml").display()),
        "{json}"
    );
    assert!(
        json["cause"].as_str().unwrap().contains("asks to proceed"),
        "{json}"
    );
}

/// A rules file that cannot be used: its error names the file, the line and
/// the key; the tab says so, and the built-in rules stay in force.
#[test]
fn a_malformed_user_file_leaves_the_built_in_rules_and_says_where() {
    let mut l = Local::empty();
    l.write_config(&AGENT.replace("detect = \"mine\"", "detect = \"claude\""));
    let dir = l.path("config/nerdr/detect");
    std::fs::create_dir_all(&dir).unwrap();
    let bad = RULES
        .replace("\"mine\"", "\"claude\"")
        .replace("state = \"blocked\"", "state = \"stuck\"");
    std::fs::write(dir.join("claude.toml"), &bad).unwrap();
    l.start_core();
    let tab = l.ok(&["agent", "sh"]);
    let file = dir.join("claude.toml").display().to_string();
    let line = bad
        .lines()
        .position(|l| l.contains("stuck"))
        .map(|i| i + 1)
        .unwrap();
    let warning = row(&l, &tab)["warning"].as_str().unwrap_or("").to_string();
    assert!(warning.contains(&file), "{warning}");
    assert!(
        warning.contains(&line.to_string()),
        "line {line}: {warning}"
    );
    assert!(warning.contains("state"), "{warning}");
    let json: serde_json::Value =
        serde_json::from_str(&l.ok(&["explain", &tab, "--json"])).unwrap();
    assert_eq!(json["rules"], "claude (built-in)", "{json}");
    assert!(
        json["warning"].as_str().unwrap_or("").contains(&file),
        "{json}"
    );
}

/// Reports reach the tracker of the reporting tab only, and one older than
/// a report already taken is dropped. Sent from inside the tab, as its
/// hooks would, over the hook socket with a chosen sequence number.
#[test]
fn reports_count_for_their_own_tab_and_out_of_order_ones_are_dropped() {
    let mut l = Local::empty();
    // No rules: only reports move these agents.
    l.write_config(
        "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n\
         env = { PS1 = \"READY> \" }\ndetect = \"nothing-by-this-name\"\n",
    );
    l.start_core();
    let a = l.ok(&["agent", "sh"]);
    let b = l.ok(&["agent", "sh"]);
    l.wait_screen(&a, "READY>");
    l.wait_screen(&b, "READY>");
    assert_eq!(row(&l, &a)["agent_state"], "unknown");

    // `report EVENT SEQ`: one line on the hook socket as the tab.
    let script = "report() { python3 -c 'import json,os,socket,sys; \
        s=socket.socket(socket.AF_UNIX); s.connect(os.environ[\"NERDR_SOCKET\"]); \
        s.sendall((json.dumps({\"id\":1,\"tab\":os.environ[\"NERDR_TAB\"],\"method\":\"report\",\
        \"params\":{\"event\":sys.argv[1],\"seq\":int(sys.argv[2])}})+\"\\n\").encode()); \
        print(\"REPORTED\", sys.argv[1], sys.argv[2], s.makefile().readline().strip()[:20])' \"$@\"; }";
    l.ok(&["send", &a, script]);
    l.ok(&["send", &a, "report UserPromptSubmit 2000"]);
    l.wait_screen(&a, "REPORTED UserPromptSubmit 2000");
    wait_state(&l, &a, "working".into());
    l.ok(&["send", &a, "report Stop 3000"]);
    l.wait_screen(&a, "REPORTED Stop 3000");
    wait_state(&l, &a, "done".into());
    // Older than the Stop taken: dropped, the tab stays done.
    l.ok(&["send", &a, "report UserPromptSubmit 2500"]);
    l.wait_screen(&a, "REPORTED UserPromptSubmit 2500");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(row(&l, &a)["agent_state"], "done");
    // The other tab heard nothing.
    assert_eq!(row(&l, &b)["agent_state"], "unknown");
}

/// A `nerdr wait` killed while it waits takes its wait with it: the core
/// closes the connection at once rather than holding it until the tab
/// changes.
#[test]
fn a_wait_ends_with_the_caller_that_went_away() {
    let l = with_rules("mine", RULES);
    let tab = l.ok(&["agent", "sh"]);
    wait_state(&l, &tab, "idle".into());
    let fds = |pid: u32| {
        std::fs::read_dir(format!("/proc/{pid}/fd"))
            .unwrap()
            .count()
    };
    let core = l.core_pid();
    std::thread::sleep(Duration::from_millis(300));
    let before = fds(core);
    let mut waiter = l
        .cmd(&["wait", &tab, "--until", "blocked"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let held = poll(Duration::from_secs(10), || fds(core) > before);
    assert!(held, "the wait never reached the core");
    waiter.kill().unwrap();
    waiter.wait().unwrap();
    let let_go = poll(Duration::from_secs(5), || fds(core) == before);
    assert!(
        let_go,
        "the core still holds the dead waiter's connection ({} fds, {before} before)",
        fds(core)
    );
    assert_eq!(row(&l, &tab)["agent_state"], "idle");
}

/// A core that restarts reads the states again from the screens the holder
/// kept (states are not saved).
#[test]
fn a_restarted_core_reads_the_states_again() {
    let mut l = with_rules("mine", RULES);
    let tab = l.ok(&["agent", "sh"]);
    wait_state(&l, &tab, "idle".into());
    l.ok(&["send", &tab, ASK]);
    wait_state(&l, &tab, "blocked".into());
    l.stop_core();
    l.start_core();
    wait_state(&l, &tab, "blocked".into());
    let json: serde_json::Value =
        serde_json::from_str(&l.ok(&["explain", &tab, "--json"])).unwrap();
    assert!(
        json["cause"].as_str().unwrap().contains("asks to proceed"),
        "{json}"
    );
}
