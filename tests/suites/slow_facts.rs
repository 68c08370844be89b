//! A fact that is slow to gather (a folder on a hung mount) delays only the
//! request that needs it: the core keeps answering everyone else. The debug
//! core is told that one folder is slow (`NERDR_TEST_SLOW_PATH`, see
//! `src/core/edge.rs`): every fact it gathers about that folder takes 10 s.

use std::time::{Duration, Instant};

use crate::support::local::Local;
use crate::support::wait_until;

const SHELL_AGENT: &str = "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n";
const SLOW: Duration = Duration::from_secs(10);

#[test]
fn a_launch_waiting_on_a_slow_folder_does_not_stall_other_tabs() {
    let mut l = Local::empty();
    l.write_config(SHELL_AGENT);
    let slow = l.work().join("on-a-hung-mount");
    std::fs::create_dir(&slow).unwrap();
    let ms = SLOW.as_millis().to_string();
    l.start_core_with(&[
        ("NERDR_TEST_SLOW_PATH", slow.to_str().unwrap()),
        ("NERDR_TEST_SLOW_MS", &ms),
    ]);
    let a = l.ok(&["agent", "sh"]);
    let b = l.ok(&["agent", "sh"]);

    // Tab a starts an agent in the slow folder: its launch waits on it.
    l.ok(&[
        "send",
        &a,
        &format!("cd {} && \"$NERDR_BIN\" agent sh", slow.display()),
    ]);
    let launched = Instant::now();
    // Time for the shell to run it and the request to reach the core.
    std::thread::sleep(Duration::from_millis(500));

    let mut answered = Vec::new();
    for (what, args) in [
        ("nerdr tabs", vec!["tabs", "--all"]),
        ("nerdr read", vec!["read", &b]),
        ("nerdr send", vec!["send", &b, "echo still-here"]),
        ("nerdr read", vec!["read", &b]),
    ] {
        let t = Instant::now();
        l.ok(&args);
        answered.push((what, t.elapsed()));
    }
    for (what, took) in &answered {
        assert!(
            *took < Duration::from_secs(1),
            "{what} took {took:?} while a launch waited on a slow folder"
        );
    }
    assert!(
        launched.elapsed() < SLOW - Duration::from_secs(2),
        "the checks ran after the slow launch could have ended: they prove nothing"
    );
    l.wait_screen(&b, "\nstill-here");

    // The launch itself still happens, once its facts are in.
    wait_until("the slow launch to finish", SLOW * 2, || {
        l.tabs_json(&["--all"])
            .iter()
            .any(|t| t["folder"].as_str() == Some(&slow.display().to_string()))
    });
    assert!(
        launched.elapsed() >= SLOW - Duration::from_millis(500),
        "the launch did not wait for its slow folder ({:?}): the test's slow path is not in effect",
        launched.elapsed()
    );
}
