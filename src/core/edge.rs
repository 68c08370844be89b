//! Where the core gathers facts from the world (the filesystem, git,
//! `/proc`) and writes its audit entries: off the async worker threads,
//! never under the state lock
//! (docs/ARCHITECTURE.md, "Where decisions and effects live"). A fact that takes long
//! (a folder on a hung mount) delays the request that needs it, and
//! nothing else.
//!
//! A debug build (what the test suite runs) can be told that one path is
//! slow: `NERDR_TEST_SLOW_PATH=<path>` makes every fact gathered about a
//! path at or under it take `NERDR_TEST_SLOW_MS` (10 000 by default) longer,
//! as a `stat` on a hung network mount would. The test that the core keeps
//! answering meanwhile needs it; a release build ignores both variables.

use std::path::Path;

/// Run `f`, which blocks, on the blocking pool; `what` names it in the
/// panic a slip (the state lock held) causes in a debug build.
pub async fn gather<T, F>(what: &'static str, f: F) -> T
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    super::held::assert_unlocked(what);
    tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}

/// Write an audit entry (the journal, the core's log, the audit file) as
/// [`gather`] gathers: an audit file on a disk that stops answering delays
/// the request that is refused, not everyone else's.
pub async fn audit(paths: &crate::paths::Paths, event: crate::audit::Event) {
    let paths = paths.clone();
    gather("writing an audit entry", move || {
        crate::audit::record(&paths, &event)
    })
    .await
}

/// [`gather`] a fact about `path`.
pub async fn gather_at<T, F>(what: &'static str, path: &Path, f: F) -> T
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let delay = slow_for_tests(path);
    gather(what, move || {
        if let Some(d) = delay {
            std::thread::sleep(d);
        }
        f()
    })
    .await
}

#[cfg(debug_assertions)]
fn slow_for_tests(path: &Path) -> Option<std::time::Duration> {
    let slow = std::env::var_os("NERDR_TEST_SLOW_PATH")?;
    if !path.starts_with(&slow) {
        return None;
    }
    let ms = std::env::var("NERDR_TEST_SLOW_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    Some(std::time::Duration::from_millis(ms))
}

#[cfg(not(debug_assertions))]
fn slow_for_tests(_: &Path) -> Option<std::time::Duration> {
    None
}
