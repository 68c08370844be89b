//! What a window is sent of the tab it shows: painted differences of the
//! tab's one screen model (`term::paint`), never the program's raw bytes,
//! so a window parses nothing.
//!
//! When: a window that is not backed up ([`backed_up`]: nothing queued
//! for it here and, if it acknowledges its paint, little of it
//! unacknowledged) is painted at once when it typed since its last frame
//! (a keystroke's echo goes out as it comes) or when its last frame is
//! older than [`FRAME_GAP`] (output after a quiet spell). Otherwise it is
//! marked dirty and painted once it is no longer backed up (its queue
//! drained, or its acknowledgement came) and the gap has passed, with
//! everything that came in between in one frame. So only a stream of
//! output is paced, to at most one frame per gap (a fast window would
//! otherwise take a frame per read of the program's output, most of the
//! stream); a slow window gets fewer, newer frames, however many buffers
//! lie between (a window over ssh: `protocol::acks`); and a timer runs
//! only while a frame is owed.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use super::state::State;
use super::window::Window;
use super::Core;
use crate::protocol::acks::IN_FLIGHT;
use crate::protocol::frame::Frame;
use crate::protocol::handshake::CoreMsg;
use crate::protocol::holder::data_frame;
use crate::protocol::outbox::Drain;

/// The least time between two frames while output streams: one frame of a
/// 60 Hz display. A keystroke's echo and output after a quiet spell do not
/// wait for it.
pub const FRAME_GAP: Duration = Duration::from_millis(16);

/// Why a window might be painted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Moment {
    /// The shown tab's screen changed.
    Output,
    /// The window's queue drained, or its acknowledgement came.
    Drained,
}

/// What to do about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Due {
    /// Paint the difference now.
    Now,
    /// Mark the window dirty and paint once its queue drains.
    Later,
    /// The queue drained within the gap: paint at this moment.
    At(Instant),
    /// Nothing to paint.
    Nothing,
}

/// Whether a window counts as backed up, so its next frame waits, pure:
/// `queued` bytes not yet written to its connection here, and `unacked`
/// bytes of paint sent and not acknowledged, for a window that
/// acknowledges (`None`: one that does not, paced by its queue alone, as
/// a window of an earlier build). What is unacknowledged may be in any
/// buffer between here and its terminal (the bridge, ssh, TCP); up to
/// [`IN_FLIGHT`] of it is the link's to carry.
pub fn backed_up(queued: usize, unacked: Option<u64>) -> bool {
    queued > 0 || unacked.is_some_and(|u| u > IN_FLIGHT)
}

/// When a window is painted, pure: `backed` when it is [`backed_up`],
/// `dirty` when its tab changed since its last frame, `typed` when it
/// sent keys since then, `last` when that frame went out, at `now`.
pub fn due(
    backed: bool,
    dirty: bool,
    moment: Moment,
    typed: bool,
    last: Option<Instant>,
    now: Instant,
) -> Due {
    let next = last.map(|l| l + FRAME_GAP).filter(|n| *n > now && !typed);
    match (moment, !backed, next) {
        (Moment::Drained, _, _) if !dirty => Due::Nothing,
        (_, false, _) => Due::Later,
        (Moment::Output, true, Some(_)) => Due::Later,
        (Moment::Drained, true, Some(at)) => Due::At(at),
        (_, true, None) => Due::Now,
    }
}

/// What [`Core::drained`] found, for the window's drain task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterDrain {
    /// Nothing more is owed, or the window waits for its acknowledgement
    /// (which rings): wait for the next ring.
    Done,
    /// Something was queued meanwhile: wait for the queue again.
    Again,
    /// Paint at this moment (the gap since the last frame ends then).
    At(Instant),
    /// The window is gone: the task ends.
    Gone,
}

/// The task that paints window `id` once its queue drains, started with
/// the window. It sleeps on `bell`, which rings when the window is owed a
/// frame or a tab list, when its acknowledgement of paint comes while it
/// is owed one (`Core::acked`), and when it detaches, so an idle core does
/// not wake for it. It holds no [`crate::protocol::outbox::Outbox`]: the
/// connection closes when the window goes.
pub fn spawn_drain_task(core: Weak<Core>, id: u64, bell: Arc<Notify>, drain: Drain) {
    tokio::spawn(async move {
        loop {
            bell.notified().await;
            loop {
                drain.empty().await;
                let Some(core) = core.upgrade() else {
                    return;
                };
                match core.drained(id) {
                    AfterDrain::Gone => return,
                    AfterDrain::Done => break,
                    AfterDrain::Again => continue,
                    AfterDrain::At(at) => {
                        drop(core);
                        tokio::time::sleep_until(at.into()).await;
                    }
                }
            }
        }
    });
}

impl Core {
    /// Paint window `id` the tab it shows: the difference from its last
    /// frame, or the whole screen (after a [`CoreMsg::Redraw`]) when `full`
    /// or when it has none of this size. Under the state lock, so each
    /// change of the screen is in exactly one frame.
    pub(super) fn paint(&self, state: &mut State, id: u64, full: bool) {
        let State { windows, tabs, .. } = state;
        let Some(win) = windows.by_id.get_mut(&id) else {
            return;
        };
        let Some(tab) = win.showing.as_deref() else {
            return;
        };
        let Some(t) = tabs.get(tab) else {
            return;
        };
        let now = t.screen.frame();
        let size = t.screen.size();
        let before = win
            .painted
            .as_ref()
            .filter(|_| !full && win.painted_size == size);
        if before.is_none() {
            win.out.send(Frame::control(&CoreMsg::Redraw {
                tab: tab.to_string(),
                rows: size.0,
                cols: size.1,
            }));
        }
        let bytes = crate::term::paint(&now, before);
        if !bytes.is_empty() {
            let frame = data_frame(tab, &bytes);
            win.paint_sent += frame.body.len() as u64;
            win.out.send(frame);
        }
        win.painted = Some(now);
        win.painted_size = size;
        win.dirty = false;
        win.typed = false;
        win.last_paint = Some(Instant::now());
    }

    /// `tab`'s screen changed: paint the windows showing it that have
    /// room, mark the others dirty.
    pub fn paint_windows(&self, state: &mut State, tab: &str) {
        let now = Instant::now();
        for id in state.windows.showing(tab) {
            let win = &state.windows.by_id[&id];
            let moment = Moment::Output;
            match due(
                backed_up(win.out.queued(), win.unacked()),
                win.dirty,
                moment,
                win.typed,
                win.last_paint,
                now,
            ) {
                Due::Now => self.paint(state, id, false),
                Due::Later | Due::At(_) => mark_dirty(state.windows.by_id.get_mut(&id).unwrap()),
                Due::Nothing => {}
            }
        }
    }

    /// Window `id`'s queue drained (or its acknowledgement came): paint it
    /// if it is dirty, send it the tab list it is owed.
    pub fn drained(&self, id: u64) -> AfterDrain {
        let mut state = self.state.lock().unwrap();
        let Some(win) = state.windows.by_id.get(&id) else {
            return AfterDrain::Gone;
        };
        if win.out.is_closed() {
            // Nothing can reach it; its connection's end detaches it.
            return AfterDrain::Done;
        }
        if win.tabs_owed {
            let folder = win.folder.clone();
            self.send_tabs(&mut state, &folder);
        }
        let win = &state.windows.by_id[&id];
        let (typed, last, queued) = (win.typed, win.last_paint, win.out.queued());
        match due(
            backed_up(queued, win.unacked()),
            win.dirty,
            Moment::Drained,
            typed,
            last,
            Instant::now(),
        ) {
            Due::Now => {
                self.paint(&mut state, id, false);
                AfterDrain::Done
            }
            Due::At(at) => AfterDrain::At(at),
            Due::Later if queued > 0 => AfterDrain::Again,
            // Held for its acknowledgement, which rings the bell.
            Due::Later => AfterDrain::Done,
            Due::Nothing => AfterDrain::Done,
        }
    }

    /// Window `id` acknowledged `bytes` of paint (`protocol::acks`): what
    /// it has not acknowledged shrinks, and a frame it is owed is painted
    /// if that was what held it. A count past what was sent counts as all
    /// of it; a window that did not offer to acknowledge is paced by its
    /// queue alone, whatever it sends.
    pub fn acked(&self, id: u64, bytes: u64) {
        let mut state = self.state.lock().unwrap();
        let Some(win) = state.windows.by_id.get_mut(&id) else {
            return;
        };
        let before = backed_up(0, win.unacked());
        win.paint_acked = win.paint_acked.max(bytes.min(win.paint_sent));
        if before && !backed_up(0, win.unacked()) && (win.dirty || win.tabs_owed) {
            win.bell.notify_one();
        }
    }
}

/// Owe `win` a frame, waking its drain task the first time.
fn mark_dirty(win: &mut Window) {
    if !win.dirty {
        win.dirty = true;
        win.bell.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_is_painted_at_once_after_quiet_or_a_keystroke_and_paced_while_output_streams() {
        use Due::*;
        use Moment::*;
        let now = Instant::now();
        let old = Some(now - FRAME_GAP * 2);
        let recent = Some(now - FRAME_GAP / 4);
        let at = now - FRAME_GAP / 4 + FRAME_GAP;
        // (backed up, dirty, moment, typed, last frame, due)
        type Row = (bool, bool, Moment, bool, Option<Instant>, Due);
        let rows: &[Row] = &[
            // Output after a quiet spell, or the first frame.
            (false, false, Output, false, old, Now),
            (false, false, Output, false, None, Now),
            (false, true, Output, false, old, Now),
            // A keystroke's echo goes out at once, however recent the
            // last frame.
            (false, false, Output, true, recent, Now),
            // Output streaming: within the gap, coalesce.
            (false, false, Output, false, recent, Later),
            // Still writing the last frame, or it is not acknowledged:
            // coalesce.
            (true, false, Output, false, old, Later),
            (true, true, Output, true, old, Later),
            // The queue drained with output owed: paint it all in one,
            // once the gap has passed.
            (false, true, Drained, false, old, Now),
            (false, true, Drained, false, recent, At(at)),
            (false, true, Drained, true, recent, Now),
            // Drained, but something was queued again meanwhile (or too
            // much is still unacknowledged).
            (true, true, Drained, false, old, Later),
            // Drained with nothing owed.
            (false, false, Drained, false, old, Nothing),
            (true, false, Drained, false, recent, Nothing),
        ];
        for (backed, dirty, moment, typed, last, want) in rows {
            assert_eq!(
                due(*backed, *dirty, *moment, *typed, *last, now),
                *want,
                "{backed} {dirty} {moment:?} {typed} {last:?}"
            );
        }
    }

    #[test]
    fn a_window_is_backed_up_while_its_queue_holds_paint_or_too_much_is_unacknowledged() {
        // (queued here, unacknowledged paint (None: a window that does not
        // acknowledge), backed up)
        let rows: &[(usize, Option<u64>, bool)] = &[
            // A window of an earlier build: its queue alone, as before,
            // however much sits in the buffers beyond it.
            (0, None, false),
            (1, None, true),
            (1 << 20, None, true),
            // A window that acknowledges: nothing queued, and what is in
            // flight within the bound.
            (0, Some(0), false),
            (0, Some(40), false),
            (0, Some(IN_FLIGHT), false),
            // Past it: the link has not carried (or the window not drawn)
            // what it was sent.
            (0, Some(IN_FLIGHT + 1), true),
            (0, Some(8 << 20), true),
            // Its queue here holds paint: backed up whatever it acknowledged.
            (1, Some(0), true),
            (4096, Some(IN_FLIGHT + 1), true),
        ];
        for (queued, unacked, want) in rows {
            assert_eq!(backed_up(*queued, *unacked), *want, "{queued} {unacked:?}");
        }
    }
}
