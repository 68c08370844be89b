//! Frames and the bytes that turn one into another on the person's
//! terminal (xterm-like, as tmux assumes of its outer terminal).

use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::Line;
use alacritty_terminal::term::cell::{Cell, Flags};
use alacritty_terminal::term::TermMode;
use alacritty_terminal::vte::ansi::CursorShape;

use super::emulator::Emulator;
use super::sgr::{cup, draw_run, sgr, Pen};
use super::snapshot::{cursor_style, keypad, mode, MODES};

/// What a screen shows at one moment, to paint the difference from it:
/// a copy of the visible cells (cheap: cells are small and their rare
/// extras shared), the cursor and the modes the person's terminal mirrors.
#[derive(Clone)]
pub struct Frame {
    rows: usize,
    cols: usize,
    cells: Vec<Cell>,
    cursor: (usize, usize),
    mode: TermMode,
    style: Option<(CursorShape, bool)>,
}

/// The modes mirrored to the person's terminal: the ones that change what
/// its keys, mouse and pastes send. (Cursor visibility is painted apart.)
const MIRRORED: TermMode = TermMode::APP_CURSOR
    .union(TermMode::MOUSE_REPORT_CLICK)
    .union(TermMode::MOUSE_DRAG)
    .union(TermMode::MOUSE_MOTION)
    .union(TermMode::FOCUS_IN_OUT)
    .union(TermMode::UTF8_MOUSE)
    .union(TermMode::SGR_MOUSE)
    .union(TermMode::BRACKETED_PASTE);

impl Frame {
    pub(super) fn of(emu: &Emulator) -> Frame {
        let grid = emu.term.grid();
        let (rows, cols) = (grid.screen_lines(), grid.columns());
        let mut cells = Vec::with_capacity(rows * cols);
        for r in 0..rows {
            cells.extend_from_slice(&grid[Line(r as i32)][..]);
        }
        let p = grid.cursor.point;
        let style = emu.state.styled.then(|| {
            let s = emu.term.cursor_style();
            (s.shape, s.blinking)
        });
        Frame {
            rows,
            cols,
            cells,
            cursor: (p.line.0 as usize, p.column.0),
            mode: *emu.term.mode() & (MIRRORED | TermMode::SHOW_CURSOR | TermMode::APP_KEYPAD),
            style,
        }
    }

    fn row(&self, r: usize) -> &[Cell] {
        &self.cells[r * self.cols..(r + 1) * self.cols]
    }

    #[cfg(test)]
    pub(super) fn cells(&self) -> &[Cell] {
        &self.cells
    }

    fn visible(&self) -> bool {
        self.mode.contains(TermMode::SHOW_CURSOR)
    }
}

/// Unchanged cells between two changed ones that are cheaper to write
/// again than to jump over with a cursor move.
const GAP: usize = 4;

/// The column ranges of a row that differ, widened to whole wide
/// characters.
fn changed_runs(now: &[Cell], before: Option<&[Cell]>) -> Vec<(usize, usize)> {
    let Some(before) = before else {
        return vec![(0, now.len())];
    };
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for (i, (a, b)) in now.iter().zip(before).enumerate() {
        if a == b {
            continue;
        }
        match runs.last_mut() {
            Some(last) if i - last.1 <= GAP => last.1 = i + 1,
            _ => runs.push((i, i + 1)),
        }
    }
    for run in &mut runs {
        if run.0 > 0 && now[run.0].flags.contains(Flags::WIDE_CHAR_SPACER) {
            run.0 -= 1;
        }
        if run.1 < now.len() && now[run.1 - 1].flags.contains(Flags::WIDE_CHAR) {
            run.1 += 1;
        }
    }
    runs
}

pub(super) fn paint(now: &Frame, before: Option<&Frame>) -> Vec<u8> {
    let before = before.filter(|b| b.rows == now.rows && b.cols == now.cols);
    let mut out = Vec::new();
    // The outer cursor is hidden while cells are drawn, to not flicker.
    let mut shown = before.is_none_or(|b| b.visible());
    let mut pen: Option<Pen> = None;
    for r in 0..now.rows {
        let row = now.row(r);
        let old = before.map(|b| b.row(r));
        if old == Some(row) {
            continue;
        }
        for (start, end) in changed_runs(row, old) {
            let pen = pen.get_or_insert_with(|| {
                if shown {
                    mode(&mut out, true, 25, false);
                    shown = false;
                }
                out.extend_from_slice(b"\x1b[m");
                Pen::default()
            });
            cup(&mut out, r, start);
            draw_run(&mut out, &row[start..end], pen, None);
        }
    }
    if let Some(pen) = &pen {
        sgr(&mut out, pen, &Pen::default());
    }
    for (bit, private, n) in MODES {
        if MIRRORED.contains(bit) {
            let on = now.mode.contains(bit);
            if before.is_none_or(|b| b.mode.contains(bit) != on) {
                mode(&mut out, private, n, on);
            }
        }
    }
    let keys = now.mode.contains(TermMode::APP_KEYPAD);
    if before.is_none_or(|b| b.mode.contains(TermMode::APP_KEYPAD) != keys) {
        keypad(&mut out, keys);
    }
    if before.is_none_or(|b| b.style != now.style) {
        cursor_style(&mut out, now.style);
    }
    if pen.is_some() || before.is_none_or(|b| b.cursor != now.cursor) {
        cup(&mut out, now.cursor.0, now.cursor.1);
    }
    if now.visible() != shown {
        mode(&mut out, true, 25, now.visible());
    }
    out
}
