//! Noticing a sandboxed agent whose reports never reach nerdr: a turn
//! starts when someone types Enter into the agent's tab and ends once its
//! output has gone quiet; a turn with no report from the agent (its hooks
//! run `nerdr hook ...`) usually means the sandbox blocks `NERDR_BIN` or the
//! hook socket. The person is told once per tab. Pure: callers hand in the
//! time.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// Output quiet for this long ends a turn.
pub const QUIET: Duration = Duration::from_secs(4);

#[derive(Debug, Default)]
pub struct Turns {
    open: HashMap<String, Turn>,
    warned: HashSet<String>,
}

#[derive(Debug, Clone, Copy)]
struct Turn {
    last_output: Option<Instant>,
    reported: bool,
}

impl Turns {
    /// Input typed into a watched tab; Enter starts a turn. Whether one
    /// did.
    pub fn input(&mut self, tab: &str, bytes: &[u8]) -> bool {
        if bytes.contains(&b'\r') && !self.warned.contains(tab) {
            self.open.entry(tab.to_string()).or_insert(Turn {
                last_output: None,
                reported: false,
            });
            return true;
        }
        false
    }

    /// Whether a turn is open (and so worth looking at again).
    pub fn watching(&self) -> bool {
        !self.open.is_empty()
    }

    pub fn output(&mut self, tab: &str, now: Instant) {
        if let Some(t) = self.open.get_mut(tab) {
            t.last_output = Some(now);
        }
    }

    /// A report from the tab's agent: its integration works.
    pub fn reported(&mut self, tab: &str) {
        if let Some(t) = self.open.get_mut(tab) {
            t.reported = true;
        }
    }

    pub fn forget(&mut self, tab: &str) {
        self.open.remove(tab);
        self.warned.remove(tab);
    }

    /// Close the turns that went quiet; the tabs to warn about (each once).
    pub fn ended(&mut self, now: Instant) -> Vec<String> {
        let done: Vec<(String, bool)> = self
            .open
            .iter()
            .filter(|(_, t)| {
                t.last_output
                    .is_some_and(|o| now.duration_since(o) >= QUIET)
            })
            .map(|(id, t)| (id.clone(), t.reported))
            .collect();
        let mut warn = Vec::new();
        for (id, reported) in done {
            self.open.remove(&id);
            if !reported && self.warned.insert(id.clone()) {
                warn.push(id);
            }
        }
        warn
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_and_warnings() {
        let t0 = Instant::now();
        let later = |s: u64| t0 + Duration::from_secs(s);
        // (what happens, tabs warned about at the end of it)
        let mut w = Turns::default();
        w.input("a", b"hi");
        w.output("a", t0);
        assert!(w.ended(later(60)).is_empty(), "no Enter, no turn");

        w.input("a", b"hi\r");
        assert!(
            w.ended(later(60)).is_empty(),
            "no output yet: still working"
        );
        w.output("a", later(1));
        assert!(w.ended(later(2)).is_empty(), "output not quiet long enough");
        assert_eq!(w.ended(later(1) + QUIET), vec!["a".to_string()]);

        w.input("a", b"again\r");
        w.output("a", later(10));
        assert!(w.ended(later(30)).is_empty(), "warned once per tab");

        w.input("b", b"go\r");
        w.output("b", later(1));
        w.reported("b");
        assert!(w.ended(later(30)).is_empty(), "a report: nothing to say");
        w.input("b", b"go\r");
        w.output("b", later(31));
        assert_eq!(
            w.ended(later(40)),
            vec!["b".to_string()],
            "next turn silent"
        );

        w.forget("b");
        w.input("b", b"go\r");
        w.output("b", later(41));
        assert_eq!(
            w.ended(later(50)),
            vec!["b".to_string()],
            "a new tab is new"
        );
    }
}
