//! Comments the person puts on lines of a tab's diff (the diff view, see
//! `super::diff_view`), and the one message they become for the tab's
//! agent: each `file:line` and its text, one comment a line. Pure.
//!
//! A comment (or a search) is typed on one line: control characters (a newline among
//! them) are not taken, so each comment stays one line of the message and
//! nothing typed can press Enter or send an escape into the agent's
//! terminal. Text other than ASCII is taken whole, the bytes of a
//! character arriving one key at a time.

use serde::{Deserialize, Serialize};

/// Which side of the diff a comment's line number counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The file as the branch has it now (an added or a context line).
    New,
    /// The file before (a removed line): the line is gone from the branch.
    Old,
}

/// Kept as drafts (`super::drafts`): its fields are their file's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Comment {
    pub path: String,
    pub side: Side,
    /// None: on the file as a whole.
    pub line: Option<u32>,
    pub text: String,
    /// A question on a review comment (the review panel): which one.
    pub about: Option<About>,
}

/// The review comment a person's comment asks about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct About {
    /// The review's number in the tab's list.
    pub review: u32,
    /// The comment's index in the review (0-based).
    pub index: usize,
    /// What it says, one line, printable: quoted in the message.
    pub quote: String,
}

impl Comment {
    /// Where it points, as the message says it: `src/a.rs:12`,
    /// `src/a.rs:12 (a removed line)`, `src/a.rs`.
    pub fn place(&self) -> String {
        let path = crate::protocol::printable(&self.path);
        match (self.line, self.side) {
            (None, _) => path,
            (Some(n), Side::New) => format!("{path}:{n}"),
            (Some(n), Side::Old) => format!("{path}:{n} (a removed line)"),
        }
    }
}

/// The message for the agent: a line saying what follows, then each
/// comment as `file:line: text`.
pub fn message(comments: &[Comment]) -> String {
    let mut lines = vec![format!(
        "{} on your changes (file:line: comment):",
        if comments.len() == 1 {
            "A comment".to_string()
        } else {
            format!("{} comments", comments.len())
        }
    )];
    for c in comments {
        match &c.about {
            None => lines.push(format!("{}: {}", c.place(), c.text)),
            Some(a) => lines.push(format!(
                "{}: a question on review {}'s comment {} (\"{}\"): {}",
                c.place(),
                a.review,
                a.index + 1,
                a.quote,
                c.text
            )),
        }
    }
    lines.join("\n")
}

/// The longest comment taken, in characters: a comment is a line, and the
/// whole message must fit an agent's input box.
pub const MAX: usize = 500;

/// A comment being typed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Typing {
    pub text: String,
    /// The first bytes of a character not complete yet.
    partial: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    Stay,
    /// Enter: the text typed.
    Done(String),
    Cancel,
}

impl Typing {
    /// One key (see `super::keys::key_len`).
    pub fn key(&mut self, key: &[u8]) -> Edit {
        match key {
            b"\r" | b"\n" => return Edit::Done(self.text.clone()),
            b"\x1b" | b"\x03" | b"\x07" => return Edit::Cancel,
            b"\x7f" | b"\x08" => {
                self.partial.clear();
                self.text.pop();
            }
            b"\x15" => {
                self.partial.clear();
                self.text.clear();
            }
            [c @ 0x20..=0x7e] => self.push(char::from(*c)),
            [b @ 0x80..=0xff] => {
                self.partial.push(*b);
                match std::str::from_utf8(&self.partial) {
                    Ok(s) => {
                        let s = s.to_string();
                        self.partial.clear();
                        for c in s.chars() {
                            self.push(c);
                        }
                    }
                    // Not a character's start, or too long to be one.
                    Err(e) if e.error_len().is_some() || self.partial.len() >= 4 => {
                        self.partial.clear()
                    }
                    Err(_) => {}
                }
            }
            // Other control keys and escape sequences (arrows): nothing.
            _ => {}
        }
        Edit::Stay
    }

    fn push(&mut self, c: char) {
        if !c.is_control() && self.text.chars().count() < MAX {
            self.text.push(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(path: &str, side: Side, line: Option<u32>, text: &str) -> Comment {
        Comment {
            path: path.into(),
            side,
            line,
            text: text.into(),
            about: None,
        }
    }

    #[test]
    fn the_message_names_each_file_and_line() {
        let one = message(&[c("src/a.rs", Side::New, Some(12), "rename this")]);
        assert_eq!(
            one,
            "A comment on your changes (file:line: comment):\nsrc/a.rs:12: rename this"
        );
        let three = message(&[
            c("src/a.rs", Side::New, Some(12), "rename this"),
            c("old.txt", Side::Old, Some(3), "why did this go?"),
            c("logo.png", Side::New, None, "too big"),
        ]);
        assert_eq!(
            three,
            "3 comments on your changes (file:line: comment):\n\
             src/a.rs:12: rename this\n\
             old.txt:3 (a removed line): why did this go?\n\
             logo.png: too big"
        );
        // A question from the review panel quotes the comment it is on.
        let mut q = c("src/a.rs", Side::New, Some(3), "is it?");
        q.about = Some(About {
            review: 2,
            index: 0,
            quote: "warning: unwrap".into(),
        });
        assert_eq!(
            message(&[q]),
            "A comment on your changes (file:line: comment):\n\
             src/a.rs:3: a question on review 2's comment 1 (\"warning: unwrap\"): is it?"
        );
        // A path with a control character cannot end the line.
        assert_eq!(c("a\nb", Side::New, Some(1), "x").place(), "a\\nb:1",);
    }

    /// (keys, one per entry; the last key's result; the text after)
    #[test]
    fn typing_a_comment() {
        #[rustfmt::skip]
        let rows: &[(&[&[u8]], Edit, &str)] = &[
            (&[b"o", b"k"], Edit::Stay, "ok"),
            (&[b" ", b"o", b"k", b" ", b"\r"], Edit::Done(" ok ".into()), " ok "),
            (&[b"a", b"\x7f", b"b"], Edit::Stay, "b"),
            (&[b"a", b"b", b"\x15"], Edit::Stay, ""),
            (&[b"a", b"\x1b"], Edit::Cancel, "a"),
            (&[b"a", b"\x03"], Edit::Cancel, "a"),
            // é and 日 arrive a byte at a time.
            (&[b"\xc3", b"\xa9", b"\xe6", b"\x97", b"\xa5"], Edit::Stay, "é日"),
            // A stray continuation byte, an arrow, a tab: nothing.
            (&[b"\xa9", b"x", b"\x1b[D", b"\t", b"\x01"], Edit::Stay, "x"),
        ];
        for (keys, last, text) in rows {
            let mut t = Typing::default();
            let mut got = Edit::Stay;
            for k in *keys {
                got = t.key(k);
            }
            assert_eq!((&got, t.text.as_str()), (last, *text), "{keys:?}");
        }
        let mut t = Typing::default();
        for _ in 0..MAX + 10 {
            t.key(b"x");
        }
        assert_eq!(t.text.chars().count(), MAX);
    }
}
