//! The alternate screen across a window's re-attach and a core restart,
//! against the same program in a tmux pane (`support::twin`): a window
//! attached while a program is in its alternate screen must follow it
//! back to the main screen, and `less` must come back cell for cell after
//! `systemctl --user restart nerdr.service`.

use std::time::{Duration, Instant};

use crate::suites::fidelity::{have, twin_env};
use crate::support::twin::{describe_difference, program, side_by_side_as, Capture, Twin};

/// Main-screen lines, then the alternate screen until a key, then the
/// main screen again with a line saying so.
const ALTERNATE: &str = r#"
import os, sys, termios, tty
out = sys.stdout
out.write("\x1b[1mmain screen\x1b[0m: line one\r\nline two \x1b[32mgreen\x1b[0m\r\n")
out.write("\x1b[?1049h\x1b[H\x1b[2J\x1b[7m ALTERNATE SCREEN \x1b[0m\r\n\x1b[5;10Hpress a key")
out.flush()
old = termios.tcgetattr(0)
tty.setraw(0)
os.read(0, 1)
termios.tcsetattr(0, termios.TCSADRAIN, old)
out.write("\x1b[?1049lback on the main screen\r\n")
out.flush()
"#;

/// The window's pane left for good: the window ended.
fn wait_window_gone(twin: &Twin) {
    twin.tmux
        .wait_within("the window to end", Duration::from_secs(15), |s| {
            s.iter().any(|l| l.contains("EXITED="))
        });
}

fn trimmed(lines: &[String]) -> Vec<String> {
    let mut v: Vec<String> = lines.iter().map(|l| l.trim_end().to_string()).collect();
    while v.last().is_some_and(|l| l.is_empty()) {
        v.pop();
    }
    v
}

#[test]
fn fidelity_a_reattached_window_follows_the_program_out_of_the_alternate_screen() {
    if !have("python3") {
        return;
    }
    let Some(env) = twin_env() else { return };
    let script = program(&env, "alternate.py", ALTERNATE.as_bytes());
    let twin = Twin::start(
        &env,
        24,
        80,
        &format!("python3 {}; exec sleep 600", script.display()),
    );
    twin.wait_both("press a key", Duration::from_secs(20));
    twin.assert_same("in the alternate screen, before the detach");
    twin.keys_window(&["C-b", "d"]);
    wait_window_gone(&twin);
    twin.respawn_window("nerdr attach");
    twin.wait_window_shows_tab();
    twin.keys(&["x"]);
    let vs_tmux = twin.compare_like_within(
        "after a detach, `nerdr attach` and a key that takes the program out of its \
         alternate screen",
        Duration::from_secs(6),
        &|_| {},
    );
    // The window shows what the core's model of the tab has, and that is
    // what tmux has: which of the two is stale.
    let window = twin.capture().1.text();
    let read: Vec<String> = twin.nerdr_read().lines().map(str::to_string).collect();
    let mut wrong = Vec::new();
    if let Err(why) = vs_tmux {
        wrong.push(why);
    }
    if trimmed(&window) != trimmed(&read) {
        wrong.push(format!(
            "the window and `nerdr read` (the core's model of the tab) disagree\n{}",
            side_by_side_as(("window", "nerdr read"), &window, &read, &[])
        ));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A file for `less`: numbered lines, some coloured, longer than a screen.
fn long_file() -> String {
    (1..=300)
        .map(|i| match i % 4 {
            0 => format!("line {i:03} \x1b[31mred\x1b[0m and \x1b[1;44mbold on blue\x1b[0m\n"),
            1 => format!("line {i:03} {}\n", "wide ".repeat(i % 17)),
            _ => format!("line {i:03}\n"),
        })
        .collect()
}

/// The window's rows until they equal `want`, or fail after `timeout`.
fn window_until(twin: &Twin, want: &Capture, what: &str, timeout: Duration) {
    let end = Instant::now() + timeout;
    loop {
        let (_, nerdr) = twin.capture();
        if &nerdr == want {
            return;
        }
        if Instant::now() > end {
            panic!(
                "{what}: the window does not show what it showed before (left: before, \
                 right: now)\n{}",
                describe_difference(want, &nerdr)
            );
        }
        std::thread::sleep(Duration::from_millis(150));
    }
}

#[test]
fn fidelity_less_in_the_alternate_screen_survives_a_core_restart_cell_for_cell() {
    if !have("less") {
        return;
    }
    let Some(env) = twin_env() else { return };
    let file = program(&env, "long.txt", long_file().as_bytes());
    let twin = Twin::start(
        &env,
        24,
        80,
        &format!("less -R {}; exec sleep 600", file.display()),
    );
    twin.wait_both("line 001", Duration::from_secs(20));
    twin.keys(&["Space", "j", "j"]);
    let before = twin.assert_same("less, one page and two lines down");
    let old = env.unit_prop("nerdr.service", "MainPID");
    env.systemctl(&["restart", "nerdr.service"]);
    let new = env.unit_prop("nerdr.service", "MainPID");
    assert_ne!(old, new, "nerdr.service did not restart");
    window_until(
        &twin,
        &before,
        "the window riding through `systemctl --user restart nerdr.service`",
        Duration::from_secs(20),
    );
    // A window that attaches afresh gets the same screen from the new core.
    twin.keys_window(&["C-b", "d"]);
    wait_window_gone(&twin);
    twin.respawn_window("nerdr attach");
    twin.wait_window_shows_tab();
    window_until(
        &twin,
        &before,
        "a new window after the restart",
        Duration::from_secs(10),
    );
    // And the program still gets keys and draws like tmux.
    twin.keys(&["k", "G"]);
    twin.assert_same("less after the restart, at the end of the file");
    twin.keys(&["q"]);
    twin.assert_same("less quit: the main screen back");
}
