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
    let newest: u32 = l.recorded_core_pid();
    signal(newest, Signal::SIGTERM);
    wait_until("the started core to stop", Duration::from_secs(10), || {
        !pid_alive(newest)
    });
}

#[test]
fn with_nerdr_holder_0_programs_end_with_the_core() {
    let mut l = Local::empty();
    l.write_config(SHELL_AGENT);
    l.start_core_with(&[("NERDR_HOLDER", "0")]);
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

/// Processes whose command line is `words`, the program compared by file
/// name (nerdr runs it by its resolved path).
fn processes(words: &[&str]) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(raw) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
                return false;
            };
            let got: Vec<String> = raw
                .split(|b| *b == 0)
                .filter(|w| !w.is_empty())
                .map(|w| String::from_utf8_lossy(w).into_owned())
                .collect();
            got.len() == words.len()
                && got.first().map(|p| p.rsplit('/').next().unwrap_or(p)) == words.first().copied()
                && got[1..] == words[1..]
        })
        .filter(|pid| pid_alive(*pid))
        .collect()
}

#[test]
fn closing_an_exited_tab_ends_what_its_program_left_running() {
    let l = Local::started();
    // The program exits at once, leaving a child that ignores hangups.
    l.write_config(
        "[agents.leaver]\ncommand = [\"sh\", \"-c\", \"(trap '' HUP; exec sleep 5551) & sleep 0.2; exit 0\"]\n",
    );
    let tab = l.ok(&["agent", "leaver"]);
    wait_until("the tab to exit", Duration::from_secs(10), || {
        l.tabs_json(&[])[0]["state"] == "exited"
    });
    assert_eq!(
        processes(&["sleep", "5551"]).len(),
        1,
        "the leftover should run until close"
    );
    l.ok(&["close", &tab]);
    wait_until(
        "the leftover to be ended by close",
        Duration::from_secs(10),
        || processes(&["sleep", "5551"]).is_empty(),
    );
}

#[test]
fn closing_a_tab_while_it_starts_leaves_no_program_behind() {
    let l = Local::started();
    l.write_config("[agents.slow]\ncommand = [\"sleep\", \"5552\"]\n");
    // Make the launch wait: the holder is paused while it is asked.
    l.ok(&["tabs"]);
    let holder = l.holder_pid().unwrap();
    signal(holder, Signal::SIGSTOP);
    let agent = l
        .cmd(&["agent", "slow"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut starting = String::new();
    wait_until(
        "the tab to show as starting",
        Duration::from_secs(10),
        || {
            let tabs = l.tabs_json(&[]);
            match tabs.first() {
                Some(t) if t["state"] == "starting" => {
                    starting = t["id"].as_str().unwrap().to_string();
                    true
                }
                _ => false,
            }
        },
    );
    let close = l.cmd(&["close", &starting]).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    signal(holder, Signal::SIGCONT);
    let out = agent.wait_with_output().unwrap();
    let _ = close.wait_with_output();
    // Either the launch lost the race (and says the tab was closed), or it
    // won and the close ended it right after: no tab either way.
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("closed while"), "{err}");
    }
    assert!(l.tabs_json(&[]).is_empty());
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        processes(&["sleep", "5552"]).is_empty(),
        "a closed tab's program runs unseen"
    );
}

#[test]
fn a_lost_holder_ends_the_core_and_the_next_command_starts_afresh() {
    let mut l = Local::started();
    l.write_config(SHELL_AGENT);
    let tab = l.ok(&["agent", "sh"]);
    let holder = l.holder_pid().unwrap();
    signal(holder, Signal::SIGKILL);
    let mut core = l.core.take().unwrap();
    let status = core.wait().unwrap();
    assert!(
        !status.success(),
        "the core kept running without its holder"
    );
    assert!(l.core_log().contains("lost the holder"), "{}", l.core_log());
    // The next command starts a new core, which starts a new holder.
    let tabs = l.tabs_json(&[]);
    assert_eq!(tabs[0]["id"], tab.as_str());
    assert_eq!(tabs[0]["state"], "exited");
    let again = l.ok(&["agent", "sh"]);
    l.ok(&["send", &again, "echo afresh"]);
    l.wait_screen(&again, "\nafresh");
    assert_ne!(l.holder_pid(), Some(holder));
    // That core was started by a command: end it by its recorded PID.
    let core_pid: u32 = l.recorded_core_pid();
    signal(core_pid, Signal::SIGTERM);
    wait_until("the started core to stop", Duration::from_secs(10), || {
        !pid_alive(core_pid)
    });
}

#[test]
fn a_core_killed_mid_launch_leaves_the_tab_to_the_next_core() {
    let mut l = Local::started();
    l.write_config("[agents.slow]\ncommand = [\"sleep\", \"5553\"]\n");
    l.ok(&["tabs"]);
    let holder = l.holder_pid().unwrap();
    // The launch is asked of a paused holder, and its core dies meanwhile.
    signal(holder, Signal::SIGSTOP);
    let agent = l
        .cmd(&["agent", "slow"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_until(
        "the tab to show as starting",
        Duration::from_secs(10),
        || {
            l.tabs_json(&[])
                .first()
                .is_some_and(|t| t["state"] == "starting")
        },
    );
    let tab = l.tabs_json(&[])[0]["id"].as_str().unwrap().to_string();
    signal(l.core_pid(), Signal::SIGKILL);
    l.stop_core();
    let _ = agent.wait_with_output();
    signal(holder, Signal::SIGCONT);
    l.start_core();
    // The new core knows the tab, and that its program runs.
    wait_until(
        "the tab to run under the new core",
        Duration::from_secs(10),
        || {
            l.tabs_json(&[])
                .iter()
                .any(|t| t["id"] == tab.as_str() && t["state"] == "running")
        },
    );
    assert_eq!(processes(&["sleep", "5553"]).len(), 1);
    l.ok(&["close", &tab]);
    wait_until("the program to end", Duration::from_secs(10), || {
        processes(&["sleep", "5553"]).is_empty()
    });
}
