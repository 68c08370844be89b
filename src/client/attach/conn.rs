//! A window's connection, as the window uses it whatever carries it
//! (`link::Dial`): frames to the core, the core's frames, and what ends
//! the carrier when the connection is dropped.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;

use crate::protocol::frame::Frame;

/// Held for its `Drop` alone: over ssh, it ends ssh (`ssh_conn`).
pub type Ender = Box<dyn Send>;

/// How many of the core's frames wait for the window at most.
pub const FRAMES_AHEAD: usize = 16;

/// How many of the window's frames wait for the link at most: a far end
/// that stops reading holds them, and past this many the window drops
/// its frames rather than piling them up (a person's keys come slower
/// than this fills; acknowledgements wait for an empty queue,
/// `drawing::acknowledge`).
pub const TO_CORE_AHEAD: usize = 1024;

/// A connection's ends.
pub struct Conn {
    /// Frames to the core (a writer sends them in order).
    pub out: mpsc::Sender<Frame>,
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
    /// Over ssh, the bytes of `frames` not taken yet ([`Waiting`]).
    pub waiting: Option<Arc<Waiting>>,
}

/// How many bytes of the far end's frames wait for the window at most
/// (over ssh; a larger frame waits alone). With [`FRAMES_AHEAD`] alone, a
/// far end sending the largest frames (`protocol::MAX_FRAME`) would have
/// half a gigabyte held here.
pub const WAITING_BYTES: usize = 8 << 20;

/// The bytes read off a link that the window has not taken yet: the
/// reader waits for room before passing on another frame, the window
/// makes room as it takes them.
#[derive(Debug, Default)]
pub struct Waiting {
    bytes: Mutex<usize>,
    taken: Condvar,
}

impl Waiting {
    /// Waits until `len` more bytes fit under [`WAITING_BYTES`] (or none
    /// wait), then counts them; `false` once `gone()` says the window let
    /// the connection go meanwhile (looked at each second, only while
    /// the window is behind).
    pub fn make_room(&self, len: usize, gone: impl Fn() -> bool) -> bool {
        let mut bytes = self.bytes.lock().unwrap();
        while *bytes > 0 && *bytes + len > WAITING_BYTES {
            if gone() {
                return false;
            }
            bytes = self
                .taken
                .wait_timeout(bytes, Duration::from_secs(1))
                .unwrap()
                .0;
        }
        *bytes += len;
        true
    }

    /// The window took a frame of `len` bytes.
    pub fn took(&self, len: usize) {
        let mut bytes = self.bytes.lock().unwrap();
        *bytes = bytes.saturating_sub(len);
        self.taken.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reader_waits_for_room_and_a_large_frame_waits_alone() {
        let w = Arc::new(Waiting::default());
        assert!(w.make_room(WAITING_BYTES - 10, || false));
        assert!(w.make_room(10, || false), "fits exactly");
        // Full: the reader waits until the window takes enough.
        let reader = {
            let w = Arc::clone(&w);
            std::thread::spawn(move || w.make_room(WAITING_BYTES * 3, || false))
        };
        std::thread::sleep(Duration::from_millis(50));
        assert!(!reader.is_finished(), "a full queue holds the reader");
        w.took(WAITING_BYTES - 10);
        std::thread::sleep(Duration::from_millis(50));
        assert!(!reader.is_finished(), "a frame past the bound waits alone");
        w.took(10);
        assert!(reader.join().unwrap());
        // A window that let the connection go frees a waiting reader.
        assert!(!w.make_room(1, || true));
    }
}
