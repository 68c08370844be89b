//! What a program's bytes may make the crate do, bounded before it sees
//! them. The core parses every tab's output under its state lock, so a
//! few bytes that cost much would freeze every tab; and a string that is
//! never ended would grow the core without bound. tmux 3.3a bounds both,
//! and this does what it does:
//!
//! - REP (`CSI n b`) repeats the character printed just before it (only
//!   ASCII, and only with nothing in between) at most to the end of the
//!   line, never wrapping. The crate would repeat any earlier character
//!   `n` times (65535 per 8 bytes), so every REP is taken from it: its
//!   final byte is withheld, the crate's half-read sequence is cancelled,
//!   and the repeats are fed as plain characters.
//! - An OSC (the only string the crate buffers: `osc_raw` grows without
//!   bound in its std build) longer than [`MAX_OSC`] is dropped whole, as
//!   tmux drops a string past its input buffer. The crate is given a new
//!   parser, which holds no buffer, and the rest of the string is not
//!   passed on. A long one that ended in time is passed on, and the parser
//!   is renewed after it all the same, so the buffer it grew is freed.
//!
//! DCS, SOS, PM and APC strings the crate does not keep, so they pass.
//!
//! The states mirror vte 0.15's parser closely enough to agree with it on
//! where every sequence and string starts and ends: every byte still goes
//! to the crate, in order, but for a REP's final byte and an over-long
//! OSC's body.

/// Longest OSC passed on, in bytes. What the core acts on is far shorter
/// (a title is cut to 4 KiB; all 256 colours of OSC 4 take about 6 KiB);
/// clipboard writes (OSC 52), the long kind, are ignored.
pub(super) const MAX_OSC: usize = 64 * 1024;

/// An OSC longer than this renews the crate's parser after it.
const KEEP_OSC: usize = 4096;

const CAN: u8 = 0x18;
const SUB: u8 = 0x1a;
const ESC: u8 = 0x1b;
const DEL: u8 = 0x7f;
const BEL: u8 = 0x07;

/// Most parameters a REP may have (tmux's limit); more and it is ignored.
const MAX_PARAMS: u32 = 24;

/// What to do with the crate, in order.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Piece<'a> {
    /// Feed these bytes.
    Bytes(&'a [u8]),
    /// Cancel the CSI the crate is reading (its final byte was withheld),
    /// then print `ch` `count` times (none: only the cancel), but no
    /// further than the line's end.
    Repeat { ch: u8, count: u16 },
    /// Replace the crate's parser by a new one (in the ground state).
    Renew,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum State {
    #[default]
    Ground,
    Escape,
    EscapeIntermediate,
    Csi(Csi),
    /// A CSI that will dispatch nothing.
    CsiIgnore,
    Osc {
        len: usize,
    },
    /// An OSC cut for its length: dropped until its end.
    OscDropped,
    DcsEntry,
    DcsParam,
    DcsIntermediate,
    DcsPassthrough,
    /// DCS ignored, SOS, PM, APC: until CAN, SUB or ESC.
    Ignored,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Csi {
    /// Whether any byte came after `CSI`.
    begun: bool,
    /// A private marker (`?`, `>`, ...) came first.
    private: bool,
    /// An intermediate came.
    intermediate: bool,
    /// The first parameter so far (saturating).
    first: u16,
    /// Parameters and sub-parameters begun after the first.
    more: u32,
}

/// The byte-level state kept across reads.
#[derive(Debug, Default)]
pub(super) struct Gate {
    state: State,
    /// What a REP would repeat: an ASCII character printed with nothing
    /// after it but DEL (as tmux's `ictx->last`).
    last: Option<u8>,
}

impl Gate {
    /// Pass `bytes` on to `out` as [`Piece`]s.
    pub fn feed<'a>(&mut self, bytes: &'a [u8], mut out: impl FnMut(Piece<'a>)) {
        // `from..i` is passed on unchanged at the next piece or the end.
        let mut from = 0;
        let mut i = 0;
        while i < bytes.len() {
            if self.state == State::Ground {
                let run = memchr::memchr(ESC, &bytes[i..]).unwrap_or(bytes.len() - i);
                if let Some(&b) = bytes[i..i + run].iter().rev().find(|&&b| b != DEL) {
                    self.last = (b' '..DEL).contains(&b).then_some(b);
                }
                i += run;
                if i < bytes.len() {
                    self.state = State::Escape;
                    i += 1;
                }
                continue;
            }
            let b = bytes[i];
            i += 1;
            match self.state {
                State::Osc { len } => {
                    if matches!(b, BEL | CAN | SUB | ESC) {
                        self.state = if b == ESC {
                            State::Escape
                        } else {
                            State::Ground
                        };
                        if len > KEEP_OSC {
                            out(Piece::Bytes(&bytes[from..i]));
                            out(Piece::Renew);
                            from = i;
                            if b == ESC {
                                out(Piece::Bytes(&[ESC]));
                            }
                        }
                    } else if len >= MAX_OSC {
                        out(Piece::Bytes(&bytes[from..i - 1]));
                        out(Piece::Renew);
                        from = i;
                        self.state = State::OscDropped;
                    } else {
                        self.state = State::Osc { len: len + 1 };
                    }
                }
                State::OscDropped => match b {
                    BEL => {
                        from = i;
                        self.state = State::Ground;
                    }
                    CAN | SUB | ESC => {
                        // Passed: CAN and SUB are executed, ESC begins
                        // what follows, as after any OSC.
                        from = i - 1;
                        self.state = if b == ESC {
                            State::Escape
                        } else {
                            State::Ground
                        };
                    }
                    _ => from = i,
                },
                State::Csi(csi) if b == b'b' && !csi.private && !csi.intermediate => {
                    out(Piece::Bytes(&bytes[from..i - 1]));
                    from = i;
                    let repeat = match (self.last.take(), csi.more < MAX_PARAMS) {
                        (Some(ch), true) => Piece::Repeat {
                            ch,
                            count: csi.first.max(1),
                        },
                        _ => Piece::Repeat { ch: b' ', count: 0 },
                    };
                    out(repeat);
                    self.state = State::Ground;
                }
                _ => self.step(b),
            }
        }
        if from < bytes.len() {
            out(Piece::Bytes(&bytes[from..]));
        }
    }

    /// One byte outside the ground state and OSC.
    fn step(&mut self, b: u8) {
        use State::*;
        let c0 = matches!(b, 0x00..=0x17 | 0x19 | 0x1c..=0x1f);
        self.state = match (self.state, b) {
            (_, CAN | SUB) => {
                self.last = None;
                Ground
            }
            (_, ESC) => Escape,
            (Escape | EscapeIntermediate | Csi(_) | CsiIgnore, _) if c0 => {
                // Executed, as tmux resets its last character.
                self.last = None;
                self.state
            }
            (Escape, 0x20..=0x2f) => EscapeIntermediate,
            (Escape, b'P') => {
                self.last = None;
                DcsEntry
            }
            (Escape, b'[') => Csi(self::Csi::default()),
            (Escape, b']') => {
                self.last = None;
                Osc { len: 0 }
            }
            (Escape, b'X' | b'^' | b'_') => {
                self.last = None;
                Ignored
            }
            (Escape, 0x30..=0x7e) | (EscapeIntermediate, 0x30..=0x7e) => {
                self.last = None;
                Ground
            }
            (EscapeIntermediate, 0x20..=0x2f) => EscapeIntermediate,
            // A parameter after an intermediate, or a private marker but
            // first, makes the sequence void.
            (Csi(csi), 0x30..=0x3f) if csi.intermediate => CsiIgnore,
            (Csi(csi), 0x3c..=0x3f) if csi.begun => CsiIgnore,
            (Csi(mut csi), 0x20..=0x3f) => {
                csi.begun = true;
                match b {
                    0x20..=0x2f => csi.intermediate = true,
                    b'0'..=b'9' if csi.more == 0 => {
                        csi.first = csi
                            .first
                            .saturating_mul(10)
                            .saturating_add(u16::from(b - b'0'));
                    }
                    b':' | b';' => csi.more = csi.more.saturating_add(1),
                    0x3c..=0x3f => csi.private = true,
                    _ => {}
                }
                Csi(csi)
            }
            (Csi(_), 0x40..=0x7e) => {
                self.last = None;
                Ground
            }
            (CsiIgnore, 0x40..=0x7e) => Ground,
            (DcsEntry | DcsParam, 0x20..=0x2f) | (DcsIntermediate, 0x20..=0x2f) => DcsIntermediate,
            (DcsEntry, 0x30..=0x3f) | (DcsParam, 0x30..=0x3b) => DcsParam,
            (DcsParam, 0x3c..=0x3f) | (DcsIntermediate, 0x30..=0x3f) => Ignored,
            (DcsEntry | DcsParam | DcsIntermediate, 0x40..=0x7e) => DcsPassthrough,
            (DcsPassthrough, 0x9c) => Ground,
            (state, _) => state,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pieces for `chunks` fed in turn, written out: bytes as they
    /// are, a repeat as `<c×n>`, a renewal as `<new>`.
    fn pieces(chunks: &[&[u8]]) -> String {
        let mut gate = Gate::default();
        let mut out = String::new();
        for chunk in chunks {
            gate.feed(chunk, |p| match p {
                Piece::Bytes(b) => out.push_str(&String::from_utf8_lossy(b)),
                Piece::Repeat { ch, count } => out.push_str(&format!("<{}×{count}>", ch as char)),
                Piece::Renew => out.push_str("<new>"),
            });
        }
        out
    }

    #[test]
    fn a_repeat_is_taken_from_the_crate_with_what_tmux_repeats() {
        let cases: &[(&[&[u8]], &str)] = &[
            (&[b"a\x1b[200b"], "a\x1b[200<a×200>"),
            (&[b"a\x1b[3b\x1b[3b"], "a\x1b[3<a×3>\x1b[3< ×0>"),
            (&[b"ab\x1b[3bc"], "ab\x1b[3<b×3>c"),
            (&[b"\x1b[3b"], "\x1b[3< ×0>"),
            (&[b"a\x7f\x1b[3b"], "a\x7f\x1b[3<a×3>"),
            (&[b"a\n\x1b[3b"], "a\n\x1b[3< ×0>"),
            (&["é\x1b[3b".as_bytes()], "é\x1b[3< ×0>"),
            (&[b"a\x1b[\n3b"], "a\x1b[\n3< ×0>"),
            (&[b"a\x1b[1m\x1b[3b"], "a\x1b[1m\x1b[3< ×0>"),
            (&[b"a\x1b[0b"], "a\x1b[0<a×1>"),
            (&[b"a\x1b[;3b"], "a\x1b[;3<a×1>"),
            (&[b"a\x1b[3;5b"], "a\x1b[3;5<a×3>"),
            (&[b"a\x1b[5:3b"], "a\x1b[5:3<a×5>"),
            (&[b"a\x1b[99999999b"], "a\x1b[99999999<a×65535>"),
            (&[b"a\x1b\x1b[2b"], "a\x1b\x1b[2<a×2>"),
            (&[b"a\x1b[6", b"5b"], "a\x1b[65<a×65>"),
            (&[b"a\x1b", b"[", b"2", b"b"], "a\x1b[2<a×2>"),
            // Not REP: passed on as they are.
            (&[b"a\x1b[?3b"], "a\x1b[?3b"),
            (&[b"a\x1b[1 b"], "a\x1b[1 b"),
            (&[b"a\x1b[1?b"], "a\x1b[1?b"),
            (&[b"a\x1bb"], "a\x1bb"),
            // Strings end where the crate ends them.
            (&[b"\x1b]0;t\x07a\x1b[2b"], "\x1b]0;t\x07a\x1b[2<a×2>"),
            (&[b"\x1bPq\x9ca\x1b[2b"], "\x1bPq\u{fffd}a\x1b[2<a×2>"),
            (&[b"\x1b_x\x1b\\a\x1b[2b"], "\x1b_x\x1b\\a\x1b[2<a×2>"),
            (&[b"\x1b]0;a\x1b[2b"], "\x1b]0;a\x1b[2< ×0>"),
        ];
        for (chunks, want) in cases {
            assert_eq!(pieces(chunks), *want, "{chunks:?}");
        }
    }

    #[test]
    fn an_osc_past_the_limit_is_dropped_whole() {
        let body = "x".repeat(MAX_OSC - 2);
        let over = format!("\x1b]0;{body}yyyy");
        for (end, after) in [("\x07", ""), ("\x1b\\", "\x1b\\"), ("\x18", "\x18")] {
            let input = format!("{over}{end}Z");
            let want = format!("\x1b]0;{body}<new>{after}Z");
            assert_eq!(pieces(&[input.as_bytes()]), want);
            // The same in small reads, the drop starting mid-read.
            let chunks: Vec<&[u8]> = input.as_bytes().chunks(1000).collect();
            assert_eq!(pieces(&chunks), want);
        }
    }

    #[test]
    fn a_long_osc_that_ends_in_time_renews_the_parser_after_it() {
        let body = "x".repeat(KEEP_OSC + 10);
        let input = format!("\x1b]0;{body}\x1b\\a\x1b]0;t\x07");
        let want = format!("\x1b]0;{body}\x1b<new>\x1b\\a\x1b]0;t\x07");
        assert_eq!(pieces(&[input.as_bytes()]), want);
    }

    #[test]
    fn an_endless_osc_passes_no_more_than_the_limit() {
        let mut gate = Gate::default();
        let mut passed = 0;
        gate.feed(b"\x1b]0;", |_| {});
        let chunk = vec![b'x'; 64 * 1024];
        for _ in 0..128 {
            gate.feed(&chunk, |p| {
                if let Piece::Bytes(b) = p {
                    passed += b.len();
                }
            });
        }
        assert!(passed <= MAX_OSC, "{passed} bytes of an 8 MiB OSC passed");
    }
}

#[cfg(test)]
mod against_vte {
    use super::*;
    use alacritty_terminal::vte::{Params, Parser, Perform};

    /// Counts the REPs the crate's parser would still dispatch.
    #[derive(Default)]
    struct Reps(usize);

    impl Perform for Reps {
        fn csi_dispatch(&mut self, _: &Params, inter: &[u8], ignore: bool, action: char) {
            if action == 'b' && inter.is_empty() && !ignore {
                self.0 += 1;
            }
        }
    }

    /// Random bytes from the alphabet that decides where sequences end,
    /// fed in random reads through the gate, then through vte as the
    /// emulator feeds it: vte must never see a REP.
    #[test]
    fn vte_never_sees_a_repeat_the_gate_let_through() {
        let alphabet: &[u8] =
            b"\x1b\x1b\x1b[[[]]P X^_\\bbbba1;:?> \x18\x1a\x07\x9c\x9b\x90\n\x7f\xc3\xa9\xe2";
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..20_000 {
            let len = (next() % 40) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            let mut gate = Gate::default();
            let mut parser = Parser::new();
            let mut reps = Reps::default();
            let mut at = 0;
            while at < bytes.len() {
                let end = (at + 1 + (next() % 6) as usize).min(bytes.len());
                gate.feed(&bytes[at..end], |p| match p {
                    Piece::Bytes(b) => parser.advance(&mut reps, b),
                    Piece::Repeat { ch, count } => {
                        parser.advance(&mut reps, b"\x18");
                        parser.advance(&mut reps, &vec![ch; usize::from(count.min(3))]);
                    }
                    Piece::Renew => parser = Parser::new(),
                });
                at = end;
            }
            assert_eq!(
                reps.0,
                0,
                "round {round}: {:?}",
                String::from_utf8_lossy(&bytes)
            );
        }
    }
}
