//! Choosing one entry of a numbered list with the keyboard, as both
//! pickers do (agents for a new tab, sessions to switch to): up/down or
//! k/j move, a number selects, Enter chooses, Escape, `q` or Ctrl-C
//! cancels. Pure: one key in, what it did out.
//!
//! A number selects and never chooses: the Enter typed after it is the
//! picker's, not the new agent's (or the other session's tab's).

/// Where a list stands: the selected entry and the digits typed so far
/// ("1" waits for a second digit while a 10th entry exists).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Choosing {
    pub sel: usize,
    pub typed: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Stay(Choosing),
    /// Enter on entry `.0` (from 0).
    Chose(usize),
    Cancel,
}

/// One key (see `super::keys::key_len`) to a list of `n` entries.
pub fn key(c: Choosing, n: usize, key: &[u8]) -> Outcome {
    if matches!(key, b"\x1b" | b"q" | b"\x03") {
        return Outcome::Cancel;
    }
    match key {
        b"\r" | b"\n" if c.sel < n => Outcome::Chose(c.sel),
        b"\r" | b"\n" => Outcome::Cancel,
        [d @ b'0'..=b'9'] => {
            // The digits typed so far and this one, else this one alone
            // (12 entries: `1` `2` is 12, `1` `5` is 5).
            let pick = |t: String| match t.parse::<usize>() {
                Ok(k) if (1..=n).contains(&k) => Some((k, t)),
                _ => None,
            };
            let digit = char::from(*d).to_string();
            Outcome::Stay(
                match pick(format!("{}{digit}", c.typed)).or_else(|| pick(digit)) {
                    Some((k, typed)) => Choosing { sel: k - 1, typed },
                    None => Choosing {
                        sel: c.sel,
                        typed: String::new(),
                    },
                },
            )
        }
        // Up/down move; any other key leaves the list as it is.
        _ => Outcome::Stay(Choosing {
            sel: moved(key, c.sel, n.max(1)).unwrap_or(c.sel),
            typed: String::new(),
        }),
    }
}

/// Up/down (arrows in either cursor mode, or k/j) in a list of `n`,
/// wrapping; None for other keys.
pub fn moved(keys: &[u8], sel: usize, n: usize) -> Option<usize> {
    match keys {
        b"\x1b[A" | b"\x1bOA" | b"k" => Some((sel + n - 1) % n),
        b"\x1b[B" | b"\x1bOB" | b"j" => Some((sel + 1) % n),
        _ => None,
    }
}
