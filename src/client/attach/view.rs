//! Drawing the shown tab: the core paints it (`term::paint`, the
//! difference from what it sent last), so the window parses nothing; it
//! writes those bytes, then its status line below them.
//!
//! The core's differences hold only while the terminal shows what the core
//! last painted. Once the window draws over the tab (an overlay, scroll
//! mode, a resize), it drops them and asks for the whole screen again
//! ([`View::wants_repaint`]); differences resume after it.

use std::io::Write;

/// The most paint the window holds unwritten. The largest paint, a whole
/// screen of the largest size (`protocol::MAX_ROWS` x `MAX_COLS`, half a
/// million cells) with its colours changing at every cell, is about 12
/// MiB (some 24 bytes a cell).
pub const PAINT_MAX: usize = 16 << 20;

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

    /// The core's paint of the shown tab. Past [`PAINT_MAX`] not yet
    /// written, it is dropped for a whole screen: no paint is that large
    /// (`PAINT_MAX`), so only a far end that is no core sends it, and the
    /// window neither holds it nor spends long writing it.
    pub fn output(&mut self, bytes: &[u8]) {
        if self.stale {
            return;
        }
        if self.pending.len() + bytes.len() > PAINT_MAX {
            self.invalidate();
            return;
        }
        self.pending.extend_from_slice(bytes);
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

    /// Paint past PAINT_MAX is held by no window: it is dropped, and the
    /// whole screen asked for once.
    #[test]
    fn paint_past_the_largest_screen_is_dropped_for_a_whole_one() {
        let mut v = View::new((6, 20));
        v.redraw("t", 5, 20);
        v.output(&vec![b'x'; PAINT_MAX - 1]);
        v.output(b"y");
        assert!(!v.wants_repaint(), "up to the bound it is paint");
        v.output(b"z");
        assert!(v.wants_repaint(), "past it, a whole screen");
        assert!(!v.paint(b"").contains(&b'x'), "nothing of it written");
        // Asked once; what follows until the whole screen is dropped too.
        v.output(&vec![b'x'; PAINT_MAX]);
        assert!(!v.wants_repaint());
    }
}
