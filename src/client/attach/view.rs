//! Drawing the shown tab: the core paints it (`term::paint`, the
//! difference from what it sent last), so the window parses nothing; it
//! writes those bytes, then its status line below them.
//!
//! The core's differences hold only while the terminal shows what the core
//! last painted. Once the window draws over the tab (an overlay, scroll
//! mode, a resize), it drops them and asks for the whole screen again
//! ([`View::wants_repaint`]); differences resume after it.

use std::io::Write;

/// The least [`View::paint_max`]: a small terminal's paint never stops
/// for it.
pub const PAINT_MIN: usize = 256 << 10;

pub struct View {
    pub tab: Option<String>,
    /// The core's paint not written yet.
    pending: Vec<u8>,
    /// The terminal no longer shows what the core painted: its differences
    /// are dropped until its next whole screen.
    stale: bool,
    /// That whole screen was asked for, or comes without asking.
    asked: bool,
    /// The person's terminal size.
    pub term: (u16, u16),
    /// The status line as last written below the tab, so a key that
    /// changes nothing on the screen writes nothing: a write per key would
    /// come before that key goes to the core, on the path of its echo.
    status: Option<Vec<u8>>,
}

impl View {
    pub fn new(term: (u16, u16)) -> Self {
        View {
            tab: None,
            pending: Vec::new(),
            stale: false,
            asked: false,
            term,
            status: None,
        }
    }

    /// The next bytes for `tab` paint its whole screen (at this size).
    pub fn redraw(&mut self, tab: &str, _rows: u16, _cols: u16) {
        self.tab = Some(tab.to_string());
        self.pending.clear();
        self.stale = false;
        self.asked = false;
        self.status = None;
    }

    /// The core's paint of the shown tab. A frame larger than a whole
    /// screen of this terminal could be ([`View::paint_max`]) is dropped
    /// for a whole screen: only a far end that is no core sends one, and
    /// writing it could hold the window (and the person's keys) for as
    /// long as the terminal takes to draw it.
    pub fn output(&mut self, bytes: &[u8]) {
        if self.stale {
            return;
        }
        if bytes.len() > self.paint_max() {
            self.invalidate();
            return;
        }
        self.pending.extend_from_slice(bytes);
    }

    /// The largest paint of one frame at this terminal's size: every cell
    /// with its colours changed and a wide character (some 24 bytes), and
    /// as much again for cursor moves, with room to spare (64 bytes a
    /// cell); never under [`PAINT_MIN`].
    pub fn paint_max(&self) -> usize {
        let (rows, cols) = self.term;
        (rows as usize * cols as usize * 64).max(PAINT_MIN)
    }

    /// The window drew over the tab: its whole screen is needed again.
    pub fn invalidate(&mut self) {
        if !self.stale {
            self.stale = true;
            self.asked = false;
        }
        self.pending.clear();
        self.status = None;
    }

    /// Like [`View::invalidate`], for a whole screen the core sends on its
    /// own (after a resize, on attaching): nothing to ask.
    pub fn expect_whole(&mut self) {
        self.stale = true;
        self.asked = true;
        self.pending.clear();
        self.status = None;
    }

    /// Whether to ask the core for the whole screen now (once per need).
    pub fn wants_repaint(&mut self) -> bool {
        if self.stale && !self.asked && self.tab.is_some() {
            self.asked = true;
            return true;
        }
        false
    }

    /// Bytes that bring the terminal up to date: the core's paint, then
    /// `status` (the status line's bytes, see `super::status::render`) on
    /// the last row. Nothing when neither changed since the last paint.
    pub fn paint(&mut self, status: &[u8]) -> Vec<u8> {
        if self.pending.is_empty() && self.status.as_deref() == Some(status) {
            return Vec::new();
        }
        self.status = Some(status.to_vec());
        let mut out = std::mem::take(&mut self.pending);
        // Save and restore the cursor (and its attributes) around the
        // status line, so the program's state is untouched.
        out.extend_from_slice(b"\x1b7");
        out.extend(format!("\x1b[{};1H", self.term.0).as_bytes());
        out.extend_from_slice(status);
        out.extend_from_slice(b"\x1b[0m\x1b8");
        out
    }

    pub fn write(bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(bytes);
        let _ = out.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::{paint, Screen};

    /// The core's paints, written by the window, reproduce the tab's
    /// screen, with the status line below it.
    #[test]
    fn the_cores_paint_and_the_status_line_make_the_window() {
        let mut tab = Screen::new(5, 20);
        let mut v = View::new((6, 20));
        v.redraw("t", 5, 20);
        tab.process(b"\x1b[31mred\x1b[0m\r\nplain\x1b[3;5Hx");
        let first = tab.frame();
        v.output(&paint(&first, None));
        let mut outer = Screen::new(6, 20);
        outer.process(&v.paint(b"status"));
        assert_eq!(outer.text(None), "red\nplain\n    x\n\n\nstatus");
        assert_eq!(
            outer.cursor(),
            (2, 5),
            "the program's cursor, not the status line's"
        );
        tab.process(b"y");
        v.output(&paint(&tab.frame(), Some(&first)));
        outer.process(&v.paint(b"status"));
        assert_eq!(outer.text(None), "red\nplain\n    xy\n\n\nstatus");
    }

    /// A key that changes nothing (sent on, no echo yet) writes nothing;
    /// a new status line, a paint, or a terminal drawn over writes again.
    #[test]
    fn nothing_new_writes_nothing() {
        let mut v = View::new((6, 20));
        v.redraw("t", 5, 20);
        v.output(b"whole");
        assert!(!v.paint(b"status").is_empty());
        assert!(v.paint(b"status").is_empty(), "nothing changed");
        assert!(!v.paint(b"status 2").is_empty(), "the status line changed");
        v.output(b"echo");
        assert!(v.paint(b"status 2").starts_with(b"echo"));
        assert!(v.paint(b"status 2").is_empty());
        v.invalidate();
        assert!(!v.paint(b"status 2").is_empty(), "drawn over");
        v.expect_whole();
        assert!(!v.paint(b"status 2").is_empty(), "cleared for a resize");
        v.redraw("t", 5, 20);
        assert!(!v.paint(b"status 2").is_empty(), "a whole screen");
    }

    /// After an overlay, differences are dropped until the whole screen
    /// comes, which is asked for once.
    #[test]
    fn a_stale_view_asks_once_and_drops_differences_until_the_whole_screen() {
        let mut v = View::new((6, 20));
        assert!(!v.wants_repaint(), "no tab shown");
        v.redraw("t", 5, 20);
        assert!(!v.wants_repaint());
        v.output(b"diff");
        v.invalidate();
        v.output(b"more");
        assert!(v.wants_repaint());
        assert!(!v.wants_repaint(), "asked already");
        v.invalidate();
        assert!(!v.wants_repaint(), "still asked");
        assert_eq!(v.paint(b""), b"\x1b7\x1b[6;1H\x1b[0m\x1b8");
        v.redraw("t", 5, 20);
        v.output(b"whole");
        assert!(v.paint(b"").starts_with(b"whole"));
        // A resize: the core sends the whole screen unasked.
        v.expect_whole();
        v.output(b"diff");
        assert!(!v.wants_repaint());
        assert_eq!(v.paint(b""), b"\x1b7\x1b[6;1H\x1b[0m\x1b8");
    }

    /// A frame larger than a whole screen of this terminal is written by
    /// no window: it is dropped, and the whole screen asked for once.
    #[test]
    fn a_frame_past_a_whole_screen_is_dropped_for_a_whole_one() {
        let mut v = View::new((50, 200));
        assert_eq!(v.paint_max(), 50 * 200 * 64);
        assert_eq!(View::new((6, 20)).paint_max(), PAINT_MIN);
        v.redraw("t", 49, 200);
        v.output(&vec![b'x'; v.paint_max()]);
        v.output(&vec![b'y'; v.paint_max()]);
        assert!(!v.wants_repaint(), "up to a screen a frame is paint");
        assert!(v.paint(b"").starts_with(b"xx"));
        v.output(&vec![b'z'; v.paint_max() + 1]);
        assert!(v.wants_repaint(), "past it, a whole screen");
        assert!(!v.paint(b"").contains(&b'z'), "nothing of it written");
        // Asked once; what follows until the whole screen is dropped too.
        v.output(b"diff");
        assert!(!v.wants_repaint());
        assert!(!v.paint(b"").starts_with(b"diff"));
    }
}
