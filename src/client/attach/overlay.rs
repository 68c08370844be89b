//! What the window shows instead of the pane for a moment: the agent
//! picker, the session picker, the rename prompt, the help, a yes/no
//! question, the approval queue, scroll mode, the diff view.
//! Keys go to the overlay while it is open, one key at a time, every key
//! of a read in order; pure: (mode, keys) in, (mode, effect, bytes used)
//! out.

use std::path::PathBuf;

use super::choose::{self, moved, Choosing};
use super::comments::Comment;
use super::diff_view::{self, DiffView};
use super::keys::{key_len, BINDINGS};
use super::prompt::{self, Prompt};
use super::scroll::{self, Scroll};
use super::session_pick::{self, Chosen, Picker, Place};
use super::status::{self, Look, Span};

/// The yes/no question `C-b q` asks before stopping the session's `n`
/// tabs ("stop all 1 tabs" read as a slip).
pub fn quit_question(n: usize) -> String {
    match n {
        0 => "quit: end this session (it has no tabs)? y/n".into(),
        1 => "quit: stop this session's only tab? y/n".into(),
        n => format!("quit: stop all {n} tabs of this session? y/n"),
    }
}

#[derive(Debug)]
pub enum Mode {
    Normal,
    Picker {
        agents: Vec<String>,
        sel: usize,
        /// Digits typed so far: "1" waits for a second digit while a
        /// 10th entry exists.
        typed: String,
        /// The tab whose agent the chosen one replaces (prefix `A`);
        /// `None`: the chosen one starts in a new tab.
        switching: Option<Switching>,
    },
    /// The keys' help; `over` the diff view it was asked for over (prefix
    /// `?` there), shown again as it was when the help closes, as tmux's
    /// help returns to copy mode.
    Help {
        over: Option<Box<DiffView>>,
    },
    Confirm {
        question: String,
        yes: Effect,
    },
    /// Pending approvals, the selected one answered by y/n (and `s` for a
    /// network question: for the rest of that sandbox run).
    Approvals {
        items: Vec<Waiting>,
        sel: usize,
    },
    Scroll(Scroll),
    /// The sessions to switch to (prefix `s`), of every place.
    Sessions {
        picker: Picker,
        at: Choosing,
    },
    /// The shown tab's new name (prefix `,`).
    Rename {
        tab: String,
        prompt: Prompt,
    },
    /// The shown tab's diff (prefix `g`).
    Diff(Box<DiffView>),
}

/// Prefix `A`'s picker: the tab switched, the picker's title naming it,
/// and the agents whose program is not on the window's PATH (the one a
/// switch from this window runs with), refused when chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Switching {
    pub tab: String,
    pub title: String,
    pub missing: Vec<String>,
}

/// One question of the approval queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    pub id: String,
    pub question: String,
    /// A sandbox's network question: `s` answers it for the rest of the run.
    pub network: bool,
}

/// What an overlay asks the window to do as it closes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    None,
    Start(String),
    Close(String),
    Quit,
    Decide {
        id: String,
        approve: bool,
        session: bool,
    },
    Rename {
        tab: String,
        name: String,
    },
    /// Show this folder's session in this window.
    Switch(PathBuf),
    /// Show a session of another place (this machine, a host) in this
    /// window, connecting there.
    Move {
        place: Place,
        folder: PathBuf,
    },
    /// Start the tab's program again.
    Restart(String),
    /// Report spun-off tab `.0`'s last answer to its parent.
    ReportFor(String),
    /// Say `.0` in the status line until the next key.
    Note(String),
    /// Stop tab `tab`'s agent and start `agent` in its place.
    SwitchAgent {
        tab: String,
        agent: String,
        /// Switch with no handoff (asked after one could not be built).
        no_handoff: bool,
    },
    /// Type `text` into `tab` as one message: `comments`, which the diff
    /// view keeps until the core says they were typed.
    SendComments {
        tab: String,
        text: String,
        comments: Vec<Comment>,
    },
    /// Type `text` into `tab` as one message: review comments (`what`
    /// says which), from the review panel.
    SendReview {
        tab: String,
        text: String,
        what: String,
    },
    /// The diff view of `tab` closed with `drafts` not sent.
    DiffClosed {
        tab: String,
        drafts: Vec<super::drafts::Draft>,
    },
    /// The same, to open again on a new diff of `tab`.
    DiffReload {
        tab: String,
        drafts: Vec<super::drafts::Draft>,
    },
}

impl Mode {
    /// The diff view, shown or under the help: its comments are the
    /// person's either way (kept when the window goes, marked sent).
    pub fn diff_mut(&mut self) -> Option<&mut DiffView> {
        match self {
            Mode::Diff(v) | Mode::Help { over: Some(v) } => Some(v),
            _ => None,
        }
    }
}

/// Feeds a read's keys to the overlay one key at a time, in order, until
/// it closes: the new mode, what it asks for, and how many bytes it took.
/// The bytes after the key that closed it are the window's again (a paste
/// or fast typing must not lose them, nor hand them to the overlay).
pub fn feed(mut mode: Mode, keys: &[u8]) -> (Mode, Effect, usize) {
    let mut used = 0;
    while used < keys.len() && !matches!(mode, Mode::Normal) {
        let n = key_len(&keys[used..]);
        let effect;
        // The key that closes the help is the help's alone; what follows
        // it goes to the diff view under it through the window, which
        // takes the prefix there.
        let help = matches!(mode, Mode::Help { .. });
        (mode, effect) = key(mode, &keys[used..used + n]);
        used += n;
        if effect != Effect::None || help {
            return (mode, effect, used);
        }
    }
    (mode, Effect::None, used)
}

/// One key (see `key_len`) to an open overlay.
fn key(mode: Mode, key: &[u8]) -> (Mode, Effect) {
    match mode {
        Mode::Normal => (Mode::Normal, Effect::None),
        Mode::Help { over } => (over.map_or(Mode::Normal, Mode::Diff), Effect::None),
        Mode::Approvals { items, sel } => {
            let n = items.len().max(1);
            match key {
                b"y" | b"Y" if !items.is_empty() => {
                    (Mode::Normal, decide(&items[sel], true, false))
                }
                b"s" | b"S" if items.get(sel).is_some_and(|w| w.network) => {
                    (Mode::Normal, decide(&items[sel], true, true))
                }
                b"n" | b"N" if !items.is_empty() => {
                    (Mode::Normal, decide(&items[sel], false, false))
                }
                _ => match moved(key, sel, n) {
                    Some(sel) => (Mode::Approvals { items, sel }, Effect::None),
                    None => (Mode::Normal, Effect::None),
                },
            }
        }
        Mode::Confirm { question, yes } => match key {
            b"y" | b"Y" => (Mode::Normal, yes),
            b"n" | b"N" | b"\x1b" | b"q" | b"\x03" => (Mode::Normal, Effect::None),
            _ => (Mode::Confirm { question, yes }, Effect::None),
        },
        Mode::Picker {
            agents,
            sel,
            typed,
            switching,
        } => match choose::key(Choosing { sel, typed }, agents.len(), key) {
            choose::Outcome::Stay(Choosing { sel, typed }) => (
                Mode::Picker {
                    agents,
                    sel,
                    typed,
                    switching,
                },
                Effect::None,
            ),
            choose::Outcome::Chose(i) => match switching {
                // Refused at once, not after the tab's agent was stopped.
                Some(sw) if sw.missing.contains(&agents[i]) => (
                    Mode::Normal,
                    Effect::Note(format!(
                        "{}: not found on PATH; install it, or pick another agent",
                        crate::protocol::printable(&agents[i])
                    )),
                ),
                Some(sw) => (
                    Mode::Normal,
                    Effect::SwitchAgent {
                        tab: sw.tab,
                        agent: agents[i].clone(),
                        no_handoff: false,
                    },
                ),
                None => (Mode::Normal, Effect::Start(agents[i].clone())),
            },
            choose::Outcome::Cancel => (Mode::Normal, Effect::None),
        },
        Mode::Sessions { picker, at } => match choose::key(at, picker.count(), key) {
            choose::Outcome::Stay(at) => (Mode::Sessions { picker, at }, Effect::None),
            choose::Outcome::Chose(i) => match picker.chose(i) {
                // The session shown already: nothing to switch.
                Chosen::Stay => (Mode::Normal, Effect::None),
                Chosen::Switch(folder) => (Mode::Normal, Effect::Switch(folder)),
                Chosen::Move { place, folder } => (Mode::Normal, Effect::Move { place, folder }),
            },
            choose::Outcome::Cancel => (Mode::Normal, Effect::None),
        },
        Mode::Rename { tab, prompt } => match prompt.key(key) {
            prompt::Outcome::Stay(prompt) => (Mode::Rename { tab, prompt }, Effect::None),
            prompt::Outcome::Done(name) if name.is_empty() => (Mode::Normal, Effect::None),
            prompt::Outcome::Done(name) => (Mode::Normal, Effect::Rename { tab, name }),
            prompt::Outcome::Cancel => (Mode::Normal, Effect::None),
        },
        Mode::Scroll(mut s) => match s.feed(key) {
            scroll::Outcome::Leave => (Mode::Normal, Effect::None),
            scroll::Outcome::Stay => (Mode::Scroll(s), Effect::None),
        },
        Mode::Diff(mut v) => match v.key(key) {
            diff_view::Outcome::Stay => (Mode::Diff(v), Effect::None),
            diff_view::Outcome::Close => {
                let drafts = v.drafts();
                (Mode::Normal, Effect::DiffClosed { tab: v.tab, drafts })
            }
            diff_view::Outcome::Reload => {
                let drafts = v.drafts();
                (Mode::Normal, Effect::DiffReload { tab: v.tab, drafts })
            }
            diff_view::Outcome::SendReview { text, what } => {
                let tab = v.tab.clone();
                (Mode::Diff(v), Effect::SendReview { tab, text, what })
            }
            diff_view::Outcome::Send(text) => {
                let (tab, comments) = (v.tab.clone(), v.comments.clone());
                (
                    Mode::Diff(v),
                    Effect::SendComments {
                        tab,
                        text,
                        comments,
                    },
                )
            }
        },
    }
}

fn decide(w: &Waiting, approve: bool, session: bool) -> Effect {
    Effect::Decide {
        id: w.id.clone(),
        approve,
        session,
    }
}

pub fn render(mode: &Mode, prefix: &str, rows: u16, cols: u16) -> Vec<u8> {
    match mode {
        Mode::Normal => Vec::new(),
        Mode::Help { over: Some(_) } => {
            // Over the diff view: its own keys, which are what the person
            // is typing, and where the window's are.
            let mut lines = vec!["nerdr: the diff view's keys".to_string()];
            for (k, what) in diff_view::KEYS {
                lines.push(format!("  {k:<20} {what}"));
            }
            lines.push(String::new());
            lines.push(format!(
                "{prefix} then a key: the window's command (the view closes, its comments kept);"
            ));
            lines.push(format!(
                "  {prefix} ? over a tab lists them. {prefix} twice: the view's own page up."
            ));
            draw(&lines, " help | Any key closes this help.", rows, cols)
        }
        Mode::Help { over: None } => {
            // No blank line under the title: every binding and the whole
            // legend fit 80x24.
            let mut lines = vec![format!("nerdr: keys after the prefix ({prefix})")];
            for (k, what) in BINDINGS {
                lines.push(format!("  {k:<14} {what}"));
            }
            lines.push(String::new());
            lines.extend(status::LEGEND.iter().map(|l| l.to_string()));
            // On the bar: the page fills 80x24 to its last line.
            draw(&lines, " help | Any key closes this help.", rows, cols)
        }
        Mode::Approvals { items, sel } => {
            let mut lines = vec!["Approval queue".to_string(), String::new()];
            if items.is_empty() {
                lines.push("Nothing is waiting for your approval.".into());
            }
            // Every question whole (wrapped, never cut), and the selected
            // one in view: what `y` approves is what the person read.
            let mut selected_end = 0;
            for (i, w) in items.iter().enumerate() {
                let (id, q) = (&w.id, &w.question);
                let mark = if i == *sel { ">" } else { " " };
                let head = format!(" {mark} {id}  ");
                let width = (cols as usize).saturating_sub(head.chars().count()).max(10);
                let chars: Vec<char> = crate::protocol::printable(q).chars().collect();
                for (j, chunk) in chars.chunks(width).enumerate() {
                    let lead = if j == 0 {
                        head.clone()
                    } else {
                        " ".repeat(head.chars().count())
                    };
                    lines.push(format!("{lead}{}", chunk.iter().collect::<String>()));
                }
                if i == *sel {
                    selected_end = lines.len();
                }
            }
            let room = rows.saturating_sub(1) as usize;
            let skip = selected_end.saturating_sub(room);
            let lines = lines.split_off(skip);
            let keys = if items.get(*sel).is_some_and(|w| w.network) {
                " approvals | y once, s for this sandbox run, n denies, any other key closes"
            } else {
                " approvals | y approves, n denies, any other key closes"
            };
            draw(&lines, keys, rows, cols)
        }
        Mode::Confirm { question, .. } => draw(
            std::slice::from_ref(question),
            &format!(" {question}"),
            rows,
            cols,
        ),
        Mode::Picker {
            agents,
            sel,
            switching,
            ..
        } => {
            let title = match switching {
                Some(sw) => sw.title.as_str(),
                None => "Start an agent in a new tab:",
            };
            let mut lines = vec![title.to_string(), String::new()];
            for (i, a) in agents.iter().enumerate() {
                let mark = if i == *sel { ">" } else { " " };
                let missing = switching.as_ref().is_some_and(|sw| sw.missing.contains(a));
                let note = if missing { "  (not found on PATH)" } else { "" };
                lines.push(format!(" {mark} {}. {a}{note}", i + 1));
            }
            draw(
                &lines,
                " pick: up/down or a number selects, Enter starts, Esc cancels",
                rows,
                cols,
            )
        }
        Mode::Scroll(s) => draw(
            &s.visible(cols as usize),
            &format!(" {}", s.status()),
            rows,
            cols,
        ),
        Mode::Sessions { picker, at } => {
            let (lines, sel_line) = session_pick::lines(picker, at.sel, cols as usize);
            let lines = session_pick::in_view(lines, sel_line, rows.saturating_sub(1) as usize);
            draw(
                &lines,
                " sessions: up/down or a number selects, Enter switches, Esc cancels",
                rows,
                cols,
            )
        }
        // Drawn in place of the status line: see `Mode::status_line`.
        Mode::Rename { .. } => Vec::new(),
        Mode::Diff(v) => super::diff_draw::render(v, prefix, rows, cols),
    }
}

impl Mode {
    /// An overlay drawn over the status line alone, the pane staying in
    /// view: the line to draw there.
    pub fn status_line(&self) -> Option<String> {
        match self {
            Mode::Rename { prompt, .. } => Some(prompt.line()),
            _ => None,
        }
    }
}

/// A whole-window text page with a status line.
pub fn draw(lines: &[String], status: &str, rows: u16, cols: u16) -> Vec<u8> {
    let bar = [Span {
        text: crate::protocol::printable(status),
        look: Look::Bar,
    }];
    page(lines, &status::render(&bar, cols as usize), rows, cols)
}

/// A whole-window text page above `status`, the status line's bytes.
pub fn page(lines: &[String], status: &[u8], rows: u16, cols: u16) -> Vec<u8> {
    let mut out = b"\x1b[0m\x1b[H\x1b[2J\x1b[?25l".to_vec();
    for (i, l) in lines
        .iter()
        .take(rows.saturating_sub(1) as usize)
        .enumerate()
    {
        out.extend(format!("\x1b[{};1H", i + 1).as_bytes());
        let l = crate::protocol::printable(l);
        out.extend(status::fit(&l, cols as usize).trim_end().as_bytes());
    }
    out.extend(format!("\x1b[{rows};1H").as_bytes());
    out.extend_from_slice(status);
    out
}

#[cfg(test)]
#[path = "overlay_tests.rs"]
mod tests;
