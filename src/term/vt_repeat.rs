//! REP (`CSI Ps b`) as tmux 3.3a makes it: the character printed just
//! before is written `Ps` more times, up to the line's end, and only when
//! nothing but that character came between (ECMA-48: "the preceding
//! graphic character"). A REP after a control, another sequence or a REP
//! writes nothing; vttest 11.7.2 checks that `+ CSI 0 b CSI 10 b` makes
//! two `+`, not twelve.
//!
//! The crate repeats the last character it printed however long ago,
//! across lines, and calls its `input` once per repeat (so `CSI 65535 b`
//! costs 65535 writes). The sequence is found here in the bytes, and the
//! crate's writes during it are counted down by the `Hooked` layer: past
//! the budget, each is dropped before it reaches the grid.

use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::term::Term;

use super::emulator::Events;

const ESC: u8 = 0x1b;

/// Bytes kept from one feed to the next, to see what came just before a
/// REP at the start of the next (a CSI's parameters are short; a longer
/// one is taken for a character printed).
const CONTEXT: usize = 32;

/// A REP in the bytes being fed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Rep {
    /// Index of its final byte (`b`) in the bytes.
    pub at: usize,
    /// How many times it asks (its parameter; 0 or none is 1).
    pub count: usize,
    /// Whether a printed character came just before it.
    pub after_print: bool,
}

impl Rep {
    /// How many characters the crate may write for this REP, with the
    /// cursor where it is now: none after anything but a printed
    /// character, and never past the line's end (as tmux; a pending wrap
    /// leaves no room).
    pub fn budget(&self, term: &Term<Events>) -> usize {
        if !self.after_print {
            return 0;
        }
        let cursor = &term.grid().cursor;
        let room = if cursor.input_needs_wrap {
            0
        } else {
            term.columns().saturating_sub(cursor.point.column.0)
        };
        self.count.min(room)
    }
}

/// Finds REPs across feeds.
#[derive(Default)]
pub(super) struct Repeats {
    /// The last bytes fed before.
    tail: Vec<u8>,
}

impl Repeats {
    /// The REPs whose final byte is in `bytes`, in order.
    pub fn find(&mut self, bytes: &[u8]) -> Vec<Rep> {
        let mut reps = Vec::new();
        let held = self.tail.len();
        let at = |i: isize| -> Option<u8> {
            if i < 0 {
                let k = held as isize + i;
                (k >= 0).then(|| self.tail[k as usize])
            } else {
                bytes.get(i as usize).copied()
            }
        };
        for i in memchr::memchr_iter(b'b', bytes) {
            // Back over the parameters to `ESC [`.
            let mut k = i as isize - 1;
            while at(k).is_some_and(|b| b.is_ascii_digit() || b == b';' || b == b':') {
                k -= 1;
            }
            if at(k) != Some(b'[') || at(k - 1) != Some(ESC) {
                continue;
            }
            let params = &bytes[(k + 1).max(0) as usize..i];
            // Parameters cut across feeds: the part before is in `tail`.
            let mut first = Vec::new();
            if k + 1 < 0 {
                first.extend_from_slice(&self.tail[(held as isize + k + 1) as usize..]);
            }
            first.extend_from_slice(params);
            let count = first
                .split(|&b| b == b';' || b == b':')
                .next()
                .and_then(|p| std::str::from_utf8(p).ok()?.parse::<usize>().ok())
                .filter(|&n| n > 0)
                .unwrap_or(1);
            reps.push(Rep {
                at: i,
                count,
                after_print: printed_at(&at, k - 2),
            });
        }
        let keep = bytes.len().min(CONTEXT);
        if keep < CONTEXT {
            let from = (self.tail.len() + keep).saturating_sub(CONTEXT);
            self.tail.drain(..from);
        } else {
            self.tail.clear();
        }
        self.tail.extend_from_slice(&bytes[bytes.len() - keep..]);
        reps
    }
}

/// Whether the byte at `p` is the last of a printed character, not a
/// control or the end of an escape sequence (as far as `at` reaches).
fn printed_at(at: &dyn Fn(isize) -> Option<u8>, p: isize) -> bool {
    let Some(b) = at(p) else {
        return false;
    };
    if b >= 0x80 {
        // UTF-8 (the crate reads no C1 controls in it).
        return true;
    }
    if !(0x20..0x7f).contains(&b) {
        return false;
    }
    // `ESC [ <0x20..=0x3f>* b`: a CSI's final or one in the making.
    let mut k = p - 1;
    while at(k).is_some_and(|c| (0x20..=0x3f).contains(&c)) {
        k -= 1;
    }
    if at(k) == Some(b'[') && at(k - 1) == Some(ESC) {
        return false;
    }
    // `ESC <0x20..=0x2f>* b`: an escape sequence's final (ESC 7, ESC ( B).
    let mut k = p - 1;
    while at(k).is_some_and(|c| (0x20..=0x2f).contains(&c)) {
        k -= 1;
    }
    at(k) != Some(ESC)
}

#[cfg(test)]
mod tests {
    use crate::term::Screen;

    fn text(cols: u16, bytes: &[u8]) -> String {
        let mut s = Screen::new(4, cols);
        s.process(bytes);
        s.text(None)
    }

    #[test]
    fn rep_repeats_only_a_character_printed_just_before() {
        let table: &[(&[u8], &str)] = &[
            (b"+\x1b[3b", "++++"),
            // A zero or missing count is one.
            (b"+\x1b[0b", "++"),
            (b"+\x1b[b", "++"),
            // vttest 11.7.2: a REP after a REP writes nothing.
            (b"+\x1b[0b\x1b[10b", "++"),
            (b" \x1b[2b+\x1b[1b\x1b[10b", "   ++"),
            // After a control or another sequence, nothing.
            (b"+\r\x1b[3b", "+"),
            (b"+\x1b[31m\x1b[3b", "+"),
            (b"+\x1b(B\x1b[3b", "+"),
            (b"\x1b[3b", ""),
            // A wide or combined character: the crate's last character.
            ("é\x1b[2b".as_bytes(), "ééé"),
            // Not past the line's end; none at a pending wrap.
            (b"abcdefgh\x1b[5b", "abcdefghhh"),
            (b"abcdefghij\x1b[5bk", "abcdefghij\nk"),
            // Other finals and private markers are not REP.
            (b"+\x1b[?3b", "+"),
        ];
        for (bytes, want) in table {
            assert_eq!(
                text(10, bytes),
                *want,
                "{:?}",
                String::from_utf8_lossy(bytes)
            );
        }
    }

    #[test]
    fn a_rep_cut_across_feeds_is_found() {
        for cut in 1..8 {
            let bytes = b"ab+\x1b[12b\x1b[3b";
            let mut s = Screen::new(2, 40);
            s.process(&bytes[..cut]);
            s.process(&bytes[cut..]);
            assert_eq!(
                s.text(None),
                format!("ab{}", "+".repeat(13)),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn rep_costs_at_most_a_line() {
        let mut bytes = b"a".to_vec();
        bytes.extend(std::iter::repeat_n(&b"\x1b[65535b"[..], 200).flatten());
        let mut s = Screen::new(5, 20);
        s.process(&bytes);
        assert_eq!(s.text(None), "a".repeat(20));
    }
}
