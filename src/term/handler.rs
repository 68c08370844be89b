//! The `Handler` the crate's parser calls: each call goes on to the
//! crate's `Term`, after what the crate leaves out or gets wrong is done
//! here: the mirrors a snapshot needs (`State`), blink, SGR 21, the 47/1047
//! alternate screens, answers the crate does not give, and bounds on what
//! a program can make the model hold (title length, combining marks).
//! Kept apart from `emulator` because it is the one long list: a method
//! per control function.

use std::sync::{Arc, Mutex};

use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::term::cell::Flags;
use alacritty_terminal::term::color::COUNT;
use alacritty_terminal::term::{Term, TermMode};
use alacritty_terminal::vte::ansi::{
    Attr, CharsetIndex, ClearMode, CursorShape, CursorStyle, Handler, Hyperlink, KeyboardModes,
    KeyboardModesApplyBehavior, LineClearMode, Mode, ModifyOtherKeys, NamedPrivateMode,
    PrivateMode, Rgb, ScpCharPath, ScpUpdateMode, StandardCharset, TabulationClearMode,
};

use super::mirror::{
    default_tabs, Events, Inbox, State, BLINK, MAX_TITLE, MAX_TITLES, MAX_ZEROWIDTH,
};
use super::palette;
use super::vt_modes;
use super::vt_moves::{self, Way};

/// How the alternate screen was entered.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum AltVia {
    /// 1049: the main screen's saved cursor becomes its cursor.
    SaveCursor,
    /// 47 and 1047: the main screen's saved cursor is kept.
    Plain,
}

pub(super) struct Hooked<'a> {
    pub term: &'a mut Term<Events>,
    pub state: &'a mut State,
    pub inbox: &'a Arc<Mutex<Inbox>>,
    #[cfg(test)]
    pub printed: &'a mut u64,
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
        #[cfg(test)]
        {
            *self.printed += 1;
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
        self.state.titles = 0;
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
        if self.state.titles < MAX_TITLES {
            self.state.titles += 1;
            self.term.push_title()
        }
    }
    fn pop_title(&mut self) {
        self.state.titles = self.state.titles.saturating_sub(1);
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
    // Links are never painted, and the crate would keep each (up to the
    // OSC limit) on every cell written under it: megabytes per screen.
    fn set_hyperlink(&mut self, _: Option<Hyperlink>) {}
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
