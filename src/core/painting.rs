//! What a window is sent of the tab it shows: painted differences of the
//! tab's one screen model (`term::paint`), never the program's raw bytes,
//! so a window parses nothing.
//!
//! When: a window whose queue is empty is painted at once when it typed
//! since its last frame (a keystroke's echo goes out as it comes) or when
//! its last frame is older than [`FRAME_GAP`] (output after a quiet
//! spell). Otherwise it is marked dirty and painted once its queue drains
//! and the gap has passed, with everything that came in between in one
//! frame. So only a stream of output is paced, to at most one frame per
//! gap (a fast window would otherwise take a frame per read of the
//! program's output, most of the stream); a slow window gets fewer, newer
//! frames; and a timer runs only while a frame is owed.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use super::state::State;
use super::window::Window;
use super::Core;
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
    /// The window's queue drained.
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

/// When a window is painted, pure: `queued` bytes not yet written, `dirty`
/// when its tab changed since its last frame, `typed` when it sent keys
/// since then, `last` when that frame went out, at `now`.
pub fn due(
    queued: usize,
    dirty: bool,
    moment: Moment,
    typed: bool,
    last: Option<Instant>,
    now: Instant,
) -> Due {
    let next = last.map(|l| l + FRAME_GAP).filter(|n| *n > now && !typed);
    match (moment, queued == 0, next) {
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
    /// Nothing more is owed: wait for the next ring.
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
/// frame or a tab list (and when it detaches), so an idle core does not
/// wake for it. It holds no [`crate::protocol::outbox::Outbox`]: the
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
            win.out.send(data_frame(tab, &bytes));
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
                win.out.queued(),
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

    /// Window `id`'s queue drained: paint it if it is dirty, send it the
    /// tab list it is owed.
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
        let (typed, last) = (win.typed, win.last_paint);
        match due(
            win.out.queued(),
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
            Due::Later => AfterDrain::Again,
            Due::Nothing => AfterDrain::Done,
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
        // (queued, dirty, moment, typed, last frame, due)
        type Row = (usize, bool, Moment, bool, Option<Instant>, Due);
        let rows: &[Row] = &[
            // Output after a quiet spell, or the first frame.
            (0, false, Output, false, old, Now),
            (0, false, Output, false, None, Now),
            (0, true, Output, false, old, Now),
            // A keystroke's echo goes out at once, however recent the
            // last frame.
            (0, false, Output, true, recent, Now),
            // Output streaming: within the gap, coalesce.
            (0, false, Output, false, recent, Later),
            // Still writing the last frame: coalesce.
            (1, false, Output, false, old, Later),
            (4096, true, Output, true, old, Later),
            // The queue drained with output owed: paint it all in one,
            // once the gap has passed.
            (0, true, Drained, false, old, Now),
            (0, true, Drained, false, recent, At(at)),
            (0, true, Drained, true, recent, Now),
            // Drained, but something was queued again meanwhile.
            (10, true, Drained, false, old, Later),
            // Drained with nothing owed.
            (0, false, Drained, false, old, Nothing),
            (10, false, Drained, false, recent, Nothing),
        ];
        for (queued, dirty, moment, typed, last, want) in rows {
            assert_eq!(
                due(*queued, *dirty, *moment, *typed, *last, now),
                *want,
                "{queued} {dirty} {moment:?} {typed} {last:?}"
            );
        }
    }
}
