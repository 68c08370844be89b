//! A program that floods its terminal with queries and never reads its
//! input: the answers it asked for are dropped once its input queue is
//! full, so the holder stays bounded; other tabs still answer and echo;
//! and typing into the stuck tab is refused, naming it.

use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use crate::support::local::Local;
use crate::support::wait_until;

/// Primary device attribute queries (`ESC [ c`, answered with 7 bytes
/// each), written in 64 KiB pieces; its own terminal in raw mode, so the
/// answers are not echoed, and stdin never read.
const FLOODER: &str = r#"
import sys, time, tty
tty.setraw(0)
piece = b"\x1b[c" * 21845
for _ in range(MB * 16):
    sys.stdout.buffer.write(piece)
sys.stdout.buffer.write(b"flooded\r\n")
sys.stdout.buffer.flush()
time.sleep(3600)
"#;

/// Queries sent: their answers (7/3 as many bytes) would all wait in the
/// holder without a cap.
const MB: usize = 24;

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no VmRSS in {status}"))
}

#[test]
fn a_program_flooding_queries_without_reading_keeps_the_holder_bounded() {
    let l = Local::started();
    let script = l.path("flood.py");
    std::fs::write(&script, FLOODER.replace("MB", &MB.to_string())).unwrap();
    l.write_config(&format!(
        "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n\
         [agents.flood]\ncommand = [\"python3\", \"{}\"]\n",
        script.display()
    ));
    let other = l.ok(&["agent", "sh"]);
    l.ok(&["send", &other, "echo ready-$((2+3))"]);
    l.wait_screen(&other, "ready-5");
    let holder = l.holder_pid().expect("a holder runs the programs");
    let before = rss_kib(holder);

    let stuck = l.ok(&["agent", "flood"]);
    l.wait_screen_within(&stuck, "flooded", Duration::from_secs(120));
    let log = || std::fs::read_to_string(l.path("state/nerdr/holder.log")).unwrap_or_default();
    wait_until(
        "the holder to drop the answers nobody reads",
        Duration::from_secs(30),
        || log().contains("its terminal's answers are dropped until it does"),
    );
    let dropping = log()
        .lines()
        .filter(|l| l.contains("answers are dropped"))
        .count();
    assert_eq!(
        dropping,
        1,
        "logged once per tab, not per answer:\n{}",
        log()
    );
    assert!(log().contains(&stuck), "the log names the tab:\n{}", log());
    // All of the flood reached the core before its last line did, so all
    // of its answers are with the holder (or dropped) by now.
    let after = rss_kib(holder);
    let grew = after.saturating_sub(before);
    let answers_kib = (MB as u64 * 1024) / 3 * 7;
    eprintln!(
        "holder VmRSS {before} KiB before, {after} KiB after {MB} MiB of queries \
         ({answers_kib} KiB of answers)"
    );
    // The cap, the program's kept output and the allocator's slack: 4 to
    // 6 MiB in quiet trials, 16 MiB once under CI's load; without a cap,
    // all of the answers (56 MiB), so the bound sits well between.
    assert!(
        grew < 24 * 1024,
        "the holder grew by {grew} KiB for {answers_kib} KiB of answers nobody reads"
    );

    // Another tab is served as before: its queries answered, its keys echoed.
    l.ok(&[
        "send",
        &other,
        r#"printf '\e[c'; IFS= read -rsd c r; echo "da1-${r:2}""#,
    ]);
    l.wait_screen(&other, "da1-?1;2");
    l.ok(&["send", &other, "echo hi-$((6*7))"]);
    l.wait_screen(&other, "hi-42");

    // Typing into the stuck tab is refused, clearly, and names it.
    let err = l.fails(&["send", &stuck, "hello"]);
    assert!(
        err.contains(&format!("tab {stuck}")) && err.contains("not reading its input"),
        "{err}"
    );
    // The refusal is logged once too, and the tab still runs.
    let _ = l.fails(&["send", &stuck, "again"]);
    let refused = log()
        .lines()
        .filter(|l| l.contains("typed input is refused"))
        .count();
    assert_eq!(refused, 1, "{}", log());
    let tabs = l.tabs_json(&[]);
    let t = tabs.iter().find(|t| t["id"] == stuck.as_str()).unwrap();
    assert_eq!(t["state"], "running", "{tabs:?}");
}

/// Output a program wrote just before it was stopped is still on its way
/// when its tab starts it again: it must not count as the new program's,
/// or the holder refuses every snapshot of the tab until the core restarts
/// (the core counts bytes the holder never kept for that program).
#[test]
fn a_restarted_tab_s_snapshots_are_adopted_despite_its_old_program_s_last_output() {
    let l = Local::started();
    // Floods, then says so: the last program's flood passes whole, and
    // the test knows when (some 7 MiB, a snapshot per 256 KiB of it).
    let flood = "i=0; while [ $i -lt 200000 ]; do echo chatter-chatter-chatter-$i; \
                 i=$((i+1)); done; echo flood-ended; exec sleep 3600";
    let tab = l.ok(&["agent", "--", "sh", "-c", flood]);
    let core = Pid::from_raw(l.core_pid() as i32);
    for _ in 0..RESTARTS {
        l.wait_screen(&tab, "chatter-chatter-");
        // The core stops reading for a moment, so the holder's queues to
        // it are full of the program's output when the restart stops it.
        kill(core, Signal::SIGSTOP).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        let mut restart = l.cmd(&["restart", "--force", &tab]).spawn().unwrap();
        // Then it runs in short slices until the restart is done: it
        // reads the old program's output slower than the holder waits for
        // a stopped program's reader (300 ms), so the holder answers
        // `stopped` with some of that output still to forward, which can
        // reach the core after the new program started.
        let status = loop {
            kill(core, Signal::SIGCONT).unwrap();
            std::thread::sleep(Duration::from_millis(20));
            if let Some(status) = restart.try_wait().unwrap() {
                break status;
            }
            kill(core, Signal::SIGSTOP).unwrap();
            std::thread::sleep(Duration::from_millis(60));
        };
        let out = restart.wait_with_output().unwrap();
        assert!(status.success(), "{out:?}");
    }
    let log = || std::fs::read_to_string(l.path("state/nerdr/holder.log")).unwrap_or_default();
    l.wait_screen_within(&tab, "flood-ended", Duration::from_secs(180));
    // The holder takes the core's messages in order: once it has taken
    // this typed input, it has taken every snapshot of the flood.
    l.ok(&["send", &tab, "x"]);
    assert!(
        !log().contains("ignored a core's snapshot"),
        "the holder refused the restarted tab's snapshots:\n{}",
        log()
    );
}

/// Restarts of a flooding tab, each a chance for its old output to come
/// late (without generations, half of the runs of 10 saw one).
const RESTARTS: usize = 12;
