//! Drawing the shown tab: a local screen model fed by the core's redraw and
//! live output, painted as the difference from what was last painted, so
//! full-screen programs come out exactly (cells, colours, cursor, modes)
//! and the status line below them is never overwritten by the program.

use std::io::Write;

use crate::protocol::api::{TabInfo, TabState};

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

    /// Bytes that bring the terminal up to date, status line included.
    pub fn paint(&mut self, status: &str) -> Vec<u8> {
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
        out.extend(format!("\x1b[{};1H\x1b[0m\x1b[7m", self.term.0).as_bytes());
        let line = fit(status, self.term.1 as usize);
        out.extend(line.as_bytes());
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

/// Pad or cut to exactly `width` columns (the status line is ASCII).
pub fn fit(s: &str, width: usize) -> String {
    let mut line: String = s.chars().take(width).collect();
    let n = line.chars().count();
    line.extend(std::iter::repeat_n(' ', width - n));
    line
}

/// The status line: each tab with its number, agent, sandbox mark and state,
/// the shown one marked with `*`.
/// What the status line says after the tabs: what waits for an answer
/// first (a tab's warning, often longer than the window is wide, must not
/// hide it), then the warning; the help hint when neither.
pub fn status_note(note: &str, approvals: usize, prefix_name: &str) -> String {
    let waiting = format!("{approvals} waiting for your approval: {prefix_name} F3");
    match (note.is_empty(), approvals) {
        (true, 0) => format!("{prefix_name} ? help"),
        (true, _) => waiting,
        (false, 0) => note.to_string(),
        (false, _) => format!("{waiting} | {note}"),
    }
}

pub fn status_line(tabs: &[TabInfo], showing: Option<&str>, note: &str) -> String {
    let mut parts = Vec::new();
    for (i, t) in tabs.iter().enumerate() {
        let mark = if Some(t.id.as_str()) == showing {
            "*"
        } else {
            " "
        };
        let sb = if t.sandboxed { "[sb]" } else { "" };
        let state = match t.state {
            TabState::Running => String::new(),
            TabState::Exited => format!(
                " exited({})",
                t.exit_code.map(|c| c.to_string()).unwrap_or("?".into())
            ),
            other => format!(" {}", other.as_str()),
        };
        parts.push(format!("{}:{}{}{}{}", i + 1, t.agent, sb, state, mark));
    }
    let tabs = if parts.is_empty() {
        "no tabs".to_string()
    } else {
        parts.join(" ")
    };
    if note.is_empty() {
        format!(" {tabs}")
    } else {
        format!(" {tabs} | {note}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_waits_comes_before_a_tabs_warning() {
        for (note, n, want) in [
            ("", 0, "C-b ? help"),
            ("", 2, "2 waiting for your approval: C-b F3"),
            ("tab ab: setup not run", 0, "tab ab: setup not run"),
            (
                "tab ab: setup not run",
                1,
                "1 waiting for your approval: C-b F3 | tab ab: setup not run",
            ),
        ] {
            assert_eq!(status_note(note, n, "C-b"), want, "{note:?} {n}");
        }
    }

    fn tab(id: &str, agent: &str, state: TabState, sandboxed: bool) -> TabInfo {
        TabInfo {
            id: id.into(),
            folder: "/w".into(),
            agent: agent.into(),
            command: vec![],
            sandboxed,
            kind: Default::default(),
            parent: None,
            worktree: None,
            session_id: None,
            resumable: false,
            state,
            reason: None,
            pid: None,
            exit_code: (state == TabState::Exited).then_some(1),
            warning: None,
            agent_state: None,
            agent_state_since: None,
            bells: 0,
        }
    }

    #[test]
    fn status_lines_read_right() {
        let tabs = vec![
            tab("a", "claude", TabState::Running, true),
            tab("b", "sh", TabState::Exited, false),
        ];
        assert_eq!(
            status_line(&tabs, Some("a"), ""),
            " 1:claude[sb]* 2:sh exited(1) "
        );
        assert_eq!(
            status_line(&[], None, "C-b ? help"),
            " no tabs | C-b ? help"
        );
        assert_eq!(fit("abc", 5), "abc  ");
        assert_eq!(fit("abcdef", 3), "abc");
    }

    #[test]
    fn a_repaint_reproduces_the_screen() {
        let mut v = View::new((6, 20));
        v.redraw("t", 5, 20);
        v.output(b"\x1b[31mred\x1b[0m\r\nplain\x1b[3;5Hx");
        let first = v.paint("s");
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
        let diff = v.paint("s");
        check.process(&diff);
        assert!(check.screen().contents().contains("    xy"));
        assert!(diff.len() < first.len());
    }
}
