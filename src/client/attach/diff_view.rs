//! The diff view (prefix `g`): the shown tab's work as a patch, its files
//! and hunks, moved through with the keys of `less` and `tig`, and
//! comments put on its lines, sent to the tab's agent as one message.
//! With the tab's reviews by agents it is the review panel: each review's
//! summary on top, its comments under their lines (`super::review_rows`),
//! sent on to the agent with `s` (one) or `A` (all of a review), in the
//! words of `review::message`; `c` on a review comment is a question on
//! it, sent with the person's other comments.
//! Pure: keys in, what the window should do out; `super::diff_draw`
//! draws it.
//!
//! | key | does |
//! |---|---|
//! | Down/Up, `j`/`k` | the next/previous row |
//! | PageDown/PageUp, Space/`b`, Ctrl-F/Ctrl-B | a page |
//! | `g`/`G`, Home/End | the top/the end |
//! | `]`/`[` | the next/previous hunk |
//! | `}`/`{` | the next/previous file (Enter on the file list: that file) |
//! | `/` `?` then `n`/`N` | search forward/backward, again, the other way (wrapping) |
//! | `c` | a comment on the selected line (or its file) |
//! | `x` | drop the selected comment |
//! | `S` | send every comment to the tab's agent as one message (`y` confirms, as for `s` and `A`: stray typing never sends) |
//! | `>`/`<` | the next/previous review comment (the review panel) |
//! | `s` | send the selected review comment to the tab's agent |
//! | `A` | send every comment of the selected review as one message |
//! | `r` | ask for the diff and the reviews again (the agent went on working) |
//! | `q`, Escape | close (unsent comments stay for the next time, also after a detach: `super::drafts`) |
//! | the prefix, then a key | the window's command (`d` detach, `n` next tab...), the view closed, its comments kept (`super::typing`); the prefix twice: the view's `C-b` |
//!
//! Nothing is sent into a tab that runs a program rather than an agent
//! (`s`, `A`, `S`: `review::not_for_a_program`).

use super::comments::About;
use super::comments::{self, Comment, Edit, Typing};
use super::diff_rows::{self, Row, RowKind};
use super::review_rows::Reviews;
use crate::client::patch::{Kind, Patch};
use crate::review::Meant;

/// The view's own keys, as the help over it lists them (prefix `?`).
pub const KEYS: &[(&str, &str)] = &[
    ("j/k, Down/Up", "the next/previous row"),
    ("Space/b, PgDn/PgUp", "a page down/up"),
    ("g/G, Home/End", "the top/the end"),
    ("] / [", "the next/previous hunk"),
    (
        "} / {",
        "the next/previous file (Enter on the list: that file)",
    ),
    ("/ ?, n/N", "search forward/backward, again, the other way"),
    (
        "c",
        "comment on the selected line or file (a question on a review's)",
    ),
    ("x", "drop the selected comment"),
    ("S", "send every comment to the tab's agent (asks y first)"),
    ("> / <", "the next/previous review comment"),
    (
        "s",
        "send the selected review comment to the agent (asks y first)",
    ),
    (
        "A",
        "send all of the selected review's comments (asks y first)",
    ),
    ("r", "ask for the diff and the reviews again"),
    ("q, Esc", "close; unsent comments are kept for next time"),
];

#[derive(Debug)]
pub struct DiffView {
    /// The tab whose diff this is (its id).
    pub tab: String,
    title: Vec<String>,
    patch: Patch,
    pub comments: Vec<Comment>,
    pub reviews: Reviews,
    rows: Vec<Row>,
    /// The selected row.
    pub sel: usize,
    /// The first row shown.
    pub top: usize,
    /// Rows the terminal has for the page (the status line apart).
    pub height: usize,
    input: Option<Input>,
    search: Option<(String, bool)>,
    /// Said in the status line until the next key.
    pub note: String,
    /// The commit the diff starts from: what its comments were made on
    /// (`super::drafts`).
    pub made_on: String,
    /// A send asked for and not confirmed yet: the question, and what `y`
    /// does. Letters typed by mistake (after a refused `c`) must not send.
    confirm: Option<(String, Outcome)>,
}

#[derive(Debug)]
enum Input {
    Search {
        backward: bool,
        typing: Typing,
    },
    Comment {
        on: Comment,
        typing: Typing,
    },
    /// `c` on a row that takes no comment: what the person goes on typing
    /// (a comment, as they meant) is dropped at Enter or Esc, never taken
    /// as the view's keys (`S` then `y` of a word would send).
    Refused {
        typing: Typing,
    },
}

#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Stay,
    Close,
    /// Send this message (every comment) to the tab's agent.
    Send(String),
    /// Ask the core for the diff again, the comments kept.
    Reload,
    /// Send review comments to the tab's agent: the message, and what it
    /// is in the person's words (`review 1's comment 2`).
    SendReview {
        text: String,
        what: String,
    },
}

impl DiffView {
    /// A view of `patch`, with `title` above it (what was compared; or,
    /// alone, why there is nothing to show) and `comments` kept from
    /// before.
    pub fn new(
        tab: String,
        title: Vec<String>,
        patch: Patch,
        comments: Vec<Comment>,
        reviews: Reviews,
        height: usize,
    ) -> Self {
        let mut v = DiffView {
            tab,
            title,
            patch,
            comments,
            reviews,
            rows: Vec::new(),
            sel: 0,
            top: 0,
            height: height.max(1),
            input: None,
            search: None,
            note: String::new(),
            made_on: String::new(),
            confirm: None,
        };
        v.rebuild();
        // Open on the first file's header when there is one.
        if let Some(i) = v
            .rows
            .iter()
            .position(|r| matches!(r.kind, RowKind::File(_)))
        {
            v.select(i);
        }
        v
    }

    fn rebuild(&mut self) {
        self.rows = diff_rows::rows(&self.title, &self.patch, &self.comments, &self.reviews);
        self.sel = self.sel.min(self.rows.len().saturating_sub(1));
        self.follow();
    }

    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// The kind of line `k` of hunk `h` of file `f`.
    pub fn line_kind(&self, f: usize, h: usize, k: usize) -> Option<Kind> {
        Some(self.patch.files.get(f)?.hunks.get(h)?.lines.get(k)?.kind)
    }

    pub fn resize(&mut self, height: usize) {
        self.height = height.max(1);
        self.follow();
    }

    /// Keep the selected row in view.
    fn follow(&mut self) {
        if self.sel < self.top {
            self.top = self.sel;
        } else if self.sel >= self.top + self.height {
            self.top = self.sel + 1 - self.height;
        }
        self.top = self.top.min(self.max_top());
    }

    fn max_top(&self) -> usize {
        self.rows.len().saturating_sub(self.height)
    }

    fn select(&mut self, i: usize) {
        self.sel = i.min(self.rows.len().saturating_sub(1));
        self.follow();
    }

    /// Every key of `input` until one closes the view or sends: what it
    /// asked for, and the bytes taken (as `overlay::feed` gives them).
    #[cfg(test)]
    pub fn feed(&mut self, input: &[u8]) -> (Outcome, usize) {
        let mut used = 0;
        while used < input.len() {
            let n = super::keys::key_len(&input[used..]);
            let out = self.key(&input[used..used + n]);
            used += n;
            if out != Outcome::Stay {
                return (out, used);
            }
        }
        (Outcome::Stay, used)
    }

    /// One key; a send (`S`, `s`, `A`) asks `y` first.
    pub fn key(&mut self, key: &[u8]) -> Outcome {
        if let Some((_, send)) = self.confirm.take() {
            if matches!(key, b"y" | b"Y") {
                self.note.clear();
                return send;
            }
            self.note = "not sent".into();
            return Outcome::Stay;
        }
        match self.command(key) {
            out @ (Outcome::Send(_) | Outcome::SendReview { .. }) => {
                let what = match &out {
                    Outcome::SendReview { what, .. } => what.clone(),
                    _ => match self.comments.len() {
                        1 => "1 comment".into(),
                        n => format!("{n} comments"),
                    },
                };
                self.confirm = Some((format!("send {what} to the tab's agent? y/n"), out));
                Outcome::Stay
            }
            out => out,
        }
    }

    fn command(&mut self, key: &[u8]) -> Outcome {
        if self.input.is_some() {
            self.typed(key);
            return Outcome::Stay;
        }
        self.note.clear();
        let page = self.height.saturating_sub(1).max(1);
        let last = self.rows.len().saturating_sub(1);
        match key {
            b"q" | b"\x1b" | b"\x03" => return Outcome::Close,
            b"j" | b"\x1b[B" | b"\x1bOB" | b"\x0e" => self.select(self.sel + 1),
            b"k" | b"\x1b[A" | b"\x1bOA" | b"\x10" => self.select(self.sel.saturating_sub(1)),
            b"\x1b[6~" | b" " | b"f" | b"\x06" => {
                self.top = (self.top + page).min(self.max_top());
                self.select((self.sel + page).min(last));
            }
            b"\x1b[5~" | b"b" | b"\x02" => {
                self.top = self.top.saturating_sub(page);
                self.select(self.sel.saturating_sub(page));
            }
            b"g" | b"\x1b[H" | b"\x1bOH" | b"\x1b[1~" => self.select(0),
            b"G" | b"\x1b[F" | b"\x1bOF" | b"\x1b[4~" => self.select(last),
            b"]" => self.jump(true, |k| matches!(k, RowKind::Hunk(..)), "hunk"),
            b"[" => self.jump(false, |k| matches!(k, RowKind::Hunk(..)), "hunk"),
            b"}" => self.jump(true, |k| matches!(k, RowKind::File(_)), "file"),
            b"{" => self.jump(false, |k| matches!(k, RowKind::File(_)), "file"),
            b"\r" | b"\n" => match self.rows[self.sel].kind {
                RowKind::Entry(f) => {
                    if let Some(i) = self.rows.iter().position(|r| r.kind == RowKind::File(f)) {
                        // The file's header at the top, its hunks below.
                        self.top = i.min(self.max_top());
                        self.select(i);
                    }
                }
                _ => self.select(self.sel + 1),
            },
            b"/" | b"?" => {
                self.input = Some(Input::Search {
                    backward: key == b"?",
                    typing: Typing::default(),
                })
            }
            b"n" => self.find(false),
            b"N" => self.find(true),
            b">" => self.jump(true, |k| matches!(k, RowKind::Remark(..)), "review comment"),
            b"<" => self.jump(
                false,
                |k| matches!(k, RowKind::Remark(..)),
                "review comment",
            ),
            b"s" => return self.send_remark(),
            b"A" => return self.send_review(),
            b"c" => match self.anchor() {
                Some(on) => {
                    self.input = Some(Input::Comment {
                        on,
                        typing: Typing::default(),
                    })
                }
                None => {
                    self.input = Some(Input::Refused {
                        typing: Typing::default(),
                    })
                }
            },
            b"x" => match self.rows[self.sel].kind {
                RowKind::Comment(k) => {
                    self.comments.remove(k);
                    self.rebuild();
                    self.note = "comment dropped".into();
                }
                _ => self.note = "x drops a comment: select one first".into(),
            },
            b"S" if self.comments.is_empty() => {
                self.note = "no comments to send: c on a line writes one".into()
            }
            b"S" if self.refused(Meant::Comments) => {}
            b"S" => return Outcome::Send(comments::message(&self.comments)),
            b"r" => return Outcome::Reload,
            _ => {}
        }
        Outcome::Stay
    }

    /// Where `c` on the selected row puts a comment: its line, or, on a
    /// review comment, a question on it.
    fn anchor(&self) -> Option<Comment> {
        let RowKind::Remark(r, c) = self.rows[self.sel].kind else {
            return diff_rows::anchor(&self.patch, self.rows[self.sel].kind);
        };
        let (review, remark) = self.reviews.remark(r, c)?;
        let quote: String =
            crate::protocol::printable(&format!("{}: {}", remark.severity.as_str(), remark.text))
                .chars()
                .take(120)
                .collect();
        Some(Comment {
            path: remark.file.clone(),
            side: comments::Side::New,
            line: Some(remark.line),
            text: String::new(),
            about: Some(About {
                review: review.number,
                index: c,
                quote,
            }),
        })
    }

    /// Whether text `meant` for the agent may not be typed into the tab
    /// (it runs a program): the one check of `s`, `A` and `S`, saying why.
    fn refused(&mut self, meant: Meant) -> bool {
        match crate::review::not_for_a_program(&self.tab, self.reviews.program.as_deref(), meant) {
            Some(why) => {
                self.note = why;
                true
            }
            None => false,
        }
    }

    /// The review the selected row is about.
    fn selected_review(&self) -> Option<usize> {
        match self.rows[self.sel].kind {
            RowKind::ReviewHead(r) | RowKind::Remark(r, _) => Some(r),
            RowKind::ReviewNote(r) if r < self.reviews.done.len() => Some(r),
            _ => None,
        }
    }

    fn send_remark(&mut self) -> Outcome {
        if self.refused(Meant::Review) {
            return Outcome::Stay;
        }
        let RowKind::Remark(r, c) = self.rows[self.sel].kind else {
            self.note = "s sends a review comment: select one first (> goes to the next)".into();
            return Outcome::Stay;
        };
        let review = &self.reviews.done[r];
        match crate::review::message(review, Some(c + 1)) {
            Ok(text) => Outcome::SendReview {
                text,
                what: format!("review {}'s comment {}", review.number, c + 1),
            },
            Err(e) => {
                self.note = e;
                Outcome::Stay
            }
        }
    }

    fn send_review(&mut self) -> Outcome {
        if self.refused(Meant::Review) {
            return Outcome::Stay;
        }
        let Some(r) = self.selected_review() else {
            self.note =
                "A sends a review's comments: select the review or one of its comments first"
                    .into();
            return Outcome::Stay;
        };
        let review = &self.reviews.done[r];
        let n = review.comments.len();
        match crate::review::message(review, None) {
            Ok(text) => Outcome::SendReview {
                text,
                what: match n {
                    0 => format!("review {}'s summary", review.number),
                    1 => format!("review {}'s comment", review.number),
                    n => format!("review {}'s {n} comments", review.number),
                },
            },
            Err(e) => {
                self.note = e;
                Outcome::Stay
            }
        }
    }

    /// A key while a search or a comment is typed in the status line.
    fn typed(&mut self, key: &[u8]) {
        match self.input.take() {
            Some(Input::Search {
                backward,
                mut typing,
            }) => match typing.key(key) {
                Edit::Stay => self.input = Some(Input::Search { backward, typing }),
                Edit::Cancel => {}
                Edit::Done(text) => {
                    // An empty search repeats the last one, as in less.
                    if !text.is_empty() {
                        self.search = Some((text, backward));
                    }
                    self.find(false);
                }
            },
            Some(Input::Comment { on, mut typing }) => match typing.key(key) {
                Edit::Stay => self.input = Some(Input::Comment { on, typing }),
                Edit::Cancel => {}
                Edit::Done(text) if text.trim().is_empty() => {}
                Edit::Done(text) => {
                    let text = text.trim().to_string();
                    self.comments.push(Comment { text, ..on });
                    let k = self.comments.len() - 1;
                    self.rebuild();
                    // Select the new comment: it shows where it went.
                    if let Some(i) = self.rows.iter().position(|r| r.kind == RowKind::Comment(k)) {
                        self.select(i);
                    }
                    self.note = format!(
                        "{} comment{} kept: S sends {} to the agent",
                        self.comments.len(),
                        if self.comments.len() == 1 { "" } else { "s" },
                        if self.comments.len() == 1 {
                            "it"
                        } else {
                            "them"
                        }
                    );
                }
            },
            Some(Input::Refused { mut typing }) => match typing.key(key) {
                Edit::Stay => self.input = Some(Input::Refused { typing }),
                Edit::Cancel | Edit::Done(_) => {
                    self.note = "nothing kept: select a line of a file, its header or a review \
                                 comment, then c"
                        .into()
                }
            },
            None => {}
        }
    }

    /// The next (or previous) row of a kind, from the selected one.
    fn jump(&mut self, forward: bool, is: fn(RowKind) -> bool, what: &str) {
        let hit = if forward {
            (self.sel + 1..self.rows.len()).find(|&i| is(self.rows[i].kind))
        } else {
            (0..self.sel).rev().find(|&i| is(self.rows[i].kind))
        };
        match hit {
            Some(i) => {
                // A hunk or file shows from its header down.
                if forward {
                    self.top = i.min(self.max_top());
                }
                self.select(i);
            }
            None => self.note = format!("no {} {what}", if forward { "next" } else { "previous" }),
        }
    }

    /// The last search again, from the selected row, wrapping; `reverse`
    /// goes the other way (`N`).
    fn find(&mut self, reverse: bool) {
        let Some((text, backward)) = self.search.clone() else {
            self.note = "no search yet: / searches".into();
            return;
        };
        let n = self.rows.len();
        let back = backward != reverse;
        let hit = (1..=n)
            .map(|k| {
                if back {
                    (self.sel + n - k) % n
                } else {
                    (self.sel + k) % n
                }
            })
            .find(|&i| self.rows[i].text.contains(&text));
        match hit {
            Some(i) => {
                self.select(i);
                self.note = format!("found `{text}`");
            }
            None => self.note = format!("`{text}` not found"),
        }
    }

    /// The unsent comments, as drafts to keep.
    pub fn drafts(&self) -> Vec<super::drafts::Draft> {
        super::drafts::keep(&self.patch, &self.comments, &self.made_on)
    }

    /// The comments were sent: they are gone from the view.
    pub fn sent(&mut self, these: &[Comment]) {
        self.comments.retain(|c| !these.contains(c));
        self.rebuild();
    }

    /// What the status line says, at any width (the tests' reading).
    #[cfg(test)]
    pub fn status(&self) -> String {
        self.status_lines(usize::MAX / 2, "C-b").join(" ")
    }

    /// The status line at `width` columns, the last of the lines drawn
    /// at the bottom: a note too long for one line takes the lines above
    /// it, wrapped at words (`super::diff_status`).
    pub fn status_lines(&self, width: usize, prefix: &str) -> Vec<String> {
        match &self.input {
            Some(Input::Search { backward, typing }) => {
                vec![format!(
                    " {}{}_",
                    if *backward { '?' } else { '/' },
                    typing.text
                )]
            }
            Some(Input::Comment { on, typing }) => vec![format!(
                " {} {}: {}_   (Enter keeps it, Esc cancels)",
                if on.about.is_some() {
                    "question on the review comment at"
                } else {
                    "comment on"
                },
                on.place(),
                typing.text
            )],
            Some(Input::Refused { typing }) => vec![format!(
                " no comment on this row: {}_   (dropped at Enter or Esc)",
                typing.text
            )],
            None => {
                let n = self.rows.len();
                let at = format!(" diff {}/{n}", (self.sel + 1).min(n));
                let note = match &self.confirm {
                    Some((question, _)) => question.as_str(),
                    None => self.note.as_str(),
                };
                let hints = super::diff_status::hints(
                    self.comments.len(),
                    !self.reviews.done.is_empty(),
                    prefix,
                );
                super::diff_status::lines(&at, note, &hints, width)
            }
        }
    }
}

#[cfg(test)]
#[path = "diff_view_tests.rs"]
mod tests;
