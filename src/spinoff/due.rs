//! Whether a spun-off tab is "report due" (README.md, "Spinoffs"): its
//! agent's turn on the task ended (idle or done, and a turn ended after
//! the task was typed) and it reported nothing. The window marks such a tab and
//! offers the person to report its last answer to its parent (`nerdr
//! report-result --for TAB`). Pure over plain data, each case a row of the
//! table test below; the core gathers the facts (the spinoff record, the
//! tab's agent state and when it was entered).

use std::time::SystemTime;

/// What the rule reads of one tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    /// `nerdr spinoff` started it (its record is there).
    pub spun_off: bool,
    /// When its task was typed; `None` until it was.
    pub prompted_at: Option<SystemTime>,
    /// It reported a result (itself, or the person for it).
    pub reported: bool,
    /// Its agent is idle or done (the core reads its agent state: working,
    /// blocked, unknown, or a program not running are not).
    pub turn_ended: bool,
    /// When its last turn ended (`Tracker::turn_ended_at`): the idle it
    /// waited in for its task is no turn, and a turn too fast to be seen
    /// working, once its task was typed, still ends.
    pub ended: Option<SystemTime>,
}

/// The tab's turn on its task ended with no result reported.
pub fn report_due(f: &Facts) -> bool {
    // A turn that ended before the task was typed is not the turn on it.
    let after_task = matches!((f.prompted_at, f.ended), (Some(p), Some(e)) if e >= p);
    f.spun_off && !f.reported && f.turn_ended && after_task
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

    #[test]
    fn a_turn_that_ends_unreported_is_due_and_nothing_else_is() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1000);
        let before = Some(t0 - Duration::from_secs(5));
        let after = Some(t0 + Duration::from_secs(5));
        let typed = Some(t0);
        // (spun off, task typed at, reported, turn ended, last turn ended at, due)
        #[rustfmt::skip]
        let rows = [
            // The turn on the task ended (idle, or done unseen): due.
            (true, typed, false, true, after, true),
            (true, typed, false, true, typed, true),
            // Already reported (by itself or the person): not due.
            (true, typed, true, true, after, false),
            // Not a spinoff: nobody to report to.
            (false, typed, false, true, after, false),
            (false, None, false, true, after, false),
            // Its task not typed yet, or a turn that ended before it was.
            (true, None, false, true, after, false),
            (true, typed, false, true, before, false),
            // Still on its turn, waiting for the person, unreadable, or its
            // program not running (the core reads each as not ended).
            (true, typed, false, false, after, false),
            // No turn ended yet (idle since it started, waiting for its task).
            (true, typed, false, true, None, false),
        ];
        for (spun_off, prompted_at, reported, turn_ended, ended, want) in rows {
            let f = Facts {
                spun_off,
                prompted_at,
                reported,
                turn_ended,
                ended,
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
