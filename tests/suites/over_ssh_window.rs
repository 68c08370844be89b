//! The window over `nerdr --host` against a real OpenSSH server
//! (`support::sshd`, as in `over_ssh`), driven as a person would (tmux, as
//! the test user): it attaches to the other end's session and shows the
//! tab's exact screen (what `nerdr read` of that tab gives), typing
//! reaches the program there (issue 22's acceptance 2); with the ssh
//! client killed by its PID it says "reconnecting", comes back by itself
//! through a new ssh with the screen intact, and the agent there runs on
//! with the same PID (acceptance 3); connected and idle, it does not wake.
//!
//! As in `over_ssh`, the window runs with a runtime dir of its own that
//! holds no core, so it reaches a core only through ssh.

use std::path::PathBuf;
use std::time::Duration;

use crate::support::sshd::{Sshd, ALIAS};
use crate::support::sysenv::{run_ok, wait_until, SystemdEnv};
use crate::support::tmux::have_tmux;
use crate::support::user_tmux::UserTmux;

pub(super) fn remote() -> Option<(SystemdEnv, Sshd)> {
    let env = SystemdEnv::start()?;
    env.run(&["nerdr", "service", "install"]);
    let sshd = Sshd::start(&env)?;
    Some((env, sshd))
}

/// The runtime dir of the commands "here": empty, no core, no key.
pub(super) fn here_runtime(env: &SystemdEnv) -> PathBuf {
    let run = env.home().join("here-run");
    if !run.exists() {
        env.run(&["mkdir", "-m", "0700", &run.display().to_string()]);
    }
    run
}

/// `nerdr ARGS` here, as the user, with a runtime dir of its own.
pub(super) fn here(env: &SystemdEnv, args: &[&str]) -> String {
    let mut cmd = env.user_cmd(&[&["nerdr"], args].concat());
    cmd.env("XDG_RUNTIME_DIR", here_runtime(env));
    String::from_utf8_lossy(&run_ok(&mut cmd).stdout).into_owned()
}

/// The tab's agent PID, as the core there lists it.
fn agent_pid(env: &SystemdEnv, tab: &str) -> u64 {
    let tabs: Vec<serde_json::Value> =
        serde_json::from_str(&here(env, &["--host", "devbox", "tabs", "--json"])).unwrap();
    let t = tabs.iter().find(|t| t["id"] == tab).expect("the tab");
    t["pid"].as_u64().unwrap_or_else(|| panic!("no pid: {t}"))
}

/// The ssh clients of the test user that run a bridge: the window's link.
/// Only this environment's (its cgroup): other tests run ssh as the same
/// user at the same time.
fn bridge_sshs(env: &SystemdEnv) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let args = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let args: Vec<&[u8]> = args.split(|b| *b == 0).collect();
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            let uid = status
                .lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|l| l.split_whitespace().next()?.parse::<u32>().ok());
            let cgroup = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
            args.first() == Some(&&b"ssh"[..])
                && args.iter().any(|a| *a == b"nerdr bridge")
                && uid == Some(env.uid())
                && cgroup.contains(env.cgroup())
        })
        .collect()
}

/// The parent of process `pid`.
fn parent(pid: u32) -> u32 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("PPid:"))
        .and_then(|p| p.trim().parse().ok())
        .expect("PPid")
}

#[test]
fn the_window_over_ssh_shows_the_exact_screen_and_rides_through_a_killed_ssh() {
    if !have_tmux() {
        return;
    }
    let Some((env, sshd)) = remote() else {
        return;
    };
    crate::support::sshd::devbox_config(&env, "");
    let tab = here(&env, crate::support::sshd::BASH_ON_DEVBOX)
        .trim()
        .to_owned();
    here(
        &env,
        &["--host", "devbox", "send", "1", "PS1='$ '; seq 1 5"],
    );
    let pid = agent_pid(&env, &tab);

    let window = format!(
        "XDG_RUNTIME_DIR={} nerdr --host devbox",
        here_runtime(&env).display()
    );
    let t = UserTmux::start(&env, env.home(), 100, 30, &window);
    t.wait_text("1:");
    // Typing reaches the program there.
    t.text("echo typed-$((6*7))");
    t.keys(&["Enter"]);
    t.wait_text("typed-42");
    wait_until(
        "the typing to reach the tab there",
        Duration::from_secs(20),
        || here(&env, &["--host", "devbox", "read", "1"]).contains("typed-42"),
    );

    // The exact screen: the pane (the window but its status line) is the
    // tab's screen as the core there has it.
    let pane = t.wait_pane_is("the window to show the tab's screen", || {
        here(&env, &["--host", "devbox", "read", "1"])
    });
    assert!(
        pane.iter().any(|l| l == "$ echo typed-$((6*7))") && pane.contains(&"5".to_owned()),
        "{pane:?}"
    );
    // The status line says whose session it is, first.
    let status = t.screen().pop().unwrap_or_default();
    assert!(status.trim_start().starts_with("[devbox] 1:"), "{status:?}");

    // Acceptance 3: the ssh client killed, by its PID.
    let sshs = bridge_sshs(&env);
    assert_eq!(sshs.len(), 1, "one ssh for the window: {sshs:?}");
    let killed = sshs[0];
    // The network "gone" meanwhile (sshd not answering), so the window
    // is seen reconnecting before it is back.
    sshd.answer(false);
    env.root_run(&["kill", "-9", &killed.to_string()]);
    let s = t.wait_text("reconnecting to devbox");
    assert!(
        s.iter().any(|l| l.contains("typed-42")),
        "the last screen stays while reconnecting:\n{}",
        s.join("\n")
    );
    std::thread::sleep(Duration::from_secs(2));
    sshd.answer(true);
    let s = t.wait_text("reconnected to devbox");
    assert!(
        !s.iter().any(|l| l.contains("EXITED=")),
        "the window ended:\n{}",
        s.join("\n")
    );
    let now = bridge_sshs(&env);
    assert_eq!(now.len(), 1, "{now:?}");
    assert_ne!(now[0], killed, "a new ssh");
    let pane = t.wait_pane_is("the screen intact after the reconnect", || {
        here(&env, &["--host", "devbox", "read", "1"])
    });
    assert!(pane.iter().any(|l| l.contains("typed-42")), "{pane:?}");
    assert_eq!(agent_pid(&env, &tab), pid, "the agent there ran on");
    // And typing reaches it again.
    t.text("echo again-$((40+2))");
    t.keys(&["Enter"]);
    t.wait_text("again-42");
    wait_until(
        "the typing after the reconnect to reach the tab",
        Duration::from_secs(20),
        || here(&env, &["--host", "devbox", "read", "1"]).contains("again-42"),
    );
    // Connected and idle, the window (ssh's parent) sleeps: no timer, no
    // polling of the link (ssh's keepalive is ssh's, every 15 s).
    let window_pid = parent(bridge_sshs(&env)[0]);
    let args = std::fs::read(format!("/proc/{window_pid}/cmdline")).unwrap();
    assert_eq!(
        args, b"nerdr\0--host\0devbox\0",
        "the window is ssh's parent"
    );
    std::thread::sleep(Duration::from_secs(1));
    let before = crate::suites::idle::wakeups(window_pid);
    std::thread::sleep(Duration::from_secs(4));
    let woke = crate::suites::idle::wakeups(window_pid) - before;
    assert!(woke <= 2, "the idle window woke {woke} times in 4 s");
    // Two logins for the window, and every command's: all through sshd.
    assert!(
        sshd.log().matches("Accepted publickey for").count() >= 2,
        "{}",
        sshd.log()
    );
    // Nothing here reached a core but through ssh.
    assert!(
        std::fs::read_dir(here_runtime(&env))
            .unwrap()
            .next()
            .is_none(),
        "a command here used the local runtime dir"
    );
}

/// A `--host` command whose reader left (`| true`: gone before anything
/// is printed) ends by an exit of its own, not killed by SIGPIPE, and
/// says nothing of a panic.
#[test]
fn a_host_command_whose_reader_left_ends_quietly() {
    let Some((env, _sshd)) = remote() else {
        return;
    };
    env.write_user_file(
        ".config/nerdr/config.toml",
        format!("[hosts.devbox]\nssh = \"{ALIAS}\"\n"),
    );
    let script = format!(
        "XDG_RUNTIME_DIR={} nerdr --host devbox tabs --all | true; echo status=${{PIPESTATUS[0]}}",
        here_runtime(&env).display()
    );
    let out = env.user_cmd(&["bash", "-c", &script]).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(said.trim(), "status=0", "stderr: {err}");
    assert!(!err.contains("panicked"), "{err}");
}
