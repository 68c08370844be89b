//! `nerdr tabs --all-hosts` against a real OpenSSH server
//! (`support::sshd`) on 127.0.0.1, in the private systemd user session
//! (issue 22's acceptance 5): one live host, the sshd, and two dead ones,
//! a port nothing listens on and a loopback listener that takes the
//! connection and never says a word (a stalled host, which only the
//! deadline ends). The live host's tabs are listed, each dead host is
//! marked with why, and the whole finishes within a bound.

use std::process::Output;
use std::time::{Duration, Instant};

use crate::support::sshd::Sshd;
use crate::support::sysenv::SystemdEnv;

/// What `nerdr tabs --all-hosts` may take at most here: the 10 s a host
/// has (the stalled one takes all of it) and room for a slow machine.
const BOUND: Duration = Duration::from_secs(30);

fn nerdr(env: &SystemdEnv, args: &[&str]) -> (Output, Duration) {
    let started = Instant::now();
    let out = env.user_cmd(&[&["nerdr"], args].concat()).output().unwrap();
    (out, started.elapsed())
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn all_hosts_lists_the_live_hosts_tabs_and_marks_the_dead_and_the_stalled() {
    let Some(env) = SystemdEnv::start() else {
        return;
    };
    env.run(&["nerdr", "service", "install"]);
    let Some(_sshd) = Sshd::start(&env) else {
        return;
    };
    // Held to the end of the test.
    let stalled = crate::support::sshd::dead_hosts(&env);
    crate::support::sshd::devbox_config(
        &env,
        "[hosts.gone]\nssh = \"gone\"\n[hosts.stall]\nssh = \"stall\"\n",
    );
    // A tab on the live host, in its folder (this machine's session, the
    // home's, has none).
    let (out, _) = nerdr(&env, crate::support::sshd::BASH_ON_DEVBOX);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let tab = text(&out.stdout).trim().to_owned();
    assert_eq!(tab.len(), 8, "a tab id: {tab:?}");

    // The table.
    let (out, took) = nerdr(&env, &["tabs", "--all-hosts"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(took < BOUND, "took {took:?}:\n{stdout}{stderr}");
    // Some host answered: success.
    assert!(out.status.success(), "{stdout}{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("HOST "), "{stdout}");
    let row = lines
        .iter()
        .find(|l| l.contains(&tab))
        .unwrap_or_else(|| panic!("no row for {tab}:\n{stdout}{stderr}"));
    assert_eq!(
        row.split_whitespace().take(3).collect::<Vec<_>>(),
        ["devbox", "1", tab.as_str()],
        "{stdout}"
    );
    // This machine answered, with no tabs in the home's session.
    assert!(lines.contains(&"local: no tabs"), "{stdout}");
    let gone = lines
        .iter()
        .find(|l| l.starts_with("gone: no answer: "))
        .unwrap_or_else(|| panic!("gone not marked:\n{stdout}"));
    assert!(gone.contains("Connection refused"), "{stdout}");
    let stall = lines
        .iter()
        .find(|l| l.starts_with("stall: no answer: "))
        .unwrap_or_else(|| panic!("stall not marked:\n{stdout}"));
    assert!(stall.contains("nothing within 10 s"), "{stdout}");
    // The stalled host's nerdr and ssh were ended with it, not left behind.
    let left = env.output(&["pgrep", "-u", env.user(), "-f", "stall nerdr bridge"]);
    assert!(
        text(&left.stdout).trim().is_empty(),
        "left running: {}",
        text(&left.stdout)
    );

    // --json: a host per row, the failed hosts with their reasons.
    let (out, took) = nerdr(&env, &["tabs", "--all-hosts", "--json"]);
    assert!(took < BOUND, "took {took:?}");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tabs = v["tabs"].as_array().unwrap();
    assert!(
        tabs.iter()
            .any(|t| t["host"] == "devbox" && t["id"] == tab.as_str()),
        "{v:#}"
    );
    assert!(tabs.iter().all(|t| t["host"].is_string()), "{v:#}");
    let failed: Vec<&str> = v["failed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            assert!(!f["reason"].as_str().unwrap().is_empty(), "{v:#}");
            f["host"].as_str().unwrap()
        })
        .collect();
    assert_eq!(failed, ["gone", "stall"], "{v:#}");

    // A deadline of one's own; --folder is one host's, so refused.
    let (out, took) = nerdr(&env, &["tabs", "--all-hosts", "--timeout", "2"]);
    assert!(took < BOUND, "took {took:?}");
    assert!(
        text(&out.stdout).contains("stall: no answer: nothing within 2 s"),
        "{}",
        text(&out.stdout)
    );
    let (out, _) = nerdr(&env, &["--folder", "/", "tabs", "--all-hosts"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--all-hosts shows each host's own session"),
        "{}",
        text(&out.stderr)
    );
    drop(stalled);
}
