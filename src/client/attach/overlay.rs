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
use super::session_pick::{self, Session};
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
    },
    Help,
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
    /// The sessions to switch to (prefix `s`).
    Sessions {
        sessions: Vec<Session>,
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
    /// Start the tab's program again.
    Restart(String),
    /// Type `text` into `tab` as one message: `comments`, which the diff
    /// view keeps until the core says they were typed.
    SendComments {
        tab: String,
        text: String,
        comments: Vec<Comment>,
    },
    /// The diff view of `tab` closed with `comments` not sent.
    DiffClosed {
        tab: String,
        comments: Vec<Comment>,
    },
    /// The same, to open again on a new diff of `tab`.
    DiffReload {
        tab: String,
        comments: Vec<Comment>,
    },
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
        (mode, effect) = key(mode, &keys[used..used + n]);
        used += n;
        if effect != Effect::None {
            return (mode, effect, used);
        }
    }
    (mode, Effect::None, used)
}

/// One key (see `key_len`) to an open overlay.
fn key(mode: Mode, key: &[u8]) -> (Mode, Effect) {
    match mode {
        Mode::Normal => (Mode::Normal, Effect::None),
        Mode::Help => (Mode::Normal, Effect::None),
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
        Mode::Picker { agents, sel, typed } => {
            match choose::key(Choosing { sel, typed }, agents.len(), key) {
                choose::Outcome::Stay(Choosing { sel, typed }) => {
                    (Mode::Picker { agents, sel, typed }, Effect::None)
                }
                choose::Outcome::Chose(i) => (Mode::Normal, Effect::Start(agents[i].clone())),
                choose::Outcome::Cancel => (Mode::Normal, Effect::None),
            }
        }
        Mode::Sessions { sessions, at } => match choose::key(at, sessions.len(), key) {
            choose::Outcome::Stay(at) => (Mode::Sessions { sessions, at }, Effect::None),
            // The session shown already: nothing to switch.
            choose::Outcome::Chose(i) if sessions[i].here => (Mode::Normal, Effect::None),
            choose::Outcome::Chose(i) => (Mode::Normal, Effect::Switch(sessions[i].folder.clone())),
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
                let DiffView { tab, comments, .. } = *v;
                (Mode::Normal, Effect::DiffClosed { tab, comments })
            }
            diff_view::Outcome::Reload => {
                let DiffView { tab, comments, .. } = *v;
                (Mode::Normal, Effect::DiffReload { tab, comments })
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
        Mode::Help => {
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
        Mode::Picker { agents, sel, .. } => {
            let mut lines = vec!["Start an agent in a new tab:".to_string(), String::new()];
            for (i, a) in agents.iter().enumerate() {
                let mark = if i == *sel { ">" } else { " " };
                lines.push(format!(" {mark} {}. {a}", i + 1));
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
        Mode::Sessions { sessions, at } => {
            let lines = session_pick::lines(sessions, at.sel);
            draw(
                &lines,
                " sessions: up/down or a number selects, Enter switches, Esc cancels",
                rows,
                cols,
            )
        }
        // Drawn in place of the status line: see `Mode::status_line`.
        Mode::Rename { .. } => Vec::new(),
        Mode::Diff(v) => super::diff_draw::render(v, rows, cols),
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
mod tests {
    use super::*;

    #[test]
    fn the_quit_question_counts_in_words() {
        for (n, want) in [
            (0, "quit: end this session (it has no tabs)? y/n"),
            (1, "quit: stop this session's only tab? y/n"),
            (2, "quit: stop all 2 tabs of this session? y/n"),
            (12, "quit: stop all 12 tabs of this session? y/n"),
        ] {
            assert_eq!(quit_question(n), want);
        }
    }

    #[test]
    fn the_help_names_the_jump_key_and_the_marks_on_80_by_24() {
        let bytes = render(&Mode::Help, "C-b", 24, 80);
        let mut p = vt100::Parser::new(24, 80, 0);
        p.process(&bytes);
        let text = p.screen().contents();
        for want in [
            "a or Alt-n",
            "next tab that needs you",
            "! blocked",
            "^ rang its bell",
            "g              this tab's diff",
            "<3 >5 tabs hidden left/right",
        ] {
            assert!(text.contains(want), "{want:?} missing:\n{text}");
        }
        assert!(text.contains("Any key closes this help."), "{text}");
    }

    fn picker() -> Mode {
        Mode::Picker {
            agents: agents(2),
            sel: 0,
            typed: String::new(),
        }
    }

    fn agents(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("a{i}")).collect()
    }

    /// The reads typed into a fresh picker of `n` agents: the last effect,
    /// the selected entry (None once closed), and the bytes left unused.
    fn typed(n: usize, reads: &[&[u8]]) -> (Effect, Option<usize>, Vec<u8>) {
        let mut m = Mode::Picker {
            agents: agents(n),
            sel: 0,
            typed: String::new(),
        };
        let (mut last, mut left) = (Effect::None, Vec::new());
        for read in reads {
            let used;
            (m, last, used) = feed(m, read);
            left = read[used..].to_vec();
        }
        let sel = match m {
            Mode::Picker { sel, .. } => Some(sel),
            _ => None,
        };
        (last, sel, left)
    }

    /// (agents, reads, effect, selected entry from 1 while open, bytes left)
    type Row<'a> = (usize, &'a [&'a [u8]], Effect, Option<usize>, &'a [u8]);

    #[test]
    fn picker_keys_in_one_read_or_many() {
        let start = |k: usize| Effect::Start(format!("a{k}"));
        let none = Effect::None;
        #[rustfmt::skip]
        let table: &[Row] = &[
            (2, &[b"\r"], start(1), None, b""),
            (3, &[b"\x1b[B\x1b[B"], none.clone(), Some(3), b""),
            (3, &[b"\x1b[B\x1b[B\r"], start(3), None, b""),
            (3, &[b"\x1bOB\x1bOB\r"], start(3), None, b""),
            (3, &[b"jjk\r"], start(2), None, b""),
            (3, &[b"\x1b[A\r"], start(3), None, b""),
            (3, &[b"\x1b[B", b"\x1b[B", b"\r"], start(3), None, b""),
            // A digit selects; only Enter starts, and takes the Enter.
            (3, &[b"2"], none.clone(), Some(2), b""),
            (3, &[b"2\r"], start(2), None, b""),
            (3, &[b"2", b"\r"], start(2), None, b""),
            (9, &[b"9\r"], start(9), None, b""),
            (3, &[b"9\r"], start(1), None, b""),
            (3, &[b"0"], none.clone(), Some(1), b""),
            // Two digits when a 10th entry exists; a number past the end
            // counts its last digit alone.
            (12, &[b"10\r"], start(10), None, b""),
            (12, &[b"1", b"2\r"], start(12), None, b""),
            (12, &[b"1\r"], start(1), None, b""),
            (12, &[b"15\r"], start(5), None, b""),
            // Keys after the closing key are not the picker's.
            (3, &[b"2\rhello"], start(2), None, b"hello"),
            (3, &[b"\x1bls"], none.clone(), None, b"ls"),
            (3, &[b"q"], none.clone(), None, b""),
            (3, &[b"\x03"], none.clone(), None, b""),
            (3, &[b"x\x1b[C\r"], start(1), None, b""),
        ];
        for (n, reads, effect, sel, left) in table {
            let got = typed(*n, reads);
            let want = (effect.clone(), sel.map(|s| s - 1), left.to_vec());
            assert_eq!(got, want, "{n} agents, {reads:?}");
        }
    }

    #[test]
    fn the_picker_hint_says_numbers_select_and_enter_starts() {
        let bytes = render(&picker(), "C-b", 10, 80);
        let mut p = vt100::Parser::new(10, 80, 0);
        p.process(&bytes);
        let text = p.screen().contents();
        assert!(text.contains("a number selects, Enter starts"), "{text}");
    }

    #[test]
    fn other_overlays_take_every_key_of_a_read() {
        let ask = || Mode::Confirm {
            question: "quit?".into(),
            yes: Effect::Quit,
        };
        let (m, e, used) = feed(ask(), b"zzy rest");
        assert!(matches!(m, Mode::Normal));
        assert_eq!((e, used), (Effect::Quit, 3));
        let (m, e, used) = feed(Mode::Help, b"xls");
        assert!(matches!(m, Mode::Normal));
        assert_eq!((e, used), (Effect::None, 1));
        let items = (0..3)
            .map(|i| Waiting {
                id: format!("w{i}"),
                question: "q".into(),
                network: false,
            })
            .collect();
        let (_, e, used) = feed(Mode::Approvals { items, sel: 0 }, b"\x1b[Bjn");
        let denied = Effect::Decide {
            id: "w2".into(),
            approve: false,
            session: false,
        };
        assert_eq!((e, used), (denied, 5));
        let lines = (1..=100).map(|i| format!("line {i}")).collect();
        let (m, _, used) = feed(Mode::Scroll(Scroll::new(lines, 10)), b"gjjqls");
        assert!(matches!(m, Mode::Normal));
        assert_eq!(used, 4);
    }

    #[test]
    fn confirm_rows() {
        let ask = || Mode::Confirm {
            question: "quit?".into(),
            yes: Effect::Quit,
        };
        assert_eq!(feed(ask(), b"y").1, Effect::Quit);
        assert_eq!(feed(ask(), b"n").1, Effect::None);
        assert!(matches!(feed(ask(), b"z").0, Mode::Confirm { .. }));
    }

    #[test]
    fn approvals_show_whole_escaped_questions_and_keep_the_selection_in_view() {
        let long = format!("run `{}` \x1b[2Knpm ci", "x".repeat(100));
        let items: Vec<Waiting> = (0..30)
            .map(|i| Waiting {
                id: format!("id{i:02}"),
                question: if i == 29 {
                    long.clone()
                } else {
                    format!("q{i}")
                },
                network: false,
            })
            .collect();
        let screen = |sel| {
            let bytes = render(
                &Mode::Approvals {
                    items: items.clone(),
                    sel,
                },
                "C-b",
                10,
                40,
            );
            let mut p = vt100::Parser::new(10, 40, 0);
            p.process(&bytes);
            p.screen().contents()
        };
        let last = screen(29);
        assert!(last.contains("> id29"), "{last}");
        // Wrapped over several lines, nothing cut, the escape shown as text.
        let text: String = last.lines().map(str::trim).collect();
        assert!(text.contains(&"x".repeat(100)), "{last}");
        assert!(text.contains("\\u{1b}[2Knpm ci"), "{last}");
        assert!(screen(0).contains("> id00"));
    }

    #[test]
    fn approval_keys_follow_the_table() {
        let item = |network| Waiting {
            id: "a1".into(),
            question: "q".into(),
            network,
        };
        let d = |approve, session| Effect::Decide {
            id: "a1".into(),
            approve,
            session,
        };
        // (network question, key, effect; None: the queue stays open)
        #[rustfmt::skip]
        let table: &[(bool, &[u8], Option<Effect>)] = &[
            (false, b"y", Some(d(true, false))),
            (false, b"n", Some(d(false, false))),
            (false, b"s", Some(Effect::None)),
            (true, b"y", Some(d(true, false))),
            (true, b"s", Some(d(true, true))),
            (true, b"S", Some(d(true, true))),
            (true, b"n", Some(d(false, false))),
            (true, b"j", None),
            (true, b"x", Some(Effect::None)),
        ];
        for (network, key, want) in table {
            let (mode, effect, _) = feed(
                Mode::Approvals {
                    items: vec![item(*network)],
                    sel: 0,
                },
                key,
            );
            match want {
                Some(e) => {
                    assert_eq!(&effect, e, "{network} {key:?}");
                    assert!(matches!(mode, Mode::Normal), "{network} {key:?}");
                }
                None => assert!(matches!(mode, Mode::Approvals { .. }), "{network} {key:?}"),
            }
        }
        let shown = |network| {
            let bytes = render(
                &Mode::Approvals {
                    items: vec![item(network)],
                    sel: 0,
                },
                "C-b",
                10,
                90,
            );
            let mut p = vt100::Parser::new(10, 90, 0);
            p.process(&bytes);
            p.screen().contents()
        };
        assert!(shown(true).contains("s for this sandbox run"));
        assert!(!shown(false).contains("s for this sandbox run"));
    }
}
