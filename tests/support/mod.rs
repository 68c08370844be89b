//! Helpers shared by the suites.

pub mod agent_home;
pub mod fake_model;
pub mod fake_notifications;
pub mod git;
pub mod local;
pub mod netfix;
pub mod next_build;
pub mod repo_session;
pub mod slow_link;
pub mod sshd;
pub mod sysenv;
pub mod tab_ops;
pub mod tmux;
pub mod twin;
pub mod user_tmux;

/// `[agents.boxed]`: `sleep 1000` inside bubblewrap (read-only root, the
/// runtime dir hidden, its own PID namespace), a sandbox nerdr's check
/// passes; the check runs in place of the last word, `boxed`.
pub const BOXED_SLEEPER: &str =
    "[agents.boxed]\ncommand = [\"sh\", \"-c\", \"if [ \\\"$0\\\" = boxed ]; \
    then set -- sleep 1000; else set -- \\\"$0\\\" \\\"$@\\\"; fi; exec bwrap \
    --ro-bind / / --dev /dev --proc /proc --unshare-pid --die-with-parent \
    --tmpfs \\\"$XDG_RUNTIME_DIR\\\" -- \\\"$@\\\"\", \"boxed\"]\nsandboxed = true\n";

use std::time::{Duration, Instant};

/// Poll `cond` every 20ms until it holds or `timeout` passes.
pub fn poll(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() > end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Like [`poll`], but a timeout fails the test naming what was awaited.
pub fn wait_until(what: &str, timeout: Duration, cond: impl FnMut() -> bool) {
    assert!(
        poll(timeout, cond),
        "timed out after {timeout:?} waiting for {what}"
    );
}
