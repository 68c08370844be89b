//! A frame queue in front of a socket, counted in bytes, so producers can
//! see how far behind the reader is. Control messages are always queued;
//! terminal output waits for [`Outbox::room`] (holder → core), or is
//! painted only once the queue has drained ([`Drain::empty`], core → a
//! window: a slow one gets fewer, newer frames). Either way memory stays
//! bounded and a flood of output slows the program, not the machine.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::io::AsyncWrite;
use tokio::sync::{mpsc, Notify};

use super::frame::{write_frame, Frame};

#[derive(Clone)]
pub struct Outbox {
    tx: mpsc::UnboundedSender<Frame>,
    queued: Arc<AtomicUsize>,
    drained: Arc<Notify>,
    closed: Arc<AtomicBool>,
}

impl Outbox {
    /// Start the writer task for `w`.
    pub fn new<W: AsyncWrite + Unpin + Send + 'static>(
        mut w: W,
    ) -> (Outbox, tokio::task::JoinHandle<()>) {
        let (tx, mut rx) = mpsc::unbounded_channel::<Frame>();
        let queued = Arc::new(AtomicUsize::new(0));
        let drained = Arc::new(Notify::new());
        let closed = Arc::new(AtomicBool::new(false));
        let (q, d, c) = (queued.clone(), drained.clone(), closed.clone());
        let writer = tokio::spawn(async move {
            while let Some(f) = rx.recv().await {
                let n = f.body.len();
                let ok = write_frame(&mut w, &f).await.is_ok();
                q.fetch_sub(n, Ordering::AcqRel);
                d.notify_waiters();
                if !ok {
                    break;
                }
            }
            c.store(true, Ordering::Release);
            d.notify_waiters();
        });
        (
            Outbox {
                tx,
                queued,
                drained,
                closed,
            },
            writer,
        )
    }

    /// Queue a frame; false once the connection is gone.
    pub fn send(&self, f: Frame) -> bool {
        let n = f.body.len();
        self.queued.fetch_add(n, Ordering::AcqRel);
        if self.tx.send(f).is_err() {
            self.queued.fetch_sub(n, Ordering::AcqRel);
            return false;
        }
        true
    }

    /// Bytes queued and not yet written.
    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::Acquire)
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire) || self.tx.is_closed()
    }

    /// Wait until at most `limit` bytes are queued (or the connection is
    /// gone, when waiting would be forever).
    pub async fn room(&self, limit: usize) {
        self.drain().room(limit).await
    }

    /// A handle that waits for the queue to drain without keeping the
    /// connection open: the writer ends when the last [`Outbox`] goes,
    /// whoever still watches it.
    pub fn drain(&self) -> Drain {
        Drain {
            queued: self.queued.clone(),
            drained: self.drained.clone(),
            closed: self.closed.clone(),
        }
    }
}

/// See [`Outbox::drain`].
pub struct Drain {
    queued: Arc<AtomicUsize>,
    drained: Arc<Notify>,
    closed: Arc<AtomicBool>,
}

impl Drain {
    /// Wait until nothing is queued (or the connection is gone).
    pub async fn empty(&self) {
        self.room(0).await
    }

    async fn room(&self, limit: usize) {
        loop {
            let notified = self.drained.notified();
            tokio::pin!(notified);
            // Register before checking, so a drain in between is not missed.
            notified.as_mut().enable();
            if self.queued.load(Ordering::Acquire) <= limit || self.closed.load(Ordering::Acquire) {
                return;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn room_waits_for_the_reader() {
        let (a, mut b) = tokio::io::duplex(1024);
        let (out, _w) = Outbox::new(a);
        assert!(out.send(Frame::control(&"x".repeat(10_000))));
        // The reader has not read: more than the pipe holds stays queued.
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert!(out.queued() > 1024);
        let waiting = tokio::spawn({
            let out = out.clone();
            async move { out.room(0).await }
        });
        let mut sink = vec![0u8; 20_000];
        let mut got = 0;
        while got < 10_000 {
            got += b.read(&mut sink).await.unwrap();
        }
        waiting.await.unwrap();
        assert_eq!(out.queued(), 0);
    }

    #[tokio::test]
    async fn a_closed_connection_does_not_block() {
        let (a, b) = tokio::io::duplex(16);
        drop(b);
        let (out, w) = Outbox::new(a);
        out.send(Frame::control(&"y".repeat(100)));
        w.await.unwrap();
        out.room(0).await;
        assert!(out.is_closed());
        assert!(!out.send(Frame::control(&"z")));
    }
}
