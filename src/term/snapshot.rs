//! The bytes that give a screen back: read by a fresh `Screen` of the same
//! size, they rebuild it cell for cell with its cursor, modes and title.
//!
//! Order matters: cells are drawn with the defaults a fresh screen has
//! (autowrap on, no origin mode, whole-screen region, ASCII charsets);
//! what changes how later bytes land is set last.

use std::io::Write;

use alacritty_terminal::grid::{Cursor, Dimensions, Grid};
use alacritty_terminal::index::Line;
use alacritty_terminal::term::cell::{Cell, Flags};
use alacritty_terminal::term::color::COUNT;
use alacritty_terminal::term::TermMode;
use alacritty_terminal::vte::ansi::{CharsetIndex, CursorShape, StandardCharset};

use super::emulator::Emulator;
use super::sgr::{cup, draw_run, draw_through, put_cell, sgr, Pen};

/// Modes a snapshot sets by number, private (`?`) or not. Origin mode is
/// set apart: it moves the cursor.
pub(super) const MODES: [(TermMode, bool, u16); 14] = [
    (TermMode::SHOW_CURSOR, true, 25),
    (TermMode::APP_CURSOR, true, 1),
    (TermMode::MOUSE_REPORT_CLICK, true, 1000),
    (TermMode::MOUSE_DRAG, true, 1002),
    (TermMode::MOUSE_MOTION, true, 1003),
    (TermMode::FOCUS_IN_OUT, true, 1004),
    (TermMode::UTF8_MOUSE, true, 1005),
    (TermMode::SGR_MOUSE, true, 1006),
    (TermMode::ALTERNATE_SCROLL, true, 1007),
    (TermMode::URGENCY_HINTS, true, 1042),
    (TermMode::BRACKETED_PASTE, true, 2004),
    (TermMode::LINE_WRAP, true, 7),
    (TermMode::INSERT, false, 4),
    (TermMode::LINE_FEED_NEW_LINE, false, 20),
];

pub(super) fn mode(out: &mut Vec<u8>, private: bool, n: u16, on: bool) {
    let q = if private { "?" } else { "" };
    let _ = write!(out, "\x1b[{q}{n}{}", if on { 'h' } else { 'l' });
}

pub(super) fn keypad(out: &mut Vec<u8>, on: bool) {
    out.extend_from_slice(if on { b"\x1b=" } else { b"\x1b>" });
}

/// DECSCUSR for a style (`None`: the terminal's default).
pub(super) fn cursor_style(out: &mut Vec<u8>, style: Option<(CursorShape, bool)>) {
    let n = match style {
        None => 0,
        Some((shape, blinking)) => {
            let steady = match shape {
                CursorShape::Underline => 4,
                CursorShape::Beam => 6,
                _ => 2,
            };
            steady - blinking as u8
        }
    };
    let _ = write!(out, "\x1b[{n} q");
}

fn charsets(out: &mut Vec<u8>, cursor: &Cursor<Cell>) {
    let all = [
        (CharsetIndex::G0, b'('),
        (CharsetIndex::G1, b')'),
        (CharsetIndex::G2, b'*'),
        (CharsetIndex::G3, b'+'),
    ];
    for (index, intro) in all {
        let set = match cursor.charsets[index] {
            StandardCharset::Ascii => b'B',
            StandardCharset::SpecialCharacterAndLineDrawing => b'0',
        };
        out.extend_from_slice(&[0x1b, intro, set]);
    }
}

fn default_charsets(cursor: &Cursor<Cell>) -> bool {
    cursor.charsets == Cursor::<Cell>::default().charsets
}

fn row(grid: &Grid<Cell>, r: usize) -> &[Cell] {
    &grid[Line(r as i32)][..]
}

fn wraps(cells: &[Cell]) -> bool {
    cells
        .last()
        .is_some_and(|c| c.flags.contains(Flags::WRAPLINE))
}

/// Whether the cursor waits to wrap on a cell already marked wrapped:
/// writing that cell again would drop the mark, so the cursor is saved
/// (ESC 7) as the cell is drawn and restored (ESC 8) at the end.
fn waits_on_a_wrap(grid: &Grid<Cell>) -> bool {
    let c = &grid.cursor;
    c.input_needs_wrap
        && *c == grid.saved_cursor
        && wraps(row(grid, c.point.line.0 as usize))
        && (c.point.line.0 as usize) + 1 < grid.screen_lines()
}

/// ESC 7 of `cursor` where the output stands (the cursor being there).
fn save_here(out: &mut Vec<u8>, cursor: &Cursor<Cell>, pen: &mut Pen) {
    let to = Pen::of(&cursor.template);
    sgr(out, pen, &to);
    *pen = to;
    if !default_charsets(cursor) {
        charsets(out, cursor);
    }
    out.extend_from_slice(b"\x1b7");
    if !default_charsets(cursor) {
        charsets(out, &Cursor::default());
    }
}

/// Draw a grid whose cells are all `blank`, the pen being `pen`; `mark`:
/// the cursor to save when its cell is drawn (see [`waits_on_a_wrap`]).
fn draw_grid(
    out: &mut Vec<u8>,
    grid: &Grid<Cell>,
    blank: &Cell,
    pen: &mut Pen,
    mark: Option<&Cursor<Cell>>,
) {
    let (rows, cols) = (grid.screen_lines(), grid.columns());
    let mut continued = false;
    // The row below was written over to make a wide-character spacer.
    let mut redo = false;
    for r in 0..rows {
        let cells = row(grid, r);
        let wrapped = wraps(cells) && r + 1 < rows;
        let mut from = 0;
        if redo {
            // Erased, not written over: writing over a wide character
            // would take the spacer above away.
            cup(out, r, 0);
            out.extend_from_slice(b"\x1b[2X");
        } else if !continued {
            if !wrapped && cells.iter().all(|c| c == blank) {
                continue;
            }
            cup(out, r, 0);
        } else {
            // Wrapping onto this row set the flag above: its first cell
            // must be written, not skipped.
            draw_run(out, &cells[..1], pen, None);
            from = 1;
        }
        let mut redo_next = false;
        if wrapped {
            // Up to the last column, leaving the wrap pending.
            draw_through(out, &cells[from..cols - 1], pen);
            let last = &cells[cols - 1];
            if last.flags.contains(Flags::LEADING_WIDE_CHAR_SPACER) {
                // A wide character that did not fit left this spacer, in
                // the pen of its time: do the same, and redraw below.
                let to = Pen::of(last);
                sgr(out, pen, &to);
                *pen = to;
                out.extend_from_slice("中".as_bytes());
                redo_next = true;
            } else {
                draw_run(out, &cells[cols - 1..], pen, None);
                if let Some(cursor) = mark.filter(|c| c.point.line.0 as usize == r) {
                    save_here(out, cursor, pen);
                }
            }
        } else if from < cols {
            let skip = if redo { None } else { Some(blank) };
            draw_run(out, &cells[from..], pen, skip);
        }
        continued = wrapped && !redo_next;
        redo = redo_next;
    }
    // A wrapped last row lost the row it wrapped onto: wrap it again with
    // that row outside the scroll region, so nothing scrolls.
    // (A region needs two rows: on a two-row screen the mark is lost.)
    let last = row(grid, rows - 1);
    if rows > 2
        && wraps(last)
        && !last[cols - 1]
            .flags
            .contains(Flags::LEADING_WIDE_CHAR_SPACER)
    {
        // The first cells are erased before and after, never written
        // over: writing over a wide character unmarks the row above.
        let at = if last[cols - 1].flags.contains(Flags::WIDE_CHAR_SPACER) {
            cols - 2
        } else {
            cols - 1
        };
        cup(out, rows - 1, 0);
        out.extend_from_slice(b"\x1b[2X");
        let _ = write!(out, "\x1b[1;{}r", rows - 1);
        cup(out, rows - 1, at);
        draw_run(out, &last[at..], pen, None);
        out.extend_from_slice(b" \x1b[r");
        cup(out, rows - 1, 0);
        out.extend_from_slice(b"\x1b[2X");
        draw_run(out, &last[..2], pen, None);
    }
}

/// Put the cursor back: position (with a pending wrap written again),
/// pen and charsets. `top` is the origin-mode offset.
fn place_cursor(
    out: &mut Vec<u8>,
    grid: &Grid<Cell>,
    cursor: &Cursor<Cell>,
    top: usize,
    pen: &mut Pen,
) {
    let (line, col) = (cursor.point.line.0 as usize, cursor.point.column.0);
    let cells = row(grid, line);
    if cursor.input_needs_wrap && col + 1 == cells.len() {
        let at = if cells[col].flags.contains(Flags::WIDE_CHAR_SPACER) && col > 0 {
            col - 1
        } else {
            col
        };
        cup(out, line - top, at);
        let to = Pen::of(&cells[at]);
        sgr(out, pen, &to);
        *pen = to;
        put_cell(out, &cells[at]);
    } else {
        cup(out, line.saturating_sub(top), col);
    }
    let to = Pen::of(&cursor.template);
    sgr(out, pen, &to);
    *pen = to;
    if !default_charsets(cursor) {
        charsets(out, cursor);
    }
}

/// The cursor where it ends: restored if saved as drawn, else placed.
fn end_cursor(out: &mut Vec<u8>, grid: &Grid<Cell>, top: usize, saved: bool, pen: &mut Pen) {
    if saved {
        out.extend_from_slice(b"\x1b8");
        *pen = Pen::of(&grid.cursor.template);
    } else {
        place_cursor(out, grid, &grid.cursor, top, pen);
    }
}

/// ESC 7 of a saved cursor, when it is not a fresh screen's; drawn first,
/// so cells written to give it a pending wrap are drawn over after.
fn saved_cursor(out: &mut Vec<u8>, grid: &Grid<Cell>, pen: &mut Pen) {
    let saved = &grid.saved_cursor;
    if *saved == Cursor::default() {
        return;
    }
    place_cursor(out, grid, saved, 0, pen);
    out.extend_from_slice(b"\x1b7");
    if !default_charsets(saved) {
        // Back to ASCII for what is drawn next.
        charsets(out, &Cursor::default());
    }
}

pub(super) fn snapshot(emu: &Emulator) -> Vec<u8> {
    let mut out = Vec::new();
    let (term, st) = (&emu.term, &emu.state);
    let rows = emu.rows();
    if st.tabs.iter().enumerate().any(|(i, &t)| t != (i % 8 == 0)) {
        out.extend_from_slice(b"\x1b[3g");
        for (i, _) in st.tabs.iter().enumerate().filter(|(_, &t)| t) {
            cup(&mut out, 0, i);
            out.extend_from_slice(b"\x1bH");
        }
    }
    let mut pen = Pen::default();
    let grid = term.grid();
    let blank = match &st.main {
        None => Cell::default(),
        Some(main) => {
            // 1049 saves the cursor; 1047 keeps a saved cursor set apart.
            let keeps = main.saved_cursor != main.cursor;
            if keeps {
                saved_cursor(&mut out, main, &mut pen);
            }
            let mark = waits_on_a_wrap(main).then_some(&main.cursor);
            draw_grid(&mut out, main, &Cell::default(), &mut pen, mark);
            end_cursor(&mut out, main, 0, mark.is_some(), &mut pen);
            out.extend_from_slice(if keeps {
                b"\x1b[?1047h"
            } else {
                b"\x1b[?1049h"
            });
            if !default_charsets(&main.cursor) {
                charsets(&mut out, &Cursor::default());
            }
            // The alternate screen is cleared with the pen's background.
            Cell {
                bg: main.cursor.template.bg,
                ..Cell::default()
            }
        }
    };
    let mark = waits_on_a_wrap(grid).then_some(&grid.cursor);
    if mark.is_none() {
        saved_cursor(&mut out, grid, &mut pen);
    }
    draw_grid(&mut out, grid, &blank, &mut pen, mark);

    let mode = *term.mode();
    let fresh = TermMode::default();
    if st.region != (0, rows) {
        let _ = write!(out, "\x1b[{};{}r", st.region.0 + 1, st.region.1);
    }
    let top = if mode.contains(TermMode::ORIGIN) {
        out.extend_from_slice(b"\x1b[?6h");
        st.region.0
    } else {
        0
    };
    end_cursor(&mut out, grid, top, mark.is_some(), &mut pen);
    for (bit, private, n) in MODES {
        if mode.contains(bit) != fresh.contains(bit) {
            self::mode(&mut out, private, n, mode.contains(bit));
        }
    }
    if mode.contains(TermMode::APP_KEYPAD) {
        keypad(&mut out, true);
    }
    match st.active_charset {
        CharsetIndex::G0 => {}
        CharsetIndex::G1 => out.push(0x0e),
        CharsetIndex::G2 => out.extend_from_slice(b"\x1bn"),
        CharsetIndex::G3 => out.extend_from_slice(b"\x1bo"),
    }
    if st.styled {
        let s = term.cursor_style();
        cursor_style(&mut out, Some((s.shape, s.blinking)));
    }
    let title = emu.inbox().title.clone();
    if !title.is_empty() {
        let _ = write!(out, "\x1b]2;{title}\x1b\\");
    }
    let colors = term.colors();
    for i in 0..COUNT {
        if let Some(c) = colors[i] {
            let rgb = format!("rgb:{:02x}/{:02x}/{:02x}", c.r, c.g, c.b);
            let _ = match i {
                0..=255 => write!(out, "\x1b]4;{i};{rgb}\x1b\\"),
                256..=258 => write!(out, "\x1b]{};{rgb}\x1b\\", i - 256 + 10),
                _ => Ok(()),
            };
        }
    }
    out
}
