//! Vertical cursor moves (CUU, CUD, CNL, CPL) as a VT100, xterm and tmux
//! make them: a move that starts inside the scroll region stops at its
//! margin, one that starts outside stops at the screen's edge, and in
//! origin mode the move counts from the cursor. alacritty_terminal 0.26
//! sends these through its `goto`, which never stops at a margin and, in
//! origin mode, adds the region's top to a row that already includes it
//! (so `CSI 24 A` inside a region low on the screen lands on row 1, above
//! the region; vttest's scrolling screens 2.7 and 2.9 show it).

use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::term::{Term, TermMode};
use alacritty_terminal::vte::ansi::Handler;

use super::mirror::Events;

/// Which way a move goes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Way {
    Up,
    Down,
}

/// The row (from 0) a move of `n` rows from `line` lands on, with the
/// scroll region rows `top..bottom` of a screen of `rows` (tmux's
/// `screen_write_cursorup`/`cursordown`). `n` 0 moves one row, as the
/// parameter's default.
pub(super) fn landing_row(
    line: usize,
    n: usize,
    way: Way,
    rows: usize,
    (top, bottom): (usize, usize),
) -> usize {
    let n = n.max(1);
    match way {
        Way::Up => {
            let stop = if line >= top { top } else { 0 };
            line.saturating_sub(n).max(stop)
        }
        Way::Down => {
            let stop = if line < bottom { bottom } else { rows };
            (line + n).min(stop.saturating_sub(1))
        }
    }
}

/// Move the cursor `n` rows `way` within `region` (rows `top..bottom`),
/// to the line's start when `to_start` (CNL, CPL). A pending wrap ends, as
/// with every move.
pub(super) fn move_rows(
    term: &mut Term<Events>,
    region: (usize, usize),
    n: usize,
    way: Way,
    to_start: bool,
) {
    let at = term.grid().cursor.point;
    let rows = term.grid().screen_lines();
    let row = landing_row(at.line.0.max(0) as usize, n, way, rows, region);
    // The crate's `goto` counts from the region's top in origin mode.
    let from = if term.mode().contains(TermMode::ORIGIN) {
        region.0
    } else {
        0
    };
    let col = if to_start { 0 } else { at.column.0 };
    term.goto(row.saturating_sub(from) as i32, col);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::Screen;

    #[test]
    fn landing_rows_stop_at_the_margin_the_move_starts_inside() {
        // (line, n, way, region) -> row, on a 24-row screen.
        let table = [
            // No region: the screen's edges.
            (5, 3, Way::Up, (0, 24), 2),
            (5, 30, Way::Up, (0, 24), 0),
            (5, 0, Way::Up, (0, 24), 4),
            (20, 30, Way::Down, (0, 24), 23),
            // Inside rows 11..13 (vttest's region [12..13]).
            (12, 24, Way::Up, (11, 13), 11),
            (11, 24, Way::Down, (11, 13), 12),
            // Below the region: up stops at its top margin, as tmux does.
            (20, 30, Way::Up, (11, 13), 11),
            // Below the region going down: the screen's edge.
            (20, 30, Way::Down, (11, 13), 23),
            // Above the region: up to the screen's top, down to the
            // region's bottom margin.
            (5, 30, Way::Up, (11, 13), 0),
            (5, 30, Way::Down, (11, 13), 12),
        ];
        for (line, n, way, region, want) in table {
            assert_eq!(
                landing_row(line, n, way, 24, region),
                want,
                "{line} {n} {way:?} {region:?}"
            );
        }
    }

    fn cursor_after(bytes: &[u8]) -> (u16, u16) {
        let mut s = Screen::new(24, 80);
        s.process(bytes);
        s.cursor()
    }

    #[test]
    fn moves_in_origin_mode_count_from_the_cursor_and_stay_in_the_region() {
        // vttest 2.7: region 12..13, origin mode, 24 down then 24 up.
        assert_eq!(cursor_after(b"\x1b[12;13r\x1b[?6h\x1b[24B"), (12, 0));
        assert_eq!(
            cursor_after(b"\x1b[12;13r\x1b[?6h\x1b[24B\x1b[24A"),
            (11, 0)
        );
        assert_eq!(cursor_after(b"\x1b[12;13r\x1b[?6h\x1b[5C\x1b[A"), (11, 5));
        // CNL and CPL too, to the line's start.
        assert_eq!(cursor_after(b"\x1b[5;20r\x1b[?6h\x1b[3;9H\x1b[2F"), (4, 0));
        assert_eq!(cursor_after(b"\x1b[5;20r\x1b[?6h\x1b[3;9H\x1b[2E"), (8, 0));
        assert_eq!(cursor_after(b"\x1b[5;20r\x1b[?6h\x1b[30E"), (19, 0));
    }

    #[test]
    fn moves_without_origin_mode_stop_at_the_margins_they_start_inside() {
        assert_eq!(cursor_after(b"\x1b[5;10r\x1b[7;3H\x1b[20A"), (4, 2));
        assert_eq!(cursor_after(b"\x1b[5;10r\x1b[7;3H\x1b[20B"), (9, 2));
        // Outside the region, the screen's edges.
        assert_eq!(cursor_after(b"\x1b[5;10r\x1b[2;3H\x1b[20A"), (0, 2));
        assert_eq!(cursor_after(b"\x1b[5;10r\x1b[12;3H\x1b[20B"), (23, 2));
    }
}
