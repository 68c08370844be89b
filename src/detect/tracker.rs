//! One tab's agent state: the state machine that combines the screen
//! rules' verdicts, codex's OSC 7501, the hooks' reports, output activity
//! and whether a window shows the tab. Pure: the core hands it bytes,
//! screens, reports and the time, under its state lock, and runs a timer
//! only when [`Tracker::deadline`] asks for one.
//!
//! How the signals combine (the table tests in `tracker_tests.rs` hold
//! every row):
//! - Each signal is evidence for a state ([`Evidence`]); [`next_state`]
//!   turns evidence into the new state: a turn that ends (working → idle)
//!   while no window shows the tab is `done`, and `done` stays until a
//!   window shows it (then `idle`) or new work starts. A turn is known
//!   only from a positive sign (a rule, OSC 7501 or a report saying
//!   working, or a report or OSC saying it ended): a program drawing its
//!   first screen looks busy, and must not end up `done`.
//! - A positive screen match is the newest evidence there is: it wins
//!   over reports, which can be late (claude's Notification hook arrives
//!   up to a minute after the fact) or missing (no hook fires on a
//!   permission answer or an Esc). A report that arrives while the screen
//!   is settling waits for the next look; one that the current, matched
//!   screen contradicts is dropped. A report counts at once only when no
//!   rule matches the screen (or there are no rules).
//! - OSC 7501 counts at once: it comes in the output, in order with the
//!   screen it describes. Once an agent speaks it, it tells its own
//!   working and idle (codex's title spins while it starts, after it said
//!   idle): screen rules then add only its dialogs, and when a dialog is
//!   gone the state is what the agent last said. Its `idle` is never a
//!   turn's end (codex says `done` for that).
//! - A screen that looks idle counts only after the output has been quiet
//!   for the rules' `quiet_ms` (codex hides its Working line while an
//!   answer streams).
//! - With no rule matching and no OSC or report ever seen, output flowing
//!   means working and a quiet period means idle. With no rules and no
//!   OSC or report, the state is unknown.
//! - `blocked` comes only from a positive match: a rule, OSC 7501
//!   `state=blocked`, or a report that means it.
//! - The screen is looked at only after output, at most every
//!   [`EVAL_INTERVAL`]: an idle tab has no deadline, so no timer runs.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use super::eval::evaluate;
use super::reports::{self, Evidence};
use super::rules::{RuleSet, RuleState};
use super::signals::{OscState, Scanner, Signal};
use super::{AgentState, Cause, Change, ScreenView};

/// The shortest time between two looks at a tab's screen.
pub const EVAL_INTERVAL: Duration = Duration::from_millis(100);
/// How long after the first output the screen is looked at, so a redraw
/// that comes in several writes is seen whole.
pub const SETTLE: Duration = Duration::from_millis(20);

/// The state evidence leads to, from the current state, whether a window
/// shows the tab, and whether a turn is known to run (positive working
/// evidence came since the tab was last idle).
pub fn next_state(current: AgentState, evidence: Evidence, shown: bool, turn: bool) -> AgentState {
    use AgentState::*;
    match evidence {
        Evidence::Working | Evidence::Flowing => Working,
        Evidence::Blocked => Blocked,
        // Said outright: a turn ended; unseen, it is done.
        Evidence::TurnEnded => match current {
            Working | Blocked | Done if !shown => Done,
            _ => Idle,
        },
        // Waiting for a prompt: done if a turn ran, unseen, before it.
        // Without one (a first screen drawn, a dialog at start-up
        // answered) it is just idle.
        Evidence::Idle => match current {
            Done if !shown => Done,
            Working | Blocked if !shown && turn => Done,
            _ => Idle,
        },
        // The agent says it waits, and would have said `done` had a turn
        // ended.
        Evidence::Ready => match current {
            Done if !shown => Done,
            _ => Idle,
        },
    }
}

/// One tab's detection.
#[derive(Debug)]
pub struct Tracker {
    scanner: Scanner,
    t: State,
}

#[derive(Debug)]
struct State {
    rules: Option<Arc<RuleSet>>,
    state: AgentState,
    since: SystemTime,
    cause: Cause,
    bells: u64,
    shown: bool,
    /// A turn is known to run: positive working evidence came since the
    /// state was last idle or done, or nerdr typed a prompt and Enter.
    turn: bool,
    /// When a turn last ended (said so, or a known turn met idle), even
    /// where the state stayed idle: a turn too fast to be seen working
    /// still ends here (`spinoff::due`).
    ended: Option<SystemTime>,
    last_seq: Option<u64>,
    /// An OSC 7501 or a report was seen: the agent tells its turns, so
    /// output activity alone no longer moves the state.
    told: bool,
    last_output: Option<Instant>,
    /// Output came since the last look (when it started).
    dirty_since: Option<Instant>,
    last_eval: Option<Instant>,
    /// The last look's outcome waits for the output to go quiet.
    quiet_recheck: bool,
    /// The last look matched a rule, and the screen has not changed since.
    screen_matched: bool,
    /// What the agent last said in OSC 7501 (and its words): once it
    /// speaks it, it tells its own working and idle, and the screen adds
    /// only its dialogs.
    osc: Option<Evidence>,
    osc_said: String,
    /// A report waiting for the screen to settle.
    pending: Option<(Evidence, String)>,
    /// The `limit = true` rule the last look matched, by name: the agent
    /// hit its plan's limit.
    limit: Option<String>,
}

impl State {
    /// Move to what `evidence` leads to; `what` (said only on a change,
    /// so output with an OSC in it allocates nothing otherwise) is the
    /// cause.
    fn set(
        &mut self,
        evidence: Evidence,
        what: impl FnOnce() -> String,
        lines: Vec<String>,
        wall: SystemTime,
    ) {
        let to = next_state(self.state, evidence, self.shown, self.turn);
        if evidence == Evidence::Working {
            self.turn = true;
        }
        if matches!(to, AgentState::Idle | AgentState::Done) {
            if self.turn || evidence == Evidence::TurnEnded {
                self.ended = Some(wall);
            }
            self.turn = false;
        }
        if to != self.state {
            self.state = to;
            self.since = wall;
            self.cause = Cause {
                what: what(),
                lines,
            };
        }
    }

    /// A rule's verdict: the state it leads to, as [`State::set`], and
    /// [`State::confirm`].
    fn set_by_rule(
        &mut self,
        evidence: Evidence,
        what: String,
        lines: Vec<String>,
        wall: SystemTime,
    ) {
        let from = self.state;
        self.set(evidence, || what.clone(), lines.clone(), wall);
        if self.state == from {
            self.confirm(evidence, what, lines);
        }
    }

    /// A rule that says the state the tab is in becomes its cause, so
    /// `nerdr explain` shows the rule and lines that hold the state now
    /// (not the OSC or report that set it first). A `done` keeps the
    /// cause that made it done.
    fn confirm(&mut self, evidence: Evidence, what: String, lines: Vec<String>) {
        let says = match evidence {
            Evidence::Working => Some(AgentState::Working),
            Evidence::Blocked => Some(AgentState::Blocked),
            Evidence::Idle => Some(AgentState::Idle),
            _ => None,
        };
        if says == Some(self.state) && self.cause.what != what {
            self.cause = Cause { what, lines };
        }
    }

    fn quiet(&self) -> std::time::Duration {
        self.rules
            .as_ref()
            .map_or(super::rules::DEFAULT_QUIET, |r| r.quiet())
    }

    fn osc(&mut self, state: OscState, payload: &str, wall: SystemTime) {
        self.told = true;
        self.osc_said.clear();
        // The agent's own words, shown by `nerdr explain` (and in its
        // JSON): a control character in them is kept as an escape.
        if payload.chars().any(char::is_control) {
            self.osc_said.push_str(&crate::protocol::printable(payload));
        } else {
            self.osc_said.push_str(payload);
        }
        let evidence = match state {
            OscState::Working => Evidence::Working,
            OscState::Blocked => Evidence::Blocked,
            OscState::Done => Evidence::TurnEnded,
            OscState::Idle => Evidence::Ready,
        };
        self.osc = Some(evidence);
        let said = std::mem::take(&mut self.osc_said);
        self.set(evidence, || format!("osc 7501 {said}"), Vec::new(), wall);
        self.osc_said = said;
    }
}

fn change(from: AgentState, to: AgentState) -> Option<Change> {
    (from != to).then_some(Change { from, to })
}

fn secs(d: Duration) -> String {
    format!("{}s", d.as_secs_f64())
}

impl Tracker {
    /// A tab's tracker, not shown in any window until [`Tracker::shown`].
    pub fn new(rules: Option<Arc<RuleSet>>, now: Instant, wall: SystemTime) -> Self {
        let _ = now;
        let what = match &rules {
            Some(_) => "nothing seen yet",
            None => "no rules for this agent, and no report or OSC 7501 yet",
        };
        Tracker {
            scanner: Scanner::default(),
            t: State {
                rules,
                state: AgentState::Unknown,
                since: wall,
                cause: Cause {
                    what: what.into(),
                    lines: Vec::new(),
                },
                bells: 0,
                shown: false,
                turn: false,
                ended: None,
                last_seq: None,
                told: false,
                last_output: None,
                dirty_since: None,
                last_eval: None,
                quiet_recheck: false,
                screen_matched: false,
                osc: None,
                osc_said: String::new(),
                pending: None,
                limit: None,
            },
        }
    }

    /// The rules this tracker uses.
    pub fn rules(&self) -> Option<&Arc<RuleSet>> {
        self.t.rules.as_ref()
    }

    /// Raw output the program wrote. Scans it for OSC 7501 and bells and
    /// notes that output flowed. Returns a change an escape sequence
    /// caused at once.
    pub fn output(&mut self, bytes: &[u8], now: Instant, wall: SystemTime) -> Option<Change> {
        if bytes.is_empty() {
            return None;
        }
        let from = self.t.state;
        let t = &mut self.t;
        self.scanner.feed(bytes, |sig| match sig {
            Signal::Bell => t.bells += 1,
            Signal::State { state, payload } => t.osc(state, payload, wall),
        });
        t.last_output = Some(now);
        if t.rules.is_some() {
            t.dirty_since.get_or_insert(now);
        }
        t.screen_matched = false;
        change(from, t.state)
    }

    /// When the core should call [`Tracker::evaluate`] next; `None` when
    /// nothing changed since the last look (no timer runs: idle is free).
    pub fn deadline(&self) -> Option<Instant> {
        let t = &self.t;
        t.rules.as_ref()?;
        let look = t.dirty_since.map(|since| {
            let settled = since + SETTLE;
            t.last_eval
                .map_or(settled, |e| settled.max(e + EVAL_INTERVAL))
        });
        let quiet = t
            .quiet_recheck
            .then_some(t.last_output)
            .flatten()
            .map(|o| o + t.quiet());
        match (look, quiet) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Look at the screen (at most about every 100 ms, only after output),
    /// and let time pass (a quiet period ends `working`).
    pub fn evaluate(
        &mut self,
        screen: &ScreenView,
        now: Instant,
        wall: SystemTime,
    ) -> Option<Change> {
        let t = &mut self.t;
        let from = t.state;
        t.dirty_since = None;
        t.last_eval = Some(now);
        t.quiet_recheck = false;
        let pending = t.pending.take();
        let rules = t.rules.clone()?;
        let quiet_for = rules.quiet();
        let quiet = t.last_output.is_none_or(|o| now >= o + quiet_for);
        let hit = evaluate(&rules, screen);
        t.limit = hit.as_ref().filter(|h| h.limit).map(|h| h.rule.clone());
        t.screen_matched = hit
            .as_ref()
            .is_some_and(|h| h.state != RuleState::Unchanged);
        let apply_pending = |t: &mut State, p: Option<(Evidence, String)>| {
            if let Some((ev, what)) = p {
                t.set(ev, || what, Vec::new(), wall);
            }
        };
        match hit {
            // The screen cannot tell: only a report may move the state.
            Some(h) if h.state == RuleState::Unchanged => apply_pending(t, pending),
            Some(h) => {
                let what = format!("rule \"{}\" ({})", h.rule, rules.source());
                let evidence = match h.state {
                    RuleState::Working => Evidence::Working,
                    RuleState::Blocked => Evidence::Blocked,
                    // A finished turn's line is a screen waiting for a
                    // prompt: it stays on screen long after the turn.
                    RuleState::Idle | RuleState::Done => Evidence::Idle,
                    RuleState::Unchanged => unreachable!("handled above"),
                };
                let idle_like = evidence == Evidence::Idle;
                if let Some(said) = t.osc.filter(|_| evidence != Evidence::Blocked) {
                    // The agent tells its working and idle itself (codex's
                    // title spins while it starts, after it said idle).
                    if t.state == AgentState::Blocked && said != Evidence::Blocked {
                        // The dialog is gone: back to what it last said.
                        let back = match said {
                            Evidence::TurnEnded => Evidence::Ready,
                            other => other,
                        };
                        let said = t.osc_said.clone();
                        let why = || format!("osc 7501 {said}, and {what} (the dialog is gone)");
                        t.set(back, why, h.lines, wall);
                    } else {
                        t.confirm(evidence, what, h.lines);
                    }
                } else if !idle_like || quiet {
                    t.set_by_rule(evidence, what, h.lines, wall);
                } else if let Some((
                    ev @ (Evidence::Idle | Evidence::TurnEnded | Evidence::Ready),
                    report,
                )) = pending
                {
                    // The screen looks idle and a report says so too: no
                    // need to wait for the quiet period.
                    t.set(ev, || format!("{report}, and {what}"), h.lines, wall);
                } else {
                    t.quiet_recheck = true;
                }
            }
            None if pending.is_some() => apply_pending(t, pending),
            None if t.told => {}
            None if quiet => t.set(
                Evidence::Idle,
                || format!("no rule matched and output quiet for {}", secs(quiet_for)),
                Vec::new(),
                wall,
            ),
            None => {
                t.set(
                    Evidence::Flowing,
                    || "output flowing and no rule matched".into(),
                    Vec::new(),
                    wall,
                );
                t.quiet_recheck = true;
            }
        }
        change(from, t.state)
    }

    /// A report from the agent's hooks (`UserPromptSubmit`, `Stop`,
    /// `Notification`, codex's `agent-turn-complete`, ...) with its
    /// sequence number; an out-of-order one (seq not above the last) is
    /// dropped.
    pub fn report(
        &mut self,
        event: &str,
        seq: u64,
        now: Instant,
        wall: SystemTime,
    ) -> Option<Change> {
        let _ = now;
        let t = &mut self.t;
        if t.last_seq.is_some_and(|last| seq <= last) {
            return None;
        }
        t.last_seq = Some(seq);
        let evidence = reports::meaning(event)?;
        t.told = true;
        let what = || format!("report {event} (seq {seq})");
        if t.rules.is_some() {
            if t.dirty_since.is_some() {
                t.pending = Some((evidence, what()));
                return None;
            }
            if t.screen_matched {
                return None;
            }
        }
        let from = t.state;
        t.set(evidence, what, Vec::new(), wall);
        change(from, t.state)
    }

    /// A window shows the tab now (`done` becomes `idle`, and turns that
    /// end while it shows are not `done`).
    pub fn shown(&mut self, now: Instant, wall: SystemTime) -> Option<Change> {
        let _ = now;
        let t = &mut self.t;
        t.shown = true;
        let from = t.state;
        if from == AgentState::Done {
            t.state = AgentState::Idle;
            t.since = wall;
            t.cause = Cause {
                what: "shown in a window".into(),
                lines: Vec::new(),
            };
        }
        change(from, t.state)
    }

    /// No window shows the tab any more: a turn that ends now is `done`.
    pub fn hidden(&mut self) {
        self.t.shown = false;
    }

    /// The limit rule the screen matched last look, if it did.
    pub fn limit(&self) -> Option<&str> {
        self.t.limit.as_deref()
    }

    pub fn state(&self) -> AgentState {
        self.t.state
    }

    /// When the state last changed.
    pub fn since(&self) -> SystemTime {
        self.t.since
    }

    /// nerdr typed a prompt and its Enter: a turn runs from here, so the
    /// next idle ends it ([`Tracker::turn_ended_at`]) even when no working
    /// was seen in between.
    pub fn prompt_entered(&mut self) {
        self.t.turn = true;
    }

    /// When a turn last ended, if one did.
    pub fn turn_ended_at(&self) -> Option<SystemTime> {
        self.t.ended
    }

    pub fn cause(&self) -> Cause {
        self.t.cause.clone()
    }

    /// Bells rung so far.
    pub fn bells(&self) -> u64 {
        self.t.bells
    }
}

#[cfg(test)]
#[path = "tracker_tests.rs"]
mod tests;
