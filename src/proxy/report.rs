//! What the proxy's decisions become in an audit trail. Every allowed
//! connection gets a line when it opens and one when it closes; a refusal
//! gets a line at once, but the same refusal again (same host, port and
//! rule) within [`MERGE_WINDOW`] is only counted, and the count written as
//! one line when the window ends, so a loop of refused requests costs a
//! line a second instead of four records a request (session file,
//! journal, core.log, audit.jsonl). Questions to the person and their
//! outcomes merge the same way. At the end, connections still open
//! are written as open at exit.
//!
//! [`Merger`] is the pure part (time is passed in); [`forward`] drives it
//! from the proxy's channel.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::time::{Duration, Instant};

use tokio::sync::mpsc::UnboundedReceiver;

use super::decision::{Decision, Phase};

#[cfg(test)]
mod tests;

/// Identical refusals within this window make one line.
pub const MERGE_WINDOW: Duration = Duration::from_secs(1);
/// At the end, how long connections may take to report their close
/// before they are written as open at exit.
pub const EXIT_GRACE: Duration = Duration::from_millis(500);

/// Distinct refusals a window lines up before the rest share one line.
const MAX_KEYS: usize = 32;
/// The host and rule of that shared line.
const MANY: &str = "(more hosts)";

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    host: String,
    port: u16,
    rule: String,
    phase: Phase,
}

#[derive(Debug)]
struct Window {
    since: Instant,
    /// Refusals counted in this window but not yet written.
    counted: u64,
    last: Decision,
}

/// Decides which decisions become lines, and when.
#[derive(Debug)]
pub struct Merger {
    window: Duration,
    windows: HashMap<Key, Window>,
    open: BTreeMap<u64, Decision>,
}

impl Merger {
    pub fn new(window: Duration) -> Merger {
        Merger {
            window,
            windows: HashMap::new(),
            open: BTreeMap::new(),
        }
    }

    /// A decision arrived at `now`: the lines to write now.
    pub fn push(&mut self, d: Decision, now: Instant) -> Vec<Decision> {
        let mut out = self.due(now);
        match d.phase {
            Phase::Opened => {
                self.open.insert(d.id, d.clone());
                out.push(d);
            }
            Phase::Closed => {
                self.open.remove(&d.id);
                out.push(d);
            }
            Phase::OpenAtExit => out.push(d),
            // A question and its outcome merge as refusals do: a request
            // that cannot be put to the person (no window, the queue full)
            // is a question and an outcome each time, as fast as a program
            // loops.
            Phase::Refused | Phase::Unreachable | Phase::Asked | Phase::Answered => {
                let key = Key {
                    host: d.host.clone(),
                    port: d.port,
                    rule: d.rule.clone(),
                    phase: d.phase,
                };
                // Past this many distinct refusals in a window, new ones
                // share one line: made-up host names cannot flood the trail.
                let key = if self.windows.contains_key(&key) || self.windows.len() < MAX_KEYS {
                    key
                } else {
                    Key {
                        host: MANY.into(),
                        port: 0,
                        rule: MANY.into(),
                        phase: d.phase,
                    }
                };
                let d = if key.host == MANY {
                    Decision {
                        host: MANY.into(),
                        port: 0,
                        rule: MANY.into(),
                        ..d
                    }
                } else {
                    d
                };
                match self.windows.get_mut(&key) {
                    // `due` above ended every window older than `now`.
                    Some(w) => {
                        w.counted += d.count;
                        w.last = d;
                    }
                    None => {
                        self.windows.insert(
                            key,
                            Window {
                                since: now,
                                counted: 0,
                                last: d.clone(),
                            },
                        );
                        out.push(d);
                    }
                }
            }
        }
        out
    }

    /// The merged lines of windows ended by `now`. A window that counted
    /// anything starts again, so a steady loop makes a line per window; a
    /// quiet one is forgotten.
    pub fn due(&mut self, now: Instant) -> Vec<Decision> {
        let mut out = Vec::new();
        let window = self.window;
        self.windows.retain(|_, w| {
            if now < w.since + window {
                return true;
            }
            if w.counted == 0 {
                return false;
            }
            out.push(Decision {
                count: w.counted,
                ..w.last.clone()
            });
            w.counted = 0;
            w.since = now;
            true
        });
        out.sort_by(|a, b| (&a.host, a.port, &a.rule).cmp(&(&b.host, b.port, &b.rule)));
        out
    }

    /// When [`Merger::due`] next has something to do.
    pub fn next_due(&self) -> Option<Instant> {
        self.windows.values().map(|w| w.since + self.window).min()
    }

    pub fn has_open(&self) -> bool {
        !self.open.is_empty()
    }

    /// The end: counted refusals, and connections still open (in the
    /// order they opened).
    pub fn finish(&mut self) -> Vec<Decision> {
        let mut out: Vec<Decision> = self
            .windows
            .drain()
            .filter(|(_, w)| w.counted > 0)
            .map(|(_, w)| Decision {
                count: w.counted,
                ..w.last
            })
            .collect();
        out.sort_by(|a, b| (&a.host, a.port, &a.rule).cmp(&(&b.host, b.port, &b.rule)));
        out.extend(
            std::mem::take(&mut self.open)
                .into_values()
                .map(|d| Decision {
                    phase: Phase::OpenAtExit,
                    ..d
                }),
        );
        out
    }
}

/// Writes the proxy's decisions to `sink` as [`Merger`] says, until
/// `stop` completes or every sender is gone; then waits up to `grace` for
/// open connections to close, and writes the rest.
pub async fn forward(
    mut decisions: UnboundedReceiver<Decision>,
    stop: impl Future,
    grace: Duration,
    mut sink: impl FnMut(&Decision),
) {
    let mut m = Merger::new(MERGE_WINDOW);
    tokio::pin!(stop);
    let mut senders_gone = false;
    loop {
        let due = m.next_due();
        tokio::select! {
            d = decisions.recv() => match d {
                Some(d) => m.push(d, Instant::now()).iter().for_each(&mut sink),
                None => {
                    senders_gone = true;
                    break;
                }
            },
            _ = sleep_until(due), if due.is_some() => {
                m.due(Instant::now()).iter().for_each(&mut sink);
            }
            _ = &mut stop => break,
        }
    }
    let end = Instant::now() + grace;
    while !senders_gone {
        let wait = if m.has_open() {
            end.saturating_duration_since(Instant::now())
        } else {
            Duration::ZERO
        };
        match tokio::time::timeout(wait, decisions.recv()).await {
            Ok(Some(d)) => m.push(d, Instant::now()).iter().for_each(&mut sink),
            Ok(None) => senders_gone = true,
            // Nothing more within the grace (or nothing waiting now).
            Err(_) => break,
        }
    }
    m.finish().iter().for_each(&mut sink);
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}
