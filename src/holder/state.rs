//! What the holder holds, shared by its tasks: the programs it keeps with
//! what redraws their screens, the current core's outgoing queue, and the
//! channels to the event loop (`server`) and to the hand-over (`handover`).

use std::collections::BTreeMap;
use std::sync::Mutex;

use tokio::net::UnixStream;
use tokio::sync::mpsc;

use crate::host::pty::PtyHost;
use crate::paths::Paths;
use crate::peer::PeerFacts;
use crate::protocol::frame::Frame;
use crate::protocol::outbox::Outbox;

pub struct Kept {
    /// The core's record of the tab, opaque here.
    pub meta: serde_json::Value,
    pub pid: u32,
    pub start_time: u64,
    pub exit_code: Option<i32>,
    /// The spawn's generation, as the core counts the tab's programs.
    pub generation: u64,
    /// The last snapshot a core handed over and the output after it.
    pub screen: super::replay::Replay,
}

pub struct Holder {
    pub host: PtyHost,
    pub kept: Mutex<BTreeMap<String, Kept>>,
    /// The current core's outgoing queue, and its connection's number
    /// (only its snapshots are adopted).
    pub(super) core: Mutex<Option<Outbox>>,
    pub(super) current: std::sync::atomic::AtomicU64,
    pub paths: Paths,
    /// Programs run in transient scopes.
    pub scopes: bool,
    /// Asks the event loop to confirm it has taken in every event queued.
    pub(super) drain: mpsc::Sender<tokio::sync::oneshot::Sender<()>>,
    pub(super) hand_over: mpsc::Sender<HandOverRequest>,
}

impl Holder {
    /// Resolves once every event queued before the call is in the screens.
    pub async fn drained(&self) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        if self.drain.send(tx).await.is_ok() {
            let _ = rx.await;
        }
    }

    /// Queue a frame for the current core; the outbox it went to, if any.
    pub(super) fn to_core(&self, f: Frame) -> Option<Outbox> {
        let out = self.core.lock().unwrap().clone()?;
        out.send(f);
        Some(out)
    }
}

/// A verified core's request, with its connection (answered here).
pub struct HandOverRequest {
    pub stream: UnixStream,
    pub core: PeerFacts,
}
