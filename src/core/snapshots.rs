//! Snapshots of the tabs' screens for the holder, which keeps the last one
//! plus the output after it to give a restarted core its screens (it
//! parses nothing itself: `holder::replay`).
//!
//! Per tab the core counts the output its model has processed (from the
//! holder's welcome on, or from 0 for a program it starts) and the count at
//! its last snapshot. A snapshot is due ([`due`]) after every
//! [`EVERY`] bytes, after a resize, and once when the tab has been quiet
//! for [`QUIET`]; and it is taken only where the output does not end
//! inside an escape sequence or a character (`replay::Sequence`, fed every byte), so
//! the bytes after it replay right. One task sends them all: it sleeps
//! until the earliest quiet deadline or until output or a resize rings,
//! and with no output it sleeps for good (idle means no wake-ups).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use super::Core;
use crate::holder::replay::Sequence;

/// Output after which a busy tab's screen is handed over again.
pub const EVERY: u64 = 256 << 10;
/// Silence after which a tab's screen is handed over once.
pub const QUIET: Duration = Duration::from_secs(1);

/// Whether a tab's screen should go to the holder now: `bytes_since` of
/// output since the last snapshot, `quiet` for long enough, `resized`
/// since.
pub fn due(bytes_since: u64, quiet: bool, resized: bool) -> bool {
    resized || bytes_since >= EVERY || (quiet && bytes_since > 0)
}

#[derive(Default)]
pub struct Snapshots {
    marks: HashMap<String, Mark>,
    /// Rings the sending task.
    wake: Arc<Notify>,
}

#[derive(Default)]
struct Mark {
    /// Output the model has processed.
    offset: u64,
    /// `offset` at the last snapshot.
    snapped: u64,
    last_output: Option<Instant>,
    resized: bool,
    /// The sending task will wake for this tab's quiet deadline.
    armed: bool,
    /// Where the output is in the parser, to see whether it ends clean.
    seq: Sequence,
}

/// A snapshot taken under the state lock, to send after it.
#[derive(Debug, PartialEq)]
pub struct Taken {
    pub tab: String,
    pub offset: u64,
    pub rows: u16,
    pub cols: u16,
    pub bytes: Vec<u8>,
    /// Taken after a quiet spell: the model can be compacted.
    pub quiet: bool,
}

impl Snapshots {
    /// A tab the holder keeps, whose redraw (`screen`, which may end
    /// inside a sequence the output goes on with) ended at `offset`.
    pub fn found(&mut self, tab: &str, offset: u64, screen: &[u8]) {
        let mut seq = Sequence::default();
        seq.feed(screen);
        let mark = Mark {
            offset,
            snapped: offset,
            seq,
            ..Mark::default()
        };
        self.marks.insert(tab.to_string(), mark);
    }

    /// A program starts in `tab` (maybe again): its output counts from 0.
    pub fn started(&mut self, tab: &str) {
        self.marks.insert(tab.to_string(), Mark::default());
    }

    /// The model of `tab` processed `bytes`.
    pub fn output(&mut self, tab: &str, bytes: &[u8], now: Instant) {
        let m = self.marks.entry(tab.to_string()).or_default();
        m.offset += bytes.len() as u64;
        m.last_output = Some(now);
        m.seq.feed(bytes);
        if !m.armed || due(m.offset - m.snapped, false, m.resized) {
            self.wake.notify_one();
        }
    }

    /// The model of `tab` was resized.
    pub fn resized(&mut self, tab: &str) {
        self.marks.entry(tab.to_string()).or_default().resized = true;
        self.wake.notify_one();
    }

    /// Take the snapshots due at `now` (`screen` gives a tab's snapshot
    /// and size, `None` for a tab gone); and when to look again (`None`:
    /// when rung).
    pub fn collect(
        &mut self,
        now: Instant,
        mut screen: impl FnMut(&str) -> Option<(Vec<u8>, u16, u16)>,
    ) -> (Vec<Taken>, Option<Instant>) {
        let mut taken = Vec::new();
        let mut next: Option<Instant> = None;
        self.marks.retain(|tab, m| {
            let since = m.offset - m.snapped;
            let quiet_at = m.last_output.map(|at| at + QUIET);
            let quiet = quiet_at.is_none_or(|at| now >= at);
            let clean = m.seq.clean();
            m.armed = false;
            if due(since, quiet, m.resized) && clean {
                let Some((bytes, rows, cols)) = screen(tab) else {
                    return false;
                };
                taken.push(Taken {
                    tab: tab.clone(),
                    offset: m.offset,
                    rows,
                    cols,
                    bytes,
                    quiet,
                });
                m.snapped = m.offset;
                m.resized = false;
            } else if let Some(at) = quiet_at.filter(|_| since > 0 && !quiet) {
                m.armed = true;
                next = Some(next.map_or(at, |n| n.min(at)));
            }
            true
        });
        (taken, next)
    }
}

/// The model's snapshot and size.
fn model_snapshot(screen: &crate::term::Screen) -> (Vec<u8>, u16, u16) {
    let (rows, cols) = screen.size();
    (screen.snapshot(), rows, cols)
}

/// Send the tabs' snapshots as they fall due, for as long as the core runs.
pub async fn keep_sending(core: Arc<Core>) {
    let wake = core.state.lock().unwrap().snapshots.wake.clone();
    loop {
        let (taken, next) = {
            let mut state = core.state.lock().unwrap();
            let super::State {
                snapshots, tabs, ..
            } = &mut *state;
            let (taken, next) = snapshots.collect(Instant::now(), |tab| {
                tabs.get(tab).map(|t| model_snapshot(&t.screen))
            });
            // A quiet spell is when a model can drop its grids: an idle tab
            // costs its snapshot's bytes until its next output or look.
            for t in taken.iter().filter(|t| t.quiet) {
                if let Some(tab) = tabs.get_mut(&t.tab) {
                    tab.screen.compact();
                }
            }
            (taken, next)
        };
        for t in taken {
            core.host
                .snapshot(&t.tab, t.offset, t.rows, t.cols, t.bytes);
        }
        match next {
            Some(at) => {
                tokio::select! {
                    _ = tokio::time::sleep_until(at.into()) => {}
                    _ = wake.notified() => {}
                }
            }
            None => wake.notified().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn when_a_snapshot_is_due() {
        let rows: Vec<(&str, u64, bool, bool, bool)> = vec![
            ("nothing new", 0, false, false, false),
            ("nothing new, quiet", 0, true, false, false),
            ("some output, still busy", 1000, false, false, false),
            ("some output, then quiet", 1000, true, false, true),
            ("one byte, then quiet", 1, true, false, true),
            ("just under the size", EVERY - 1, false, false, false),
            ("the size reached while busy", EVERY, false, false, true),
            ("far past the size", 10 * EVERY, false, false, true),
            ("resized", 0, false, true, true),
            ("resized while busy", 10, false, true, true),
        ];
        for (what, since, quiet, resized, want) in rows {
            assert_eq!(due(since, quiet, resized), want, "{what}");
        }
    }

    fn screen(tab: &str) -> Option<(Vec<u8>, u16, u16)> {
        Some((format!("screen of {tab}").into_bytes(), 24, 80))
    }

    #[test]
    fn quiet_tabs_are_snapshotted_once_at_their_offset() {
        let t0 = Instant::now();
        let mut s = Snapshots::default();
        s.found("a", 100, b"");
        s.started("b");
        // Nothing happened: nothing to send, nothing to wake for.
        assert_eq!(s.collect(t0, screen), (vec![], None));
        s.output("a", b"hello", t0);
        s.output("b", b"hi", t0 + Duration::from_millis(300));
        let (taken, next) = s.collect(t0 + Duration::from_millis(500), screen);
        assert!(taken.is_empty());
        assert_eq!(next, Some(t0 + QUIET));
        let (taken, next) = s.collect(t0 + QUIET, screen);
        assert_eq!(taken.len(), 1);
        assert_eq!((taken[0].tab.as_str(), taken[0].offset), ("a", 105));
        assert_eq!(next, Some(t0 + Duration::from_millis(300) + QUIET));
        let (taken, next) = s.collect(t0 + 2 * QUIET, screen);
        assert_eq!((taken[0].tab.as_str(), taken[0].offset), ("b", 2));
        assert_eq!(next, None);
        // Once: quiet still, nothing new.
        assert_eq!(s.collect(t0 + 3 * QUIET, screen), (vec![], None));
    }

    #[test]
    fn busy_tabs_are_snapshotted_by_size_and_resizes_at_once() {
        let t0 = Instant::now();
        let mut s = Snapshots::default();
        s.started("a");
        s.output("a", &vec![b'x'; EVERY as usize], t0);
        let (taken, _) = s.collect(t0, screen);
        assert_eq!(taken[0].offset, EVERY);
        s.resized("a");
        let (taken, _) = s.collect(t0, screen);
        assert_eq!(taken[0].offset, EVERY);
        // A tab gone is forgotten.
        s.resized("gone");
        let (taken, next) = s.collect(t0, |t| (t != "gone").then(|| screen(t)).flatten());
        assert!(taken.is_empty() && next.is_none());
        assert!(!s.marks.contains_key("gone"));
    }

    #[test]
    fn output_ending_inside_a_sequence_waits_for_its_end() {
        let t0 = Instant::now();
        let mut s = Snapshots::default();
        s.started("a");
        s.output("a", b"abc\x1b[3", t0);
        assert_eq!(s.collect(t0 + QUIET, screen), (vec![], None));
        // Its end came in a chunk of its own.
        s.output("a", b"1m", t0 + QUIET);
        let (taken, _) = s.collect(t0 + 2 * QUIET, screen);
        assert_eq!(taken[0].offset, 8);
    }
}
