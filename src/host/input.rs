//! A program's input queue: what waits to be written to its terminal, with
//! the bytes in it counted, so a program that never reads cannot make it
//! grow without bound.
//!
//! Two kinds of input go in. The terminal's answers to the program's own
//! queries (device attributes, cursor position, colours) are dropped once
//! the queue is full: a program that floods queries and reads nothing
//! asked for a terminal that answers nothing, and dropping is what keeps
//! such a program (a sandboxed agent, say) from filling the holder's
//! memory. Input a person or `nerdr send` typed is never dropped: beyond
//! the cap it is refused, and the sender is told.

use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use super::HostError;

/// Bytes queued for one program's input beyond which its answers are
/// dropped and typed input refused.
///
/// The kernel already holds about 68 KiB of input a program has not read
/// (64 KiB of a PTY's flip buffers, `TTYB_DEFAULT_MEM_LIMIT`, plus the
/// line discipline's 4 KiB), and a master's writes block only past that.
/// tmux queues the rest without a limit (an `evbuffer` per pane). 1 MiB is
/// sixteen times what the kernel holds: a paste or `nerdr send` into a
/// program that reads slowly (bash redrawing a long line) fits whole, yet
/// a program that reads nothing costs at most this much of the holder.
pub const INPUT_CAP: usize = 1 << 20;

/// Where input comes from, which decides what happens to it when the
/// queue is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A person's keys, a paste, `nerdr send`.
    Typed,
    /// The terminal's answers to the program's queries.
    Answer,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Queue,
    /// Beyond the cap: an answer is dropped (and logged once).
    Drop,
    /// Beyond the cap: typed input is refused, and the sender told.
    Refuse,
}

/// What to do with `len` more bytes from `source` when `queued` wait, and
/// `full` says something was dropped or refused since the queue was last
/// empty. A full queue stays full until the program has read all of it:
/// a paste refused in part never reaches the program with a hole in it,
/// and the short answer that would still fit after a long one was dropped
/// does not arrive either. Typed input larger than the cap is still taken
/// into an empty queue: a program that reads gets a paste of any size.
pub fn admit(queued: usize, len: usize, source: Source, full: bool) -> Verdict {
    let fits = queued.saturating_add(len) <= INPUT_CAP || (queued == 0 && source == Source::Typed);
    match (fits && !full, source) {
        (true, _) => Verdict::Queue,
        (false, Source::Typed) => Verdict::Refuse,
        (false, Source::Answer) => Verdict::Drop,
    }
}

/// What the refusal of typed input says to whoever typed it.
pub fn full_message(tab: &str, queued: usize) -> String {
    format!(
        "tab {tab} is not reading its input: {} KiB already wait for it (the limit is {} KiB), \
         so nothing was typed; typing is refused until the program has read all that waits",
        queued.div_ceil(1024),
        INPUT_CAP / 1024
    )
}

pub enum Input {
    Bytes(Vec<u8>),
    Resize(u16, u16),
}

/// The sending side of one program's input queue; its writer task holds
/// the receiving side and reports each write done with
/// [`InputQueue::written`].
#[derive(Clone)]
pub struct InputQueue {
    tx: mpsc::UnboundedSender<Input>,
    counts: Arc<Mutex<Counts>>,
}

#[derive(Default)]
struct Counts {
    queued: usize,
    /// Something was dropped or refused since the queue was last empty.
    full: bool,
    /// Answers dropped since then, logged when it empties.
    dropped: u64,
    /// Whether this episode was logged, per source: once each until the
    /// program reads again, not once per write.
    told_drop: bool,
    told_refuse: bool,
}

impl InputQueue {
    pub fn new() -> (Self, mpsc::UnboundedReceiver<Input>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let counts = Arc::default();
        (InputQueue { tx, counts }, rx)
    }

    /// Bytes queued and not yet written to the terminal.
    #[cfg(test)]
    pub fn queued(&self) -> usize {
        self.counts.lock().unwrap().queued
    }

    /// Queue `bytes` for tab `tab`'s program, or drop or refuse them as
    /// [`admit`] decides. Dropped answers are `Ok`: nobody waits for them.
    pub fn push(&self, tab: &str, bytes: Vec<u8>, source: Source) -> Result<(), HostError> {
        let len = bytes.len();
        let mut c = self.counts.lock().unwrap();
        let queued = c.queued;
        match admit(queued, len, source, c.full) {
            Verdict::Queue => {
                c.queued += len;
                drop(c);
                self.tx.send(Input::Bytes(bytes)).map_err(|_| {
                    self.counts.lock().unwrap().queued -= len;
                    HostError::NoSuchTab(tab.to_string())
                })
            }
            Verdict::Drop => {
                c.full = true;
                c.dropped += len as u64;
                if !std::mem::replace(&mut c.told_drop, true) {
                    tracing::warn!(
                        tab = %tab, queued, cap = INPUT_CAP,
                        "the program is not reading its input: its terminal's answers are dropped until it does"
                    );
                }
                Ok(())
            }
            Verdict::Refuse => {
                c.full = true;
                if !std::mem::replace(&mut c.told_refuse, true) {
                    tracing::warn!(
                        tab = %tab, queued, bytes = len, cap = INPUT_CAP,
                        "the program is not reading its input: typed input is refused until it does"
                    );
                }
                Err(HostError::InputFull(full_message(tab, queued)))
            }
        }
    }

    /// Ask the writer to resize the terminal, in order with the input.
    pub fn resize(&self, tab: &str, rows: u16, cols: u16) -> Result<(), HostError> {
        self.tx
            .send(Input::Resize(rows, cols))
            .map_err(|_| HostError::NoSuchTab(tab.to_string()))
    }

    /// The writer's side of the count. It holds no sender: the writer
    /// must see the channel close when the program's queue goes, or it
    /// would keep the terminal's master open forever.
    pub fn drain(&self) -> InputDrain {
        InputDrain {
            counts: self.counts.clone(),
        }
    }
}

/// What the writer tells the queue: how much of it reached the program.
pub struct InputDrain {
    counts: Arc<Mutex<Counts>>,
}

impl InputDrain {
    /// The writer wrote `n` bytes of tab `tab`'s input. An empty queue ends
    /// an episode of a full one: the program has read everything.
    pub fn written(&self, tab: &str, n: usize) {
        let mut c = self.counts.lock().unwrap();
        c.queued -= n;
        if c.queued > 0 || !c.full {
            return;
        }
        let dropped = std::mem::take(&mut c.dropped);
        *c = Counts::default();
        drop(c);
        tracing::info!(tab = %tab, dropped, "the program reads its input again");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_dropped_and_typed_input_refused_past_the_cap() {
        use Source::{Answer, Typed};
        use Verdict::{Drop, Queue, Refuse};
        let cap = INPUT_CAP;
        let table = [
            // (queued, len, source, full, verdict)
            (0, 7, Answer, false, Queue),
            (0, 7, Typed, false, Queue),
            (cap - 7, 7, Answer, false, Queue),
            (cap - 7, 7, Typed, false, Queue),
            (cap - 6, 7, Answer, false, Drop),
            (cap - 6, 7, Typed, false, Refuse),
            (cap, 1, Answer, false, Drop),
            (cap, 1, Typed, false, Refuse),
            (cap, 0, Typed, false, Queue),
            // Once something was turned away, nothing more goes in until
            // the program has read what waits, however much room is left.
            (10, 1, Answer, true, Drop),
            (10, 1, Typed, true, Refuse),
            // A paste larger than the cap reaches a program that reads...
            (0, cap + 1, Typed, false, Queue),
            // ...but not one with anything still waiting.
            (1, cap, Typed, false, Refuse),
            // Answers are short; one that big is nobody's question.
            (0, cap + 1, Answer, false, Drop),
            // Counts near the top of usize cannot wrap into a small sum.
            (usize::MAX, 1, Answer, false, Drop),
            (1, usize::MAX, Typed, false, Refuse),
        ];
        for (queued, len, source, full, want) in table {
            assert_eq!(
                admit(queued, len, source, full),
                want,
                "queued {queued}, {len} more, {source:?}, full {full}"
            );
        }
    }

    #[test]
    fn the_queue_counts_what_waits_and_an_empty_one_takes_again() {
        let (q, mut rx) = InputQueue::new();
        // Nothing reads: answers fill it to the cap, then go nowhere.
        let answer = b"\x1b[?1;2c".to_vec();
        let mut sent = 0;
        while sent < 2 * INPUT_CAP {
            q.push("ab12", answer.clone(), Source::Answer).unwrap();
            sent += answer.len();
        }
        assert!(q.queued() <= INPUT_CAP, "{} queued", q.queued());
        assert!(q.queued() > INPUT_CAP - answer.len());
        let err = q.push("ab12", b"ls\r".to_vec(), Source::Typed).unwrap_err();
        assert!(matches!(err, HostError::InputFull(_)), "{err:?}");
        assert!(err.to_string().contains("tab ab12"), "{err}");
        // Reading some is not enough: what was turned away leaves a hole
        // that nothing typed later may step over.
        let Ok(Input::Bytes(b)) = rx.try_recv() else {
            panic!("nothing was queued")
        };
        q.drain().written("ab12", b.len());
        let err = q.push("ab12", b"ls\r".to_vec(), Source::Typed);
        assert!(matches!(err, Err(HostError::InputFull(_))), "{err:?}");
        // The writer catches up: all of it was counted, and typing works.
        while let Ok(Input::Bytes(b)) = rx.try_recv() {
            q.drain().written("ab12", b.len());
        }
        assert_eq!(q.queued(), 0);
        q.push("ab12", b"ls\r".to_vec(), Source::Typed).unwrap();
        assert_eq!(q.queued(), 3);
        drop(rx);
        let err = q.push("ab12", b"x".to_vec(), Source::Typed).unwrap_err();
        assert!(matches!(err, HostError::NoSuchTab(_)), "{err:?}");
        assert_eq!(q.queued(), 3, "a send that failed is not counted");
    }
}
