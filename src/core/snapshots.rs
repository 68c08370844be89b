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
//!
//! The same quiet deadline compacts the model (`term::Screen::compact`: its
//! snapshot instead of its grids, ~230 KB less at 40x120) of every tab whose
//! model was rebuilt since its last compaction: by output, by a resize, or
//! by the holder's screen at a core start. That holds too when no snapshot
//! is owed any more (the last one was taken by size or for a resize while
//! output still flowed), so a quiet tab never keeps its grids. Reads of a
//! compacted screen (state detection, painting) rebuild it only for the look.
//! After compacting, freed memory is handed back to the kernel
//! ([`release_freed`]), once per round.

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
    /// The generation the next program started gets: past every one a
    /// holder named, so a program's is never an earlier one's of its tab.
    next_generation: u64,
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
    /// The model may hold its grids: it was fed or resized since it was
    /// last compacted.
    live: bool,
    /// The sending task will wake for this tab's quiet deadline.
    armed: bool,
    /// Where the output is in the parser, to see whether it ends clean.
    seq: Sequence,
    /// Which of the tab's programs the counts are of: another's output is
    /// not counted ([`Snapshots::stale`]).
    generation: Option<u64>,
}

/// A snapshot taken under the state lock, to send after it.
#[derive(Debug, PartialEq)]
pub struct Taken {
    pub tab: String,
    pub offset: u64,
    pub rows: u16,
    pub cols: u16,
    pub bytes: Vec<u8>,
}

/// What [`Snapshots::collect`] found due.
#[derive(Debug, Default, PartialEq)]
pub struct Collected {
    /// Snapshots to send to the holder.
    pub taken: Vec<Taken>,
    /// Tabs quiet with a live model, to compact once their snapshot (if
    /// one was due) is taken.
    pub compact: Vec<String>,
    /// When to look again (`None`: when rung).
    pub next: Option<Instant>,
}

/// Whether a tab's model should be compacted now: it is `live` (fed or
/// resized since its last compaction), `quiet`, and its output does not
/// end inside a sequence (`clean`: the parser's state would be lost).
pub fn compact_due(live: bool, quiet: bool, clean: bool) -> bool {
    live && quiet && clean
}

impl Snapshots {
    /// A tab the holder keeps, running its program of `generation`, whose
    /// redraw (`screen`, which may end inside a sequence the output goes
    /// on with) ended at `offset`.
    pub fn found(&mut self, tab: &str, offset: u64, screen: &[u8], generation: u64) {
        let mut seq = Sequence::default();
        seq.feed(screen);
        let mark = Mark {
            offset,
            snapped: offset,
            seq,
            // Rebuilt from the holder's screen: compacted at the first look.
            live: true,
            generation: Some(generation),
            ..Mark::default()
        };
        self.marks.insert(tab.to_string(), mark);
        self.next_generation = self.next_generation.max(generation + 1);
    }

    /// A program starts in `tab` (maybe again): its output counts from 0.
    /// Its generation, for the host to mark its output with.
    pub fn started(&mut self, tab: &str) -> u64 {
        let generation = self.next_generation;
        self.next_generation += 1;
        let mark = Mark {
            generation: Some(generation),
            ..Mark::default()
        };
        self.marks.insert(tab.to_string(), mark);
        generation
    }

    /// Whether output of `tab` from its program of `generation` is another
    /// program's than the one the counts are of: the last output of a
    /// program its tab replaced, still on its way. It must not reach the
    /// model or the counts: the holder counted it for that program, or
    /// dropped it.
    pub fn stale(&self, tab: &str, generation: Option<u64>) -> bool {
        let current = self.marks.get(tab).and_then(|m| m.generation);
        crate::protocol::holder::stale_output(generation, current)
    }

    /// The model of `tab` processed `bytes`.
    pub fn output(&mut self, tab: &str, bytes: &[u8], now: Instant) {
        let m = self.marks.entry(tab.to_string()).or_default();
        m.offset += bytes.len() as u64;
        m.last_output = Some(now);
        m.live = true;
        m.seq.feed(bytes);
        if !m.armed || due(m.offset - m.snapped, false, m.resized) {
            self.wake.notify_one();
        }
    }

    /// How much output the model of `tab` has processed (its counter:
    /// whether more came since a look).
    pub fn offset(&self, tab: &str) -> Option<u64> {
        self.marks.get(tab).map(|m| m.offset)
    }

    /// The model of `tab` was resized.
    pub fn resized(&mut self, tab: &str) {
        let m = self.marks.entry(tab.to_string()).or_default();
        m.resized = true;
        m.live = true;
        self.wake.notify_one();
    }

    /// Take the snapshots due at `now` (`screen` gives a tab's snapshot
    /// and size, `None` for a tab gone), name the models to compact, and
    /// say when to look again.
    pub fn collect(
        &mut self,
        now: Instant,
        mut screen: impl FnMut(&str) -> Option<(Vec<u8>, u16, u16)>,
    ) -> Collected {
        let mut out = Collected::default();
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
                out.taken.push(Taken {
                    tab: tab.clone(),
                    offset: m.offset,
                    rows,
                    cols,
                    bytes,
                });
                m.snapped = m.offset;
                m.resized = false;
            }
            if compact_due(m.live, quiet, clean) {
                out.compact.push(tab.clone());
                m.live = false;
            } else if let Some(at) = quiet_at.filter(|_| (since > 0 || m.live) && !quiet) {
                m.armed = true;
                out.next = Some(out.next.map_or(at, |n| n.min(at)));
            }
            true
        });
        out
    }
}

/// The model's snapshot and size.
fn model_snapshot(screen: &crate::term::Screen) -> (Vec<u8>, u16, u16) {
    let (rows, cols) = screen.size();
    (screen.snapshot(), rows, cols)
}

/// Give the pages of freed memory back to the kernel (every arena).
///
/// glibc keeps freed chunks for reuse, and a free in the middle of the
/// heap never shrinks the resident set: after 100 tabs' models were
/// compacted (their grids, ~230 KB each at 40x120, freed), the core still
/// held ~24 MB that `malloc_trim(0)` returns (`bench/idle.py
/// --probe-trim`). Capping the arenas (`MALLOC_ARENA_MAX=1`) was measured
/// too: -3.7 MB in the core at 100 tabs, +4.3 MB in the holder, so it is
/// not used. The trim walks the heap (a millisecond or so for tens of
/// MiB): it runs once per round of compaction, off the state lock.
fn release_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes the allocator's own locks; it may be
    // called from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Send the tabs' snapshots as they fall due, for as long as the core runs.
pub async fn keep_sending(core: Arc<Core>) {
    let wake = core.state.lock().unwrap().snapshots.wake.clone();
    loop {
        let Collected {
            taken,
            compact,
            next,
        } = {
            let mut state = core.state.lock().unwrap();
            let super::State {
                snapshots, tabs, ..
            } = &mut *state;
            let collected = snapshots.collect(Instant::now(), |tab| {
                tabs.get(tab).map(|t| model_snapshot(&t.screen))
            });
            // A quiet spell is when a model can drop its grids: an idle tab
            // costs its snapshot's bytes until its next output or resize.
            for tab in &collected.compact {
                if let Some(t) = tabs.get_mut(tab) {
                    t.screen.compact();
                }
            }
            collected
        };
        for t in taken {
            core.host
                .snapshot(&t.tab, t.offset, t.rows, t.cols, t.bytes);
        }
        if !compact.is_empty() {
            release_freed();
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

    #[test]
    fn when_a_model_is_compacted() {
        let rows: Vec<(&str, bool, bool, bool, bool)> = vec![
            ("compacted already", false, true, true, false),
            ("fed, still busy", true, false, true, false),
            ("fed, then quiet", true, true, true, true),
            ("quiet inside a sequence", true, true, false, false),
        ];
        for (what, live, quiet, clean, want) in rows {
            assert_eq!(compact_due(live, quiet, clean), want, "{what}");
        }
    }

    fn screen(tab: &str) -> Option<(Vec<u8>, u16, u16)> {
        Some((format!("screen of {tab}").into_bytes(), 24, 80))
    }

    fn tabs(taken: &[Taken]) -> Vec<(&str, u64)> {
        taken.iter().map(|t| (t.tab.as_str(), t.offset)).collect()
    }

    #[test]
    fn quiet_tabs_are_snapshotted_and_compacted_once_at_their_offset() {
        let t0 = Instant::now();
        let mut s = Snapshots::default();
        s.found("a", 100, b"", 0);
        s.started("b");
        // The holder's screen was fed to a's model: compacted at once;
        // nothing to send, nothing to wake for.
        let c = s.collect(t0, screen);
        assert_eq!(
            (c.taken, c.compact, c.next),
            (vec![], vec!["a".into()], None)
        );
        s.output("a", b"hello", t0);
        s.output("b", b"hi", t0 + Duration::from_millis(300));
        let c = s.collect(t0 + Duration::from_millis(500), screen);
        assert!(c.taken.is_empty() && c.compact.is_empty());
        assert_eq!(c.next, Some(t0 + QUIET));
        let c = s.collect(t0 + QUIET, screen);
        assert_eq!(
            (tabs(&c.taken), c.compact),
            (vec![("a", 105)], vec!["a".into()])
        );
        assert_eq!(c.next, Some(t0 + Duration::from_millis(300) + QUIET));
        let c = s.collect(t0 + 2 * QUIET, screen);
        assert_eq!(
            (tabs(&c.taken), c.compact),
            (vec![("b", 2)], vec!["b".into()])
        );
        assert_eq!(c.next, None);
        // Once: quiet still, nothing new.
        assert_eq!(s.collect(t0 + 3 * QUIET, screen), Collected::default());
    }

    #[test]
    fn busy_tabs_are_snapshotted_by_size_and_resizes_at_once() {
        let t0 = Instant::now();
        let mut s = Snapshots::default();
        s.started("a");
        s.output("a", &vec![b'x'; EVERY as usize], t0);
        let c = s.collect(t0, screen);
        assert_eq!(tabs(&c.taken), [("a", EVERY)]);
        assert!(c.compact.is_empty(), "busy: keeps its grids");
        s.resized("a");
        let c = s.collect(t0, screen);
        assert_eq!(tabs(&c.taken), [("a", EVERY)]);
        // A tab gone is forgotten.
        s.resized("gone");
        let c = s.collect(t0, |t| (t != "gone").then(|| screen(t)).flatten());
        assert!(c.taken.is_empty() && c.compact.is_empty());
        assert_eq!(c.next, Some(t0 + QUIET));
        assert!(!s.marks.contains_key("gone"));
    }

    #[test]
    fn a_tab_that_goes_quiet_right_after_a_snapshot_is_still_compacted() {
        let t0 = Instant::now();
        let mut s = Snapshots::default();
        s.started("a");
        s.started("b");
        // a's output stops right where a snapshot by size was taken; b was
        // resized while its output flowed. Neither owes a snapshot after.
        s.output("a", &vec![b'x'; EVERY as usize], t0);
        s.output("b", b"x", t0);
        s.resized("b");
        let c = s.collect(t0, screen);
        let mut taken = tabs(&c.taken);
        taken.sort();
        assert_eq!(taken, [("a", EVERY), ("b", 1)]);
        assert!(c.compact.is_empty());
        // The quiet deadline still comes, and compacts both.
        assert_eq!(c.next, Some(t0 + QUIET));
        let mut c = s.collect(t0 + QUIET, screen);
        c.compact.sort();
        assert!(c.taken.is_empty());
        assert_eq!(c.compact, ["a", "b"]);
        assert_eq!(c.next, None);
    }

    #[test]
    fn a_compacted_tab_resized_while_quiet_is_compacted_again_at_once() {
        let t0 = Instant::now();
        let mut s = Snapshots::default();
        s.started("a");
        s.output("a", b"hello", t0);
        let c = s.collect(t0 + QUIET, screen);
        assert_eq!(c.compact, ["a"]);
        // The window detached: the model is rebuilt to be resized.
        s.resized("a");
        let c = s.collect(t0 + 5 * QUIET, screen);
        assert_eq!(
            (tabs(&c.taken), c.compact),
            (vec![("a", 5)], vec!["a".into()])
        );
        assert_eq!(c.next, None);
    }

    #[test]
    fn output_ending_inside_a_sequence_waits_for_its_end() {
        let t0 = Instant::now();
        let mut s = Snapshots::default();
        s.started("a");
        s.output("a", b"abc\x1b[3", t0);
        assert_eq!(s.collect(t0 + QUIET, screen), Collected::default());
        // Its end came in a chunk of its own.
        s.output("a", b"1m", t0 + QUIET);
        let c = s.collect(t0 + 2 * QUIET, screen);
        assert_eq!(
            (tabs(&c.taken), c.compact),
            (vec![("a", 8)], vec!["a".into()])
        );
    }

    #[test]
    fn a_restarted_tabs_counts_are_of_its_new_program_alone() {
        let mut s = Snapshots::default();
        // A restarted core finds programs a previous one started.
        s.found("a", 10, b"", 4);
        s.found("b", 0, b"", 2);
        assert!(!s.stale("a", Some(4)));
        // A new program's generation is past every one found.
        let g = s.started("a");
        assert_eq!(g, 5);
        assert!(s.stale("a", Some(4)), "the replaced program's last output");
        assert!(!s.stale("a", Some(5)));
        assert_eq!(s.started("a"), 6);
        assert!(s.stale("a", Some(5)));
        assert!(!s.stale("b", Some(2)));
        // The core's own PTYs say no generation: nothing is dropped.
        assert!(!s.stale("a", None));
        assert!(!s.stale("unknown", Some(1)));
    }

    /// One round of `keep_sending` for one tab, on a real model.
    fn round(s: &mut Snapshots, model: &mut crate::term::Screen, now: Instant) -> Collected {
        let c = s.collect(now, |_| Some(model_snapshot(model)));
        for _ in &c.compact {
            model.compact();
        }
        c
    }

    #[test]
    fn a_model_busy_until_a_snapshot_is_compacted_once_quiet_and_stays_so_when_read() {
        let t0 = Instant::now();
        let mut model = crate::term::Screen::new(40, 120);
        let mut s = Snapshots::default();
        s.started("a");
        // A flood that ends right where its snapshot by size is taken.
        let mut out = b"\x1b[1;31m".to_vec();
        out.resize(EVERY as usize - 6, b'y');
        out.extend_from_slice(b"\r\n$ \x1b[m");
        model.process(&out);
        s.output("a", &out, t0);
        let c = round(&mut s, &mut model, t0);
        assert_eq!(tabs(&c.taken), [("a", out.len() as u64)]);
        assert!(!model.is_compact(), "busy: keeps its grids");
        let shown = model.text(None);
        assert_eq!(c.next, Some(t0 + QUIET));
        round(&mut s, &mut model, t0 + QUIET);
        assert!(model.is_compact(), "quiet: its grids are dropped");
        // What state detection and painting read leaves it compact.
        let view = crate::detect::ScreenView::of(&model);
        assert_eq!(view.rows.join("\n").trim_end(), shown);
        let _ = model.frame();
        assert!(model.is_compact());
        // The window detached: resized, compacted again at once.
        model.resize(24, 80);
        s.resized("a");
        assert!(!model.is_compact());
        let c = round(&mut s, &mut model, t0 + 5 * QUIET);
        assert_eq!(c.taken[0].rows, 24);
        assert!(model.is_compact());
        assert_eq!(
            round(&mut s, &mut model, t0 + 6 * QUIET),
            Collected::default()
        );
    }
}
