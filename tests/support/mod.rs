//! Helpers shared by the suites.

pub mod git;
pub mod local;
pub mod netfix;
pub mod sysenv;
pub mod tmux;

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
