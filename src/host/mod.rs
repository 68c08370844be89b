//! Who owns the PTYs. The core never assumes it does: it asks a [`Host`] to
//! start, feed, resize and stop programs, and hears back through
//! [`HostEvent`]s. [`local::LocalHost`] runs them as the core's own children
//! (`NERDR_HOLDER=0`, and until the holder exists); the holder (a separate,
//! longer-lived process) implements the same contract over its socket.

pub mod local;

use std::ffi::OsString;
use std::path::PathBuf;

use tokio::sync::oneshot;

/// What to start, fully decided: no lookups or policy happen in a host.
#[derive(Debug, Clone)]
pub struct SpawnSpec {
    pub tab: String,
    pub argv: Vec<OsString>,
    pub cwd: PathBuf,
    /// The complete environment; nothing is inherited from the host process.
    pub env: Vec<(OsString, OsString)>,
    pub rows: u16,
    pub cols: u16,
}

/// A started program. `start_time` (field 22 of `/proc/PID/stat`) pins the
/// PID so a reused one is never taken for the same process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spawned {
    pub pid: u32,
    pub start_time: u64,
}

#[derive(Debug)]
pub enum HostEvent {
    /// Bytes the program wrote to its terminal.
    Output { tab: String, bytes: Vec<u8> },
    /// The program ended; `code` is its exit status, or 128+signal.
    Exited { tab: String, code: i32 },
}

#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("cannot open a terminal (PTY): {0}")]
    Pty(String),
    #[error("cannot start `{program}`: {reason}")]
    Spawn { program: String, reason: String },
    #[error("no running program in tab {0}")]
    NoSuchTab(String),
}

pub trait Host: Send + Sync {
    fn spawn(&self, spec: SpawnSpec) -> Result<Spawned, HostError>;
    /// Queue bytes for the program's terminal, in order.
    fn write(&self, tab: &str, bytes: Vec<u8>) -> Result<(), HostError>;
    fn resize(&self, tab: &str, rows: u16, cols: u16) -> Result<(), HostError>;
    /// End the program and everything in its session (SIGHUP, then SIGTERM,
    /// then SIGKILL after a grace period). Resolves once it is collected.
    fn stop(&self, tab: &str) -> oneshot::Receiver<()>;
    /// How this host separates programs from the core, for `doctor`.
    fn mode(&self) -> &'static str;
}
