//! Pausing a PTY host's workers (terminal readers, reapers, launches) at a
//! point where nothing they took is in flight: what a hand-over needs
//! before it copies the screens. Each worker holds a share of one lock
//! while it works (read a terminal and deliver the bytes, reap and report
//! an exit, start and place a program); [`Pause::freeze`] takes the whole
//! lock, so it returns once every worker is between two pieces of work.

use std::sync::Arc;

use tokio::sync::{watch, OwnedRwLockReadGuard, OwnedRwLockWriteGuard, RwLock};

#[derive(Clone)]
pub struct Pause {
    busy: Arc<RwLock<()>>,
    paused: watch::Sender<bool>,
}

/// Held while frozen; workers go on once it is dropped.
pub struct Frozen {
    _all: OwnedRwLockWriteGuard<()>,
    paused: watch::Sender<bool>,
}

impl Drop for Frozen {
    fn drop(&mut self) {
        self.paused.send_replace(false);
    }
}

/// A worker's view of the pause.
#[derive(Clone)]
pub struct Worker {
    busy: Arc<RwLock<()>>,
    paused: watch::Receiver<bool>,
}

impl Pause {
    pub fn new() -> Self {
        Pause {
            busy: Arc::default(),
            paused: watch::channel(false).0,
        }
    }

    pub fn worker(&self) -> Worker {
        Worker {
            busy: self.busy.clone(),
            paused: self.paused.subscribe(),
        }
    }

    /// A share for work started now, unless frozen.
    pub fn try_share(&self) -> Option<OwnedRwLockReadGuard<()>> {
        if *self.paused.borrow() {
            return None;
        }
        self.busy.clone().try_read_owned().ok()
    }

    /// Ask every worker to stop after what it is doing, and wait until all
    /// have.
    pub async fn freeze(&self) -> Frozen {
        self.paused.send_replace(true);
        Frozen {
            _all: self.busy.clone().write_owned().await,
            paused: self.paused.clone(),
        }
    }
}

impl Worker {
    /// Wait until not frozen, then hold a share until the guard drops.
    pub async fn work(&mut self) -> OwnedRwLockReadGuard<()> {
        loop {
            let _ = self.paused.wait_for(|p| !*p).await;
            let share = self.busy.clone().read_owned().await;
            if !*self.paused.borrow() {
                return share;
            }
        }
    }

    /// Resolves once a freeze is asked for: the worker should drop its
    /// share if it is only waiting.
    pub async fn freezing(&mut self) {
        let _ = self.paused.wait_for(|p| *p).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_freeze_waits_for_work_in_hand_and_stops_new_work() {
        let pause = Pause::new();
        let mut w = pause.worker();
        let share = w.work().await;
        let freezing = tokio::spawn({
            let pause = pause.clone();
            async move { pause.freeze().await }
        });
        tokio::time::sleep(Duration::from_millis(30)).await;
        assert!(!freezing.is_finished(), "froze while work was in hand");
        assert!(
            pause.try_share().is_none(),
            "new work started while freezing"
        );
        drop(share);
        let frozen = tokio::time::timeout(Duration::from_secs(5), freezing)
            .await
            .expect("the freeze never ended")
            .unwrap();
        // Frozen: a worker waits; thawed: it goes on.
        let mut w2 = pause.worker();
        let waiting = tokio::spawn(async move { drop(w2.work().await) });
        tokio::time::sleep(Duration::from_millis(30)).await;
        assert!(!waiting.is_finished(), "worked while frozen");
        drop(frozen);
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("still waiting after the thaw")
            .unwrap();
        assert!(pause.try_share().is_some());
    }
}
