//! The core's side of the holder link: a [`Host`] whose programs live in
//! the holder. Requests go out as frames; replies and output come back on
//! one reader task that turns them into [`HostEvent`]s and answers.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use tokio::net::unix::OwnedReadHalf;
use tokio::sync::{mpsc, oneshot};

use super::{Host, HostError, HostEvent, SpawnSpec, Spawned};
use crate::paths::Paths;
use crate::peer;
use crate::protocol::frame::{read_frame, write_frame, Frame, Kind};
use crate::protocol::handover::{core_step, Answer, Ask, CoreStep, HANDOVER_VERSION};
use crate::protocol::holder::{data_frame, split_data, FromHolder, Held, ToHolder, HOLDER_VERSION};

type SpawnReply = oneshot::Sender<Result<Spawned, HostError>>;
type TypedReply = oneshot::Sender<Result<(), HostError>>;

#[derive(Default)]
struct Pending {
    spawns: HashMap<String, SpawnReply>,
    stops: HashMap<String, Vec<oneshot::Sender<()>>>,
    /// Typed input waiting for the holder's verdict, by id.
    typed: HashMap<u64, TypedReply>,
    next_typed: u64,
    /// Tabs the holder runs for us, so losing it ends them visibly.
    known: HashSet<String>,
    lost: Option<String>,
}

pub struct HolderHost {
    /// Resolves with the reason once the holder connection is gone.
    pub lost: std::sync::Mutex<Option<oneshot::Receiver<String>>>,
    /// Frames for the holder; a second one goes right after the first,
    /// nothing in between (a snapshot and its bytes).
    out: mpsc::UnboundedSender<(Frame, Option<Frame>)>,
    pending: Arc<Mutex<Pending>>,
    mode: String,
}

/// What a restarted core finds: each held program and its screen redraw
/// (which ends at `held.offset` of its output).
pub struct Found {
    pub held: Held,
    pub screen: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("no holder is listening")]
    Absent,
    /// The holder (of another version) re-executes as this build: connect
    /// again.
    #[error("the holder is handing over to this build")]
    HandedOver,
    #[error("{0}")]
    Other(String),
}

impl HolderHost {
    /// Connect to the running holder, verify it is the recorded one, and
    /// take over the programs it holds. A holder of another version is
    /// asked to hand over ([`ConnectError::HandedOver`]), unless
    /// `handed_over` says it already did.
    pub async fn connect(
        paths: &Paths,
        events: mpsc::Sender<HostEvent>,
        handed_over: bool,
    ) -> Result<(Self, Vec<Found>), ConnectError> {
        let other = |e: String| ConnectError::Other(e);
        let name = crate::protocol::holder::socket_name(paths);
        let std_stream = match crate::platform::abstract_connect(&name) {
            Ok(s) => s,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                return Err(ConnectError::Absent)
            }
            Err(e) => return Err(other(format!("cannot connect to the holder @{name}: {e}"))),
        };
        let facts = peer::gather(&std_stream).map_err(|e| other(e.to_string()))?;
        // A holder records itself just after it starts listening: give a
        // fresh one a moment to do so before calling it an impostor.
        let record = paths.state_dir.join("holder.pid");
        let mut verdict = Err(String::new());
        for _ in 0..40 {
            let recorded = peer::read_recorded(&record);
            verdict = peer::verdict("holder", nix::unistd::getuid().as_raw(), &facts, recorded);
            if verdict.is_ok() || recorded.is_some_and(|r| r.pid == facts.pid) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        verdict.map_err(|e| other(format!("not attaching to @{name}: {e}")))?;
        std_stream
            .set_nonblocking(true)
            .map_err(|e| other(e.to_string()))?;
        let mut stream =
            tokio::net::UnixStream::from_std(std_stream).map_err(|e| other(e.to_string()))?;
        let hello = Frame::control(&ToHolder::Hello {
            version: HOLDER_VERSION,
        });
        write_frame(&mut stream, &hello)
            .await
            .map_err(|e| other(e.to_string()))?;
        // A holder that accepts but never answers must not keep the core
        // from ever becoming ready.
        let first =
            tokio::time::timeout(std::time::Duration::from_secs(10), read_frame(&mut stream))
                .await
                .map_err(|_| other("the holder did not answer within 10s".into()))?
                .map_err(|e| other(format!("the holder hung up: {e}")))?;
        let answer = first.decode_control::<Answer>().unwrap_or(Answer::Other);
        match core_step(HOLDER_VERSION, &answer, handed_over) {
            CoreStep::Attach => {}
            CoreStep::HandOver => return Err(ask_hand_over(&mut stream, &answer).await),
            CoreStep::GiveUp(why) => return Err(other(why)),
        }
        let (held, mode) = match first.decode_control::<FromHolder>() {
            Ok(FromHolder::Welcome { held, mode, .. }) => (held, mode),
            Ok(FromHolder::Refused { message }) => {
                return Err(other(format!("the holder refused this core: {message}")))
            }
            other_msg => {
                return Err(other(format!(
                    "unexpected first message from the holder: {other_msg:?}"
                )))
            }
        };
        let mut found = Vec::new();
        for h in held {
            let f = read_frame(&mut stream)
                .await
                .map_err(|e| other(e.to_string()))?;
            let screen = split_data(&f.body)
                .filter(|(tab, _)| *tab == h.tab)
                .map(|(_, b)| b.to_vec())
                .unwrap_or_default();
            found.push(Found { held: h, screen });
        }
        let (read, mut write) = stream.into_split();
        let (out, mut out_rx) = mpsc::unbounded_channel::<(Frame, Option<Frame>)>();
        tokio::spawn(async move {
            while let Some((f, then)) = out_rx.recv().await {
                for f in std::iter::once(f).chain(then) {
                    if write_frame(&mut write, &f).await.is_err() {
                        return;
                    }
                }
            }
        });
        let pending = Arc::new(Mutex::new(Pending {
            known: found.iter().map(|f| f.held.tab.clone()).collect(),
            ..Pending::default()
        }));
        let pending_for_loop = pending.clone();
        let generations = found
            .iter()
            .map(|f| (f.held.tab.clone(), f.held.generation))
            .collect();
        let (lost_tx, lost) = oneshot::channel();
        tokio::spawn(async move {
            let why = read_loop(read, pending_for_loop, events, generations).await;
            let _ = lost_tx.send(why);
        });
        Ok((
            HolderHost {
                lost: std::sync::Mutex::new(Some(lost)),
                out,
                pending,
                mode,
            },
            found,
        ))
    }

    fn send(&self, msg: &ToHolder) -> Result<(), HostError> {
        if let Some(why) = &self.pending.lock().unwrap().lost {
            return Err(HostError::Holder(why.clone()));
        }
        self.out
            .send((Frame::control(msg), None))
            .map_err(|_| HostError::Holder("the connection is closed".into()))
    }
}

/// Ask a holder of another version to hand over; how it went.
async fn ask_hand_over(stream: &mut tokio::net::UnixStream, offer: &Answer) -> ConnectError {
    tracing::info!(holder = ?offer, "the holder speaks another version; asking it to hand over");
    let ask = Frame::control(&Ask::HandOver {
        handover: HANDOVER_VERSION,
    });
    if let Err(e) = write_frame(stream, &ask).await {
        return ConnectError::Other(format!("cannot ask the holder to hand over: {e}"));
    }
    // The holder first lets launches in progress finish (placing one in its
    // scope can take seconds).
    let reply = tokio::time::timeout(std::time::Duration::from_secs(60), read_frame(stream)).await;
    match reply.map(|r| r.map(|f| f.decode_control::<Answer>())) {
        Ok(Ok(Ok(Answer::ReExecuting { .. }))) => ConnectError::HandedOver,
        Ok(Ok(Ok(Answer::Refused { message }))) => ConnectError::Other(message),
        Ok(Ok(other)) => {
            ConnectError::Other(format!("unexpected answer to a hand-over: {other:?}"))
        }
        Ok(Err(e)) => ConnectError::Other(format!("the holder hung up during a hand-over: {e}")),
        Err(_) => ConnectError::Other("the holder did not hand over within 60s".into()),
    }
}

/// `generations`: which program of each tab the output now coming is
/// from, as the welcome said and each [`FromHolder::Program`] since.
async fn read_loop(
    mut read: OwnedReadHalf,
    pending: Arc<Mutex<Pending>>,
    events: mpsc::Sender<HostEvent>,
    mut generations: HashMap<String, u64>,
) -> String {
    let why = loop {
        let frame = match read_frame(&mut read).await {
            Ok(f) => f,
            Err(e) => break format!("the holder connection ended: {e}"),
        };
        if frame.kind == Kind::Data {
            if let Some((tab, bytes)) = split_data(&frame.body) {
                let ev = HostEvent::Output {
                    tab: tab.to_string(),
                    bytes: bytes.to_vec(),
                    generation: generations.get(tab).copied(),
                };
                // Waits while the core is behind, so the holder waits too.
                let _ = events.send(ev).await;
            }
            continue;
        }
        let msg = match frame.decode_control::<FromHolder>() {
            Ok(m) => m,
            Err(e) => break format!("the holder sent a malformed message: {e}"),
        };
        if let FromHolder::Program { tab, generation } = msg {
            generations.insert(tab, generation);
            continue;
        }
        let mut stopped = Vec::new();
        let event = {
            let mut p = pending.lock().unwrap();
            match msg {
                FromHolder::Spawned {
                    tab,
                    pid,
                    start_time,
                } => {
                    p.known.insert(tab.clone());
                    match p.spawns.remove(&tab) {
                        Some(tx) => {
                            let _ = tx.send(Ok(Spawned { pid, start_time }));
                            None
                        }
                        None => Some(HostEvent::Started {
                            tab,
                            pid,
                            start_time,
                        }),
                    }
                }
                FromHolder::SpawnFailed { tab, message } => match p.spawns.remove(&tab) {
                    Some(tx) => {
                        let _ = tx.send(Err(HostError::Failed(message)));
                        None
                    }
                    // Started by a previous core: the tab shows it failed.
                    None => Some(HostEvent::Exited {
                        tab,
                        code: -1,
                        pid: None,
                    }),
                },
                FromHolder::Exited { tab, code, pid } => Some(HostEvent::Exited { tab, code, pid }),
                FromHolder::Stopped { tab } => {
                    stopped = p.stops.remove(&tab).unwrap_or_default();
                    None
                }
                FromHolder::Typed {
                    tab,
                    id,
                    error,
                    full,
                } => {
                    if let Some(tx) = p.typed.remove(&id) {
                        let _ = tx.send(match error {
                            None => Ok(()),
                            Some(e) if full => Err(HostError::InputFull(e)),
                            Some(e) => Err(HostError::Failed(format!("tab {tab}: {e}"))),
                        });
                    }
                    None
                }
                FromHolder::Welcome { .. }
                | FromHolder::Refused { .. }
                | FromHolder::Program { .. } => None,
            }
        };
        if let Some(ev) = event {
            let _ = events.send(ev).await;
        }
        if !stopped.is_empty() {
            // The program's last output came before this: the core takes it
            // all in (the queue empties; this loop is its only sender)
            // before the stop resolves, so none of it is counted as the
            // output of a program started next in the tab.
            let _ = events.reserve_many(super::EVENT_QUEUE).await;
            for tx in stopped {
                let _ = tx.send(());
            }
        }
    };
    tracing::error!(reason = %why, "lost the holder; its programs are gone from this core");
    let lost: Vec<String> = {
        let mut p = pending.lock().unwrap();
        p.lost = Some(why.clone());
        for (_, tx) in p.spawns.drain() {
            let _ = tx.send(Err(HostError::Holder(why.clone())));
        }
        for (_, tx) in p.typed.drain() {
            let _ = tx.send(Err(HostError::Holder(why.clone())));
        }
        for (_, txs) in p.stops.drain() {
            for tx in txs {
                let _ = tx.send(());
            }
        }
        p.known.drain().collect()
    };
    for tab in lost {
        let _ = events
            .send(HostEvent::Exited {
                tab,
                code: -1,
                pid: None,
            })
            .await;
    }
    why
}

impl Host for HolderHost {
    fn spawn(&self, spec: SpawnSpec) -> oneshot::Receiver<Result<Spawned, HostError>> {
        let (tx, rx) = oneshot::channel();
        let tab = spec.tab.clone();
        self.pending.lock().unwrap().spawns.insert(tab.clone(), tx);
        if let Err(e) = self.send(&ToHolder::Spawn { spec }) {
            if let Some(tx) = self.pending.lock().unwrap().spawns.remove(&tab) {
                let _ = tx.send(Err(e));
            }
        }
        rx
    }

    fn write(&self, tab: &str, bytes: Vec<u8>) -> Result<(), HostError> {
        self.out
            .send((data_frame(tab, &bytes), None))
            .map_err(|_| HostError::Holder("the connection is closed".into()))
    }

    fn type_in(&self, tab: &str, bytes: Vec<u8>) -> oneshot::Receiver<Result<(), HostError>> {
        let (tx, rx) = oneshot::channel();
        let id = {
            let mut p = self.pending.lock().unwrap();
            if let Some(why) = &p.lost {
                let _ = tx.send(Err(HostError::Holder(why.clone())));
                return rx;
            }
            p.next_typed += 1;
            let id = p.next_typed;
            p.typed.insert(id, tx);
            id
        };
        let head = Frame::control(&ToHolder::Type {
            tab: tab.to_string(),
            id,
        });
        if self
            .out
            .send((head, Some(data_frame(tab, &bytes))))
            .is_err()
        {
            if let Some(tx) = self.pending.lock().unwrap().typed.remove(&id) {
                let _ = tx.send(Err(HostError::Holder("the connection is closed".into())));
            }
        }
        rx
    }

    fn answer(&self, tab: &str, bytes: Vec<u8>) {
        let head = Frame::control(&ToHolder::Answer {
            tab: tab.to_string(),
        });
        // Lost with the connection, as the program's terminal is.
        let _ = self.out.send((head, Some(data_frame(tab, &bytes))));
    }

    fn resize(&self, tab: &str, rows: u16, cols: u16) -> Result<(), HostError> {
        self.send(&ToHolder::Resize {
            tab: tab.to_string(),
            rows,
            cols,
        })
    }

    fn stop(&self, tab: &str) -> oneshot::Receiver<()> {
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap()
            .stops
            .entry(tab.to_string())
            .or_default()
            .push(tx);
        if self
            .send(&ToHolder::Stop {
                tab: tab.to_string(),
            })
            .is_err()
        {
            for tx in self
                .pending
                .lock()
                .unwrap()
                .stops
                .remove(tab)
                .unwrap_or_default()
            {
                let _ = tx.send(());
            }
        }
        rx
    }

    fn forget(&self, tab: &str) {
        self.pending.lock().unwrap().known.remove(tab);
        let _ = self.send(&ToHolder::Forget {
            tab: tab.to_string(),
        });
    }

    fn mode(&self) -> String {
        self.mode.clone()
    }

    fn programs_end_with_core(&self) -> bool {
        false
    }

    fn snapshot(&self, tab: &str, offset: u64, rows: u16, cols: u16, bytes: Vec<u8>) {
        let head = Frame::control(&ToHolder::Snapshot {
            tab: tab.to_string(),
            offset,
            rows,
            cols,
        });
        // Lost with the connection: the next core gets a redraw anyway.
        let _ = self.out.send((head, Some(data_frame(tab, &bytes))));
    }
}
