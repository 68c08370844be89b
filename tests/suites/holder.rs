//! The holder without a service manager: programs outlive the core, a new
//! core finds them (screen included), and a full stop leaves the list.

use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use crate::support::local::{pid_alive, Local};
use crate::support::wait_until;

const SHELL_AGENT: &str = "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n";

fn signal(pid: u32, sig: Signal) {
    kill(Pid::from_raw(pid as i32), sig).unwrap();
}

#[test]
fn a_killed_core_is_replaced_and_finds_its_programs_and_screens() {
    let mut l = Local::started();
    l.write_config(SHELL_AGENT);
    let tab = l.ok(&["agent", "sh"]);
    l.ok(&["send", &tab, "echo before-$((40+2))"]);
    l.wait_screen(&tab, "before-42");
    let pid = l.tabs_json(&[])[0]["pid"].as_u64().unwrap() as u32;
    let holder = l.holder_pid().expect("a holder runs the programs");

    // The worst case: the core dies without a word.
    signal(l.core_pid(), Signal::SIGKILL);
    l.stop_core();
    assert!(pid_alive(pid), "the program died with the core");
    l.start_core();

    let tabs = l.tabs_json(&[]);
    assert_eq!(tabs.len(), 1, "{tabs:?}");
    assert_eq!(tabs[0]["id"], tab.as_str());
    assert_eq!(tabs[0]["state"], "running");
    assert_eq!(tabs[0]["pid"], pid);
    let screen = l.ok(&["read", &tab]);
    assert!(
        screen.contains("before-42"),
        "screen not restored:\n{screen}"
    );
    l.ok(&["send", &tab, "echo after-$((50+5))"]);
    l.wait_screen(&tab, "after-55");
    assert_eq!(
        l.holder_pid(),
        Some(holder),
        "the same holder serves the new core"
    );
    // The new core can still end the program.
    l.ok(&["close", &tab]);
    assert!(!pid_alive(pid));
}

#[test]
fn after_a_full_stop_the_tabs_are_still_listed() {
    let mut l = Local::started();
    l.write_config(SHELL_AGENT);
    let tab = l.ok(&["agent", "sh"]);
    let pid = l.tabs_json(&[])[0]["pid"].as_u64().unwrap() as u32;
    let holder = l.holder_pid().unwrap();
    // Reboot-like: the core and the holder both go.
    l.stop_core();
    signal(holder, Signal::SIGKILL);
    wait_until(
        "the program to lose its terminal",
        Duration::from_secs(10),
        || !pid_alive(pid),
    );
    l.start_core();
    let tabs = l.tabs_json(&[]);
    assert_eq!(tabs.len(), 1, "{tabs:?}");
    assert_eq!(tabs[0]["id"], tab.as_str());
    assert_eq!(tabs[0]["agent"], "sh");
    assert_eq!(tabs[0]["state"], "exited");
    // A new agent still starts (with a new holder).
    let again = l.ok(&["agent", "sh"]);
    l.ok(&["send", &again, "echo fresh"]);
    l.wait_screen(&again, "\nfresh");
}

#[test]
fn a_program_outlives_a_core_stopped_with_sigterm() {
    let mut l = Local::started();
    l.write_config(SHELL_AGENT);
    let tab = l.ok(&["agent", "sh"]);
    let pid = l.tabs_json(&[])[0]["pid"].as_u64().unwrap() as u32;
    l.stop_core();
    assert!(pid_alive(pid));
    // The next command starts a core, which finds the tab.
    let _ = l.core.take();
    assert_eq!(l.tabs_json(&[])[0]["id"], tab.as_str());
    // That core was started by the command, not by the test: end it here,
    // by the PID it recorded before serving.
    let newest: u32 = std::fs::read_to_string(l.path("state/nerdr/core.pid"))
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    signal(newest, Signal::SIGTERM);
    wait_until("the started core to stop", Duration::from_secs(10), || {
        !pid_alive(newest)
    });
}

#[test]
fn with_nerdr_holder_0_programs_end_with_the_core() {
    let mut l = Local::empty();
    l.write_config(SHELL_AGENT);
    let child = l
        .cmd(&["core"])
        .env("NERDR_HOLDER", "0")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    l.core = Some(child);
    let sock = l.client_socket();
    wait_until("the core", Duration::from_secs(10), || {
        std::os::unix::net::UnixStream::connect(&sock).is_ok()
    });
    let tab = l.ok(&["agent", "sh"]);
    l.ok(&["send", &tab, "echo mine"]);
    l.wait_screen(&tab, "\nmine");
    let pid = l.tabs_json(&[])[0]["pid"].as_u64().unwrap() as u32;
    assert!(l.holder_pid().is_none(), "no holder with NERDR_HOLDER=0");
    assert!(l.core_log().contains("NERDR_HOLDER=0"), "{}", l.core_log());
    l.stop_core();
    wait_until(
        "the program to end with the core",
        Duration::from_secs(10),
        || !pid_alive(pid),
    );
}
