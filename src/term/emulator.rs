//! One tab's emulator: alacritty_terminal's `Term` and parser, with the
//! state a snapshot needs mirrored beside it (the crate keeps it private),
//! fed through the [`Gate`] (what a hostile program's bytes may cost) and
//! a thin `Handler` (`handler`: what the crate leaves out or gets wrong).

use std::sync::{Arc, Mutex};

use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::term::{Config, Osc52, Term};
use alacritty_terminal::vte::ansi::{CharsetIndex, Color, Processor, Timeout};

use super::gate::{Gate, Piece};
use super::handler::Hooked;
use super::mirror::{default_tabs, Events, Inbox, State};

/// Synchronized updates (mode 2026) are applied at once: a burst is
/// painted after it is processed anyway, and a timer to end a forgotten
/// one would break "idle means zero CPU".
#[derive(Default)]
pub(super) struct NoSync;

impl Timeout for NoSync {
    fn set_timeout(&mut self, _: std::time::Duration) {}
    fn clear_timeout(&mut self) {}
    fn pending_timeout(&self) -> bool {
        false
    }
}

/// (rows, cols) for the crate.
struct Size(usize, usize);

impl Dimensions for Size {
    fn total_lines(&self) -> usize {
        self.0
    }
    fn screen_lines(&self) -> usize {
        self.0
    }
    fn columns(&self) -> usize {
        self.1
    }
}

pub(super) struct Emulator {
    pub term: Term<Events>,
    parser: Processor<NoSync>,
    gate: Gate,
    pub inbox: Arc<Mutex<Inbox>>,
    pub state: State,
    /// Characters the crate was given to print, REPs' included: the work
    /// a read cost, for tests.
    #[cfg(test)]
    pub printed: u64,
}

impl Emulator {
    pub fn new(rows: usize, cols: usize) -> Self {
        let inbox = Arc::new(Mutex::new(Inbox::default()));
        let config = Config {
            scrolling_history: 0,
            osc52: Osc52::Disabled,
            ..Config::default()
        };
        let term = Term::new(config, &Size(rows, cols), Events(inbox.clone()));
        Emulator {
            term,
            parser: Processor::new(),
            gate: Gate::default(),
            inbox,
            state: State {
                region: (0, rows),
                tabs: default_tabs(0, cols).collect(),
                active_charset: CharsetIndex::G0,
                styled: false,
                main: None,
                titles: 0,
            },
            #[cfg(test)]
            printed: 0,
        }
    }

    pub fn process(&mut self, bytes: &[u8]) {
        let Emulator {
            term,
            parser,
            gate,
            inbox,
            state,
            ..
        } = self;
        #[cfg(test)]
        let mut printed = 0;
        gate.feed(bytes, |piece| {
            let mut h = Hooked {
                term: &mut *term,
                state: &mut *state,
                inbox: &*inbox,
                #[cfg(test)]
                printed: &mut printed,
            };
            match piece {
                Piece::Bytes(b) => parser.advance(&mut h, b),
                Piece::Repeat { ch, count } => {
                    // CAN ends the crate's CSI, its REP withheld, unread.
                    parser.advance(&mut h, b"\x18");
                    // As tmux: up to the line's end (a pending wrap is past
                    // the last column), never wrapping.
                    let cursor = &h.term.grid().cursor;
                    let at = cursor.point.column.0 + usize::from(cursor.input_needs_wrap);
                    let n = usize::from(count).min(h.term.columns().saturating_sub(at));
                    parser.advance(&mut h, &vec![ch; n]);
                }
                Piece::Renew => *parser = Processor::new(),
            }
        });
        #[cfg(test)]
        {
            self.printed += printed;
        }
    }

    pub fn inbox(&self) -> std::sync::MutexGuard<'_, Inbox> {
        self.inbox.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn rows(&self) -> usize {
        self.term.screen_lines()
    }

    pub fn cols(&self) -> usize {
        self.term.columns()
    }

    pub fn alternate(&self) -> bool {
        self.state.main.is_some()
    }

    pub fn resize(&mut self, rows: usize, cols: usize) {
        let (old_rows, old_cols) = (self.rows(), self.cols());
        if (rows, cols) == (old_rows, old_cols) {
            return;
        }
        self.term.resize(Size(rows, cols));
        if let Some(main) = self.state.main.as_mut() {
            // As the crate does with its inactive grid.
            main.resize::<Color>(true, rows, cols);
        }
        self.state.region = (0, rows);
        if cols != old_cols {
            let tabs = &mut self.state.tabs;
            let from = tabs.len();
            tabs.truncate(cols);
            tabs.extend(default_tabs(from, cols));
        }
    }
}
