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
//! | `@2` | two reviews by agents posted for it that you have not read (prefix `g` shows them) |
//! | `%2` | two results of its spinoffs wait for it (its program ended) |
//! | `?` | a spinoff ended its turn without a report |
//! | `&` | handed its work to you (`nerdr handoffs` shows it) |
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
    "             ^ rang its bell while you looked elsewhere   @2 reviews unread",
    // Full: the help fills 80x24, so `&` shares a line (P is a binding).
    "             ? spinoff ended its turn without a report   & work handed to you",
    "             <3 >5 tabs hidden left/right, with a mark   %2 spinoff results wait",
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

/// One tab's entry: its number (its place, `i`, for a core that numbers
/// no tabs), its name (its agent's for a core that names no tabs), the
/// sandbox mark, the program's state and the marks.
fn entry(i: usize, t: &TabInfo, shown: bool, m: TabMarks) -> Span {
    let number = if t.number > 0 { t.number } else { i + 1 };
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
    let reviews = match t.unread_reviews {
        0 => String::new(),
        n => format!("@{n}"),
    };
    let waiting = match t.results_waiting {
        0 => String::new(),
        n => format!("%{n}"),
    };
    // Its turn ended with no report: prefix P reports its last answer.
    let due = if t.report_due { "?" } else { "" };
    // A handoff to the person waits in `nerdr handoffs`.
    let handed = if t.handed_to_you { "&" } else { "" };
    let text = format!(
        "{number}:{}{sb}{process}{}{}{}{}{reviews}{waiting}{due}{handed}",
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

pub fn columns(spans: &[Span]) -> usize {
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
#[path = "status_tests.rs"]
mod tests;
