//! The one-line prompt that takes a word from the person in place of the
//! status line (prefix `,`: the shown tab's new name, as tmux's
//! rename-window asks). Pure: one key in, the edited line out.
//!
//! Only printable ASCII is typed in: a tab name is a plain word, and the
//! core says what is wrong with one it refuses; a control key or an
//! escape sequence (an arrow) edits nothing rather than landing in the
//! name.

/// The longest line taken: longer than any name the core takes, so the
/// core's refusal says what the limit is.
const MAX: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    /// What is asked, shown before the text.
    pub label: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Stay(Prompt),
    /// Enter: the text typed.
    Done(String),
    Cancel,
}

impl Prompt {
    pub fn new(label: String) -> Self {
        Prompt {
            label,
            text: String::new(),
        }
    }

    /// One key (see `super::keys::key_len`).
    pub fn key(mut self, key: &[u8]) -> Outcome {
        match key {
            b"\r" | b"\n" => return Outcome::Done(self.text),
            b"\x1b" | b"\x03" | b"\x07" => return Outcome::Cancel,
            // Backspace (DEL or BS) and Ctrl-U, as in a shell.
            b"\x7f" | b"\x08" => {
                self.text.pop();
            }
            b"\x15" => self.text.clear(),
            [c @ 0x20..=0x7e] if self.text.len() < MAX => self.text.push(char::from(*c)),
            _ => {}
        }
        Outcome::Stay(self)
    }

    /// The line as drawn: the label, the text and a cursor mark.
    pub fn line(&self) -> String {
        format!(
            " {}: {}_   (Enter renames, Esc cancels)",
            self.label, self.text
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (keys, one per entry, the outcome of the last)
    #[test]
    fn editing_keys() {
        let stay = |t: &str| {
            Outcome::Stay(Prompt {
                label: "l".into(),
                text: t.into(),
            })
        };
        #[rustfmt::skip]
        let rows: &[(&[&[u8]], Outcome)] = &[
            (&[b"a", b"b"], stay("ab")),
            (&[b"a", b"b", b"\r"], Outcome::Done("ab".into())),
            (&[b"\r"], Outcome::Done(String::new())),
            (&[b"a", b"b", b"\x7f"], stay("a")),
            (&[b"a", b"\x08", b"\x08"], stay("")),
            (&[b"a", b"b", b"\x15", b"c"], stay("c")),
            (&[b"a", b"\x1b"], Outcome::Cancel),
            (&[b"a", b"\x03"], Outcome::Cancel),
            // An arrow or a control key edits nothing.
            (&[b"a", b"\x1b[D", b"\x01", b"\t"], stay("a")),
            (&[b"x", "é".as_bytes()], stay("x")),
        ];
        for (keys, want) in rows {
            let mut p = Prompt::new("l".into());
            let mut last = Outcome::Stay(p.clone());
            for k in *keys {
                last = p.clone().key(k);
                if let Outcome::Stay(next) = &last {
                    p = next.clone();
                }
            }
            assert_eq!(&last, want, "{keys:?}");
        }
        let mut p = Prompt::new("l".into());
        for _ in 0..100 {
            if let Outcome::Stay(next) = p.clone().key(b"x") {
                p = next;
            }
        }
        assert_eq!(p.text.len(), MAX);
    }
}
