//! What a window is sent of the tab it shows: painted differences of the
//! tab's one screen model (`term::paint`), never the program's raw bytes,
//! so a window parses nothing.
//!
//! When: a window whose queue is empty is painted at once (a keystroke's
//! echo goes out as it comes); one still writing the last frame is marked
//! dirty and painted once its queue drains, with everything that came in
//! between in one frame. A slow window so gets fewer, newer frames, and
//! nothing waits on a timer.

use std::sync::{Arc, Weak};

use tokio::sync::Notify;

use super::attach::Window;
use super::state::State;
use super::Core;
use crate::protocol::frame::Frame;
use crate::protocol::handshake::CoreMsg;
use crate::protocol::holder::data_frame;
use crate::protocol::outbox::Drain;

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
    /// Nothing to paint.
    Nothing,
}

/// Pure: whether a window with `queued` bytes not yet written, and `dirty`
/// when its tab changed since its last frame, is painted at `moment`.
pub fn due(queued: usize, dirty: bool, moment: Moment) -> Due {
    match (moment, queued == 0) {
        (Moment::Drained, _) if !dirty => Due::Nothing,
        (_, true) => Due::Now,
        (_, false) => Due::Later,
    }
}

/// What [`Core::drained`] found, for the window's drain task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterDrain {
    /// Nothing more is owed: wait for the next ring.
    Done,
    /// Something was queued meanwhile: wait for the queue again.
    Again,
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
    }

    /// `tab`'s screen changed: paint the windows showing it that have
    /// room, mark the others dirty.
    pub fn paint_windows(&self, state: &mut State, tab: &str) {
        let ids: Vec<u64> = state
            .windows
            .by_id
            .iter()
            .filter(|(_, w)| w.showing.as_deref() == Some(tab))
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            let win = &state.windows.by_id[&id];
            match due(win.out.queued(), win.dirty, Moment::Output) {
                Due::Now => self.paint(state, id, false),
                Due::Later => mark_dirty(state.windows.by_id.get_mut(&id).unwrap()),
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
        match due(win.out.queued(), win.dirty, Moment::Drained) {
            Due::Now => {
                self.paint(&mut state, id, false);
                AfterDrain::Done
            }
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
    fn a_window_is_painted_at_once_when_idle_and_once_drained_when_busy() {
        use Due::*;
        use Moment::*;
        let rows: &[(usize, bool, Moment, Due)] = &[
            // A keystroke's echo, or output after a quiet spell.
            (0, false, Output, Now),
            (0, true, Output, Now),
            // Still writing the last frame: coalesce.
            (1, false, Output, Later),
            (4096, true, Output, Later),
            // The queue drained with output owed: paint it all in one.
            (0, true, Drained, Now),
            // Drained, but something was queued again meanwhile.
            (10, true, Drained, Later),
            // Drained with nothing owed.
            (0, false, Drained, Nothing),
            (10, false, Drained, Nothing),
        ];
        for (queued, dirty, moment, want) in rows {
            assert_eq!(
                due(*queued, *dirty, *moment),
                *want,
                "{queued} {dirty} {moment:?}"
            );
        }
    }
}
