//! The window's session picker across hosts (issue 22: "the window's
//! session picker lists sessions of every configured host"), driven as a
//! person would (tmux, as the test user), against a real OpenSSH server
//! (`support::sshd`).
//!
//! "Here" is a core of its own: its own runtime, config, state and data
//! folders, started by hand (no units under its config folder) with
//! programs as its children (`NERDR_HOLDER=0`: the environment's holder
//! unit is the other core's). It has two sessions. "There", `devbox`, is
//! the environment's socket-activated core reached only through sshd, as
//! in `over_ssh_window`, with one session. Two more hosts are configured:
//! `gone`, a port nothing listens on, and `stall`, a listener that takes
//! the connection and never says a word (only a deadline ends it).
//!
//! `C-b s` shows this machine's sessions at once and the hosts as they
//! answer: devbox's session under its name, the two dead ones marked
//! `no answer` with why, all within a bound. Choosing devbox's session
//! moves the window there over ssh, on that tab's exact screen, and
//! typing reaches it; choosing one of this machine's brings it back.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::support::sshd::{Sshd, ALIAS};
use crate::support::sysenv::{run_ok, wait_until, SystemdEnv};
use crate::support::tmux::have_tmux;
use crate::support::user_tmux::UserTmux;

/// How long the hosts may take to fill in: the stalled host's deadline
/// (ssh gives up on its banner after 8 s, the picker's own after 10 s)
/// and room for a slow machine.
const BOUND: Duration = Duration::from_secs(30);

/// The folders of "here"'s own core, under HOME.
const HERE: [(&str, &str); 4] = [
    ("XDG_RUNTIME_DIR", "here-run"),
    ("XDG_CONFIG_HOME", "here-config"),
    ("XDG_STATE_HOME", "here-state"),
    ("XDG_DATA_HOME", "here-data"),
];

fn here_env(env: &SystemdEnv) -> Vec<(&'static str, PathBuf)> {
    let mut vars: Vec<(&str, PathBuf)> = HERE
        .iter()
        .map(|(k, dir)| (*k, env.home().join(dir)))
        .collect();
    vars.push(("NERDR_HOLDER", "0".into()));
    vars
}

/// `nerdr ARGS` here, as the user, in `dir`; its stdout.
fn here(env: &SystemdEnv, dir: &Path, args: &[&str]) -> String {
    let mut cmd = env.user_cmd(&[&["nerdr"], args].concat());
    cmd.current_dir(dir).envs(here_env(env));
    String::from_utf8_lossy(&run_ok(&mut cmd).stdout).into_owned()
}

/// The line of the screen that starts (blanks aside) with `start`.
fn line_with<'a>(screen: &'a [String], start: &str) -> Option<&'a str> {
    screen
        .iter()
        .map(|l| l.trim())
        .find(|l| l.starts_with(start))
}

#[test]
fn the_session_picker_lists_every_hosts_sessions_and_moves_the_window_there() {
    if !have_tmux() {
        return;
    }
    let Some(env) = SystemdEnv::start() else {
        return;
    };
    env.run(&["nerdr", "service", "install"]);
    let Some(sshd) = Sshd::start(&env) else {
        return;
    };
    let home = env.home().to_path_buf();
    for (_, dir) in HERE {
        env.run(&[
            "mkdir",
            "-p",
            "-m",
            "0700",
            &home.join(dir).display().to_string(),
        ]);
    }
    // Held to the end of the test.
    let stalled = crate::support::sshd::dead_hosts(&env);
    env.write_user_file(
        "here-config/nerdr/config.toml",
        format!(
            "[hosts.devbox]\nssh = \"{ALIAS}\"\nfolder = \"~/proj\"\n\
             [hosts.gone]\nssh = \"gone\"\n[hosts.stall]\nssh = \"stall\"\n"
        ),
    );
    for dir in ["alpha", "beta", "proj"] {
        env.run(&["mkdir", "-p", &home.join(dir).display().to_string()]);
    }
    let bash = ["agent", "--", "bash", "--norc", "--noprofile"];
    // Two sessions here, a tab each.
    for name in ["alpha", "beta"] {
        let dir = home.join(name);
        here(&env, &dir, &bash);
        here(
            &env,
            &dir,
            &["send", "1", &format!("PS1='$ '; echo {name}-$((6*7))")],
        );
    }
    // One there, in devbox's folder.
    let there = [&["--host", "devbox"][..], &bash[..]].concat();
    here(&env, &home, &there);
    here(
        &env,
        &home,
        &[
            "--host",
            "devbox",
            "send",
            "1",
            "PS1='$ '; echo there-$((6*7))",
        ],
    );
    let sessions = here(&env, &home, &["sessions"]);
    assert!(
        sessions.contains("alpha") && sessions.contains("beta") && !sessions.contains("proj"),
        "{sessions}"
    );

    let vars: Vec<String> = here_env(&env)
        .iter()
        .map(|(k, v)| format!("{k}={}", v.display()))
        .collect();
    let window = format!("{} nerdr", vars.join(" "));
    let t = UserTmux::start(&env, &home.join("alpha"), 120, 30, &window);
    t.wait_text("alpha-42");

    // The picker: this machine's sessions at once, the hosts asked.
    t.keys(&["C-b", "s"]);
    let opened = Instant::now();
    let s = t.wait_text("Switch to a session:");
    assert!(
        line_with(&s, "local:").is_some()
            && line_with(&s, "> 1. alpha").is_some_and(|l| l.contains("(this window)"))
            && line_with(&s, "2. beta").is_some(),
        "{}",
        s.join("\n")
    );
    // The stalled host is still being asked while this machine's are shown.
    assert_eq!(
        line_with(&s, "stall:"),
        Some("stall: asking..."),
        "{}",
        s.join("\n")
    );
    // Then every host fills in, within the bound.
    let s = t.wait_within("every host to answer", BOUND, |s| {
        !s.iter().any(|l| l.contains("asking..."))
    });
    let took = opened.elapsed();
    assert!(took < BOUND, "took {took:?}");
    let shown = s.join("\n");
    let lines: Vec<&str> = s.iter().map(|l| l.trim()).collect();
    let at = |start: &str| {
        lines
            .iter()
            .position(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no {start:?}:\n{shown}"))
    };
    // Grouped in order: this machine, then each host by name.
    assert!(
        at("local:") < at("> 1. alpha")
            && at("2. beta") < at("devbox:")
            && at("devbox:") + 1 == at("3. proj")
            && at("3. proj") < at("gone:")
            && at("gone:") < at("stall:"),
        "{shown}"
    );
    assert!(lines[at("3. proj")].contains("/proj"), "{shown}");
    // A reason wraps under its place, whole.
    let gone = lines[at("gone:")..at("stall:")].join(" ");
    assert!(
        gone.starts_with("gone: no answer: ") && gone.contains("Connection refused"),
        "{shown}"
    );
    let stall = lines[at("stall:")..].join(" ");
    assert!(
        stall.starts_with("stall: no answer: ") && stall.contains("timed out"),
        "{shown}"
    );
    // The picker's ssh to each dead host ended with its answer.
    let left = env.output(&["pgrep", "-u", env.user(), "-f", "(gone|stall) nerdr bridge"]);
    assert!(
        String::from_utf8_lossy(&left.stdout).trim().is_empty(),
        "left running: {}",
        String::from_utf8_lossy(&left.stdout)
    );
    // No escape or prompt of ssh's landed in the window.
    assert!(
        !shown.contains("password") && !shown.contains("passphrase"),
        "{shown}"
    );

    // Choosing devbox's session: the window moves there, over ssh.
    t.text("3");
    t.keys(&["Enter"]);
    t.wait_text("connected to devbox");
    let pane = t.wait_pane_is("the window to show the tab there exactly", || {
        here(&env, &home, &["--host", "devbox", "read", "1"])
    });
    assert!(pane.iter().any(|l| l == "there-42"), "{pane:?}");
    // Typing reaches the program there.
    t.text("echo typed-$((40+2))");
    t.keys(&["Enter"]);
    t.wait_text("typed-42");
    wait_until(
        "the typing to reach the tab there",
        Duration::from_secs(20),
        || here(&env, &home, &["--host", "devbox", "read", "1"]).contains("typed-42"),
    );
    assert!(
        sshd.log().matches("Accepted publickey for").count() >= 3,
        "the picker's ask and the window's link logged in: {}",
        sshd.log()
    );

    // And back: from devbox, this machine is asked, and its session chosen.
    t.keys(&["C-b", "s"]);
    let s = t.wait_within("this machine's sessions from devbox", BOUND, |s| {
        line_with(s, "2. beta").is_some()
    });
    assert!(
        line_with(&s, "> 3. proj").is_some_and(|l| l.contains("(this window)")),
        "{}",
        s.join("\n")
    );
    t.text("2");
    t.keys(&["Enter"]);
    t.wait_text("connected to local");
    t.wait_text("beta-42");
    drop(stalled);
}
