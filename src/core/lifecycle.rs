//! A tab's life as a pure function: its state, pid and exit code, and what
//! each thing that happens to its program does to them. The launch, the
//! host's events and a starting core's rebuild all go through [`next`], so
//! the rules (a program that already ended stays `exited`; a lost holder's
//! -1 never overwrites a real exit code; a refused tab stays refused when
//! the core restarts) are written once, here, and tested as a table.

use super::state::Tab;
use crate::protocol::api::TabState;

/// The part of a tab its program's life decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Life {
    pub state: TabState,
    pub pid: Option<u32>,
    pub start_time: Option<u64>,
    pub exit_code: Option<i32>,
}

impl Life {
    /// A tab just recorded, its program not yet started.
    pub const STARTING: Life = Life {
        state: TabState::Starting,
        pid: None,
        start_time: None,
        exit_code: None,
    };
}

/// Tab `t` after `event`: [`next`] over its fields. Returns whether
/// anything changed.
pub fn apply(t: &mut Tab, event: Event) -> bool {
    let now = Life {
        state: t.state,
        pid: t.pid,
        start_time: t.start_time,
        exit_code: t.exit_code,
    };
    let after = next(now, event);
    t.state = after.state;
    t.pid = after.pid;
    t.start_time = after.start_time;
    t.exit_code = after.exit_code;
    after != now
}

/// What happened to a tab's program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The host started it (its spawn reply or its `Started` event; either
    /// may come first).
    Started { pid: u32, start_time: u64 },
    /// It ended with `code`; -1 when its holder was lost and the real code
    /// cannot be known.
    Exited { code: i32 },
    /// The sandbox check refused to start it.
    Refused,
    /// A starting core found it still held: `pid` 0 when the previous core
    /// went while it was being started, `exit_code` when it has ended.
    Found {
        pid: u32,
        start_time: u64,
        exit_code: Option<i32>,
    },
    /// A starting core found it in `tabs.json` only: its holder is gone.
    Missing,
}

/// Whether the exit of program `exited` (its pid; none when its holder was
/// lost) is of a program the tab no longer runs: a restart or a switch
/// stops the old program and starts the new one before the old one's exit
/// is reported (the holder reports it over its socket). It is not the new
/// program's when the tab runs another pid, or when the tab has no pid yet
/// and `exited` is the pid it ran before (`replaced`). An exit with no pid
/// (a lost holder) ends whatever runs.
pub fn stale_exit(exited: Option<u32>, current: Option<u32>, replaced: Option<u32>) -> bool {
    match (exited, current) {
        (None, _) => false,
        (Some(p), Some(c)) => p != c,
        (Some(p), None) => replaced == Some(p),
    }
}

/// The tab's life after `event`.
pub fn next(now: Life, event: Event) -> Life {
    match event {
        Event::Started { pid, start_time } => Life {
            pid: Some(pid),
            start_time: Some(start_time),
            // A program that already ended (its exit reported before its
            // start) keeps its `exited` state, and a refused tab its reason.
            state: match now.state {
                TabState::Starting => TabState::Running,
                other => other,
            },
            ..now
        },
        // A program already known to have ended keeps its real exit code
        // when its holder is lost later (code -1), or reports twice.
        Event::Exited { .. } if now.exit_code.is_some() => now,
        Event::Exited { code } => Life {
            state: TabState::Exited,
            exit_code: Some(code),
            ..now
        },
        Event::Refused => Life {
            state: TabState::Refused,
            ..now
        },
        // The holder's record is the truth: it is the one that held it.
        Event::Found {
            pid,
            start_time,
            exit_code,
        } => {
            let pid = Some(pid).filter(|p| *p != 0);
            Life {
                state: match (exit_code, pid) {
                    (Some(_), _) => TabState::Exited,
                    (None, None) => TabState::Starting,
                    (None, Some(_)) => TabState::Running,
                },
                pid,
                start_time: pid.map(|_| start_time),
                exit_code,
            }
        }
        // Nothing runs it any more; a refused tab still says why it never
        // ran.
        Event::Missing => Life {
            state: match now.state {
                TabState::Refused => TabState::Refused,
                _ => TabState::Exited,
            },
            ..now
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TabState::*;

    fn life(state: TabState, pid: Option<u32>, exit_code: Option<i32>) -> Life {
        Life {
            state,
            pid,
            start_time: pid.map(|_| 7),
            exit_code,
        }
    }

    const STARTED: Event = Event::Started {
        pid: 42,
        start_time: 7,
    };
    const EXIT_0: Event = Event::Exited { code: 0 };
    const EXIT_3: Event = Event::Exited { code: 3 };
    const LOST: Event = Event::Exited { code: -1 };
    const FOUND_RUNNING: Event = Event::Found {
        pid: 42,
        start_time: 7,
        exit_code: None,
    };
    const FOUND_EXITED: Event = Event::Found {
        pid: 42,
        start_time: 7,
        exit_code: Some(5),
    };
    const FOUND_UNSTARTED: Event = Event::Found {
        pid: 0,
        start_time: 0,
        exit_code: None,
    };

    /// Every state a tab can be in, as the table's "before" column uses it.
    fn before(state: TabState) -> Life {
        match state {
            Starting => life(Starting, None, None),
            Running => life(Running, Some(42), None),
            Exited => life(Exited, Some(42), Some(3)),
            Refused => life(Refused, None, None),
        }
    }

    #[test]
    fn only_the_running_programs_exit_ends_the_tab() {
        /// (what, the exit's pid, the tab's pid, the pid it ran before, stale)
        type Row = (&'static str, Option<u32>, Option<u32>, Option<u32>, bool);
        #[rustfmt::skip]
        let rows: &[Row] = &[
            ("its own exit", Some(7), Some(7), None, false),
            ("its own exit, after a restart", Some(8), Some(8), Some(7), false),
            ("the replaced program's, once the new one runs", Some(7), Some(8), Some(7), true),
            ("the replaced program's, before the new one's pid is known", Some(7), None, Some(7), true),
            ("another program's while it runs", Some(9), Some(8), None, true),
            ("an exit before the start is reported (a quick program)", Some(8), None, Some(7), false),
            ("an exit before the start, never restarted", Some(8), None, None, false),
            ("a lost holder's (no pid) ends it", None, Some(8), Some(7), false),
            ("a lost holder's before a start", None, None, None, false),
        ];
        for (what, exited, current, replaced, stale) in rows {
            assert_eq!(stale_exit(*exited, *current, *replaced), *stale, "{what}");
        }
    }

    #[test]
    fn every_state_meets_every_event_as_the_table_says() {
        #[rustfmt::skip]
        let table: &[(&str, TabState, Event, Life)] = &[
            ("a starting program that starts is running", Starting, STARTED, life(Running, Some(42), None)),
            ("a running program started again keeps running, with the newest pid", Running, STARTED, life(Running, Some(42), None)),
            ("a program that ended before its start was reported stays exited", Exited, STARTED, life(Exited, Some(42), Some(3))),
            ("a refused tab stays refused if a start is reported", Refused, STARTED, life(Refused, Some(42), None)),

            ("a starting program that exits is exited, with its code", Starting, EXIT_0, life(Exited, None, Some(0))),
            ("a running program that exits is exited, with its code", Running, EXIT_3, life(Exited, Some(42), Some(3))),
            ("an exited program's code is not overwritten by a second exit", Exited, EXIT_0, life(Exited, Some(42), Some(3))),
            ("a refused tab that gets an exit is exited", Refused, EXIT_3, life(Exited, None, Some(3))),

            ("a running program whose holder is lost is exited with -1", Running, LOST, life(Exited, Some(42), Some(-1))),
            ("a lost holder's -1 does not overwrite a real exit code", Exited, LOST, life(Exited, Some(42), Some(3))),
            ("a starting program whose holder is lost is exited with -1", Starting, LOST, life(Exited, None, Some(-1))),
            ("a refused tab whose holder is lost is exited with -1", Refused, LOST, life(Exited, None, Some(-1))),

            ("the sandbox check refuses a starting tab", Starting, Event::Refused, life(Refused, None, None)),
            ("a refusal of a running tab leaves its pid on record", Running, Event::Refused, life(Refused, Some(42), None)),
            ("a refusal of an exited tab keeps its exit code", Exited, Event::Refused, life(Refused, Some(42), Some(3))),
            ("a refused tab refused again stays refused", Refused, Event::Refused, life(Refused, None, None)),

            ("a held program found running is running", Starting, FOUND_RUNNING, life(Running, Some(42), None)),
            ("a held program found running is running, whatever was saved", Exited, FOUND_RUNNING, life(Running, Some(42), None)),
            ("a held program found exited is exited with the holder's code", Running, FOUND_EXITED, life(Exited, Some(42), Some(5))),
            ("a held program found exited replaces the saved code", Exited, FOUND_EXITED, life(Exited, Some(42), Some(5))),
            ("a held program found with pid 0 is still starting, with no pid", Running, FOUND_UNSTARTED, life(Starting, None, None)),
            ("a refused tab the holder has is what the holder says", Refused, FOUND_RUNNING, life(Running, Some(42), None)),

            ("a listed tab the holder lost shows as exited", Running, Event::Missing, life(Exited, Some(42), None)),
            ("a listed starting tab the holder lost shows as exited", Starting, Event::Missing, life(Exited, None, None)),
            ("a listed exited tab keeps its exit code", Exited, Event::Missing, life(Exited, Some(42), Some(3))),
            ("a listed refused tab stays refused, with its reason", Refused, Event::Missing, life(Refused, None, None)),
        ];
        for (sentence, state, event, want) in table {
            assert_eq!(next(before(*state), *event), *want, "{sentence}");
        }
        // Every (state, event kind) pair has its row.
        let kinds = |e: &Event| match e {
            Event::Started { .. } => 0,
            Event::Exited { code: -1 } => 1,
            Event::Exited { .. } => 2,
            Event::Refused => 3,
            Event::Found { .. } => 4,
            Event::Missing => 5,
        };
        for state in [Starting, Running, Exited, Refused] {
            for kind in 0..6 {
                assert!(
                    table
                        .iter()
                        .any(|(_, s, e, _)| *s == state && kinds(e) == kind),
                    "no row for {state:?} and event kind {kind}"
                );
            }
        }
    }

    #[test]
    fn a_new_tab_starts_with_no_program() {
        assert_eq!(Life::STARTING, life(Starting, None, None));
    }
}
