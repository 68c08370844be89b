//! Paint acknowledgements: a window tells its core how much paint it has
//! drawn, so the core holds the next frame while too much is still on
//! its way, wherever it waits (docs/ARCHITECTURE.md, "Sockets and
//! protocols").
//!
//! Why: the core paints a window only when that window's queue is empty
//! (`core::painting`), which paces a window on this machine, whose socket
//! holds little. Over `--host` the queue drains into the bridge, ssh's
//! channel and TCP, which hold megabytes: a slow link would get every
//! frame the core made while those filled, as a backlog, before the
//! newest. Counting what the window has not acknowledged as still queued
//! bounds what is in flight, however many buffers lie between.
//!
//! The design, the smallest that does it:
//! - One number each way, cumulative: the bytes of data frames (the
//!   paint, `protocol::holder::data_frame`, whose bodies cross the link
//!   unchanged) the core sent this window, and the bytes the window
//!   acknowledges it has drawn (`ClientMsg::Ack { bytes }`). No sequence
//!   numbers (nothing is ever resent or reordered), no acknowledgement of
//!   control frames (tab lists and replies stay under the core's own
//!   `core::attach::WINDOW_BACKLOG` bound, as before).
//! - Offered, then taken: the core says in its welcome how often it wants
//!   an acknowledgement (`Verdict::Welcome::ack_every`, absent from a
//!   core that takes none); a window that will acknowledge says so in its
//!   attach (`ClientMsg::Attach::acks`). Both fields default, so a window
//!   or core of an earlier build of the same `PROTOCOL_VERSION` reads the
//!   other's messages as before, and the core counts nothing unacknowledged
//!   for a window that never offered. A window never sends an `Ack` to a
//!   core that did not offer: an older core closes the connection on a
//!   message it does not know.
//! - The window acknowledges after drawing, once the paint it has not
//!   acknowledged reaches `ack_every` ([`ack_due`]): an acknowledgement
//!   per 16 KiB of paint, none per keystroke's echo, and none at all
//!   while nothing is painted (no timer; an idle window stays asleep).
//!   The core holds paint only past [`IN_FLIGHT`], four times that, so a
//!   window that has drawn everything it got never holds up the next
//!   frame, whatever it left unacknowledged below `ack_every`.
//!
//! Why [`IN_FLIGHT`] is 64 KiB: a frame is the changed rows of the tab's
//! screen, each at most its width in characters plus their colours; a
//! screenful of streaming text is 2 KiB at 80x24 and about 10 KiB at
//! 200x50 (more with colours on every cell; the first, whole screen of a
//! tab is the largest). 64 KiB is a few of the largest frames in flight,
//! so a link with a 100 ms round trip still carries 60 frames a second of
//! 10 KiB, while a slow link (1 Mbit/s, 125 KB/s) shows what the tab
//! showed half a second ago rather than a backlog of megabytes. A single
//! frame larger than that still goes: only what comes after it waits.

/// Unacknowledged paint beyond which the core holds a window's next frame
/// (see the module doc for the number).
pub const IN_FLIGHT: u64 = 64 << 10;

/// How much paint a window leaves unacknowledged at most, as the core asks
/// in its welcome: a quarter of [`IN_FLIGHT`].
pub const ACK_EVERY: u64 = IN_FLIGHT / 4;

// What a window leaves unacknowledged never holds the core.
const _: () = assert!(ACK_EVERY < IN_FLIGHT);

/// Whether a window that has drawn `received` bytes of paint and
/// acknowledged `acked` of them acknowledges now, when its core asked for
/// one every `every` bytes, pure. `every` 0 (a core that asks for each
/// frame) acknowledges whatever is new.
pub fn ack_due(received: u64, acked: u64, every: u64) -> bool {
    let new = received.saturating_sub(acked);
    new > 0 && new >= every
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_acknowledges_once_a_step_of_paint_is_drawn() {
        // (received, acked, every, due)
        let rows: &[(u64, u64, u64, bool)] = &[
            (0, 0, ACK_EVERY, false),
            // A keystroke's echo: nothing yet.
            (40, 0, ACK_EVERY, false),
            (ACK_EVERY - 1, 0, ACK_EVERY, false),
            (ACK_EVERY, 0, ACK_EVERY, true),
            (ACK_EVERY + 5, 5, ACK_EVERY, true),
            (ACK_EVERY + 5, 6, ACK_EVERY, false),
            // A core that wants every frame acknowledged.
            (1, 0, 0, true),
            (7, 7, 0, false),
            // Never more than drawn.
            (3, 10, 0, false),
        ];
        for (received, acked, every, due) in rows {
            assert_eq!(
                ack_due(*received, *acked, *every),
                *due,
                "{received} {acked} {every}"
            );
        }
    }
}
