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
        "blocked then idle (an answered dialog) is idle, not done",
        true,
        &[(Look(0, BLOCKED), Blocked), (Look(2000, IDLE), Idle)],
    ),
    (
        "blocked then a done line (the turn ended unseen) is done",
        true,
        &[(Look(0, BLOCKED), Blocked), (Look(2000, FINISHED), Done)],
    ),
    (
        "no rule matches and nothing told: output flowing is working, quiet is idle",
        true,
        &[
            (Out(0, "x"), Unknown),
            (Look(20, OTHER), Working),
            (Out(900, "x"), Working),
            (Look(920, OTHER), Working),
            (Look(1900, OTHER), Done),
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

#[test]
fn next_state_table() {
    use Evidence as E;
    // (evidence, current, shown, next)
    let rows: &[(E, AgentState, bool, AgentState)] = &[
        (E::Working, Working, false, Working),
        (E::Working, Blocked, false, Working),
        (E::Working, Idle, false, Working),
        (E::Working, Done, false, Working),
        (E::Working, Unknown, false, Working),
        (E::Working, Done, true, Working),
        (E::Blocked, Working, false, Blocked),
        (E::Blocked, Idle, true, Blocked),
        (E::Blocked, Done, false, Blocked),
        (E::Blocked, Unknown, false, Blocked),
        (E::Blocked, Blocked, true, Blocked),
        (E::TurnEnded, Working, false, Done),
        (E::TurnEnded, Working, true, Idle),
        (E::TurnEnded, Blocked, false, Done),
        (E::TurnEnded, Blocked, true, Idle),
        (E::TurnEnded, Done, false, Done),
        (E::TurnEnded, Done, true, Idle),
        (E::TurnEnded, Idle, false, Idle),
        (E::TurnEnded, Idle, true, Idle),
        (E::TurnEnded, Unknown, false, Idle),
        (E::TurnEnded, Unknown, true, Idle),
        (E::Idle, Working, false, Done),
        (E::Idle, Working, true, Idle),
        (E::Idle, Blocked, false, Idle),
        (E::Idle, Blocked, true, Idle),
        (E::Idle, Done, false, Done),
        (E::Idle, Done, true, Idle),
        (E::Idle, Idle, false, Idle),
        (E::Idle, Idle, true, Idle),
        (E::Idle, Unknown, false, Idle),
        (E::Idle, Unknown, true, Idle),
    ];
    for (e, current, shown, want) in rows {
        assert_eq!(
            next_state(*current, *e, *shown),
            *want,
            "{e:?} from {current:?}, shown {shown}"
        );
    }
    // Every (evidence, current, shown) triple is a row, for the states a
    // hidden tab can be in and the ones a shown tab can (a shown tab is
    // never done: showing it makes it idle).
    let all = [Working, Blocked, Idle, Done, Unknown];
    for e in [E::Working, E::Blocked, E::TurnEnded, E::Idle] {
        for current in all {
            for shown in [false, true] {
                let covered = rows
                    .iter()
                    .any(|(re, rc, rs, _)| *re == e && *rc == current && *rs == shown);
                let needless = matches!(e, E::Working | E::Blocked);
                assert!(
                    covered || needless,
                    "no row for {e:?} from {current:?}, shown {shown}"
                );
            }
        }
    }
}

#[test]
fn deadlines_run_only_while_something_is_pending() {
    let c = Clock::new();
    let ms = |m: u64| c.at(m).0;
    let mut tr = Tracker::new(rules(), ms(0), c.at(0).1);
    assert_eq!(tr.deadline(), None, "nothing seen: no timer");
    step(&mut tr, &c, Out(1000, "x"));
    assert_eq!(
        tr.deadline(),
        Some(ms(1000) + SETTLE),
        "first output: look once it settles"
    );
    step(&mut tr, &c, Out(1010, "x"));
    assert_eq!(
        tr.deadline(),
        Some(ms(1000) + SETTLE),
        "more output does not push it back"
    );
    step(&mut tr, &c, Look(1020, WORKING));
    assert_eq!(tr.deadline(), None, "working, nothing new: no timer");
    step(&mut tr, &c, Out(1030, "x"));
    assert_eq!(
        tr.deadline(),
        Some(ms(1020) + EVAL_INTERVAL),
        "at most one look per interval"
    );
    step(&mut tr, &c, Look(1120, IDLE));
    assert_eq!(
        tr.deadline(),
        Some(ms(1030 + 1000)),
        "an idle screen: look again when quiet"
    );
    step(&mut tr, &c, Look(2030, IDLE));
    assert_eq!(tr.state(), Done);
    assert_eq!(tr.deadline(), None, "idle and quiet: no timer");
    // The fallback's working also waits for quiet.
    step(&mut tr, &c, Out(3000, "x"));
    step(&mut tr, &c, Look(3020, OTHER));
    assert_eq!(tr.state(), Working);
    assert_eq!(tr.deadline(), Some(ms(4000)));
    // No rules: never a timer.
    let mut bare = Tracker::new(None, ms(0), c.at(0).1);
    step(&mut bare, &c, Out(10, "x"));
    assert_eq!(bare.deadline(), None);
}

#[test]
fn the_cause_names_what_set_the_state() {
    let c = Clock::new();
    let (n, w) = c.at(0);
    let mut tr = Tracker::new(rules(), n, w);
    assert_eq!(tr.cause().what, "nothing seen yet");
    assert_eq!(
        Tracker::new(None, n, w).cause().what,
        "no rules for this agent, and no report or OSC 7501 yet"
    );
    step(&mut tr, &c, Look(100, BLOCKED));
    assert_eq!(
        tr.cause(),
        Cause {
            what: "rule \"ask\" (built-in t.toml)".into(),
            lines: vec!["Do you want to proceed?".into()]
        }
    );
    assert_eq!(tr.since(), c.at(100).1);
    step(&mut tr, &c, Look(200, BLOCKED));
    assert_eq!(tr.since(), c.at(100).1, "no change, same since");
    step(&mut tr, &c, Look(2000, OTHER));
    assert_eq!(tr.cause().what, "no rule matched and output quiet for 1s");
    step(&mut tr, &c, Report(2100, "Notification", 3));
    assert_eq!(tr.cause().what, "report Notification (seq 3)");
    step(
        &mut tr,
        &c,
        Out(2200, "\x1b]7501;state=working:app=codex\x07"),
    );
    assert_eq!(tr.cause().what, "osc 7501 state=working:app=codex");
    step(&mut tr, &c, Out(2300, "\x1b]7501;state=done\x07"));
    step(&mut tr, &c, Show(2400));
    assert_eq!(tr.cause().what, "shown in a window");
    assert_eq!(tr.since(), c.at(2400).1);
}

#[test]
fn bells_are_counted_but_not_an_osc_terminator() {
    let c = Clock::new();
    let (n, w) = c.at(0);
    let mut tr = Tracker::new(None, n, w);
    step(&mut tr, &c, Out(0, "ding\x07 \x1b]0;title\x07 \x07"));
    step(&mut tr, &c, Out(1, "\x1b]2;t"));
    step(&mut tr, &c, Out(2, "\x07\x07"));
    assert_eq!(tr.bells(), 3);
}

#[test]
fn several_osc_states_in_one_read_end_where_the_last_one_leaves() {
    let c = Clock::new();
    let (n, w) = c.at(0);
    let mut tr = Tracker::new(None, n, w);
    let got = step(
        &mut tr,
        &c,
        Out(
            0,
            "\x1b]7501;state=working\x07 text \x1b]7501;state=done\x07",
        ),
    );
    // working then done, unseen: a turn ended.
    assert_eq!(
        got,
        Some(Change {
            from: Unknown,
            to: Done
        })
    );
}
