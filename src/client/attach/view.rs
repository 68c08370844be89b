//! Drawing the shown tab: a local screen model fed by the core's redraw and
//! live output, painted as the difference from what was last painted, so
//! full-screen programs come out exactly (cells, colours, cursor, modes)
//! and the status line below them is never overwritten by the program.

use std::io::Write;

pub struct View {
    pub tab: Option<String>,
    parser: vt100::Parser,
    /// What the terminal shows now, to paint only differences.
    painted: Option<vt100::Screen>,
    /// The person's terminal size.
    pub term: (u16, u16),
}

impl View {
    pub fn new(term: (u16, u16)) -> Self {
        View {
            tab: None,
            parser: vt100::Parser::new(term.0.saturating_sub(1).max(1), term.1, 0),
            painted: None,
            term,
        }
    }

    /// The next bytes for `tab` draw its screen from scratch at this size.
    pub fn redraw(&mut self, tab: &str, rows: u16, cols: u16) {
        self.tab = Some(tab.to_string());
        self.parser = vt100::Parser::new(rows, cols, 0);
        self.painted = None;
    }

    pub fn output(&mut self, bytes: &[u8]) {
        self.parser.process(bytes);
    }

    /// Force the next paint to be a full one (after an overlay or a resize).
    pub fn invalidate(&mut self) {
        self.painted = None;
    }

    /// Bytes that bring the terminal up to date, with `status` (the status
    /// line's bytes, see `super::status::render`) on the last row.
    pub fn paint(&mut self, status: &[u8]) -> Vec<u8> {
        let screen = self.parser.screen();
        let mut out = Vec::new();
        match &self.painted {
            Some(prev) => out.extend(screen.state_diff(prev)),
            None => {
                out.extend_from_slice(b"\x1b[H\x1b[2J");
                out.extend(screen.state_formatted());
            }
        }
        // The status line on the last row; save and restore the cursor (and
        // its attributes) so the program's state is untouched.
        out.extend_from_slice(b"\x1b7");
        out.extend(format!("\x1b[{};1H", self.term.0).as_bytes());
        out.extend_from_slice(status);
        out.extend_from_slice(b"\x1b[0m\x1b8");
        if screen.hide_cursor() {
            out.extend_from_slice(b"\x1b[?25l");
        }
        self.painted = Some(screen.clone());
        out
    }

    pub fn write(bytes: &[u8]) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(bytes);
        let _ = out.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repaint_reproduces_the_screen() {
        let mut v = View::new((6, 20));
        v.redraw("t", 5, 20);
        v.output(b"\x1b[31mred\x1b[0m\r\nplain\x1b[3;5Hx");
        let first = v.paint(b"s");
        // Painting the bytes into a fresh model gives the same screen.
        let mut check = vt100::Parser::new(6, 20, 0);
        check.process(&first);
        assert_eq!(
            check.screen().cell(0, 0).unwrap().fgcolor(),
            vt100::Color::Idx(1)
        );
        assert_eq!(
            check.screen().contents_between(0, 0, 2, 6).trim_end(),
            "red\nplain\n    x"
        );
        v.output(b"y");
        let diff = v.paint(b"s");
        check.process(&diff);
        assert!(check.screen().contents().contains("    xy"));
        assert!(diff.len() < first.len());
    }
}
