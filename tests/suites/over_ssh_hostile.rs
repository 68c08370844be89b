//! The window over `nerdr --host` against a far end that is no nerdr
//! (issue 22, second review, findings 1 and 2): a real OpenSSH server
//! (`support::sshd`) whose `[hosts] nerdr` program is a small hostile
//! bridge of the test's own ([`FAR_END`], python3, which CI installs). It
//! greets and welcomes as a bridge does, shows one tab, and once the
//! window shows that tab's first paint it attacks:
//!
//! - `flood`: data frames of the largest size a frame may have
//!   (`MAX_FRAME`, 32 MiB) for the shown tab, without end. A window that
//!   queued them and wrote them to its terminal held more than a gigabyte
//!   and took no key for minutes.
//! - `mute`: a welcome that asks for an acknowledgement of every byte
//!   (`ack_every` 0), tiny data frames without end, and stdin never read.
//!   A window whose frames to the core waited in an unbounded queue grew
//!   it by one to three megabytes a second.
//!
//! Each test measures the window process itself (`/proc/PID/status`:
//! `VmHWM`, its peak resident memory, and `VmRSS`) while the far end
//! attacks, then types the prefix and `d` as a person would and wants
//! the window gone, its farewell on the screen, within a deadline.
//!
//! As in `over_ssh_window`, the window runs with a runtime dir of its own
//! that holds no core: the far end is all it talks to.

use std::time::{Duration, Instant};

use super::over_ssh_window::here_runtime;
use crate::support::sshd::{Sshd, ALIAS};
use crate::support::sysenv::SystemdEnv;
use crate::support::tmux::have_tmux;
use crate::support::user_tmux::UserTmux;

/// The hostile bridge, named by `[hosts.NAME] nerdr`; ssh runs it as
/// `PATH bridge`, and its file name is its attack. It waits for `~/go`
/// (the test makes it once the window shows the tab) and counts the
/// bytes it wrote in `~/sent`.
const FAR_END: &str = r#"#!/usr/bin/env python3
import json, os, struct, sys, time

MAX_FRAME = 32 << 20
mode = os.path.basename(sys.argv[0])
home = os.environ["HOME"]
out = sys.stdout.buffer

def frame(kind, body):
    return struct.pack(">I", len(body) + 1) + bytes([kind]) + body

def control(msg):
    return frame(1, json.dumps(msg).encode())

def data(paint):
    return frame(2, b"\x02t1" + paint)

def send(b):
    out.write(b)
    out.flush()

send(control({"bridge": 1, "protocol": 2, "nerdr": "0.0.0 (hostile)", "home": home, "env": []}))
welcome = {"type": "welcome", "core_pid": 1}
welcome["ack_every"] = 0 if mode == "mute" else 16384
send(control(welcome))
tab = {"id": "t1", "name": "hostile", "number": 1, "folder": home, "agent": "sh",
       "command": ["sh"], "sandboxed": False, "state": "running", "pid": None,
       "exit_code": None}
send(control({"type": "tabs", "folder": home, "tabs": [tab], "approvals": 0}))
send(control({"type": "redraw", "tab": "t1", "rows": 29, "cols": 100}))
send(data(b"\x1b[H\x1b[2JHOSTILE-" + mode.upper().encode() + b"-READY"))
while not os.path.exists(os.path.join(home, "go")):
    time.sleep(0.05)

if mode == "flood":
    # The largest frame: its length counts the kind byte.
    burst = data(b"x" * (MAX_FRAME - 1 - 3))
elif mode == "screens":
    # Frames under every byte bound but far past a screen, each after a
    # history nobody asked for (scroll mode would hold the keys).
    history = control({"type": "history", "tab": "t1", "lines": ["h"] * 100000})
    burst = history + data(b"x" * ((16 << 20) - 64))
else:
    # Empty paint: each frame is 3 bytes of body, all of it "paint" to
    # acknowledge at once.
    burst = data(b"") * 8192
sent = 0
while True:
    send(burst)
    sent += len(burst)
    with open(os.path.join(home, "sent.tmp"), "w") as f:
        f.write(str(sent))
    os.rename(os.path.join(home, "sent.tmp"), os.path.join(home, "sent"))
"#;

const MIB: u64 = 1 << 20;

/// How long a person may wait for the prefix and `d` to take the window
/// away, the far end attacking all along.
const DETACH_WITHIN: Duration = Duration::from_secs(10);

/// The environment, sshd, and `[hosts.MODE]` whose nerdr is [`FAR_END`]
/// attacking as MODE. `None`: skipped (said loudly).
fn hostile(mode: &str) -> Option<(SystemdEnv, Sshd)> {
    if !have_tmux() {
        return None;
    }
    let env = SystemdEnv::start()?;
    let sshd = Sshd::start(&env)?;
    let far = env.write_user_file(format!("far/{mode}"), FAR_END);
    env.run(&["chmod", "0755", &far.display().to_string()]);
    env.write_user_file(
        ".config/nerdr/config.toml",
        format!(
            "[hosts.{mode}]\nssh = \"{ALIAS}\"\nnerdr = \"{}\"\n",
            far.display()
        ),
    );
    Some((env, sshd))
}

/// The window, `nerdr --host MODE`, in the user's tmux, showing the far
/// end's tab; and its PID.
fn window<'a>(env: &'a SystemdEnv, mode: &str) -> (UserTmux<'a>, u32) {
    let cmd = format!(
        "XDG_RUNTIME_DIR={} nerdr --host {mode}",
        here_runtime(env).display()
    );
    let t = UserTmux::start(env, env.home(), 100, 30, &cmd);
    t.wait_text(&format!("HOSTILE-{}-READY", mode.to_uppercase()));
    let pid = window_pid(env, mode).expect("the window's process");
    (t, pid)
}

/// The window process of `nerdr --host MODE`: this environment's (its
/// cgroup, the test user), not another test's.
fn window_pid(env: &SystemdEnv, mode: &str) -> Option<u32> {
    let want = format!("nerdr\0--host\0{mode}\0");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .find(|pid| {
            let args = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let cgroup = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
            args == want.as_bytes()
                && cgroup.contains(env.cgroup())
                && status_field(*pid, "Uid:").is_some_and(|u| u == u64::from(env.uid()))
        })
}

/// The first number of `field` in `/proc/PID/status` (kB for the
/// memory fields), while the process lives.
fn status_field(pid: u32, field: &str) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix(field))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Bytes of memory `field` (`VmHWM`, `VmRSS`) of the window.
fn memory(pid: u32, field: &str) -> u64 {
    status_field(pid, &format!("{field}:")).unwrap_or_else(|| panic!("{field} of {pid}")) * 1024
}

/// What the far end wrote so far.
fn far_end_sent(env: &SystemdEnv) -> u64 {
    std::fs::read_to_string(env.home().join("sent"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// The far end attacks from now.
fn go(env: &SystemdEnv) {
    env.write_user_file("go", "");
}

/// The prefix and `d`, typed: how long until the window was gone, its
/// farewell and a clean exit on the screen; `Err` with the screen when
/// that took longer than [`DETACH_WITHIN`].
fn detach(t: &UserTmux, pid: u32) -> Result<Duration, String> {
    let typed = Instant::now();
    t.keys(&["C-b", "d"]);
    let mut last = vec![];
    let exited = crate::support::poll(DETACH_WITHIN, || {
        last = t.screen();
        last.iter().any(|l| l.contains("EXITED="))
    });
    let took = typed.elapsed();
    let farewell =
        last.iter().any(|l| l.contains("[detached]")) && last.iter().any(|l| l == "EXITED=0");
    if !exited || !farewell || status_field(pid, "VmRSS:").is_some() {
        return Err(format!(
            "the window did not detach within {DETACH_WITHIN:?}; the screen's last lines:\n{}",
            last[last.len().saturating_sub(3)..].join("\n")
        ));
    }
    Ok(took)
}

/// Finding 1: a flood of the largest frames for the shown tab. The
/// window holds at most a frame read, one waiting and one taken (32 MiB
/// each, `conn::WAITING_BYTES` lets a larger frame wait alone) and drops
/// a frame of paint past a screen (`View::paint_max`): about 100 MiB over
/// its own few, so 200 MiB is the bound, with room for the allocator (it peaks
/// near 60 MiB). Before the fix it held about a gigabyte (16 frames
/// waiting and the paint growing) and took no key in the 10 s allowed;
/// the far end wrote over a gigabyte in 12 s either way.
#[test]
fn a_far_end_flooding_the_largest_frames_neither_bloats_nor_freezes_the_window() {
    let Some((env, _sshd)) = hostile("flood") else {
        return;
    };
    let (t, pid) = window(&env, "flood");
    let before = memory(pid, "VmHWM");
    go(&env);
    // 12 s of flood, or until the far end wrote 1.5 GiB: past what the
    // unfixed window held.
    let start = Instant::now();
    let mut peak = 0;
    while start.elapsed() < Duration::from_secs(12) && far_end_sent(&env) < 1536 * MIB {
        peak = peak.max(memory(pid, "VmRSS"));
        std::thread::sleep(Duration::from_millis(100));
    }
    let sent = far_end_sent(&env);
    let hwm = memory(pid, "VmHWM");
    eprintln!(
        "flood: the far end wrote {} MiB in {:?}; the window's peak {} MiB (VmRSS seen {} MiB, \
         {} MiB before)",
        sent / MIB,
        start.elapsed(),
        hwm / MIB,
        peak / MIB,
        before / MIB
    );
    assert!(
        sent >= 8 * (32 * MIB),
        "the far end flooded: {} MiB",
        sent / MIB
    );
    let detached = detach(&t, pid);
    eprintln!("flood: detached: {detached:?}");
    assert!(
        hwm < 200 * MIB && detached.is_ok(),
        "the window held {} MiB at its peak under the flood (200 MiB allowed); {detached:?}",
        hwm / MIB
    );
}

/// The second review's re-attack: frames of paint under every byte bound
/// (16 MiB) but far past a screen, each after a history nobody asked
/// for. Written out, each held the window in one write to the terminal
/// for many seconds (tmux draws under 1 MB/s), and the history put it in
/// scroll mode, where the prefix does not detach: no detach in 120 s. Now
/// such a frame is dropped for a whole screen and the history opens
/// nothing: the prefix and `d` take the window away at once.
#[test]
fn a_far_end_painting_past_a_screen_does_not_hold_the_keys() {
    let Some((env, _sshd)) = hostile("screens") else {
        return;
    };
    let (t, pid) = window(&env, "screens");
    go(&env);
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(8) && far_end_sent(&env) < 256 * MIB {
        std::thread::sleep(Duration::from_millis(100));
    }
    let sent = far_end_sent(&env);
    assert!(sent >= 64 * MIB, "the far end painted: {} MiB", sent / MIB);
    let screen = t.screen().join("\n");
    assert!(
        !screen.contains("xxxxxxxx"),
        "the paint was written:\n{screen}"
    );
    let detached = detach(&t, pid);
    eprintln!("screens: {} MiB sent; detached: {detached:?}", sent / MIB);
    assert!(detached.is_ok(), "{detached:?}");
}

/// Finding 2: a far end that asks for an acknowledgement of every byte,
/// floods tiny frames and never reads. Once ssh's buffers are full the
/// window's frames to it wait in a bounded queue, and an acknowledgement
/// is not queued while one waits: its memory stays flat. Before the fix
/// the queue grew by one to three megabytes a second, 25 to 45 MiB over
/// the 15 s measured, far past the 6 MiB of growth allowed here (the
/// window's own buffers settle within the first seconds, before the
/// first sample).
#[test]
fn a_far_end_that_never_reads_does_not_grow_the_windows_queue() {
    let Some((env, _sshd)) = hostile("mute") else {
        return;
    };
    let (t, pid) = window(&env, "mute");
    go(&env);
    // ssh's channel and the pipes fill first.
    std::thread::sleep(Duration::from_secs(4));
    let from = memory(pid, "VmRSS");
    let sent_from = far_end_sent(&env);
    let start = Instant::now();
    let mut samples = vec![];
    while start.elapsed() < Duration::from_secs(15) {
        std::thread::sleep(Duration::from_secs(1));
        samples.push(memory(pid, "VmRSS") / 1024);
    }
    let to = memory(pid, "VmRSS");
    let hwm = memory(pid, "VmHWM");
    let frames = (far_end_sent(&env) - sent_from) / 7;
    eprintln!(
        "mute: {frames} frames taken in 15 s; the window's VmRSS {} KiB -> {} KiB \
         (each second, KiB: {samples:?}), peak {} KiB",
        from / 1024,
        to / 1024,
        hwm / 1024
    );
    assert!(
        frames >= 100_000,
        "the far end flooded the window: {frames} frames in 15 s"
    );
    let detached = detach(&t, pid);
    eprintln!("mute: detached: {detached:?}");
    assert!(
        to.saturating_sub(from) < 6 * MIB && hwm < 100 * MIB && detached.is_ok(),
        "the window grew by {} KiB in 15 s of a far end that never reads (6 MiB allowed), \
         peak {} MiB (100 MiB allowed); {detached:?}",
        to.saturating_sub(from) / 1024,
        hwm / MIB
    );
}
