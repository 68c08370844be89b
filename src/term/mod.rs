//! The screen model of a terminal tab: the one emulator every byte of a
//! program's output goes through, and what the rest of nerdr reads of it.
//!
//! This is the only module that knows which emulator parses the bytes.
//! The core keeps one [`Screen`] per tab; the holder keeps only bytes that
//! rebuild one ([`Screen::snapshot`] plus what came after); a window gets
//! painted differences ([`paint`]) and parses nothing.
//!
//! # Why alacritty_terminal
//!
//! Measured by `compare` (`cargo test --release --bin nerdr term::compare
//! -- --ignored --nocapture`), 40×120, a generated ~20 MB stream of shell
//! output, full-screen redraws and boxes, read 4 KiB at a time:
//!
//! (the table is printed by that test: throughput in MB/s and bytes per
//! idle screen for alacritty_terminal, vt100 0.15 and avt 0.19; it is to
//! be copied here from its first release run).
//!
//! alacritty_terminal is the most complete (underline styles and colour,
//! charsets, tab stops, origin mode, queries, cursor shape, 1049) and is
//! well kept (it is Alacritty's own). What it lacks is added in a thin
//! `Handler` layer (`handler`): blink (a free flag bit), SGR 21 as double
//! underline, the 47/1047 alternate screens, answers to OSC 4/10/11 and
//! `CSI 14 t` from xterm's palette and an 8×16 cell, XTVERSION (found in
//! the bytes, `query`), and mirrors of what it keeps privately and a
//! snapshot needs (scroll region, tab stops, active charset, the main
//! screen behind the alternate one). Overline (SGR 53) is not kept.
//!
//! What a program's bytes may make the crate do is bounded before it
//! sees them (`gate`): REP as tmux does it, and no OSC past 64 KiB.
//!
//! Its cells are bigger than vt100's and it keeps a grid per screen, so an
//! idle screen is [`Screen::compact`]ed into its snapshot: a few KiB.
//! No scrollback is kept (nerdr's scroll mode replays the output log).

use std::ops::Deref;

use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::Line;

mod emulator;
mod gate;
mod handler;
mod mirror;
mod paint;
mod palette;
mod query;
mod sgr;
mod snapshot;
mod vt_modes;
mod vt_moves;

use emulator::Emulator;
pub use paint::Frame;

/// A terminal screen fed by a program's output.
pub struct Screen {
    model: Model,
    replies: Vec<u8>,
    /// The start of a query the crate does not answer, cut by a read.
    carry: Vec<u8>,
}

enum Model {
    Live(Box<Emulator>),
    /// An idle screen kept as its snapshot, with what is read of it most.
    Compact {
        rows: u16,
        cols: u16,
        bytes: Vec<u8>,
        cursor: (u16, u16),
        // Read by tests only (what a compact screen shows is its snapshot).
        #[cfg_attr(not(test), allow(dead_code))]
        alternate: bool,
        title: String,
        /// Whether the program had bracketed paste on.
        paste: bool,
    },
}

/// The emulator, the screen's own or rebuilt for one look at a compact one.
enum View<'a> {
    Own(&'a Emulator),
    Rebuilt(Box<Emulator>),
}

impl Deref for View<'_> {
    type Target = Emulator;
    fn deref(&self) -> &Emulator {
        match self {
            View::Own(e) => e,
            View::Rebuilt(e) => e,
        }
    }
}

/// The crate's grid needs two columns for a wide character.
const MIN_COLS: u16 = 2;

fn rebuild(rows: u16, cols: u16, bytes: &[u8]) -> Box<Emulator> {
    let mut emu = Box::new(Emulator::new(rows as usize, cols as usize));
    emu.process(bytes);
    emu.inbox().replies.clear();
    emu
}

impl Screen {
    pub fn new(rows: u16, cols: u16) -> Self {
        let (rows, cols) = (rows.max(1), cols.max(MIN_COLS));
        Screen {
            model: Model::Live(Box::new(Emulator::new(rows as usize, cols as usize))),
            replies: Vec::new(),
            carry: Vec::new(),
        }
    }

    fn live(&mut self) -> &mut Emulator {
        if let Model::Compact {
            rows, cols, bytes, ..
        } = &self.model
        {
            self.model = Model::Live(rebuild(*rows, *cols, bytes));
        }
        match &mut self.model {
            Model::Live(e) => e,
            Model::Compact { .. } => unreachable!("rebuilt above"),
        }
    }

    fn view(&self) -> View<'_> {
        match &self.model {
            Model::Live(e) => View::Own(e),
            Model::Compact {
                rows, cols, bytes, ..
            } => View::Rebuilt(rebuild(*rows, *cols, bytes)),
        }
    }

    /// Feed the program's output.
    pub fn process(&mut self, bytes: &[u8]) {
        let ends = query::xtversion_ends(&mut self.carry, bytes);
        let emu = self.live();
        let mut replies = Vec::new();
        let mut from = 0;
        for end in ends {
            emu.process(&bytes[from..end]);
            replies.append(&mut emu.inbox().replies);
            replies.extend_from_slice(query::XTVERSION.as_bytes());
            from = end;
        }
        emu.process(&bytes[from..]);
        replies.append(&mut emu.inbox().replies);
        self.replies.append(&mut replies);
    }

    /// What the program asked of its terminal since the last call (device
    /// attributes, cursor position, ...), answered: bytes to write to the
    /// program's input. Empty when it asked nothing.
    pub fn take_replies(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.replies)
    }

    /// Resize the way a terminal does: when rows go, the lines above the
    /// cursor go first, so the cursor's line and the newest output stay.
    pub fn resize(&mut self, rows: u16, cols: u16) {
        let (rows, cols) = (rows.max(1), cols.max(MIN_COLS));
        self.live().resize(rows as usize, cols as usize);
    }

    /// (rows, cols).
    pub fn size(&self) -> (u16, u16) {
        match &self.model {
            Model::Live(e) => (e.rows() as u16, e.cols() as u16),
            Model::Compact { rows, cols, .. } => (*rows, *cols),
        }
    }

    /// (row, col), from 0.
    pub fn cursor(&self) -> (u16, u16) {
        match &self.model {
            Model::Live(e) => {
                let p = e.term.grid().cursor.point;
                (p.line.0 as u16, p.column.0 as u16)
            }
            Model::Compact { cursor, .. } => *cursor,
        }
    }

    /// Whether the screen is kept as its snapshot (see [`Screen::compact`]).
    #[cfg(test)]
    pub fn is_compact(&self) -> bool {
        matches!(self.model, Model::Compact { .. })
    }

    #[cfg(test)]
    pub fn alternate_screen(&self) -> bool {
        match &self.model {
            Model::Live(e) => e.alternate(),
            Model::Compact { alternate, .. } => *alternate,
        }
    }

    /// Whether the program turned bracketed paste on (`CSI ? 2004 h`): a
    /// paste it is sent then comes between `ESC [200~` and `ESC [201~`.
    pub fn bracketed_paste(&self) -> bool {
        match &self.model {
            Model::Live(e) => e
                .term
                .mode()
                .contains(alacritty_terminal::term::TermMode::BRACKETED_PASTE),
            Model::Compact { paste, .. } => *paste,
        }
    }

    /// The title the program set (OSC 0/2).
    pub fn title(&self) -> String {
        match &self.model {
            Model::Live(e) => e.inbox().title.clone(),
            Model::Compact { title, .. } => title.clone(),
        }
    }

    /// The visible rows as text, each with its trailing blanks cut.
    pub fn rows_text(&self) -> Vec<String> {
        let emu = self.view();
        let grid = emu.term.grid();
        let mut out = Vec::with_capacity(grid.screen_lines());
        for r in 0..grid.screen_lines() {
            let mut line = Vec::new();
            sgr::row_text(&mut line, &grid[Line(r as i32)][..]);
            let text = String::from_utf8_lossy(&line);
            out.push(text.trim_end().to_string());
        }
        out
    }

    /// The screen as a reader sees it: trailing blank rows cut, and only
    /// the last `lines` rows when given.
    pub fn text(&self, lines: Option<usize>) -> String {
        let mut rows = self.rows_text();
        while rows.last().is_some_and(|r| r.is_empty()) {
            rows.pop();
        }
        if let Some(n) = lines {
            let skip = rows.len().saturating_sub(n);
            rows.drain(..skip);
        }
        rows.join("\n")
    }

    /// Bytes that, fed to `Screen::new(self.size())`, give this screen back
    /// exactly: both screens when the alternate one is shown, modes, title.
    pub fn snapshot(&self) -> Vec<u8> {
        match &self.model {
            Model::Live(e) => snapshot::snapshot(e),
            Model::Compact { bytes, .. } => bytes.clone(),
        }
    }

    /// What the screen shows now, for [`paint`].
    pub fn frame(&self) -> Frame {
        Frame::of(&self.view())
    }

    /// Keep an idle screen as its snapshot (a few KiB instead of the
    /// grids); it is rebuilt, unseen, when next fed, resized or looked at.
    /// The core calls this after a quiet spell.
    pub fn compact(&mut self) {
        let Model::Live(e) = &self.model else {
            return;
        };
        let compact = Model::Compact {
            rows: e.rows() as u16,
            cols: e.cols() as u16,
            bytes: snapshot::snapshot(e),
            cursor: self.cursor(),
            alternate: e.alternate(),
            title: e.inbox().title.clone(),
            paste: e
                .term
                .mode()
                .contains(alacritty_terminal::term::TermMode::BRACKETED_PASTE),
        };
        self.model = compact;
    }
}

/// Bytes that bring an outer terminal showing `before` (or anything, when
/// `None`: the tab's area is drawn whole) to `now`: cells, cursor
/// position, visibility and shape, and the input modes the program set
/// (bracketed paste, mouse, application keys, focus events). The tab's
/// area is the outer terminal's top-left `now`-sized corner.
pub fn paint(now: &Frame, before: Option<&Frame>) -> Vec<u8> {
    paint::paint(now, before)
}

#[cfg(test)]
mod compare;
#[cfg(test)]
mod testgen;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_hostile;
#[cfg(test)]
mod tests_paint;
#[cfg(test)]
mod tests_queries;
#[cfg(test)]
mod tests_snapshot;
#[cfg(test)]
mod tests_styles;
