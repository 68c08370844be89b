//! Attacks on agent states from a program in a tab (issue 15's review):
//! what it writes reaches the person's terminal through `nerdr explain`
//! only escaped, a flood of bells (each sends the session's tab list to
//! its windows) does not grow the core's memory while a window does not
//! read (a stopped or stalled terminal), and a tab that flickers into
//! `blocked` has the `[notify]` config read once per quiet time, not once
//! per flicker, a flood of hook reports does not rewrite `tabs.json`
//! (nor send the tab list to every window) once per report, and waits
//! whose callers hung up after one byte more do not stay behind holding
//! the core's descriptors.

use std::time::Duration;

use crate::support::local::Local;
use crate::support::poll;
use crate::support::tmux::Tmux;

const SH: &str = "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n";

#[test]
fn explain_shows_what_an_agent_wrote_escaped() {
    let l = Local::started();
    l.write_config(SH);
    let tab = l.ok(&["agent", "sh"]);
    // An OSC 7501 whose payload carries SO (shift to the line-drawing
    // set), CR, BS and a C1 CSI (U+009B, a control to xterm) asking to
    // clear the screen.
    l.ok(&[
        "send",
        &tab,
        r"printf '\033]7501;state=blocked:x=\016\r\010\302\2332J\a'; echo sent",
    ]);
    l.wait_screen(&tab, "sent");
    let mut shown = String::new();
    let blocked = poll(Duration::from_secs(10), || {
        shown = l.ok(&["explain", &tab]);
        shown.contains("blocked since")
    });
    assert!(blocked, "{shown:?}");
    assert!(
        !shown.chars().any(|c| c.is_control() && c != '\n'),
        "a control character of the agent's reached the terminal: {shown:?}"
    );
    assert!(shown.contains(r"x=\u{e}\r\u{8}\u{9b}2J"), "{shown:?}");
    // The JSON carries it escaped too (the core keeps the escape).
    let json = l.ok(&["explain", &tab, "--json"]);
    assert!(!json.contains('\u{9b}'), "{json:?}");
}

fn rss_kb(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap()
}

/// The window's process: the one `nerdr` (no arguments) of this root.
fn window_pid(l: &Local) -> Option<u32> {
    let root = l.root.path().display().to_string();
    std::fs::read_dir("/proc").ok()?.find_map(|e| {
        let pid: u32 = e.ok()?.file_name().to_str()?.parse().ok()?;
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let words: Vec<&[u8]> = cmd.split(|b| *b == 0).filter(|w| !w.is_empty()).collect();
        let is_window = words.len() == 1 && (words[0] == b"nerdr" || words[0].ends_with(b"/nerdr"));
        let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
        (is_window && String::from_utf8_lossy(&env).contains(&root)).then_some(pid)
    })
}

fn signal(pid: u32, sig: nix::sys::signal::Signal) {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), sig).unwrap();
}

#[test]
fn a_bell_flood_does_not_grow_the_core_while_a_window_does_not_read() {
    if !crate::support::tmux::have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config(SH);
    let _shown = l.ok(&["agent", "sh"]);
    let flood = l.ok(&["agent", "sh"]);
    // More tabs make each tab list longer.
    for _ in 0..10 {
        l.ok(&["agent", "sh"]);
    }
    let t = Tmux::start(&l, 200, 24, "nerdr");
    t.wait("the window", |s: &[String]| {
        s.last().is_some_and(|x| x.contains("1:sh-1*"))
    });
    let win = window_pid(&l).expect("the window's process");
    let core = l.core_pid();
    // The person's terminal stops reading (Ctrl-Z, a stalled ssh).
    signal(win, nix::sys::signal::Signal::SIGSTOP);
    let before = rss_kb(core);
    l.ok(&[
        "send",
        &flood,
        "for i in $(seq 1 500000); do printf '\\a'; done; echo flood-ov\"\"er",
    ]);
    l.wait_screen_within(&flood, "flood-over", Duration::from_secs(120));
    // The core has taken every chunk by now; what it queued stays queued.
    std::thread::sleep(Duration::from_secs(3));
    let after = rss_kb(core);
    eprintln!("core rss {before} kB -> {after} kB");
    signal(win, nix::sys::signal::Signal::SIGCONT);
    assert!(
        after < before + 16 * 1024,
        "the core grew from {before} kB to {after} kB queueing tab lists for a window that \
         does not read"
    );
    // Once it reads again, it is owed the current list: the bell mark.
    t.wait("tab 2's bell mark", |s: &[String]| {
        s.last().is_some_and(|x| x.contains("2:sh-2^"))
    });
}

#[test]
fn a_flickering_tab_has_the_notify_config_read_once_per_quiet_time() {
    let l = Local::started();
    l.write_config(SH);
    let tab = l.ok(&["agent", "sh"]);
    // Broken after the launch: each read of `[notify]` is a warning in the
    // core's log, which counts the reads.
    l.write_config(&format!("{SH}[notify]\nbogus = 1\n"));
    l.ok(&[
        "send",
        &tab,
        "for i in $(seq 40); do printf '\\033]7501;state=blocked\\a'; sleep 0.02; \
         printf '\\033]7501;state=working\\a'; sleep 0.02; done; echo flicker-ov\"\"er",
    ]);
    l.wait_screen(&tab, "flicker-over");
    std::thread::sleep(Duration::from_secs(1));
    let reads = l.core_log().matches("cannot read [notify]").count();
    assert!(
        (1..=2).contains(&reads),
        "40 flickers into `blocked` within the 10 s quiet time read the config {reads} times"
    );
}

#[test]
fn a_flood_of_hook_reports_does_not_rewrite_the_tab_list() {
    let l = Local::started();
    l.write_config(SH);
    let tab = l.ok(&["agent", "sh"]);
    l.ok(&["send", &tab, "echo read\"\"y"]);
    l.wait_screen(&tab, "ready");
    let list = l.path("state/nerdr/tabs.json");
    let written = || {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(&list)
            .map(|m| (m.ino(), m.mtime_nsec()))
            .ok()
    };
    let before = written();
    assert!(before.is_some(), "no tabs.json");
    // 300 reports on one connection, as fast as the core answers, with
    // no session id: nothing in the tab list changes.
    let flood = r#"python3 -c '
import os, socket, json
s = socket.socket(socket.AF_UNIX); s.connect(os.environ["NERDR_SOCKET"])
f = s.makefile("rb")
line = (json.dumps({"id": 1, "tab": os.environ["NERDR_TAB"], "method": "report",
    "params": {"event": "PostToolUse", "data": None}}) + "\n").encode()
for i in range(300):
    s.sendall(line); assert b"error" not in f.readline()
print("reports-" + "sent")
'"#;
    l.ok(&["send", &tab, flood]);
    l.wait_screen(&tab, "reports-sent");
    assert_eq!(
        written(),
        before,
        "hook reports that change nothing in the tab list rewrote tabs.json"
    );
    // A report with a new session id is saved (resume needs it).
    l.ok(&[
        "send",
        &tab,
        r#""$NERDR_BIN" hook Stop '{"session_id":"s-1"}'; echo hook-d""one"#,
    ]);
    l.wait_screen(&tab, "hook-done");
    let saved = crate::support::poll(Duration::from_secs(10), || {
        std::fs::read_to_string(&list).is_ok_and(|t| t.contains("s-1"))
    });
    assert!(saved, "the new session id never reached tabs.json");
}

fn cpu_ticks(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let f: Vec<&str> = s[s.rfind(')').unwrap() + 2..].split_whitespace().collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

#[test]
fn waits_left_behind_by_a_program_that_hung_up_do_not_pile_up() {
    let l = Local::started();
    l.write_config(SH);
    let tab = l.ok(&["agent", "sh"]);
    l.ok(&["send", &tab, "echo read\"\"y"]);
    l.wait_screen(&tab, "ready");
    let core = l.core_pid();
    let fds = || {
        std::fs::read_dir(format!("/proc/{core}/fd"))
            .unwrap()
            .count()
    };
    let before = fds();
    // Each connection asks to wait for the tab's exit, sends one byte
    // more (which kept the wait from watching for the hang-up) and
    // closes; then one stays connected with its byte unread.
    let script = format!(
        r#"python3 -c '
import os, socket, json, time
line = (json.dumps({{"id": 1, "tab": os.environ["NERDR_TAB"], "method": "wait",
    "params": {{"tab": "{tab}", "until": "exited"}}}}) + "\n").encode()
for i in range(200):
    s = socket.socket(socket.AF_UNIX); s.connect(os.environ["NERDR_SOCKET"])
    s.sendall(line + b"{{"); s.close(); time.sleep(0.005)
s = socket.socket(socket.AF_UNIX); s.connect(os.environ["NERDR_SOCKET"])
s.sendall(line + b"{{")
print("waits-" + "left"); time.sleep(4)
print("kept-" + "wait-over")
'"#
    );
    l.ok(&["send", &tab, &script]);
    l.wait_screen(&tab, "waits-left");
    std::thread::sleep(Duration::from_millis(500));
    let ticks = cpu_ticks(core);
    std::thread::sleep(Duration::from_secs(2));
    let spent = cpu_ticks(core) - ticks;
    let after = fds();
    assert!(
        after < before + 20,
        "the core holds {after} descriptors, {before} before 200 waits whose callers hung up"
    );
    // The wait still connected, with its byte unread, costs nothing while
    // it waits (no spinning on the unread byte).
    assert!(spent < 20, "the core spent {spent} ticks on one quiet wait");
    l.wait_screen(&tab, "kept-wait-over");
}
