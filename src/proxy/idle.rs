//! The idle timeout of an opened connection: when it last carried a byte
//! ([`Activity`], noted by `counted`), and the watch that ends a relay
//! after too long without one ([`until_idle`]).

use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// When an opened connection last carried a byte, shared between its
/// relay and the watch that ends it when idle.
#[derive(Clone)]
pub(super) struct Activity {
    origin: Instant,
    last_ms: Arc<AtomicU64>,
}

impl Activity {
    pub(super) fn new() -> Activity {
        Activity {
            origin: Instant::now(),
            last_ms: Arc::new(AtomicU64::new(0)),
        }
    }

    pub(super) fn touch(&self) {
        let ms = self.origin.elapsed().as_millis() as u64;
        self.last_ms.store(ms, Ordering::Relaxed);
    }

    fn last(&self) -> Instant {
        self.origin + Duration::from_millis(self.last_ms.load(Ordering::Relaxed))
    }
}

/// Runs `work` (a relay) until it ends or `activity` shows no byte either
/// way for `idle`; then a `TimedOut` error naming the wait.
pub(super) async fn until_idle<T>(
    idle: Duration,
    activity: &Activity,
    work: impl Future<Output = io::Result<T>>,
) -> io::Result<T> {
    tokio::pin!(work);
    loop {
        let deadline = activity.last() + idle;
        tokio::select! {
            r = &mut work => return r,
            _ = tokio::time::sleep_until(deadline.into()) => {
                if activity.last() + idle <= Instant::now() {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("idle: no byte either way for {} ms", idle.as_millis()),
                    ));
                }
            }
        }
    }
}
