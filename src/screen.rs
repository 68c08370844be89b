//! The screen model of a terminal tab (a `vt100` parser), as the core and
//! the holder both keep one: how much history it holds, how it resizes, and
//! the text a reader sees.

/// Lines of history the screen model keeps: none, since scroll mode
/// replays the tab's output log instead (see `core::outlog`).
pub const SCROLLBACK: usize = 0;

/// Resize a screen model the way a terminal does: when it loses rows, the
/// lines above the cursor go first, so the cursor's line and the newest
/// output stay in view. (vt100 on its own cuts the bottom rows, which are
/// exactly the ones a person needs after attaching a smaller window.)
pub fn resize_screen(p: &mut vt100::Parser, rows: u16, cols: u16) {
    let (old_rows, _) = p.screen().size();
    let (crow, ccol) = p.screen().cursor_position();
    if rows < old_rows && crow >= rows && !p.screen().alternate_screen() {
        let shift = crow - rows + 1;
        // Scroll the whole screen up by `shift` from its last row, then put
        // the cursor back on its (moved) line.
        let mut seq = format!("\x1b[r\x1b[{old_rows};1H");
        seq.push_str(&"\n".repeat(shift as usize));
        seq.push_str(&format!("\x1b[{};{}H", crow - shift + 1, ccol + 1));
        p.process(seq.as_bytes());
    }
    p.set_size(rows, cols);
}

pub fn screen_text(screen: &vt100::Screen, lines: Option<usize>) -> String {
    let (_, cols) = screen.size();
    let mut rows: Vec<String> = screen
        .rows(0, cols)
        .map(|r| r.trim_end().to_string())
        .collect();
    while rows.last().is_some_and(|r| r.is_empty()) {
        rows.pop();
    }
    if let Some(n) = lines {
        let skip = rows.len().saturating_sub(n);
        rows.drain(..skip);
    }
    rows.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shrinking_keeps_the_cursor_line_and_the_newest_output() {
        let mut p = vt100::Parser::new(24, 80, 0);
        for i in 1..=30 {
            p.process(format!("line {i}\r\n").as_bytes());
        }
        p.process(b"$ ");
        resize_screen(&mut p, 19, 80);
        let text = screen_text(p.screen(), None);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 19, "{text}");
        assert_eq!(lines[17], "line 30");
        assert_eq!(lines[18], "$");
        assert_eq!(p.screen().cursor_position(), (18, 2));
        // Growing, or shrinking below an upper cursor, changes no lines.
        let mut q = vt100::Parser::new(24, 80, 0);
        q.process(b"top\r\nnext");
        resize_screen(&mut q, 10, 80);
        assert_eq!(screen_text(q.screen(), None), "top\nnext");
        resize_screen(&mut q, 30, 100);
        assert_eq!(screen_text(q.screen(), None), "top\nnext");
    }

    #[test]
    fn screen_text_trims_and_tails() {
        let mut p = vt100::Parser::new(5, 20, 0);
        p.process(b"one  \r\ntwo\r\nthree\r\n");
        assert_eq!(screen_text(p.screen(), None), "one\ntwo\nthree");
        assert_eq!(screen_text(p.screen(), Some(2)), "two\nthree");
        assert_eq!(screen_text(p.screen(), Some(0)), "");
        // A full-screen program's redraw replaces what was there.
        p.process(b"\x1b[2J\x1b[H\x1b[3;5Hmid");
        assert_eq!(screen_text(p.screen(), None), "\n\n    mid");
    }
}
