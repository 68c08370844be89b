//! The tracker's scenario table: each row a sequence of signals and the
//! state after each.

use super::*;
use crate::detect::rules::parse;
use AgentState::*;

const RULES: &str = r#"
quiet_ms = 1000
[[rule]]
name = "ask"
state = "blocked"
priority = 100
region = "screen"
contains = "Do you want to proceed?"
[[rule]]
name = "viewer"
state = "unchanged"
priority = 90
region = "screen"
contains = "transcript"
[[rule]]
name = "busy"
state = "working"
priority = 50
region = "screen"
contains = "esc to interrupt"
[[rule]]
name = "finished"
state = "done"
priority = 20
region = "screen"
contains = "Worked for"
[[rule]]
name = "prompt"
state = "idle"
region = "screen"
contains = "? for shortcuts"
"#;

const WORKING: &[&str] = &["✻ Thinking…", "esc to interrupt"];
const BLOCKED: &[&str] = &["Bash command", "Do you want to proceed?", "❯ 1. Yes"];
const IDLE: &[&str] = &["❯", "? for shortcuts"];
const FINISHED: &[&str] = &["✻ Worked for 3s", "❯", "? for shortcuts"];
const VIEWER: &[&str] = &["Showing detailed transcript"];
const OTHER: &[&str] = &["a screen no rule knows"];

#[derive(Debug, Clone, Copy)]
enum Step {
    /// Output at a time (ms).
    Out(u64, &'static str),
    /// A look at a screen.
    Look(u64, &'static [&'static str]),
    Report(u64, &'static str, u64),
    Show(u64),
    Hide,
}
use Step::*;

struct Clock {
    t0: Instant,
    w0: SystemTime,
}

impl Clock {
    fn new() -> Self {
        Clock {
            t0: Instant::now(),
            w0: SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
        }
    }
    fn at(&self, ms: u64) -> (Instant, SystemTime) {
        (
            self.t0 + Duration::from_millis(ms),
            self.w0 + Duration::from_millis(ms),
        )
    }
}

fn rules() -> Option<Arc<RuleSet>> {
    Some(Arc::new(parse("t", None, "t.toml", RULES).unwrap()))
}

fn view(rows: &[&str]) -> ScreenView {
    ScreenView {
        rows: rows.iter().map(|r| r.to_string()).collect(),
        title: String::new(),
    }
}

fn step(tr: &mut Tracker, c: &Clock, s: Step) -> Option<Change> {
    match s {
        Out(ms, bytes) => {
            let (n, w) = c.at(ms);
            tr.output(bytes.as_bytes(), n, w)
        }
        Look(ms, rows) => {
            let (n, w) = c.at(ms);
            tr.evaluate(&view(rows), n, w)
        }
        Report(ms, event, seq) => {
            let (n, w) = c.at(ms);
            tr.report(event, seq, n, w)
        }
        Show(ms) => {
            let (n, w) = c.at(ms);
            tr.shown(n, w)
        }
        Hide => {
            tr.hidden();
            None
        }
    }
}

/// Each row: a name, whether there are rules, and steps with the state
/// expected after each.
type Scenario = (&'static str, bool, &'static [(Step, AgentState)]);

const SCENARIOS: &[Scenario] = &[
    (
        "no rules and no report: unknown, whatever the output",
        false,
        &[
            (Out(0, "hello"), Unknown),
            (Look(500, OTHER), Unknown),
            (Look(5000, IDLE), Unknown),
        ],
    ),
    (
        "no rules: reports drive the state, Stop unseen is done",
        false,
        &[
            (Report(0, "UserPromptSubmit", 1), Working),
            (Report(10, "Notification", 2), Blocked),
            (Report(20, "PostToolUse", 3), Working),
            (Report(30, "Stop", 4), Done),
            (Show(40), Idle),
        ],
    ),
    (
        "rules, nothing seen yet: unknown",
        true,
        &[(Show(0), Unknown)],
    ),
    (
        "a blocked screen counts at once, even while output flows",
        true,
        &[(Out(0, "x"), Unknown), (Look(20, BLOCKED), Blocked)],
    ),
    (
        "a working screen counts at once",
        true,
        &[(Out(0, "x"), Unknown), (Look(20, WORKING), Working)],
    ),
    (
        "an idle screen waits for the quiet period",
        true,
        &[
            (Out(0, "x"), Unknown),
            (Look(20, WORKING), Working),
            (Out(500, "x"), Working),
            (Look(520, IDLE), Working),
            (Look(1499, IDLE), Working),
            (Look(1500, IDLE), Done),
        ],
    ),
    (
        "a turn that ends while a window shows the tab is idle",
        true,
        &[
            (Show(0), Unknown),
            (Out(0, "x"), Unknown),
            (Look(20, WORKING), Working),
            (Look(2000, IDLE), Idle),
        ],
    ),
    (
        "done stays done until shown, then a done line on screen does not bring it back",
        true,
        &[
            (Out(0, "x"), Unknown),
            (Look(20, WORKING), Working),
            (Look(2000, FINISHED), Done),
            (Out(3000, "focus"), Done),
            (Look(5000, IDLE), Done),
            (Show(6000), Idle),
            (Hide, Idle),
            (Out(7000, "x"), Idle),
            (Look(9000, FINISHED), Idle),
        ],
    ),
    (
        "blocked in a turn, then a done line (the turn ended unseen) is done",
        true,
        &[
            (Look(0, WORKING), Working),
            (Look(10, BLOCKED), Blocked),
            (Look(2000, FINISHED), Done),
        ],
    ),
    (
        "no rule matches and nothing told: output flowing is working, quiet is idle",
        true,
        &[
            (Out(0, "x"), Unknown),
            (Look(20, OTHER), Working),
            (Out(900, "x"), Working),
            (Look(920, OTHER), Working),
            (Look(1900, OTHER), Idle),
        ],
    ),
    (
        "a program drawing its first screen is not a turn: its prompt is idle, not done",
        true,
        &[
            (Out(0, "welcome"), Unknown),
            (Look(20, OTHER), Working),
            (Out(50, "prompt"), Working),
            (Look(120, IDLE), Working),
            (Look(1050, IDLE), Idle),
        ],
    ),
    (
        "a finished turn's line left from before (a resumed session) is not done",
        true,
        &[
            (Out(0, "x"), Unknown),
            (Look(20, OTHER), Working),
            (Look(2000, FINISHED), Idle),
        ],
    ),
    (
        "a dialog at start-up answered is idle; one in a turn answered, unseen, is done",
        true,
        &[
            (Look(0, BLOCKED), Blocked),
            (Look(2000, IDLE), Idle),
            (Look(3000, WORKING), Working),
            (Look(3100, BLOCKED), Blocked),
            (Look(5000, IDLE), Done),
        ],
    ),
    (
        "no rule matches and quiet from the start: idle",
        true,
        &[(Look(0, OTHER), Idle)],
    ),
    (
        "no rule matches after a blocked screen: blocked needs a match",
        true,
        &[
            (Look(0, BLOCKED), Blocked),
            (Out(100, "x"), Blocked),
            (Look(120, OTHER), Working),
        ],
    ),
    (
        "an agent that reports: no match leaves the state to its reports",
        true,
        &[
            (Report(0, "UserPromptSubmit", 1), Working),
            (Out(10, "x"), Working),
            (Look(5000, OTHER), Working),
            (Report(6000, "Stop", 2), Done),
            (Out(7000, "x"), Done),
            (Look(7020, OTHER), Done),
        ],
    ),
    (
        "the screen wins over a late report",
        true,
        &[
            (Look(0, IDLE), Idle),
            (Report(60_000, "Notification", 1), Idle),
            (Report(60_010, "UserPromptSubmit", 2), Idle),
        ],
    ),
    (
        "a report while the screen settles waits for the look, which a match overrides",
        true,
        &[
            (Look(0, IDLE), Idle),
            (Out(100, "x"), Idle),
            (Report(110, "Notification", 1), Idle),
            (Look(200, WORKING), Working),
        ],
    ),
    (
        "a report while the screen settles counts at the look when no rule matches",
        true,
        &[
            (Look(0, IDLE), Idle),
            (Out(100, "x"), Idle),
            (Report(110, "Notification", 1), Idle),
            (Look(200, OTHER), Blocked),
        ],
    ),
    (
        "a report counts at once when the current screen matches no rule",
        true,
        &[
            (Look(0, OTHER), Idle),
            (Report(10, "Notification", 1), Blocked),
        ],
    ),
    (
        "an idle screen and a Stop report agree: no quiet period to wait",
        true,
        &[
            (Look(0, WORKING), Working),
            (Out(100, "x"), Working),
            (Report(110, "Stop", 1), Working),
            (Look(200, IDLE), Done),
        ],
    ),
    (
        "an out-of-order or repeated report is dropped",
        false,
        &[
            (Report(0, "UserPromptSubmit", 5), Working),
            (Report(10, "Stop", 4), Working),
            (Report(20, "Stop", 5), Working),
            (Report(30, "Stop", 6), Done),
        ],
    ),
    (
        "a report that means nothing changes nothing",
        false,
        &[
            (Report(0, "SessionEnd", 1), Unknown),
            (Report(10, "SubagentStop", 2), Unknown),
        ],
    ),
    (
        "OSC 7501 counts at once, and its done is a turn ended",
        false,
        &[
            (Out(0, "\x1b]7501;state=working:app=codex\x1b\\"), Working),
            (
                Out(10, "\x1b]7501;state=blocked:app=codex:kind=permission\x07"),
                Blocked,
            ),
            (Out(20, "\x1b]7501;state=working:app=codex\x07"), Working),
            (Out(30, "\x1b]7501;state=done:app=codex\x07"), Done),
            (Out(40, "\x1b]7501;state=idle:app=codex\x07"), Done),
            (Show(50), Idle),
            (Out(60, "\x1b]7501;state=idle:app=codex\x07"), Idle),
        ],
    ),
    (
        "codex starting says working then idle: idle, not done",
        true,
        &[
            (Out(0, "\x1b]7501;state=working:app=codex\x07"), Working),
            (Look(20, OTHER), Working),
            (Out(500, "\x1b]7501;state=idle:app=codex\x07"), Idle),
            (Look(2000, IDLE), Idle),
            (Out(3000, "\x1b]7501;state=working:app=codex\x07"), Working),
            (Out(9000, "\x1b]7501;state=done:app=codex\x07"), Done),
        ],
    ),
    (
        "once the agent speaks OSC 7501, the screen adds only its dialogs",
        true,
        &[
            (Out(0, "\x1b]7501;state=idle:app=codex\x07"), Idle),
            // codex's title spins while it starts, after it said idle.
            (Look(20, WORKING), Idle),
            (Out(100, "\x1b]7501;state=working:app=codex\x07"), Working),
            // Streaming: the screen looks idle.
            (Look(5000, IDLE), Working),
            (Look(5100, BLOCKED), Blocked),
            // Answered, and codex has not spoken since: what it last said.
            (Look(5200, WORKING), Working),
            (Out(6000, "\x1b]7501;state=done:app=codex\x07"), Done),
            (Look(8000, FINISHED), Done),
            (Look(8100, BLOCKED), Blocked),
            // A turn's end said before the dialog is not said again.
            (Look(9000, IDLE), Idle),
        ],
    ),
    (
        "OSC 7501 split across reads",
        false,
        &[
            (Out(0, "text\x1b]75"), Unknown),
            (Out(10, "01;state=block"), Unknown),
            (Out(20, "ed\x1b"), Blocked),
            (Out(30, "\\"), Blocked),
        ],
    ),
    (
        "after an OSC, output alone does not move the state",
        true,
        &[
            (Out(0, "\x1b]7501;state=working\x07"), Working),
            (Look(5000, OTHER), Working),
        ],
    ),
    (
        "an unchanged rule leaves the state, but a waiting report counts",
        true,
        &[
            (Look(0, WORKING), Working),
            (Out(100, "x"), Working),
            (Look(5000, VIEWER), Working),
            (Out(5100, "x"), Working),
            (Report(5110, "Stop", 1), Working),
            (Look(5200, VIEWER), Done),
        ],
    ),
];

#[test]
fn every_scenario_holds() {
    for (name, with_rules, steps) in SCENARIOS {
        let c = Clock::new();
        let (n, w) = c.at(0);
        let mut tr = Tracker::new(if *with_rules { rules() } else { None }, n, w);
        for (i, (s, want)) in steps.iter().enumerate() {
            let before = tr.state();
            let got = step(&mut tr, &c, *s);
            assert_eq!(tr.state(), *want, "{name}: step {i} ({s:?})");
            let expected = (before != *want).then_some(Change {
                from: before,
                to: *want,
            });
            assert_eq!(
                got, expected,
                "{name}: step {i} ({s:?}): the change returned"
            );
        }
    }
}

// The next-state table, deadlines, causes and bells.
#[path = "tracker_parts_tests.rs"]
mod parts;

/// A turn too fast to be seen working still ends after the prompt nerdr
/// typed: the idle it waited in for its prompt is no turn's end, the idle
/// after its Enter is (a spinoff's `report_due` reads it).
#[test]
fn a_turn_ends_after_a_typed_prompt_even_when_never_seen_working() {
    let c = Clock::new();
    let mut tr = Tracker::new(rules(), c.at(0).0, c.at(0).1);
    tr.shown(c.at(0).0, c.at(0).1);
    for s in [Out(0, "x"), Look(2000, IDLE)] {
        step(&mut tr, &c, s);
    }
    assert_eq!(tr.state(), Idle);
    assert_eq!(
        tr.turn_ended_at(),
        None,
        "waiting for a prompt ends no turn"
    );
    tr.prompt_entered();
    for s in [Out(3000, "y"), Look(5000, IDLE)] {
        step(&mut tr, &c, s);
    }
    assert_eq!(tr.state(), Idle);
    assert_eq!(tr.since(), c.at(2000).1, "the state never changed");
    assert_eq!(tr.turn_ended_at(), Some(c.at(5000).1));
    // A turn seen working ends too.
    for s in [Look(6000, WORKING), Out(6500, "z"), Look(8000, IDLE)] {
        step(&mut tr, &c, s);
    }
    assert_eq!(tr.turn_ended_at(), Some(c.at(8000).1));
    // Without rules, a Stop said while idle is an end.
    let mut bare = Tracker::new(None, c.at(0).0, c.at(0).1);
    step(&mut bare, &c, Report(100, "Stop", 1));
    assert_eq!(bare.turn_ended_at(), Some(c.at(100).1));
}
