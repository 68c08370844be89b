//! What the emulator keeps beside the crate's `Term`: the state the
//! crate keeps privately (mirrored for snapshots), where its events land,
//! and the limits on what a program may make it keep. Its own module so
//! the emulator, its `Handler` and the workarounds share it without
//! depending on each other.

use std::sync::{Arc, Mutex};

use alacritty_terminal::event::{Event, EventListener};
use alacritty_terminal::grid::Grid;
use alacritty_terminal::term::cell::{Cell, Flags};
use alacritty_terminal::vte::ansi::CharsetIndex;

/// The crate has no blink attribute; its flags leave the top bit free.
pub(super) const BLINK: Flags = Flags::from_bits_retain(1 << 15);

/// Replies and title, which the crate reports as events.
#[derive(Default)]
pub(super) struct Inbox {
    pub replies: Vec<u8>,
    pub title: String,
}

#[derive(Clone)]
pub(super) struct Events(pub Arc<Mutex<Inbox>>);

impl EventListener for Events {
    fn send_event(&self, event: Event) {
        let mut inbox = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match event {
            Event::PtyWrite(text) => inbox.replies.extend_from_slice(text.as_bytes()),
            Event::Title(title) => inbox.title = title,
            Event::ResetTitle => inbox.title.clear(),
            _ => {}
        }
    }
}

/// What the crate keeps privately, mirrored.
pub(super) struct State {
    /// Scroll region, rows `top..bottom`.
    pub region: (usize, usize),
    pub tabs: Vec<bool>,
    pub active_charset: CharsetIndex,
    /// Whether the program set a cursor style (DECSCUSR or mode 12).
    pub styled: bool,
    /// The main screen while the alternate one is shown (the crate's copy
    /// is out of reach), kept as the crate keeps its own, and put back.
    pub main: Option<Grid<Cell>>,
    /// Titles pushed (XTWINOPS 22) and not yet popped.
    pub titles: usize,
}

const TAB_EVERY: usize = 8;

/// Longest title kept, in bytes.
pub(super) const MAX_TITLE: usize = 4096;

/// Most titles pushed and kept: the crate keeps 4096 and, past that,
/// shifts them all to push one more (a copy of a title of up to
/// [`MAX_TITLE`] per 5 bytes read).
pub(super) const MAX_TITLES: usize = 16;

/// Most zero-width characters (combining marks, joiners) kept on a cell.
pub(super) const MAX_ZEROWIDTH: usize = 16;

pub(super) fn default_tabs(from: usize, cols: usize) -> impl Iterator<Item = bool> {
    (from..cols).map(|i| i % TAB_EVERY == 0)
}
