//! A scanner over a tab's raw output for the signals an agent writes
//! between the characters: codex's state sequence OSC 7501
//! (`ESC ] 7501 ; state=working:app=codex ESC \`, or BEL-terminated) and
//! the bell (a BEL that does not end an OSC string). Titles are not
//! scanned here: the screen model keeps them (`ScreenView::title`).
//!
//! Hand-written rather than `vte`: this runs on every byte of every tab
//! under the core's state lock, and almost all output is text. In the
//! ground state one `memchr2` jumps to the next ESC or BEL, so text costs
//! a vectorised search and nothing else, where `vte` would decode and
//! dispatch each character. Only what the two signals need is modelled,
//! with `vte`'s rules for it: ESC anywhere starts a new sequence (and so
//! ends a string), CAN and SUB abort one, BEL ends an OSC string (it is no
//! bell there) and is ignored inside DCS, SOS, PM and APC strings. A
//! sequence split across reads resumes where it stopped; no allocation:
//! an OSC payload is kept only while it can still be 7501's, in a fixed
//! buffer.

use memchr::memchr2;

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;
const CAN: u8 = 0x18;
const SUB: u8 = 0x1a;
const PREFIX: &[u8] = b"7501;";
/// Longer payloads are not a state sequence (codex's longest is about 45
/// bytes).
const PAYLOAD_MAX: usize = 120;

/// A state codex reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OscState {
    Working,
    Blocked,
    Done,
    Idle,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal<'a> {
    Bell,
    /// An OSC 7501 with a known `state=`; `payload` is its text after
    /// `7501;` (for `nerdr explain`).
    State {
        state: OscState,
        payload: &'a str,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Mode {
    #[default]
    Ground,
    /// After ESC.
    Esc,
    /// After ESC and intermediates (`ESC ( B`): the next final byte ends it.
    EscIntermediate,
    Osc,
    /// DCS, SOS, PM or APC: a string that only ST (ESC \) ends.
    OtherString,
}

#[derive(Debug, Clone)]
pub struct Scanner {
    mode: Mode,
    /// The OSC payload so far, while it may be 7501's.
    buf: [u8; PAYLOAD_MAX],
    len: usize,
    candidate: bool,
}

impl Default for Scanner {
    fn default() -> Self {
        Scanner {
            mode: Mode::Ground,
            buf: [0; PAYLOAD_MAX],
            len: 0,
            candidate: false,
        }
    }
}

impl Scanner {
    pub fn feed(&mut self, bytes: &[u8], mut on: impl FnMut(Signal<'_>)) {
        let mut i = 0;
        while i < bytes.len() {
            match self.mode {
                Mode::Ground => match memchr2(ESC, BEL, &bytes[i..]) {
                    None => return,
                    Some(at) => {
                        i += at;
                        if bytes[i] == BEL {
                            on(Signal::Bell);
                        } else {
                            self.mode = Mode::Esc;
                        }
                        i += 1;
                    }
                },
                Mode::Esc => {
                    let b = bytes[i];
                    i += 1;
                    self.mode = match b {
                        b']' => {
                            self.len = 0;
                            self.candidate = true;
                            Mode::Osc
                        }
                        b'P' | b'X' | b'^' | b'_' => Mode::OtherString,
                        ESC => Mode::Esc,
                        0x20..=0x2f => Mode::EscIntermediate,
                        BEL => {
                            on(Signal::Bell);
                            Mode::Esc
                        }
                        CAN | SUB => Mode::Ground,
                        // Other C0 controls execute without ending the
                        // sequence.
                        0x00..=0x1f => Mode::Esc,
                        // A final byte (or `[`: a CSI, whose parameters
                        // hold no ESC or BEL, so the ground scan is exact).
                        _ => Mode::Ground,
                    };
                }
                Mode::EscIntermediate => {
                    let b = bytes[i];
                    i += 1;
                    self.mode = match b {
                        ESC => Mode::Esc,
                        BEL => {
                            on(Signal::Bell);
                            Mode::EscIntermediate
                        }
                        CAN | SUB => Mode::Ground,
                        0x00..=0x2f => Mode::EscIntermediate,
                        _ => Mode::Ground,
                    };
                }
                Mode::Osc => {
                    let rest = &bytes[i..];
                    let end = rest
                        .iter()
                        .position(|&b| matches!(b, ESC | BEL | CAN | SUB))
                        .unwrap_or(rest.len());
                    if self.candidate {
                        self.take(&rest[..end]);
                    }
                    i += end;
                    if end == rest.len() {
                        return;
                    }
                    let b = bytes[i];
                    i += 1;
                    match b {
                        // ESC ends the string; ESC \ is its terminator and
                        // the `\` then ends the escape like any final byte.
                        ESC => {
                            self.finish_osc(&mut on);
                            self.mode = Mode::Esc;
                        }
                        BEL => {
                            self.finish_osc(&mut on);
                            self.mode = Mode::Ground;
                        }
                        _ => self.mode = Mode::Ground,
                    }
                }
                Mode::OtherString => {
                    let rest = &bytes[i..];
                    match rest.iter().position(|&b| matches!(b, ESC | CAN | SUB)) {
                        None => return,
                        Some(at) => {
                            i += at + 1;
                            self.mode = if rest[at] == ESC {
                                Mode::Esc
                            } else {
                                Mode::Ground
                            };
                        }
                    }
                }
            }
        }
    }

    /// Keep OSC payload bytes while they can still be a 7501 sequence.
    fn take(&mut self, part: &[u8]) {
        for &b in part {
            if self.len >= PAYLOAD_MAX || (self.len < PREFIX.len() && b != PREFIX[self.len]) {
                self.candidate = false;
                return;
            }
            self.buf[self.len] = b;
            self.len += 1;
        }
    }

    fn finish_osc(&mut self, on: &mut impl FnMut(Signal<'_>)) {
        if !self.candidate || self.len < PREFIX.len() {
            return;
        }
        self.candidate = false;
        let Ok(payload) = std::str::from_utf8(&self.buf[PREFIX.len()..self.len]) else {
            return;
        };
        if let Some(state) = parse_state(payload) {
            on(Signal::State { state, payload });
        }
    }
}

/// The `state=` field of a 7501 payload (`key=value` fields joined by `:`).
pub fn parse_state(payload: &str) -> Option<OscState> {
    let value = payload
        .split(':')
        .find_map(|field| field.strip_prefix("state="))?;
    match value {
        "working" => Some(OscState::Working),
        "blocked" => Some(OscState::Blocked),
        "done" => Some(OscState::Done),
        "idle" => Some(OscState::Idle),
        _ => None,
    }
}

#[cfg(test)]
#[path = "signals_tests.rs"]
mod tests;
