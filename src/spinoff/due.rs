//! Whether a spun-off tab is "report due" (README.md, "Spinoffs"): its
//! agent's turn on the task ended (idle or done, entered after the task
//! was typed) and it reported nothing. The window marks such a tab and
//! offers the person to report its last answer to its parent (`nerdr
//! report-result --for TAB`). Pure over plain data, each case a row of the
//! table test below; the core gathers the facts (the spinoff record, the
//! tab's agent state and when it was entered).

use std::time::SystemTime;

use crate::protocol::api::AgentState;

/// What the rule reads of one tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    /// `nerdr spinoff` started it (its record is there).
    pub spun_off: bool,
    /// When its task was typed; `None` until it was.
    pub prompted_at: Option<SystemTime>,
    /// It reported a result (itself, or the person for it).
    pub reported: bool,
    /// Its agent's state; `None` when its program is not running.
    pub agent_state: Option<AgentState>,
    /// When that state was entered.
    pub since: Option<SystemTime>,
}

/// The tab's turn on its task ended with no result reported.
pub fn report_due(f: &Facts) -> bool {
    let ended = matches!(f.agent_state, Some(AgentState::Idle | AgentState::Done));
    // An idle entered before the task was typed is the wait for the task,
    // not the end of a turn on it.
    let after_task = matches!((f.prompted_at, f.since), (Some(p), Some(s)) if s >= p);
    f.spun_off && !f.reported && ended && after_task
}

/// Milliseconds since the epoch, as `spinoffs.json` keeps when a task
/// was typed.
pub fn millis(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The time [`millis`] gave.
pub fn from_millis(ms: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use AgentState::*;

    #[test]
    fn a_turn_that_ends_unreported_is_due_and_nothing_else_is() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1000);
        let before = Some(t0 - Duration::from_secs(5));
        let after = Some(t0 + Duration::from_secs(5));
        let typed = Some(t0);
        // (spun off, task typed at, reported, agent state, since, due)
        #[rustfmt::skip]
        let rows = [
            // The turn on the task ended (idle, or done unseen): due.
            (true, typed, false, Some(Idle), after, true),
            (true, typed, false, Some(Done), after, true),
            (true, typed, false, Some(Idle), typed, true),
            // Already reported (by itself or the person): not due.
            (true, typed, true, Some(Idle), after, false),
            (true, typed, true, Some(Done), after, false),
            // Not a spinoff: nobody to report to.
            (false, typed, false, Some(Idle), after, false),
            (false, None, false, Some(Done), after, false),
            // Its task not typed yet, or the idle it waited in for it.
            (true, None, false, Some(Idle), after, false),
            (true, typed, false, Some(Idle), before, false),
            (true, typed, false, Some(Done), before, false),
            // Still on its turn, or waiting for the person, or unreadable.
            (true, typed, false, Some(Working), after, false),
            (true, typed, false, Some(Blocked), after, false),
            (true, typed, false, Some(Unknown), after, false),
            // Its program is not running.
            (true, typed, false, None, after, false),
            (true, typed, false, Some(Idle), None, false),
        ];
        for (spun_off, prompted_at, reported, agent_state, since, want) in rows {
            let f = Facts {
                spun_off,
                prompted_at,
                reported,
                agent_state,
                since,
            };
            assert_eq!(report_due(&f), want, "{f:?}");
        }
    }

    #[test]
    fn millis_round_trip() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_123);
        assert_eq!(from_millis(millis(t)), t);
    }
}
