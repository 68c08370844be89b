//! The window's side of paint acknowledgements (`protocol::acks`): it
//! counts the paint its connection brought (data frames' bodies, as the
//! core counts what it sent), and after drawing acknowledges the total
//! once enough of it is new ([`crate::protocol::acks::ack_due`]). Only
//! to a core whose welcome offered them, and counted afresh on each
//! connection, as the core counts afresh for each window.
//!
//! A debug build (what the test suite runs) can be told to act as a
//! window of an earlier build, which neither offers nor sends them:
//! `NERDR_TEST_WINDOW_ACKS=0`. The test of a slow link over ssh uses it to
//! show the backlog such a window still gets; a release build ignores it.

use crate::protocol::acks::ack_due;

#[derive(Debug, Default)]
pub struct PaintAcks {
    /// The core's offer, taken: acknowledge each time this many bytes are
    /// new. `None`: the core offered none, so none are sent.
    every: Option<u64>,
    /// Paint received on this connection, and the last total acknowledged.
    received: u64,
    acked: u64,
}

impl PaintAcks {
    /// For a fresh connection whose core offered `ack_every`.
    pub fn offered(ack_every: Option<u64>) -> PaintAcks {
        PaintAcks {
            every: ack_every.filter(|_| !declined_for_tests()),
            received: 0,
            acked: 0,
        }
    }

    /// Whether the window acknowledges (its attach says so).
    pub fn taken(&self) -> bool {
        self.every.is_some()
    }

    /// A data frame of `len` bytes came.
    pub fn received(&mut self, len: usize) {
        self.received += len as u64;
    }

    /// After drawing: the total to acknowledge now, if it is time.
    pub fn due(&mut self) -> Option<u64> {
        let every = self.every?;
        if !ack_due(self.received, self.acked, every) {
            return None;
        }
        self.acked = self.received;
        Some(self.received)
    }
}

#[cfg(debug_assertions)]
fn declined_for_tests() -> bool {
    std::env::var_os("NERDR_TEST_WINDOW_ACKS").is_some_and(|v| v == "0")
}

#[cfg(not(debug_assertions))]
fn declined_for_tests() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_acknowledges_only_what_its_core_offered_to_take() {
        let mut none = PaintAcks::offered(None);
        none.received(1 << 20);
        assert!(!none.taken());
        assert_eq!(none.due(), None, "an earlier core gets no acknowledgement");

        let mut acks = PaintAcks::offered(Some(100));
        assert!(acks.taken());
        acks.received(60);
        assert_eq!(acks.due(), None, "a keystroke's echo: nothing yet");
        acks.received(60);
        assert_eq!(acks.due(), Some(120), "the total drawn");
        assert_eq!(acks.due(), None, "once");
        acks.received(100);
        assert_eq!(acks.due(), Some(220));
    }
}
