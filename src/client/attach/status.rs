//! The status line under the shown tab: each tab with its number, agent,
//! sandbox mark, process state, agent state and marks, then a note. Pure:
//! composed as styled spans from plain data, rendered to bytes for a given
//! width, so every case is a table row without a terminal.
//!
//! Marks are ASCII and each state has its own, so the line reads the same
//! on a terminal without colours, in a log, or to a screen reader; colours
//! only make the states that need the person stand out. Widths are counted
//! with `unicode-width`, since agent names and notes may hold wide or
//! zero-width characters and the line must end exactly at the last column.
//!
//! | shown | means |
//! |---|---|
//! | `~` | working |
//! | `!` | blocked: waits for you (white on red) |
//! | `+` | done: finished a turn nobody looked at (black on green) |
//! | `.` | idle |
//! | nothing | unknown, or not an agent |
//! | `*` | the tab this window shows |
//! | `#` | turned blocked or done while you looked elsewhere |
//! | `^` | rang its bell while you looked elsewhere (black on yellow) |

use unicode_width::UnicodeWidthChar;

use super::marks::{Marks, TabMarks};
use crate::protocol::api::{AgentState, TabInfo, TabState};
use crate::protocol::printable;

/// The marks, as the help overlay explains them (each line fits 80
/// columns).
pub const LEGEND: &[&str] = &[
    "Status line: ~ working   ! blocked: waits for you   + done   . idle",
    "             * shown here   # blocked or done while you looked elsewhere",
    "             ^ rang its bell while you looked elsewhere",
];

/// How a span looks. The bar is the status line's own reverse video.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    Bar,
    Working,
    Blocked,
    Done,
    Bell,
}

impl Look {
    fn sgr(self) -> &'static str {
        match self {
            Look::Bar => "\x1b[0;7m",
            Look::Working => "\x1b[0;1;7m",
            Look::Blocked => "\x1b[0;1;97;41m",
            Look::Done => "\x1b[0;30;42m",
            Look::Bell => "\x1b[0;30;43m",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    pub text: String,
    pub look: Look,
}

fn span(text: impl Into<String>, look: Look) -> Span {
    Span {
        text: text.into(),
        look,
    }
}

pub fn glyph(s: Option<AgentState>) -> &'static str {
    match s {
        Some(AgentState::Working) => "~",
        Some(AgentState::Blocked) => "!",
        Some(AgentState::Done) => "+",
        Some(AgentState::Idle) => ".",
        Some(AgentState::Unknown) | None => "",
    }
}

fn look(s: Option<AgentState>, m: TabMarks) -> Look {
    match s {
        Some(AgentState::Blocked) => Look::Blocked,
        Some(AgentState::Done) => Look::Done,
        _ if m.bell => Look::Bell,
        Some(AgentState::Working) => Look::Working,
        _ => Look::Bar,
    }
}

/// One tab's entry; `full` with its agent's name, else only its number
/// and marks (when the full line would not fit).
fn entry(i: usize, t: &TabInfo, shown: bool, m: TabMarks, full: bool) -> Span {
    let name = if full {
        format!(":{}", printable(&t.agent))
    } else {
        String::new()
    };
    let sb = if t.sandboxed && full { "[sb]" } else { "" };
    let process = match t.state {
        TabState::Running => String::new(),
        TabState::Exited => format!(
            " exited({})",
            t.exit_code.map(|c| c.to_string()).unwrap_or("?".into())
        ),
        other => format!(" {}", other.as_str()),
    };
    let text = format!(
        "{}{name}{sb}{process}{}{}{}{}",
        i + 1,
        glyph(t.agent_state),
        if shown { "*" } else { "" },
        if m.unseen { "#" } else { "" },
        if m.bell { "^" } else { "" },
    );
    span(text, look(t.agent_state, m))
}

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

/// The status line for a window `width` columns wide: every tab, the shown
/// one marked `*`, then `note`. When the tabs with their names would not
/// leave room for the note's first words, they are shown by number only,
/// so a blocked tab far right is not cut off.
pub fn status_line(
    tabs: &[TabInfo],
    showing: Option<&str>,
    marks: &Marks,
    note: &str,
    width: usize,
) -> Vec<Span> {
    let compose = |full: bool| {
        let mut spans = vec![span(" ", Look::Bar)];
        if tabs.is_empty() {
            spans.push(span("no tabs", Look::Bar));
        }
        for (i, t) in tabs.iter().enumerate() {
            if i > 0 {
                spans.push(span(" ", Look::Bar));
            }
            let shown = showing == Some(t.id.as_str());
            spans.push(entry(i, t, shown, marks.get(&t.id), full));
        }
        spans
    };
    // Room kept for the note: enough to read "C-b ? help".
    const NOTE_ROOM: usize = 12;
    let mut spans = compose(true);
    if columns(&spans) + NOTE_ROOM > width && tabs.len() > 1 {
        spans = compose(false);
    }
    if !note.is_empty() {
        spans.push(span(format!(" | {}", printable(note)), Look::Bar));
    }
    spans
}

fn columns(spans: &[Span]) -> usize {
    spans
        .iter()
        .flat_map(|s| s.text.chars())
        .map(|c| c.width().unwrap_or(0))
        .sum()
}

/// The spans as plain text, exactly `width` columns.
#[cfg(test)]
pub fn plain(spans: &[Span], width: usize) -> String {
    let text: String = spans.iter().map(|s| s.text.as_str()).collect();
    fit(&text, width)
}

/// The bytes that draw `spans` on the current line, exactly `width`
/// columns, padded in the bar's look; attributes reset at the end.
pub fn render(spans: &[Span], width: usize) -> Vec<u8> {
    let mut out = String::new();
    let mut used = 0;
    let mut current = None;
    'spans: for s in spans {
        for c in s.text.chars() {
            let w = c.width().unwrap_or(0);
            if used + w > width {
                break 'spans;
            }
            if current != Some(s.look) {
                out.push_str(s.look.sgr());
                current = Some(s.look);
            }
            out.push(c);
            used += w;
        }
    }
    if used < width {
        if current != Some(Look::Bar) {
            out.push_str(Look::Bar.sgr());
        }
        out.extend(std::iter::repeat_n(' ', width - used));
    }
    out.push_str("\x1b[0m");
    out.into_bytes()
}

/// Pad or cut to exactly `width` columns. A wide character that would
/// cross the edge is left out (and padded over), never half drawn.
pub fn fit(s: &str, width: usize) -> String {
    let mut line = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > width {
            break;
        }
        line.push(c);
        used += w;
    }
    line.extend(std::iter::repeat_n(' ', width - used));
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use AgentState::*;

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
            name: String::new(),
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

    fn with(mut t: TabInfo, s: Option<AgentState>, bells: u64) -> TabInfo {
        t.agent_state = s;
        t.bells = bells;
        t
    }

    #[test]
    fn status_lines_read_right() {
        let tabs = vec![
            tab("a", "claude", TabState::Running, true),
            tab("b", "sh", TabState::Exited, false),
        ];
        let m = Marks::default();
        assert_eq!(
            plain(&status_line(&tabs, Some("a"), &m, "", 44), 44),
            " 1:claude[sb]* 2:sh exited(1)               "
        );
        assert_eq!(
            plain(&status_line(&[], None, &m, "C-b ? help", 22), 22),
            " no tabs | C-b ? help "
        );
        assert_eq!(fit("abc", 5), "abc  ");
        assert_eq!(fit("abcdef", 3), "abc");
        // Wide characters count two columns; one that would cross the
        // edge is left out.
        assert_eq!(fit("日本語", 5), "日本 ");
        assert_eq!(fit("e\u{301}x", 3), "e\u{301}x ");
    }

    /// Each row: the agent state, the marks (unseen, bell), whether shown;
    /// the entry's text and look.
    #[test]
    fn each_state_has_its_mark_and_look() {
        #[rustfmt::skip]
        type Row<'a> = (Option<AgentState>, (bool, bool), bool, &'a str, Look);
        let rows: &[Row] = &[
            (
                Some(Working),
                (false, false),
                false,
                "1:claude~",
                Look::Working,
            ),
            (
                Some(Blocked),
                (false, false),
                false,
                "1:claude!",
                Look::Blocked,
            ),
            (Some(Done), (false, false), false, "1:claude+", Look::Done),
            (Some(Idle), (false, false), false, "1:claude.", Look::Bar),
            (Some(Unknown), (false, false), false, "1:claude", Look::Bar),
            (None, (false, false), false, "1:claude", Look::Bar),
            (
                Some(Blocked),
                (false, false),
                true,
                "1:claude!*",
                Look::Blocked,
            ),
            (
                Some(Blocked),
                (true, false),
                false,
                "1:claude!#",
                Look::Blocked,
            ),
            (Some(Done), (true, true), false, "1:claude+#^", Look::Done),
            (Some(Idle), (false, true), false, "1:claude.^", Look::Bell),
            (
                Some(Working),
                (false, true),
                false,
                "1:claude~^",
                Look::Bell,
            ),
            (None, (false, true), false, "1:claude^", Look::Bell),
        ];
        for &(state, (unseen, bell), shown, text, want) in rows {
            let t = with(tab("a", "claude", TabState::Running, false), state, 0);
            let got = entry(0, &t, shown, TabMarks { unseen, bell }, true);
            assert_eq!((got.text.as_str(), got.look), (text, want), "{state:?}");
        }
    }

    #[test]
    fn a_crowded_line_drops_names_before_tabs() {
        let tabs: Vec<TabInfo> = (0..9)
            .map(|i| {
                let s = if i == 8 { Some(Blocked) } else { Some(Idle) };
                with(
                    tab(&format!("t{i}"), "claude-code", TabState::Running, false),
                    s,
                    0,
                )
            })
            .collect();
        let m = Marks::default();
        let line = plain(&status_line(&tabs, Some("t0"), &m, "C-b ? help", 80), 80);
        assert_eq!(
            line.trim_end(),
            " 1.* 2. 3. 4. 5. 6. 7. 8. 9! | C-b ? help",
            "{line}"
        );
        // Room enough: names stay.
        let line = plain(&status_line(&tabs[..2], Some("t0"), &m, "", 80), 80);
        assert_eq!(line.trim_end(), " 1:claude-code.* 2:claude-code.");
    }

    #[test]
    fn names_and_notes_cannot_smuggle_escapes() {
        let t = tab("a", "evil\x1b[2J", TabState::Running, false);
        let spans = status_line(&[t], None, &Marks::default(), "n\x07", 40);
        let text = plain(&spans, 40);
        assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
    }

    #[test]
    fn rendering_colours_the_states_and_fills_the_width() {
        let tabs = vec![
            with(tab("a", "sh", TabState::Running, false), Some(Idle), 0),
            with(tab("b", "cc", TabState::Running, false), Some(Blocked), 0),
        ];
        let spans = status_line(&tabs, Some("a"), &Marks::default(), "", 80);
        let bytes = render(&spans, 20);
        let mut p = vt100::Parser::new(1, 20, 0);
        p.process(&bytes);
        let s = p.screen();
        assert_eq!(s.contents().trim_end(), " 1:sh.* 2:cc!");
        // The bar is reverse video; the blocked tab white on red, bold.
        assert!(s.cell(0, 1).unwrap().inverse());
        let b = s.cell(0, 8).unwrap();
        assert_eq!(b.contents(), "2");
        assert_eq!(b.bgcolor(), vt100::Color::Idx(1));
        assert!(b.bold() && !b.inverse());
        // Padded to the edge in the bar's look.
        assert!(s.cell(0, 19).unwrap().inverse());
        // Cut exactly at the width.
        let mut p = vt100::Parser::new(1, 20, 0);
        p.process(&render(&spans, 6));
        assert_eq!(p.screen().contents(), " 1:sh.");
    }
}
