//! A window's connection, as the window uses it whatever carries it
//! (`link::Dial`): frames to the core, the core's frames, and what ends
//! the carrier when the connection is dropped.

use tokio::sync::mpsc;

use crate::protocol::frame::Frame;

/// Held for its `Drop` alone: over ssh, it ends ssh (`ssh_conn`).
pub type Ender = Box<dyn Send>;

/// A connection's ends.
/// How many of the core's frames wait for the window at most.
pub const FRAMES_AHEAD: usize = 16;

pub struct Conn {
    /// Frames to the core (a writer sends them in order).
    pub out: mpsc::UnboundedSender<Frame>,
    /// The core's frames, then why the connection ended. Bounded
    /// ([`FRAMES_AHEAD`]): a window behind its terminal stops reading the
    /// carrier, so the pressure reaches the core (and a far end that
    /// floods fills no memory here).
    pub frames: mpsc::Receiver<Result<Frame, String>>,
    /// What ends the carrier when the connection is dropped, if anything
    /// must (a socket closes by itself).
    pub ender: Option<Ender>,
    /// The core's offer of paint acknowledgements, from its welcome
    /// (`protocol::acks`).
    pub ack_every: Option<u64>,
}
