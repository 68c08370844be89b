//! Who owns the PTYs. The core never assumes it does: it asks a [`Host`] to
//! start, feed, resize and stop programs, and hears back through
//! [`HostEvent`]s.
//! - [`pty::PtyHost`] owns PTYs in this process: the holder's engine, and the
//!   core's own when `NERDR_HOLDER=0`;
//! - [`remote::HolderHost`] forwards to the holder over its socket.

pub mod input;
pub mod main_thread;
pub mod pause;
pub mod pty;
mod pty_tasks;
pub mod remote;
pub mod shim;

use std::future::Future;
use std::pin::Pin;

use tokio::sync::{mpsc, oneshot};

pub use crate::protocol::holder::SpawnSpec;

/// A started program. `start_time` (field 22 of `/proc/PID/stat`) pins the
/// PID so a reused one is never taken for the same process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spawned {
    pub pid: u32,
    pub start_time: u64,
}

#[derive(Debug)]
pub enum HostEvent {
    /// Bytes the program wrote to its terminal. `generation`: which of
    /// the tab's programs wrote them (`SpawnSpec::generation`), from a
    /// host that says (the holder does; the core's own PTYs do not: no
    /// holder keeps their screens, so no count has to match one).
    Output {
        tab: String,
        bytes: Vec<u8>,
        generation: Option<u64>,
    },
    /// A program this core did not launch itself (a previous core did,
    /// and restarted meanwhile) now runs.
    Started {
        tab: String,
        pid: u32,
        start_time: u64,
    },
    /// The program ended; `code` is its exit status, or 128+signal, or -1
    /// when it was lost with its holder.
    /// `pid`: the program's, when known (a lost holder's -1 has none).
    Exited {
        tab: String,
        code: i32,
        pid: Option<u32>,
    },
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum HostError {
    #[error("cannot open a terminal (PTY): {0}")]
    Pty(String),
    #[error("cannot start `{program}`: {reason}")]
    Spawn { program: String, reason: String },
    #[error("cannot put the program in its own scope {scope}: {reason}; it was not started")]
    Scope { scope: String, reason: String },
    #[error("no running program in tab {0}")]
    NoSuchTab(String),
    /// The program's input queue is full (`host::input`); the message
    /// names the tab.
    #[error("{0}")]
    InputFull(String),
    #[error("the holder is unreachable: {0}")]
    Holder(String),
    /// The holder tried and failed; its message says why.
    #[error("{0}")]
    Failed(String),
}

/// Events are a short bounded queue: a consumer that falls behind stops the
/// PTY readers, and the programs block on their writes, as on a terminal
/// that is not reading.
pub const EVENT_QUEUE: usize = 4;

pub fn events() -> (mpsc::Sender<HostEvent>, mpsc::Receiver<HostEvent>) {
    mpsc::channel(EVENT_QUEUE)
}

pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

pub trait Host: Send + Sync {
    /// Start a program. Resolves once it runs (in its scope, if it has one)
    /// or has been cleaned away after a failure.
    fn spawn(&self, spec: SpawnSpec) -> oneshot::Receiver<Result<Spawned, HostError>>;
    /// Queue bytes typed for the program (a person's keys, a paste), in
    /// order. Past the program's input cap they are refused, never dropped
    /// ([`input`]): the error says so, here or, where the queue is in
    /// another process, in that process's log. A sender that must hear of
    /// it waits on [`Host::type_in`] instead.
    fn write(&self, tab: &str, bytes: Vec<u8>) -> Result<(), HostError>;
    /// [`Host::write`], resolving once the bytes were queued or refused.
    fn type_in(&self, tab: &str, bytes: Vec<u8>) -> oneshot::Receiver<Result<(), HostError>> {
        let (tx, rx) = oneshot::channel();
        let _ = tx.send(self.write(tab, bytes));
        rx
    }
    /// Queue the terminal's answers to the program's queries, in order with
    /// typed input; dropped past the program's input cap ([`input`]).
    fn answer(&self, tab: &str, bytes: Vec<u8>);
    fn resize(&self, tab: &str, rows: u16, cols: u16) -> Result<(), HostError>;
    /// End the program and everything in its scope or session (SIGHUP, then
    /// SIGTERM, then SIGKILL after a grace period). Resolves once collected.
    fn stop(&self, tab: &str) -> oneshot::Receiver<()>;
    /// Drop what is kept for a tab whose program has ended.
    fn forget(&self, tab: &str);
    /// How programs are separated from the core, and why, for `doctor`: a
    /// [`ProgramsMode`](crate::protocol::api::ProgramsMode) in words (a
    /// holder's exactly as it sent them).
    fn mode(&self) -> String;
    /// Whether programs end when the core does.
    fn programs_end_with_core(&self) -> bool;
    /// The core's screen of `tab` (`rows`x`cols`) after it processed the
    /// program's output up to `offset`: bytes that rebuild it on a fresh
    /// `term::Screen`. A host that outlives the core keeps the last one
    /// with the output after it, to give a restarted core its screens;
    /// one that does not ignores it.
    fn snapshot(&self, tab: &str, offset: u64, rows: u16, cols: u16, bytes: Vec<u8>);
}

/// Puts a program into its own cgroup before it runs, and ends it there.
/// Implemented over the systemd user manager.
pub trait Scopes: Send + Sync {
    fn place(&self, scope: String, pid: u32) -> BoxFuture<Result<(), String>>;
    fn stop(&self, scope: String) -> BoxFuture<Result<(), String>>;
}
