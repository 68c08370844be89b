//! What the holder keeps of a program's screen: the last snapshot a core
//! handed it, and the raw output after it. `redraw()` (snapshot, then the
//! output after it) rebuilds the screen exactly on a fresh
//! `term::Screen::new(rows, cols)`, so a restarted, crashed or upgraded core
//! gets every screen back while the holder does not parse what it forwards.
//!
//! The holder parses only here, and only in two rare cases:
//! - **compaction**: while no core takes snapshots, output piles up; past
//!   [`COMPACT_AT`] bytes the replay is run through a `term::Screen` once
//!   and replaced by its snapshot, so memory stays bounded;
//! - a redraw asked for after a resize that no core snapshot followed (the
//!   core died between the two): the bytes before the resize must be
//!   replayed at the old size, so the screen is rebuilt and resized here.
//!
//! Offsets count the program's output bytes since the holder took it (or
//! since a hand-over): `base` is where the snapshot was taken, `offset()`
//! where the output ends. A core names the offset its snapshot was taken
//! at, so the output it had not yet seen stays in the tail.

use crate::term::Screen;

/// Output kept after the snapshot beyond which the holder compacts.
pub const COMPACT_AT: usize = 1 << 20;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replay {
    /// The terminal's size now.
    rows: u16,
    cols: u16,
    /// The size the snapshot rebuilds at.
    snap_rows: u16,
    snap_cols: u16,
    snapshot: Vec<u8>,
    base: u64,
    tail: Vec<u8>,
    /// Resizes since the snapshot, each at the offset it came at: the
    /// output before it was drawn at the size before it.
    resizes: Vec<(u64, u16, u16)>,
    /// Where the parser is at the tail's start: inside a sequence only
    /// after a compaction cut one ([`Replay::compact`]).
    open: Sequence,
}

/// Why a core's snapshot was not adopted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Taken before the snapshot kept (from a slower or older core).
    Stale { offset: u64, base: u64 },
    /// Taken after output this holder has not produced: not this stream.
    Future { offset: u64, end: u64 },
}

impl Replay {
    /// A program no core has snapshotted yet: a blank screen.
    pub fn new(rows: u16, cols: u16) -> Self {
        Replay::adopt(rows, cols, Vec::new())
    }

    /// Start from bytes that redraw the screen at `rows`x`cols` (what a
    /// previous holder handed over), at offset 0.
    pub fn adopt(rows: u16, cols: u16, snapshot: Vec<u8>) -> Self {
        // A redraw handed over may end inside a sequence the output goes
        // on with.
        let open = scan(Sequence::default(), &snapshot).1;
        Replay {
            rows,
            cols,
            snap_rows: rows,
            snap_cols: cols,
            snapshot,
            base: 0,
            tail: Vec::new(),
            resizes: Vec::new(),
            open,
        }
    }

    pub fn size(&self) -> (u16, u16) {
        (self.rows, self.cols)
    }

    /// Where the output ends: what a core that got `redraw()` has seen.
    pub fn offset(&self) -> u64 {
        self.base + self.tail.len() as u64
    }

    /// Bytes kept, for the record.
    pub fn kept(&self) -> usize {
        self.snapshot.len() + self.tail.len()
    }

    /// The program wrote `bytes`.
    pub fn output(&mut self, bytes: &[u8]) {
        self.tail.extend_from_slice(bytes);
        if self.tail.len() > COMPACT_AT {
            self.compact();
        }
    }

    /// The terminal is now `rows`x`cols`. The core sends a snapshot of its
    /// resized model right after; until then a redraw rebuilds.
    pub fn resize(&mut self, rows: u16, cols: u16) {
        if (rows, cols) == (self.rows, self.cols) {
            return;
        }
        (self.rows, self.cols) = (rows, cols);
        self.resizes.push((self.offset(), rows, cols));
        self.settle_resizes();
    }

    /// Adopt a core's snapshot of `rows`x`cols`, taken after it processed
    /// the output up to `offset`.
    pub fn snapshot_from_core(
        &mut self,
        offset: u64,
        rows: u16,
        cols: u16,
        bytes: Vec<u8>,
    ) -> Result<(), Refused> {
        if offset < self.base {
            return Err(Refused::Stale {
                offset,
                base: self.base,
            });
        }
        if offset > self.offset() {
            return Err(Refused::Future {
                offset,
                end: self.offset(),
            });
        }
        self.tail.drain(..(offset - self.base) as usize);
        // An idle tab's tail is empty after its quiet snapshot: the room
        // its last burst grew to (tens of KiB, resident) goes back. Under a
        // stream a snapshot comes every 256 KiB, so this reallocates rarely.
        if self.tail.capacity() > 4 * self.tail.len() + 4096 {
            self.tail.shrink_to_fit();
        }
        self.base = offset;
        self.snapshot = bytes;
        self.open = Sequence::default();
        (self.snap_rows, self.snap_cols) = (rows, cols);
        // A resize at the snapshot's offset may have come before or after
        // it was taken: replaying it onto a screen already of that size
        // changes nothing, so it is kept and settled.
        self.resizes.retain(|r| r.0 >= offset);
        self.settle_resizes();
        Ok(())
    }

    /// Bytes that rebuild the screen on `term::Screen::new(size())`.
    pub fn redraw(&self) -> Vec<u8> {
        if self.plain() {
            return [&self.snapshot[..], &self.tail[..]].concat();
        }
        self.rebuild().snapshot()
    }

    /// Whether snapshot ++ tail is the screen at the current size as it is.
    fn plain(&self) -> bool {
        self.resizes.is_empty() && (self.snap_rows, self.snap_cols) == (self.rows, self.cols)
    }

    /// Drop resizes that change nothing, counting from the snapshot's size.
    fn settle_resizes(&mut self) {
        let mut size = (self.snap_rows, self.snap_cols);
        self.resizes.retain(|&(_, r, c)| {
            let changes = (r, c) != size;
            size = (r, c);
            changes
        });
    }

    /// The screen, parsed: the snapshot, then the output with each resize
    /// where it came.
    fn rebuild(&self) -> Screen {
        self.rebuild_to(self.tail.len())
    }

    /// The screen after the first `upto` bytes of the tail.
    fn rebuild_to(&self, upto: usize) -> Screen {
        let mut screen = Screen::new(self.snap_rows, self.snap_cols);
        screen.process(&self.snapshot);
        let mut at = 0usize;
        for &(offset, rows, cols) in &self.resizes {
            let to = (offset - self.base) as usize;
            if to > upto {
                break;
            }
            screen.process(&self.tail[at..to]);
            at = to;
            screen.resize(rows, cols);
        }
        screen.process(&self.tail[at..upto]);
        if upto == self.tail.len() && screen.size() != (self.rows, self.cols) {
            screen.resize(self.rows, self.cols);
        }
        // Nobody is there to answer: the program's questions in the replay
        // were answered (or not) when they were live.
        let _ = screen.take_replies();
        screen
    }

    /// Replace the snapshot and the tail up to its last clean point by one
    /// snapshot; what follows an unfinished sequence stays raw, so it is
    /// finished where it began. A sequence left unfinished for more than
    /// [`LONG_OPEN`] bytes (a program that opens a DCS and never ends it)
    /// is cut at the end instead, and the snapshot ends by opening one of
    /// the same kind that the screen ignores, so the rest stays hidden and
    /// the holder's memory bounded.
    fn compact(&mut self) {
        let (clean, end) = scan(self.open, &self.tail);
        let (upto, reopen) = match clean {
            Some(at) if self.tail.len() - at <= LONG_OPEN => (at, None),
            _ => (self.tail.len(), Some(end)),
        };
        let screen = self.rebuild_to(upto);
        let (rows, cols) = screen.size();
        let before = self.kept();
        self.snapshot = screen.snapshot();
        if let Some(seq) = reopen {
            self.snapshot.extend_from_slice(seq.reopen());
        }
        self.open = reopen.unwrap_or_default();
        self.tail.drain(..upto);
        self.tail.shrink_to_fit();
        self.base += upto as u64;
        (self.snap_rows, self.snap_cols) = (rows, cols);
        let base = self.base;
        self.resizes.retain(|r| r.0 > base);
        self.settle_resizes();
        tracing::info!(
            before,
            after = self.kept(),
            "compacted a screen no core snapshots"
        );
    }
}

/// An unfinished sequence longer than this is cut by compaction.
pub const LONG_OPEN: usize = COMPACT_AT / 2;

/// Where `bytes`, read from `start`, last end clean (`None`: nowhere, not
/// even before the first byte), and where they leave the parser.
fn scan(start: Sequence, bytes: &[u8]) -> (Option<usize>, Sequence) {
    let mut seq = start;
    let mut clean = seq.clean().then_some(0);
    for (i, b) in bytes.iter().enumerate() {
        seq.byte(*b);
        if seq.clean() {
            clean = Some(i + 1);
        }
    }
    (clean, seq)
}

/// The length of the longest start of `bytes` that does not end inside an
/// escape sequence or a UTF-8 character: where a snapshot can be taken so
/// that the bytes after it, replayed on its screen, mean what they meant.
/// Follows the whole of `bytes` (a [`Sequence`]): a string or a CSI of
/// any length is unfinished until it ends.
#[cfg(test)]
pub fn clean_prefix(bytes: &[u8]) -> usize {
    scan(Sequence::default(), bytes).0.unwrap_or(0)
}

/// Where a parser (vte's state machine, which `term::Screen` runs) is in
/// a stream of output: enough of it to tell whether the stream so far
/// ends outside any escape sequence and character. Fed as the output
/// comes, so no look-back bounds the sequences it sees.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sequence(Step);

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Step {
    #[default]
    Ground,
    /// Continuation bytes still owed by a UTF-8 character.
    Utf8(u8),
    Escape,
    /// ESC and intermediates, until a final byte.
    EscapeIntermediate,
    /// CSI, until its final byte.
    Csi,
    /// OSC: until BEL, ESC, CAN or SUB.
    Osc,
    /// DCS, SOS, PM, APC: until ST (ESC, or 8-bit 0x9c), CAN or SUB.
    Str,
}

impl Sequence {
    pub fn feed(&mut self, mut bytes: &[u8]) {
        loop {
            if self.0 == Step::Ground {
                // Text keeps the ground state, so a run of it is skipped by
                // a tight scan: this follows every byte of a stream in the
                // core, where stepping the machine cost 12% of its CPU.
                match bytes.iter().position(|&b| leaves_ground(b)) {
                    Some(at) => bytes = &bytes[at..],
                    None => return,
                }
            }
            let Some((&b, rest)) = bytes.split_first() else {
                return;
            };
            self.byte(b);
            bytes = rest;
        }
    }

    /// Whether the output so far ends outside any sequence and character.
    pub fn clean(&self) -> bool {
        self.0 == Step::Ground
    }

    fn byte(&mut self, b: u8) {
        use Step::*;
        self.0 = match (self.0, b) {
            (Utf8(n), 0x80..=0xbf) => {
                if n > 1 {
                    Utf8(n - 1)
                } else {
                    Ground
                }
            }
            // A broken character: the byte starts afresh.
            (Utf8(_), _) => return self.restart(b),
            (_, 0x18 | 0x1a) => Ground,
            (_, 0x1b) => Escape,
            (Ground, _) => return self.restart(b),
            (Escape, b'[') => Csi,
            (Escape, b']') => Osc,
            (Escape, b'P' | b'X' | b'^' | b'_') => Str,
            (Escape | EscapeIntermediate, 0x20..=0x2f) => EscapeIntermediate,
            (Escape | EscapeIntermediate, 0x30..=0x7e) => Ground,
            (Csi, 0x40..=0x7e) => Ground,
            (Osc, 0x07) => Ground,
            (Str, 0x9c) => Ground,
            (step, _) => step,
        };
    }

    /// `b` read in the ground state.
    /// Bytes that put a parser at the start of the output back into a
    /// sequence of this kind, one the screen ignores, to replay what
    /// follows a cut inside one.
    fn reopen(&self) -> &'static [u8] {
        match self.0 {
            Step::Ground | Step::Utf8(_) => b"",
            Step::Escape => b"\x1b",
            Step::EscapeIntermediate => b"\x1b ",
            // A private marker after a parameter: ignored to its end.
            Step::Csi => b"\x1b[0?",
            Step::Osc => b"\x1b]9999;",
            Step::Str => b"\x1b_",
        }
    }

    fn restart(&mut self, b: u8) {
        self.0 = match b {
            0x1b => Step::Escape,
            0xc2..=0xdf => Step::Utf8(1),
            0xe0..=0xef => Step::Utf8(2),
            0xf0..=0xf4 => Step::Utf8(3),
            _ => Step::Ground,
        };
    }
}

/// Whether `b`, read in the ground state, starts a sequence or a
/// character (as [`Sequence::restart`] has it).
fn leaves_ground(b: u8) -> bool {
    matches!(b, 0x1b | 0xc2..=0xf4)
}

#[cfg(test)]
mod tests;
