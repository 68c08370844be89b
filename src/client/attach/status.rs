//! The status line under the shown tab: each tab with its number, name,
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
//! | `<3` `>5!` | three tabs hidden to the left, five to the right (one of them blocked) |

use unicode_width::UnicodeWidthChar;

use super::marks::{Marks, TabMarks};
use super::overflow::{self, Item, Need, Side};
use crate::protocol::api::{AgentState, TabInfo, TabState};
use crate::protocol::printable;

/// The marks, as the help overlay explains them (each line fits 80
/// columns).
pub const LEGEND: &[&str] = &[
    "Status line: ~ working   ! blocked: waits for you   + done   . idle",
    "             * shown here   # blocked or done while you looked elsewhere",
    "             ^ rang its bell while you looked elsewhere",
    "             <3 >5 tabs hidden left/right, with the mark of one that needs you",
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

/// One tab's entry: its number, its name (its agent's for a core that
/// names no tabs), the sandbox mark, the program's state and the marks.
fn entry(i: usize, t: &TabInfo, shown: bool, m: TabMarks) -> Span {
    let name = if t.name.is_empty() { &t.agent } else { &t.name };
    let sb = if t.sandboxed { "[sb]" } else { "" };
    let process = match t.state {
        TabState::Running => String::new(),
        TabState::Exited => format!(
            " exited({})",
            t.exit_code.map(|c| c.to_string()).unwrap_or("?".into())
        ),
        other => format!(" {}", other.as_str()),
    };
    let text = format!(
        "{}:{}{sb}{process}{}{}{}{}",
        i + 1,
        printable(name),
        glyph(t.agent_state),
        if shown { "*" } else { "" },
        if m.unseen { "#" } else { "" },
        if m.bell { "^" } else { "" },
    );
    span(text, look(t.agent_state, m))
}

/// What a tab asks of the person, for an overflow mark that hides it.
fn need(t: &TabInfo, m: TabMarks) -> Need {
    match t.agent_state {
        Some(AgentState::Blocked) => Need::Blocked,
        Some(AgentState::Done) => Need::Done,
        _ if m.bell => Need::Bell,
        _ => Need::Nothing,
    }
}

fn need_look(n: Need) -> Look {
    match n {
        Need::Blocked => Look::Blocked,
        Need::Done => Look::Done,
        Need::Bell => Look::Bell,
        Need::Nothing => Look::Bar,
    }
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

/// The status line for a window `width` columns wide: the tabs, the shown
/// one marked `*`, then `note`. When the tabs do not all fit beside the
/// note's first words, a run of them around the shown one is drawn, with
/// a mark for the tabs cut on each side (see `super::overflow`).
pub fn status_line(
    tabs: &[TabInfo],
    showing: Option<&str>,
    marks: &Marks,
    note: &str,
    width: usize,
) -> Vec<Span> {
    let mut spans = vec![span(" ", Look::Bar)];
    if tabs.is_empty() {
        spans.push(span("no tabs", Look::Bar));
    }
    let shown = tabs.iter().position(|t| showing == Some(t.id.as_str()));
    let entries: Vec<(Span, Need)> = tabs
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let m = marks.get(&t.id);
            (entry(i, t, Some(i) == shown, m), need(t, m))
        })
        .collect();
    let items: Vec<Item> = entries
        .iter()
        .map(|(s, need)| Item {
            cols: columns(std::slice::from_ref(s)),
            need: *need,
        })
        .collect();
    // Room kept for the note: enough to read " | C-b ? help".
    const NOTE_ROOM: usize = 13;
    let note = printable(note);
    let note_cols = if note.is_empty() {
        0
    } else {
        columns(&[span(format!(" | {note}"), Look::Bar)])
    };
    // A longer note (a stopped tab's keys, a reconnect, a config error)
    // is what to read now: it takes the room it needs, down to a quarter
    // of the line for the tabs (the shown one and the marks stay).
    let room = width
        .saturating_sub(1 + note_cols)
        .max(width / 4)
        .min(width.saturating_sub(1 + note_cols.min(NOTE_ROOM)));
    let run = overflow::visible(&items, shown, room);
    let mut parts = Vec::new();
    if let Some((m, n)) = overflow::mark(Side::Left, &items[..run.start]) {
        parts.push(span(m, need_look(n)));
    }
    parts.extend(entries[run.clone()].iter().map(|(s, _)| s.clone()));
    if let Some((m, n)) = overflow::mark(Side::Right, &items[run.end..]) {
        parts.push(span(m, need_look(n)));
    }
    for (i, p) in parts.into_iter().enumerate() {
        if i > 0 {
            spans.push(span(" ", Look::Bar));
        }
        spans.push(p);
    }
    if !note.is_empty() {
        // Cut at a word, with a mark, never mid-word: the rest is where
        // the note says (`nerdr doctor`, `nerdr tabs`).
        let room = width.saturating_sub(columns(&spans) + 3);
        spans.push(span(format!(" | {}", elide_words(&note, room)), Look::Bar));
    }
    spans
}

/// `text` in `cols` columns: whole when it fits, else cut after the last
/// word that fits, with ` ...` to say it was; a first word too long for
/// the room is cut at the room, with `...`.
pub fn elide_words(text: &str, cols: usize) -> String {
    let width = |s: &str| s.chars().map(|c| c.width().unwrap_or(0)).sum::<usize>();
    if width(text) <= cols {
        return text.to_string();
    }
    const MARK: &str = " ...";
    let room = cols.saturating_sub(MARK.len());
    let mut end = 0;
    let mut used = 0;
    for (i, c) in text.char_indices() {
        if c == ' ' {
            end = i;
        }
        used += c.width().unwrap_or(0);
        if used > room {
            break;
        }
    }
    let head = text[..end].trim_end();
    if head.is_empty() {
        let cut = fit(text, cols.saturating_sub(3));
        return format!("{}...", cut.trim_end());
    }
    format!("{head}{MARK}")
}

/// What the status line says when the shown tab's program is not running
/// (keys typed then reach nothing): what it did, and the keys that
/// restart or close it. `None` while it runs or starts.
pub fn stopped_hint(t: &TabInfo, prefix: &str) -> Option<String> {
    let name = if t.name.is_empty() { &t.agent } else { &t.name };
    let what = match t.state {
        TabState::Running | TabState::Starting => return None,
        TabState::Exited => format!(
            "exited({})",
            t.exit_code.map(|c| c.to_string()).unwrap_or("?".into())
        ),
        TabState::Refused => "was refused".to_string(),
    };
    // Short enough to read whole in 80 columns beside crowded tabs: the
    // tab's number is in its entry, marked `*`.
    Some(format!(
        "{} {what}: {prefix} R restarts, {prefix} x closes",
        printable(name)
    ))
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
            let got = entry(0, &t, shown, TabMarks { unseen, bell });
            assert_eq!((got.text.as_str(), got.look), (text, want), "{state:?}");
        }
    }

    fn named(i: usize, s: Option<AgentState>) -> TabInfo {
        let mut t = with(
            tab(&format!("t{i}"), "claude", TabState::Running, false),
            s,
            0,
        );
        t.name = format!("claude-{}", i + 1);
        t
    }

    /// 13 tabs in 80 columns: a run around the shown tab, a mark on each
    /// cut side with how many it hides, and a hidden blocked tab's `!`.
    #[test]
    fn a_crowded_line_keeps_the_shown_tab_and_marks_what_it_hides() {
        let tabs: Vec<TabInfo> = (0..13)
            .map(|i| named(i, Some(if i == 12 { Blocked } else { Idle })))
            .collect();
        let m = Marks::default();
        // (shown, the line)
        #[rustfmt::skip]
        let rows = [
            ("t0", " 1:claude-1.* 2:claude-2. 3:claude-3. 4:claude-4. 5:claude-5. >8! | C-b ? help"),
            ("t6", " <5 6:claude-6. 7:claude-7.* 8:claude-8. 9:claude-9. >4! | C-b ? help"),
            ("t12", " <9 10:claude-10. 11:claude-11. 12:claude-12. 13:claude-13!* | C-b ? help"),
        ];
        for (shown, want) in rows {
            let line = plain(&status_line(&tabs, Some(shown), &m, "C-b ? help", 80), 80);
            assert_eq!(line.trim_end(), want, "{shown}");
            assert!(line.chars().count() == 80);
        }
        // The mark of a hidden blocked tab stands out like the tab would.
        let spans = status_line(&tabs, Some("t0"), &m, "", 80);
        let mark = spans.iter().find(|s| s.text.starts_with('>')).unwrap();
        assert_eq!((mark.text.as_str(), mark.look), (">7!", Look::Blocked));
        // Room enough: every tab, no mark.
        let line = plain(&status_line(&tabs[..2], Some("t0"), &m, "", 80), 80);
        assert_eq!(line.trim_end(), " 1:claude-1.* 2:claude-2.");
    }

    /// 13 tabs in 80 columns and a note to act on (a stopped tab's keys,
    /// a reconnect): the note is read whole; the tabs keep a quarter of
    /// the line at least, with the shown one and the marks.
    #[test]
    fn a_crowded_line_still_reads_a_note_whole() {
        let mut tabs: Vec<TabInfo> = (0..13).map(|i| named(i, Some(Idle))).collect();
        tabs[11] = with(tab("t11", "sh", TabState::Exited, false), None, 0);
        tabs[11].name = "sh-1".into();
        tabs[11].exit_code = Some(0);
        let hint = stopped_hint(&tabs[11], "C-b").unwrap();
        let m = Marks::default();
        for note in [
            hint.as_str(),
            "reconnecting to the core (3 s): connection refused",
            "lost the core (connection closed): reconnecting...",
        ] {
            let line = plain(&status_line(&tabs, Some("t11"), &m, note, 80), 80);
            assert!(line.trim_end().ends_with(note), "{line:?}");
            assert!(line.contains("12:sh-1 exited(0)*"), "{line:?}");
            assert!(line.starts_with(" <"), "{line:?}");
        }
        // The help hint leaves the tabs their room, as before.
        let line = plain(&status_line(&tabs, Some("t11"), &m, "C-b ? help", 80), 80);
        assert!(line.contains("10:claude-10"), "{line:?}");
    }

    /// (text, columns, what shows)
    #[test]
    fn a_long_note_is_cut_at_a_word_with_a_mark() {
        #[rustfmt::skip]
        let rows: &[(&str, usize, &str)] = &[
            ("short", 10, "short"),
            ("exactly ten", 11, "exactly ten"),
            ("config error: unknown key `reviw` in [agents.claude]", 30, "config error: unknown key ..."),
            ("config error: unknown key `reviw` in [agents.claude]", 29, "config error: unknown key ..."),
            ("config error: unknown key `reviw` in [agents.claude]", 28, "config error: unknown ..."),
            ("abcdefghijkl", 8, "abcde..."),
            ("abc defghijkl", 8, "abc ..."),
            ("a b", 0, "..."),
        ];
        for (text, cols, want) in rows {
            let got = elide_words(text, *cols);
            assert_eq!(got, *want, "{text:?} in {cols}");
            assert!(got.chars().count() <= (*cols).max(3), "{got:?}");
        }
        // In the line: the note's last word is whole, and the mark shows.
        let tabs = vec![tab("a", "sh", TabState::Running, false)];
        let note = "config error (see nerdr doctor): /h/config.toml: line 3: \
                    unknown field `reviw`, expected one of `command`, `review`";
        let line = plain(
            &status_line(&tabs, Some("a"), &Marks::default(), note, 80),
            80,
        );
        assert!(line.trim_end().ends_with(" ..."), "{line:?}");
        let shown = line.trim_end().trim_end_matches(" ...");
        assert!(note.contains(&shown[shown.find("config").unwrap()..]));
        let last = shown.rsplit(' ').next().unwrap();
        assert!(note.split(' ').any(|w| w == last), "cut mid-word: {line:?}");
    }

    #[test]
    fn a_stopped_tab_says_which_keys_bring_it_back() {
        let mut t = tab("a", "sh", TabState::Exited, false);
        t.name = "sh-1".into();
        assert_eq!(
            stopped_hint(&t, "C-b").as_deref(),
            Some("sh-1 exited(1): C-b R restarts, C-b x closes")
        );
        t.state = TabState::Refused;
        assert_eq!(
            stopped_hint(&t, "C-a").as_deref(),
            Some("sh-1 was refused: C-a R restarts, C-a x closes")
        );
        for state in [TabState::Running, TabState::Starting] {
            t.state = state;
            assert_eq!(stopped_hint(&t, "C-b"), None);
        }
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
