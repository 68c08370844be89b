//! How often one tab may tell the person of one state: at most once per
//! [`QUIET`]. A program whose screen flickers between a prompt and its
//! answer (or a sandboxed agent that does so on purpose) would otherwise
//! raise a notification, and start a command, at every flicker. A tab that
//! is blocked, then done, is told both times. Pure over plain data: the
//! caller brings the clock.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::protocol::api::AgentState;

pub const QUIET: Duration = Duration::from_secs(10);

/// When each tab last told of each state, within [`QUIET`].
#[derive(Debug, Default)]
pub struct Recent {
    last: HashMap<(String, AgentState), Instant>,
}

impl Recent {
    /// Whether `tab` may tell of `state` at `now`; if so, that is recorded.
    /// Entries older than [`QUIET`] are dropped, so closed tabs leave
    /// nothing behind for long.
    pub fn admit(&mut self, tab: &str, state: AgentState, now: Instant) -> bool {
        self.last
            .retain(|_, told| now.saturating_duration_since(*told) < QUIET);
        let key = (tab.to_owned(), state);
        if self.last.contains_key(&key) {
            return false;
        }
        self.last.insert(key, now);
        true
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.last.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use AgentState::*;

    #[test]
    fn every_row() {
        let t0 = Instant::now();
        let at = |secs: f64| t0 + Duration::from_secs_f64(secs);
        // Each row runs on what the rows before it recorded.
        #[rustfmt::skip]
        let rows = [
            ("the first is told",                       "a", Blocked, at(0.0),  true),
            ("the same again at once is not",           "a", Blocked, at(0.5),  false),
            ("nor just inside the quiet time",          "a", Blocked, at(9.9),  false),
            ("another state of the same tab is",        "a", Done,    at(1.0),  true),
            ("the same state of another tab is",        "b", Blocked, at(1.0),  true),
            ("once the quiet time is over, it is",      "a", Blocked, at(10.0), true),
            ("and that starts a new quiet time",        "a", Blocked, at(15.0), false),
            ("a clock read out of order tells nothing", "a", Blocked, at(2.0),  false),
        ];
        let mut recent = Recent::default();
        for (name, tab, state, now, want) in rows {
            assert_eq!(recent.admit(tab, state, now), want, "{name}");
        }
    }

    #[test]
    fn old_entries_are_dropped() {
        let t0 = Instant::now();
        let mut recent = Recent::default();
        for (i, tab) in ["a", "b", "c"].iter().enumerate() {
            recent.admit(tab, Done, t0 + Duration::from_secs(i as u64));
        }
        assert_eq!(recent.len(), 3);
        recent.admit("d", Done, t0 + Duration::from_secs(11));
        // a (0 s) and b (1 s) are past; c (2 s) is not.
        assert_eq!(recent.len(), 2);
    }
}
