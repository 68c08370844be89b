//! The window over `nerdr --host` on a slow link (issue 22: "a slow link
//! gets fewer, newer frames, not a backlog"), with real parts: a real
//! OpenSSH server (`support::sshd`), reached through a loopback relay that
//! carries what comes back at 100 KB/s and counts it
//! (`support::slow_link`), and a tab there whose program writes as fast as
//! it can for 8 seconds (random lines, so every frame changes the whole
//! screen), then a marker line.
//!
//! With paint acknowledgements (`protocol::acks`) the core there holds
//! each frame while the window has not acknowledged the paint before it,
//! so what crosses the link is a small part of what the program wrote,
//! and once the output stops the marker comes after at most what was in
//! flight. A window of an earlier build, which acknowledges nothing
//! (`NERDR_TEST_WINDOW_ACKS=0`), still works as before, but the frames the
//! core made while ssh's and TCP's buffers filled reach it first: a
//! backlog of megabytes between the end of the output and the marker.

use std::path::Path;
use std::time::{Duration, Instant};

use super::over_ssh_window::{here, here_runtime, remote};
use crate::support::poll;
use crate::support::slow_link::SlowLink;
use crate::support::tmux::have_tmux;
use crate::support::user_tmux::UserTmux;

/// What comes back over the link, in bytes a second.
const RATE: u64 = 100_000;

/// The program in the tab: 8 s of 150-column random lines, as fast as
/// they are taken, counted; then a marker (computed, so the typed
/// command line does not show it).
const FLOOD: &str = "#!/bin/bash\n\
    timeout 8 base64 -w 150 /dev/urandom | tee >(wc -c > ~/flood.count)\n\
    touch ~/flood.done\n\
    echo \"MARK-$((40+2))\"\n";

/// What one run saw.
#[derive(Debug)]
struct Run {
    /// Bytes the program wrote.
    wrote: u64,
    /// Bytes the link carried to the window, in all.
    crossed: u64,
    /// Of those, the ones carried after the program's output stopped and
    /// before the window showed the marker.
    after_stop: u64,
    /// How long after the output stopped the marker showed.
    marker_after: Duration,
}

/// The flood in a tab there, watched by a window here through the slow
/// link; the window acknowledges its paint when `acks`. `None`: skipped.
fn flood_over_a_slow_link(acks: bool) -> Option<Run> {
    if !have_tmux() {
        return None;
    }
    let (env, sshd) = remote()?;
    let link = SlowLink::start(sshd.port, RATE);
    sshd.alias_through(&env, "slow", link.port);
    crate::support::sshd::devbox_config(
        &env,
        "[hosts.slowbox]\nssh = \"slow\"\nfolder = \"~/proj\"\n",
    );
    env.write_user_file("flood.sh", FLOOD);
    here(&env, crate::support::sshd::BASH_ON_DEVBOX);
    here(&env, &["--host", "devbox", "send", "1", "PS1='$ '"]);

    let knob = if acks {
        ""
    } else {
        "NERDR_TEST_WINDOW_ACKS=0 "
    };
    let window = format!(
        "XDG_RUNTIME_DIR={} {knob}nerdr --host slowbox",
        here_runtime(&env).display()
    );
    let t = UserTmux::start(&env, env.home(), 200, 50, &window);
    t.wait_text("1:");
    t.wait_text("$ ");
    // Typed there over the fast alias: the slow link carries the paint.
    here(&env, &["--host", "devbox", "send", "1", "bash ~/flood.sh"]);

    let done = env.home().join("flood.done");
    assert!(
        poll(Duration::from_secs(90), || done.exists()),
        "the program did not end"
    );
    let (stopped, at_stop) = (Instant::now(), link.down_bytes());
    t.wait_within(
        "the marker after the output",
        Duration::from_secs(180),
        |s| s.iter().any(|l| l.contains("MARK-42")),
    );
    let (marker_after, crossed) = (stopped.elapsed(), link.down_bytes());
    let count = env.home().join("flood.count");
    let wrote = read_count(&count);
    let run = Run {
        wrote,
        crossed,
        after_stop: crossed - at_stop,
        marker_after,
    };
    eprintln!(
        "slow link, acks {acks}: the program wrote {wrote} bytes, the link carried {crossed}, \
         {} of them after the output stopped; the marker showed {:?} after it stopped",
        run.after_stop, run.marker_after
    );
    Some(run)
}

/// The program's byte count, once `wc` has written it.
fn read_count(path: &Path) -> u64 {
    let mut n = None;
    assert!(
        poll(Duration::from_secs(30), || {
            n = std::fs::read_to_string(path)
                .ok()
                .and_then(|s| s.trim().parse().ok());
            n.is_some()
        }),
        "no count in {}",
        path.display()
    );
    n.unwrap()
}

#[test]
fn a_slow_link_gets_fewer_newer_frames_not_a_backlog() {
    let Some(run) = flood_over_a_slow_link(true) else {
        return;
    };
    // Fewer frames: a small part of what the program wrote crossed.
    assert!(
        run.crossed * 4 < run.wrote,
        "the link carried most of the output: {run:?}"
    );
    // Newer: once the output stopped, the marker came after what was in
    // flight (64 KiB of paint, with ssh's framing), not after a backlog.
    assert!(
        run.after_stop < 512 << 10,
        "a backlog crossed before the marker: {run:?}"
    );
}

/// A window of an earlier build (it acknowledges nothing) against this
/// core: it works as before, marker and all, and gets the backlog the
/// acknowledgements spare the window above (what the test above sees
/// without them).
#[test]
fn a_window_that_does_not_acknowledge_is_paced_as_before_with_the_backlog() {
    let Some(run) = flood_over_a_slow_link(false) else {
        return;
    };
    assert!(
        run.after_stop > 1 << 20,
        "no backlog without acknowledgements: {run:?}"
    );
}
