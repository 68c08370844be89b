//! Bytes that redraw a vt100 screen exactly: the core's snapshot of a tab
//! (`core::snapshots`) while its model is still a bare `vt100::Parser`.
//! Goes once the core's model is a `term::Screen` (its `snapshot()`).
//!
//! vt100's `state_formatted` draws only the visible grid, so a program in
//! the alternate screen (a full-screen UI) would come back with its UI on
//! the main screen and, once it leaves the alternate screen, with the UI
//! still there instead of the lines it had before. The main screen is
//! drawn first, read from a copy of the screen that left the alternate
//! screen (vt100 has no other way to show it); then the alternate screen
//! is entered and drawn, then modes and title.

/// Leaves the alternate screen, restoring the cursor it saved (DECRST 1049).
const LEAVE_ALTERNATE: &[u8] = b"\x1b[?1049l";
/// Saves the cursor and enters a cleared alternate screen (DECSET 1049).
const ENTER_ALTERNATE: &[u8] = b"\x1b[?1049h";

pub fn redraw(parser: &vt100::Parser) -> Vec<u8> {
    let screen = parser.screen();
    if !screen.alternate_screen() {
        return screen.state_formatted();
    }
    let mut main = screen.clone();
    let mut vte = vte::Parser::new();
    for b in LEAVE_ALTERNATE {
        vte.advance(&mut main, *b);
    }
    let mut out = main.contents_formatted();
    out.extend_from_slice(ENTER_ALTERNATE);
    out.extend_from_slice(&screen.state_formatted());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(s: &vt100::Screen) -> Vec<(String, vt100::Color, vt100::Color, bool)> {
        let (rows, cols) = s.size();
        let mut v = Vec::new();
        for r in 0..rows {
            for c in 0..cols {
                let cell = s.cell(r, c).unwrap();
                v.push((cell.contents(), cell.fgcolor(), cell.bgcolor(), cell.bold()));
            }
        }
        v
    }

    fn rebuilt(p: &vt100::Parser) -> vt100::Parser {
        let (rows, cols) = p.screen().size();
        let mut q = vt100::Parser::new(rows, cols, 0);
        q.process(&redraw(p));
        q
    }

    #[test]
    fn a_main_screen_comes_back_cell_for_cell() {
        let mut p = vt100::Parser::new(6, 20, 0);
        p.process(
            b"plain\r\n\x1b[31;1mred bold\x1b[0m \x1b[44mblue bg\x1b[0m\r\n\x1b[?25l\x1b[?2004h> ",
        );
        let q = rebuilt(&p);
        assert_eq!(cells(q.screen()), cells(p.screen()));
        assert_eq!(q.screen().cursor_position(), p.screen().cursor_position());
        assert_eq!(q.screen().hide_cursor(), p.screen().hide_cursor());
        assert_eq!(q.screen().bracketed_paste(), p.screen().bracketed_paste());
    }

    #[test]
    fn an_alternate_screen_comes_back_with_the_main_screen_behind_it() {
        let mut p = vt100::Parser::new(6, 20, 0);
        p.process(
            b"shell line 1\r\n$ ui\x1b[?1049h\x1b[2J\x1b[H\x1b[32mFULL SCREEN UI\x1b[0m\x1b[4;7Hx",
        );
        assert!(p.screen().alternate_screen());
        let mut q = rebuilt(&p);
        assert!(q.screen().alternate_screen());
        assert_eq!(cells(q.screen()), cells(p.screen()));
        assert_eq!(q.screen().cursor_position(), p.screen().cursor_position());
        // When the program leaves its alternate screen, both show the same
        // main screen and cursor.
        p.process(LEAVE_ALTERNATE);
        q.process(LEAVE_ALTERNATE);
        assert!(
            q.screen().contents().starts_with("shell line 1\n$ ui"),
            "{:?}",
            q.screen().contents()
        );
        assert_eq!(cells(q.screen()), cells(p.screen()));
        assert_eq!(q.screen().cursor_position(), p.screen().cursor_position());
    }
}
