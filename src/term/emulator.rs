//! alacritty_terminal's `Term` behind a thin `Handler` that adds what the
//! crate leaves out (its fields are private, so what a snapshot needs is
//! kept here as the bytes pass): scroll region, tab stops, active charset,
//! cursor style as set, the main screen behind the alternate one, blink,
//! the 47/1047 alternate screens, and answers the crate does not give.

use std::sync::{Arc, Mutex};

use alacritty_terminal::event::{Event, EventListener};
use alacritty_terminal::grid::{Dimensions, Grid};
use alacritty_terminal::term::cell::{Cell, Flags};
use alacritty_terminal::term::color::COUNT;
use alacritty_terminal::term::{Config, Osc52, Term, TermMode};
use alacritty_terminal::vte::ansi::{
    Attr, CharsetIndex, ClearMode, Color, CursorShape, CursorStyle, Handler, Hyperlink,
    KeyboardModes, KeyboardModesApplyBehavior, LineClearMode, Mode, ModifyOtherKeys,
    NamedPrivateMode, PrivateMode, Processor, Rgb, ScpCharPath, ScpUpdateMode, StandardCharset,
    TabulationClearMode, Timeout,
};

use super::palette;
use super::vt_modes;
use super::vt_moves::{self, Way};
use super::vt_repeat::Repeats;

/// The crate has no blink attribute; its flags leave the top bit free.
pub(super) const BLINK: Flags = Flags::from_bits_retain(1 << 15);

/// Replies and title, which the crate reports as events.
#[derive(Default)]
pub(super) struct Inbox {
    pub replies: Vec<u8>,
    pub title: String,
}

#[derive(Clone)]
pub(super) struct Events(Arc<Mutex<Inbox>>);

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

/// How the alternate screen was entered.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum AltVia {
    /// 1049: the main screen's saved cursor becomes its cursor.
    SaveCursor,
    /// 47 and 1047: the main screen's saved cursor is kept.
    Plain,
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

const TAB_EVERY: usize = 8;

/// Longest title kept, in bytes.
pub(super) const MAX_TITLE: usize = 4096;

/// Most zero-width characters (combining marks, joiners) kept on a cell.
pub(super) const MAX_ZEROWIDTH: usize = 16;

fn default_tabs(from: usize, cols: usize) -> impl Iterator<Item = bool> {
    (from..cols).map(|i| i % TAB_EVERY == 0)
}

pub(super) struct Emulator {
    pub term: Term<Events>,
    parser: Processor<NoSync>,
    pub inbox: Arc<Mutex<Inbox>>,
    pub state: State,
    repeats: Repeats,
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
            inbox,
            state: State {
                region: (0, rows),
                tabs: default_tabs(0, cols).collect(),
                active_charset: CharsetIndex::G0,
                styled: false,
                main: None,
            },
            repeats: Repeats::default(),
        }
    }

    pub fn process(&mut self, bytes: &[u8]) {
        // A REP's final byte goes alone, with what it may write.
        let mut from = 0;
        for rep in self.repeats.find(bytes) {
            self.advance(&bytes[from..rep.at], None);
            let budget = rep.budget(&self.term);
            self.advance(&bytes[rep.at..=rep.at], Some(budget));
            from = rep.at + 1;
        }
        self.advance(&bytes[from..], None);
    }

    fn advance(&mut self, bytes: &[u8], repeat_left: Option<usize>) {
        let mut h = Hooked {
            term: &mut self.term,
            state: &mut self.state,
            inbox: &self.inbox,
            repeat_left,
        };
        self.parser.advance(&mut h, bytes);
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

struct Hooked<'a> {
    term: &'a mut Term<Events>,
    state: &'a mut State,
    inbox: &'a Arc<Mutex<Inbox>>,
    /// Inside a REP: how many more characters it may write (`vt_repeat`).
    repeat_left: Option<usize>,
}

impl Hooked<'_> {
    fn reply(&self, text: &str) {
        let mut inbox = self.inbox.lock().unwrap_or_else(|e| e.into_inner());
        inbox.replies.extend_from_slice(text.as_bytes());
    }

    fn enter_alternate(&mut self, via: AltVia) {
        if self.state.main.is_some() {
            return;
        }
        let mut main = self.term.grid().clone();
        self.term.swap_alt();
        if via == AltVia::SaveCursor {
            main.saved_cursor = main.cursor.clone();
        }
        self.state.main = Some(main);
    }

    fn leave_alternate(&mut self) {
        let Some(main) = self.state.main.take() else {
            return;
        };
        self.term.swap_alt();
        *self.term.grid_mut() = main;
    }

    /// Characters shifted sideways (ICH, DCH, insert mode) carry flags
    /// that only mean something where they were written: a wrap mark off
    /// the last column; and a partial erase can leave half of a wide
    /// character. Those are dropped (as xterm erases a whole wide
    /// character), so the model holds only what writing can make, which a
    /// snapshot can redo and a person's terminal can show.
    fn tidy_row(&mut self) {
        let line = self.term.grid().cursor.point.line;
        let row = &mut self.term.grid_mut()[line][..];
        let n = row.len();
        for i in 0..n {
            if i + 1 < n {
                row[i]
                    .flags
                    .remove(Flags::WRAPLINE | Flags::LEADING_WIDE_CHAR_SPACER);
            }
            let spacer_after = i + 1 < n && row[i + 1].flags.contains(Flags::WIDE_CHAR_SPACER);
            if row[i].flags.contains(Flags::WIDE_CHAR) && !spacer_after {
                row[i].clear_wide();
            }
            let wide_before = i > 0 && row[i - 1].flags.contains(Flags::WIDE_CHAR);
            if row[i].flags.contains(Flags::WIDE_CHAR_SPACER) && !wide_before {
                row[i].flags.remove(Flags::WIDE_CHAR_SPACER);
                row[i].c = ' ';
            }
        }
    }

    fn private(&mut self, mode: &PrivateMode, set: bool) -> bool {
        if vt_modes::private(self.term, mode, set) {
            return true;
        }
        let raw = match mode {
            PrivateMode::Named(NamedPrivateMode::SwapScreenAndSetRestoreCursor) => 1049,
            PrivateMode::Named(NamedPrivateMode::BlinkingCursor) => {
                self.state.styled = true;
                return false;
            }
            PrivateMode::Unknown(n) => *n,
            _ => return false,
        };
        match (raw, set) {
            (1049, true) => self.enter_alternate(AltVia::SaveCursor),
            (47 | 1047, true) => self.enter_alternate(AltVia::Plain),
            (1049 | 47 | 1047, false) => self.leave_alternate(),
            _ => return false,
        }
        true
    }
}

impl Handler for Hooked<'_> {
    fn set_title(&mut self, mut title: Option<String>) {
        // Cut, so a program cannot make the model (and the crate's title
        // stack, a copy per push) hold megabytes.
        if let Some(t) = title.as_mut().filter(|t| t.len() > MAX_TITLE) {
            let mut end = MAX_TITLE;
            while !t.is_char_boundary(end) {
                end -= 1;
            }
            t.truncate(end);
        }
        self.term.set_title(title)
    }
    fn set_cursor_style(&mut self, style: Option<CursorStyle>) {
        self.state.styled = style.is_some();
        self.term.set_cursor_style(style)
    }
    fn set_cursor_shape(&mut self, shape: CursorShape) {
        self.state.styled = true;
        self.term.set_cursor_shape(shape)
    }
    fn input(&mut self, c: char) {
        if let Some(left) = self.repeat_left.as_mut() {
            if *left == 0 {
                return;
            }
            *left -= 1;
        }
        let before = (
            self.term.grid().cursor.point,
            self.term.grid().cursor.input_needs_wrap,
        );
        self.term.input(c);
        let cursor = &self.term.grid().cursor;
        if (cursor.point, cursor.input_needs_wrap) == before {
            // Zero-width: a combining mark went on a cell (as the crate
            // picks it); past a few, the cell keeps no more.
            let (line, mut col) = (before.0.line, before.0.column);
            if !before.1 {
                col.0 = col.0.saturating_sub(1);
            }
            let grid = self.term.grid_mut();
            if grid[line][col].flags.contains(Flags::WIDE_CHAR_SPACER) {
                col.0 = col.0.saturating_sub(1);
            }
            let cell = &mut grid[line][col];
            if let Some(z) = cell.zerowidth().filter(|z| z.len() > MAX_ZEROWIDTH) {
                // The crate lets nothing but `clear_wide` drop them.
                let kept = z[..MAX_ZEROWIDTH].to_vec();
                let (ch, flags) = (cell.c, cell.flags);
                cell.clear_wide();
                (cell.c, cell.flags) = (ch, flags);
                kept.into_iter().for_each(|k| cell.push_zerowidth(k));
            }
        }
        if self.term.mode().contains(TermMode::INSERT) {
            self.tidy_row();
        }
    }
    fn goto(&mut self, line: i32, col: usize) {
        self.term.goto(line, col)
    }
    fn goto_line(&mut self, line: i32) {
        self.term.goto_line(line)
    }
    fn goto_col(&mut self, col: usize) {
        self.term.goto_col(col)
    }
    fn insert_blank(&mut self, n: usize) {
        self.term.insert_blank(n);
        self.tidy_row();
    }
    fn move_up(&mut self, n: usize) {
        vt_moves::move_rows(self.term, self.state.region, n, Way::Up, false)
    }
    fn move_down(&mut self, n: usize) {
        vt_moves::move_rows(self.term, self.state.region, n, Way::Down, false)
    }
    fn identify_terminal(&mut self, intermediate: Option<char>) {
        match intermediate {
            // As tmux answers: a VT100 with advanced video. A higher level
            // sends vttest and others down paths tmux users never see.
            None => self.reply("\x1b[?1;2c"),
            _ => self.term.identify_terminal(intermediate),
        }
    }
    fn device_status(&mut self, n: usize) {
        self.term.device_status(n)
    }
    fn move_forward(&mut self, n: usize) {
        self.term.move_forward(n)
    }
    fn move_backward(&mut self, n: usize) {
        self.term.move_backward(n)
    }
    fn move_down_and_cr(&mut self, n: usize) {
        vt_moves::move_rows(self.term, self.state.region, n, Way::Down, true)
    }
    fn move_up_and_cr(&mut self, n: usize) {
        vt_moves::move_rows(self.term, self.state.region, n, Way::Up, true)
    }
    fn put_tab(&mut self, count: u16) {
        // The crate marks the cell a tab started from with '\t' (for
        // copying); a snapshot could not give that back, and it shows as
        // a blank anyway.
        for _ in 0..count {
            let at = self.term.grid().cursor.point;
            self.term.put_tab(1);
            let cell = &mut self.term.grid_mut()[at];
            if cell.c == '\t' {
                cell.c = ' ';
            }
        }
    }
    fn backspace(&mut self) {
        self.term.backspace()
    }
    fn carriage_return(&mut self) {
        self.term.carriage_return()
    }
    fn linefeed(&mut self) {
        self.term.linefeed()
    }
    fn bell(&mut self) {
        self.term.bell()
    }
    fn substitute(&mut self) {
        self.term.substitute()
    }
    fn newline(&mut self) {
        self.term.newline()
    }
    fn set_horizontal_tabstop(&mut self) {
        let col = self.term.grid().cursor.point.column.0;
        if let Some(t) = self.state.tabs.get_mut(col) {
            *t = true;
        }
        self.term.set_horizontal_tabstop()
    }
    fn scroll_up(&mut self, n: usize) {
        self.term.scroll_up(n)
    }
    fn scroll_down(&mut self, n: usize) {
        self.term.scroll_down(n)
    }
    fn insert_blank_lines(&mut self, n: usize) {
        self.term.insert_blank_lines(n)
    }
    fn delete_lines(&mut self, n: usize) {
        self.term.delete_lines(n)
    }
    fn erase_chars(&mut self, n: usize) {
        self.term.erase_chars(n);
        self.tidy_row();
    }
    // The crate clears `n` cells from the line's end even when fewer than
    // `n` follow the cursor, taking cells before it; a terminal deletes at
    // most what is left of the line.
    fn delete_chars(&mut self, n: usize) {
        let cols = self.term.columns();
        let col = self.term.grid().cursor.point.column.0;
        self.term
            .delete_chars(n.min(cols.saturating_sub(col)).max(1));
        self.tidy_row();
    }
    // The crate stays put when no stop is left before the cursor, where a
    // terminal goes to the line's start; and it keeps a pending wrap
    // through CHT and CBT, which xterm drops, as for every other move.
    fn move_backward_tabs(&mut self, n: u16) {
        let tabs = &self.state.tabs;
        let mut col = self.term.grid().cursor.point.column.0;
        for _ in 0..n {
            if col == 0 {
                break;
            }
            col = (0..col)
                .rev()
                .find(|&i| tabs.get(i) == Some(&true))
                .unwrap_or(0);
        }
        let cursor = &mut self.term.grid_mut().cursor;
        cursor.point.column = alacritty_terminal::index::Column(col);
        cursor.input_needs_wrap = false;
    }
    fn move_forward_tabs(&mut self, n: u16) {
        self.term.move_forward_tabs(n);
        self.term.grid_mut().cursor.input_needs_wrap = false;
    }
    fn save_cursor_position(&mut self) {
        self.term.save_cursor_position()
    }
    fn restore_cursor_position(&mut self) {
        self.term.restore_cursor_position()
    }
    fn clear_line(&mut self, mode: LineClearMode) {
        self.term.clear_line(mode);
        self.tidy_row();
    }
    fn clear_screen(&mut self, mode: ClearMode) {
        self.term.clear_screen(mode);
        self.tidy_row();
    }
    fn clear_tabs(&mut self, mode: TabulationClearMode) {
        match mode {
            TabulationClearMode::Current => {
                let col = self.term.grid().cursor.point.column.0;
                if let Some(t) = self.state.tabs.get_mut(col) {
                    *t = false;
                }
            }
            TabulationClearMode::All => self.state.tabs.iter_mut().for_each(|t| *t = false),
        }
        self.term.clear_tabs(mode)
    }
    fn set_tabs(&mut self, interval: u16) {
        self.term.set_tabs(interval)
    }
    fn reset_state(&mut self) {
        self.state.main = None;
        self.state.styled = false;
        self.state.active_charset = CharsetIndex::G0;
        let (rows, cols) = (self.term.screen_lines(), self.term.columns());
        self.state.region = (0, rows);
        self.state.tabs = default_tabs(0, cols).collect();
        self.term.reset_state()
    }
    fn reverse_index(&mut self) {
        self.term.reverse_index()
    }
    fn terminal_attribute(&mut self, attr: Attr) {
        let template = &mut self.term.grid_mut().cursor.template;
        match attr {
            Attr::BlinkSlow | Attr::BlinkFast => template.flags.insert(BLINK),
            Attr::CancelBlink => template.flags.remove(BLINK),
            // vte reads SGR 21 as "bold off" (as the Linux console); xterm
            // and ECMA-48 make it a double underline.
            Attr::CancelBold => self.term.terminal_attribute(Attr::DoubleUnderline),
            _ => self.term.terminal_attribute(attr),
        }
    }
    fn set_mode(&mut self, mode: Mode) {
        self.term.set_mode(mode)
    }
    fn unset_mode(&mut self, mode: Mode) {
        self.term.unset_mode(mode)
    }
    fn report_mode(&mut self, mode: Mode) {
        self.term.report_mode(mode)
    }
    fn set_private_mode(&mut self, mode: PrivateMode) {
        if !self.private(&mode, true) {
            self.term.set_private_mode(mode)
        }
    }
    fn unset_private_mode(&mut self, mode: PrivateMode) {
        if !self.private(&mode, false) {
            self.term.unset_private_mode(mode)
        }
    }
    fn report_private_mode(&mut self, mode: PrivateMode) {
        self.term.report_private_mode(mode)
    }
    fn set_scrolling_region(&mut self, top: usize, bottom: Option<usize>) {
        // As xterm: the bottom clamped to the screen, then a region that
        // is not at least two lines is ignored (the crate would keep an
        // empty one, which no sequence could give back).
        let rows = self.term.screen_lines();
        let bottom = bottom.unwrap_or(rows).min(rows);
        if top.max(1) < bottom {
            self.state.region = (top.max(1) - 1, bottom);
            self.term.set_scrolling_region(top.max(1), Some(bottom))
        }
    }
    fn set_keypad_application_mode(&mut self) {
        self.term.set_keypad_application_mode()
    }
    fn unset_keypad_application_mode(&mut self) {
        self.term.unset_keypad_application_mode()
    }
    fn set_active_charset(&mut self, index: CharsetIndex) {
        self.state.active_charset = index;
        self.term.set_active_charset(index)
    }
    fn configure_charset(&mut self, index: CharsetIndex, charset: StandardCharset) {
        self.term.configure_charset(index, charset)
    }
    fn set_color(&mut self, index: usize, rgb: Rgb) {
        self.term.set_color(index, rgb)
    }
    fn dynamic_color_sequence(&mut self, prefix: String, index: usize, terminator: &str) {
        // The crate asks its window for the colour; the answer is here.
        let set = (index < COUNT).then(|| self.term.colors()[index]).flatten();
        let rgb = set.or_else(|| palette::color(index));
        if let Some(c) = rgb {
            self.reply(&format!(
                "\x1b]{prefix};rgb:{0:02x}{0:02x}/{1:02x}{1:02x}/{2:02x}{2:02x}{terminator}",
                c.r, c.g, c.b
            ));
        }
    }
    fn reset_color(&mut self, index: usize) {
        self.term.reset_color(index)
    }
    fn clipboard_store(&mut self, _: u8, _: &[u8]) {}
    fn clipboard_load(&mut self, _: u8, _: &str) {}
    fn decaln(&mut self) {
        self.term.decaln()
    }
    fn push_title(&mut self) {
        self.term.push_title()
    }
    fn pop_title(&mut self) {
        self.term.pop_title()
    }
    fn text_area_size_pixels(&mut self) {
        // No pixels here: answer as a terminal of 8×16 cells would.
        let (rows, cols) = (self.term.screen_lines(), self.term.columns());
        self.reply(&format!(
            "\x1b[4;{};{}t",
            rows * palette::CELL_HEIGHT,
            cols * palette::CELL_WIDTH
        ));
    }
    fn text_area_size_chars(&mut self) {
        self.term.text_area_size_chars()
    }
    fn set_hyperlink(&mut self, link: Option<Hyperlink>) {
        self.term.set_hyperlink(link)
    }
    fn report_keyboard_mode(&mut self) {
        self.term.report_keyboard_mode()
    }
    fn push_keyboard_mode(&mut self, mode: KeyboardModes) {
        self.term.push_keyboard_mode(mode)
    }
    fn pop_keyboard_modes(&mut self, n: u16) {
        self.term.pop_keyboard_modes(n)
    }
    fn set_keyboard_mode(&mut self, mode: KeyboardModes, how: KeyboardModesApplyBehavior) {
        Handler::set_keyboard_mode(self.term, mode, how)
    }
    fn set_modify_other_keys(&mut self, mode: ModifyOtherKeys) {
        self.term.set_modify_other_keys(mode)
    }
    fn report_modify_other_keys(&mut self) {
        self.term.report_modify_other_keys()
    }
    fn set_scp(&mut self, path: ScpCharPath, update: ScpUpdateMode) {
        self.term.set_scp(path, update)
    }
}
