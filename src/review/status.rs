//! A requested review's status, as `nerdr reviews` and the window show
//! it: from what the store and the reviewer's tab say to a state and the
//! words for a person. Pure; the core gathers the facts.

use serde::{Deserialize, Serialize};

/// How a reviewer's tab stands (`protocol::api::TabState`, restated so
/// this module needs nothing of the protocol, which carries reviews).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Run {
    Starting,
    Running,
    Exited,
    Refused,
}

/// The reviewer's tab as the core sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reviewer<'a> {
    pub tab: &'a str,
    pub agent: &'a str,
    pub state: Run,
    pub exit_code: Option<i32>,
    pub sandboxed: bool,
    /// What of nerdr its sandbox check found out of reach from inside
    /// (the hook socket, `$NERDR_BIN`), in words; `None`: all of it there.
    pub nerdr_missing: Option<&'a str>,
}

/// What a status is decided from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts<'a> {
    /// The number of the review it posted, once it has.
    pub posted: Option<u32>,
    /// Its tab; `None` once closed.
    pub reviewer: Option<Reviewer<'a>>,
}

/// Where a requested review is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Its tab is starting (its sandbox being checked, say).
    #[default]
    Requested,
    /// The reviewer runs and can post.
    AtWork,
    /// It posted its review.
    Posted,
    /// It runs, but its sandbox keeps it from nerdr: it cannot post.
    CannotReachNerdr,
    /// Its sandbox check refused it: it never started.
    Refused,
    /// It exited without posting.
    Ended,
    /// Its tab was closed without a review.
    Closed,
}

/// The status and its line for a person (one line: the window shows it
/// as a status line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub state: State,
    pub words: String,
}

/// A requested review's status. A posted review is posted whatever its
/// tab did after; a reviewer that cannot reach nerdr says so while it
/// runs, since that is when the person can still do something about it.
pub fn status(f: &Facts) -> Status {
    let done = |state: State, words: String| Status { state, words };
    if let Some(n) = f.posted {
        return done(State::Posted, format!("posted as review {n}"));
    }
    let Some(r) = f.reviewer else {
        return done(State::Closed, "closed without a review".into());
    };
    let tab = r.tab;
    match r.state {
        Run::Refused => done(
            State::Refused,
            format!(
                "refused by its sandbox check, not started (`nerdr read {tab}` says why; \
                 `nerdr restart {tab}` once it is fixed)"
            ),
        ),
        Run::Exited => done(
            State::Ended,
            match r.exit_code {
                Some(c) => format!("ended without a review (exit code {c})"),
                None => "ended without a review (killed by a signal)".into(),
            },
        ),
        Run::Starting | Run::Running => match r.nerdr_missing.filter(|_| r.sandboxed) {
            Some(missing) => done(
                State::CannotReachNerdr,
                format!(
                    "cannot post: its sandbox blocks it from reaching nerdr ({missing}); allow \
                     that in the sandbox settings of agent `{}` and `nerdr restart {tab}`, or \
                     read its review on its screen (`nerdr read {tab}`)",
                    r.agent
                ),
            ),
            None if r.state == Run::Starting => done(
                State::Requested,
                "requested, the reviewer is starting".into(),
            ),
            None => done(State::AtWork, "reviewer at work".into()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reviewer(state: Run, sandboxed: bool, missing: Option<&str>) -> Reviewer<'_> {
        Reviewer {
            tab: "r1",
            agent: "boxed",
            state,
            exit_code: None,
            sandboxed,
            nerdr_missing: missing,
        }
    }

    #[test]
    fn every_fact_gives_its_status() {
        let cut = Some("the hook socket /s/nerdr.sock: ENOENT");
        let ended = |code| Reviewer {
            exit_code: code,
            ..reviewer(Run::Exited, true, None)
        };
        // Name, posted, the reviewer's tab, then the state and how its words start.
        type Row<'a> = (&'a str, Option<u32>, Option<Reviewer<'a>>, State, &'a str);
        let rows: Vec<Row> = vec![
            (
                "posted, whatever its tab did",
                Some(2),
                Some(ended(Some(1))),
                State::Posted,
                "posted as review 2",
            ),
            (
                "posted, tab closed",
                Some(1),
                None,
                State::Posted,
                "posted as review 1",
            ),
            (
                "closed unposted",
                None,
                None,
                State::Closed,
                "closed without a review",
            ),
            (
                "starting",
                None,
                Some(reviewer(Run::Starting, true, None)),
                State::Requested,
                "requested, the reviewer is starting",
            ),
            (
                "running",
                None,
                Some(reviewer(Run::Running, true, None)),
                State::AtWork,
                "reviewer at work",
            ),
            (
                "running, nerdr out of reach",
                None,
                Some(reviewer(Run::Running, true, cut)),
                State::CannotReachNerdr,
                "cannot post: its sandbox blocks it from reaching nerdr (the hook socket \
                 /s/nerdr.sock: ENOENT); allow that in the sandbox settings of agent `boxed` \
                 and `nerdr restart r1`, or read its review on its screen (`nerdr read r1`)",
            ),
            (
                "starting, nerdr out of reach",
                None,
                Some(reviewer(Run::Starting, true, cut)),
                State::CannotReachNerdr,
                "cannot post",
            ),
            (
                "outside any sandbox nothing is cut off",
                None,
                Some(reviewer(Run::Running, false, cut)),
                State::AtWork,
                "reviewer at work",
            ),
            (
                "exited",
                None,
                Some(ended(Some(3))),
                State::Ended,
                "ended without a review (exit code 3)",
            ),
            (
                "exited, out of reach too",
                None,
                Some(Reviewer {
                    nerdr_missing: cut,
                    ..ended(Some(0))
                }),
                State::Ended,
                "ended without a review (exit code 0)",
            ),
            (
                "killed",
                None,
                Some(ended(None)),
                State::Ended,
                "ended without a review (killed by a signal)",
            ),
            (
                "refused",
                None,
                Some(reviewer(Run::Refused, true, None)),
                State::Refused,
                "refused by its sandbox check, not started (`nerdr read r1` says why; \
                 `nerdr restart r1` once it is fixed)",
            ),
        ];
        for (name, posted, reviewer, state, words) in rows {
            let got = status(&Facts { posted, reviewer });
            assert_eq!(got.state, state, "{name}");
            assert!(got.words.starts_with(words), "{name}: {}", got.words);
            assert!(!got.words.contains('\n'), "{name}");
        }
    }
}
