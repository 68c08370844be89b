//! A window rides through its core's restart, driven as a person would
//! (tmux, as the test user, in a private `systemd --user`): it keeps its
//! screen, reconnects to the same tab, and typing reaches the program
//! again; a window whose core does not come back (the sockets stopped for
//! good) says why and exits non-zero; without units, a window waits for a
//! core a command starts and, back, runs no timer.

use std::time::Duration;

use crate::support::local::Local;
use crate::support::sysenv::{wait_until, SystemdEnv};
use crate::support::tmux::have_tmux;
use crate::support::tmux::Tmux;
use crate::support::user_tmux::UserTmux;

const CONFIG: &str = "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n";

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Installed units, the sh agent configured, a work folder.
fn installed() -> Option<SystemdEnv> {
    let env = SystemdEnv::start()?;
    env.run(&["nerdr", "service", "install"]);
    env.write_user_file(".config/nerdr/config.toml", CONFIG);
    env.write_user_file("work/.keep", "");
    Some(env)
}

#[test]
fn a_window_rides_through_a_core_restart_and_typing_still_reaches_the_tab() {
    if !have_tmux() {
        return;
    }
    let Some(env) = installed() else {
        return;
    };
    let work = env.home().join("work");
    let folder = work.to_str().unwrap();
    let first = stdout(&env.run(&["nerdr", "agent", "sh", "--folder", folder]));
    let shown = stdout(&env.run(&["nerdr", "agent", "sh", "--folder", folder]));
    let (first, shown) = (first.trim(), shown.trim());
    let t = UserTmux::start(&env, &work, 100, 30, "nerdr");
    t.wait_text("1:sh");
    // Show the second tab: a reconnect must come back to it, not to the
    // first one a fresh window gets.
    t.keys(&["C-b", "2"]);
    t.wait_within("tab 2 shown", Duration::from_secs(20), |s| {
        s.last().is_some_and(|l| l.contains("2:sh-2*"))
    });
    t.text("echo before-$((6*7))");
    t.keys(&["Enter"]);
    t.wait_text("before-42");

    let old = env.unit_prop("nerdr.service", "MainPID");
    env.systemctl(&["restart", "nerdr.service"]);
    let new = env.unit_prop("nerdr.service", "MainPID");
    assert_ne!(old, new, "nerdr.service did not restart");
    let s = t.wait_text("reconnected to the core");
    assert!(
        !s.iter().any(|l| l.contains("EXITED=")),
        "the window ended:\n{}",
        s.join("\n")
    );
    assert!(
        s.iter().any(|l| l.contains("before-42")),
        "the screen did not come back:\n{}",
        s.join("\n")
    );
    assert!(
        s.last().is_some_and(|l| l.contains("2:sh-2*")),
        "not the same tab:\n{}",
        s.join("\n")
    );

    let mark = format!("{}", std::process::id());
    t.text(&format!("echo after-restart-{mark}-$((40+2))"));
    t.keys(&["Enter"]);
    let want = format!("after-restart-{mark}-42");
    t.wait_text(&want);
    wait_until(
        "the typing to reach the tab",
        Duration::from_secs(20),
        || stdout(&env.output(&["nerdr", "read", shown])).contains(&want),
    );
    assert!(
        !stdout(&env.run(&["nerdr", "read", first])).contains(&want),
        "typed into the wrong tab"
    );
    assert_eq!(
        crate::suites::one_core::cores(&env).len(),
        1,
        "one core after the restart"
    );
}

#[test]
fn a_window_whose_core_does_not_come_back_says_why_and_exits() {
    if !have_tmux() {
        return;
    }
    let Some(env) = installed() else {
        return;
    };
    let work = env.home().join("work");
    env.run(&["nerdr", "agent", "sh", "--folder", work.to_str().unwrap()]);
    let t = UserTmux::start(&env, &work, 120, 30, "nerdr");
    t.wait_text("1:sh-1*");
    env.systemctl(&[
        "stop",
        "nerdr-hook.socket",
        "nerdr-client.socket",
        "nerdr.service",
    ]);
    // It waits a moment (a reinstall restarts the sockets), saying so.
    t.wait_text("reconnecting to the core");
    let s = t.wait_within("the window to give up", Duration::from_secs(30), |s| {
        s.iter().any(|l| l.contains("EXITED="))
    });
    let text = s.join("\n");
    assert!(text.contains("EXITED=1"), "{text}");
    // The message may wrap anywhere: compare without whitespace.
    let squeeze = |s: &str| s.split_whitespace().collect::<String>();
    assert!(
        squeeze(&text).contains(&squeeze(
            "[lost the core: nerdr-hook.socket and nerdr-client.socket are stopped; \
             start them: `systemctl --user start nerdr-hook.socket nerdr-client.socket`]"
        )),
        "{text}"
    );
    // Nothing was started behind the person's back.
    assert!(crate::suites::one_core::cores(&env).is_empty());
}

/// The `nerdr` window running in `l`'s work folder.
fn window_pid(l: &Local) -> u32 {
    let bin = std::fs::canonicalize(crate::support::local::BIN).unwrap();
    let work = std::fs::canonicalize(l.work()).unwrap();
    let found: Vec<u32> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let link = |what: &str| std::fs::read_link(format!("/proc/{pid}/{what}")).ok();
            let args = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            link("exe").as_ref() == Some(&bin)
                && link("cwd").as_ref() == Some(&work)
                && args.iter().filter(|b| **b == 0).count() == 1
        })
        .collect();
    assert_eq!(found.len(), 1, "window processes: {found:?}");
    found[0]
}

/// Without units nothing starts a core for the window: it waits, saying
/// so, for the next one a command (here the test) starts, and once back
/// it runs no timer.
#[test]
fn a_window_waits_for_a_core_started_by_hand_and_is_idle_once_back() {
    if !have_tmux() {
        return;
    }
    let mut l = Local::empty();
    l.write_config(CONFIG);
    l.start_core();
    let tab = l.ok(&["agent", "sh"]);
    let t = Tmux::start(&l, 120, 30, "nerdr");
    t.wait_text("1:sh-1*");
    let mut core = l.core.take().unwrap();
    core.kill().unwrap();
    core.wait().unwrap();
    let s = t.wait_text("reconnecting to the core");
    assert!(
        s.iter().any(|l| l.contains("any nerdr command starts one")),
        "{}",
        s.join("\n")
    );
    l.start_core();
    t.wait_text("reconnected to the core");
    let pid = window_pid(&l);
    std::thread::sleep(Duration::from_secs(1));
    let before = crate::suites::idle::wakeups(pid);
    std::thread::sleep(Duration::from_secs(4));
    let woke = crate::suites::idle::wakeups(pid) - before;
    // The backoff's 1 s timer, left running, would be 4 here.
    eprintln!("idle window: {woke} wake-ups in 4 s");
    assert!(woke <= 2, "the idle window woke {woke} times in 4 s");
    t.text("echo back-$((1+1))");
    t.keys(&["Enter"]);
    l.wait_screen(&tab, "back-2");
}
