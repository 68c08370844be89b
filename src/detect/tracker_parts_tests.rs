use super::*;

#[test]
fn next_state_table() {
    use Evidence as E;
    let all = [Working, Blocked, Idle, Done, Unknown];
    // Working, flowing output and blocked lead to themselves from anywhere.
    for current in all {
        for shown in [false, true] {
            for turn in [false, true] {
                assert_eq!(next_state(current, E::Working, shown, turn), Working);
                assert_eq!(next_state(current, E::Flowing, shown, turn), Working);
                assert_eq!(next_state(current, E::Blocked, shown, turn), Blocked);
            }
        }
    }
    // (evidence, current, shown, turn known, next)
    let rows: &[(E, AgentState, bool, bool, AgentState)] = &[
        (E::TurnEnded, Working, false, false, Done),
        (E::TurnEnded, Working, false, true, Done),
        (E::TurnEnded, Working, true, false, Idle),
        (E::TurnEnded, Working, true, true, Idle),
        (E::TurnEnded, Blocked, false, false, Done),
        (E::TurnEnded, Blocked, false, true, Done),
        (E::TurnEnded, Blocked, true, false, Idle),
        (E::TurnEnded, Blocked, true, true, Idle),
        (E::TurnEnded, Done, false, false, Done),
        (E::TurnEnded, Done, false, true, Done),
        (E::TurnEnded, Done, true, false, Idle),
        (E::TurnEnded, Done, true, true, Idle),
        (E::TurnEnded, Idle, false, false, Idle),
        (E::TurnEnded, Idle, false, true, Idle),
        (E::TurnEnded, Idle, true, false, Idle),
        (E::TurnEnded, Idle, true, true, Idle),
        (E::TurnEnded, Unknown, false, false, Idle),
        (E::TurnEnded, Unknown, false, true, Idle),
        (E::TurnEnded, Unknown, true, false, Idle),
        (E::TurnEnded, Unknown, true, true, Idle),
        // A first screen drawn (working without a turn) then a prompt: idle.
        (E::Idle, Working, false, false, Idle),
        (E::Idle, Working, false, true, Done),
        (E::Idle, Working, true, false, Idle),
        (E::Idle, Working, true, true, Idle),
        // A dialog at start-up answered: idle; one in a turn: done.
        (E::Idle, Blocked, false, false, Idle),
        (E::Idle, Blocked, false, true, Done),
        (E::Idle, Blocked, true, false, Idle),
        (E::Idle, Blocked, true, true, Idle),
        (E::Idle, Done, false, false, Done),
        (E::Idle, Done, false, true, Done),
        (E::Idle, Done, true, false, Idle),
        (E::Idle, Done, true, true, Idle),
        (E::Idle, Idle, false, false, Idle),
        (E::Idle, Idle, false, true, Idle),
        (E::Idle, Idle, true, false, Idle),
        (E::Idle, Idle, true, true, Idle),
        (E::Idle, Unknown, false, false, Idle),
        (E::Idle, Unknown, false, true, Idle),
        (E::Idle, Unknown, true, false, Idle),
        (E::Idle, Unknown, true, true, Idle),
        // Said outright, and not a turn's end: idle, but done stays done.
        (E::Ready, Working, false, false, Idle),
        (E::Ready, Working, false, true, Idle),
        (E::Ready, Working, true, false, Idle),
        (E::Ready, Working, true, true, Idle),
        (E::Ready, Blocked, false, false, Idle),
        (E::Ready, Blocked, false, true, Idle),
        (E::Ready, Blocked, true, false, Idle),
        (E::Ready, Blocked, true, true, Idle),
        (E::Ready, Done, false, false, Done),
        (E::Ready, Done, false, true, Done),
        (E::Ready, Done, true, false, Idle),
        (E::Ready, Done, true, true, Idle),
        (E::Ready, Idle, false, false, Idle),
        (E::Ready, Idle, false, true, Idle),
        (E::Ready, Idle, true, false, Idle),
        (E::Ready, Idle, true, true, Idle),
        (E::Ready, Unknown, false, false, Idle),
        (E::Ready, Unknown, false, true, Idle),
        (E::Ready, Unknown, true, false, Idle),
        (E::Ready, Unknown, true, true, Idle),
    ];
    for (e, current, shown, turn, want) in rows {
        assert_eq!(
            next_state(*current, *e, *shown, *turn),
            *want,
            "{e:?} from {current:?}, shown {shown}, turn {turn}"
        );
    }
    assert_eq!(
        rows.len(),
        3 * all.len() * 2 * 2,
        "a row for every combination"
    );
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
    // A rule that holds the state now becomes its cause; since stays.
    step(&mut tr, &c, Look(5000, IDLE));
    assert_eq!(
        tr.cause(),
        Cause {
            what: "rule \"prompt\" (built-in t.toml)".into(),
            lines: vec!["? for shortcuts".into()]
        }
    );
    assert_eq!(tr.since(), c.at(2400).1);
    // A done keeps the cause that made it done.
    step(&mut tr, &c, Hide);
    step(&mut tr, &c, Out(6000, "\x1b]7501;state=working\x07"));
    step(&mut tr, &c, Out(6100, "\x1b]7501;state=done\x07"));
    step(&mut tr, &c, Look(9000, IDLE));
    assert_eq!(
        (tr.state(), tr.cause().what.as_str()),
        (Done, "osc 7501 state=done")
    );

    // Without OSC: a report sets working, the screen's rule then holds it.
    let mut tr = Tracker::new(rules(), n, w);
    step(&mut tr, &c, Report(100, "UserPromptSubmit", 1));
    assert_eq!(
        (tr.state(), tr.cause().what.as_str()),
        (Working, "report UserPromptSubmit (seq 1)")
    );
    step(&mut tr, &c, Out(200, "x"));
    step(&mut tr, &c, Look(300, WORKING));
    assert_eq!(
        (tr.state(), tr.cause().what.as_str()),
        (Working, "rule \"busy\" (built-in t.toml)")
    );
    assert_eq!(tr.cause().lines, vec!["esc to interrupt"]);
    assert_eq!(tr.since(), c.at(100).1);
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
