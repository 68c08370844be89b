//! Long, many-line messages typed into the real claude and codex
//! (`$NERDR_AGENT_CLIS`, offline against the fake model) arrive whole and
//! are sent once: a 40-line spinoff result the person reports for a
//! spun-off tab reaches the parent's next model request, all of it in one
//! request; and 40 lines sent with `nerdr send` arrive one a line, in one
//! request. Before `core::typing`, codex got them as keys: sent at the
//! first newline, or pasted by codex's guess and never sent.

use std::time::Duration;

use crate::suites::agent_states::{claude_home, codex_home, ClaudeDialogs, CodexDialogs};
use crate::suites::agent_turns::Turns;
use crate::support::fake_model::script::Asked;
use crate::support::poll;

/// Node programs start slowly on a loaded two-core machine.
const START: Duration = Duration::from_secs(150);
const TURN: Duration = Duration::from_secs(150);

/// What the person reports: 40 numbered lines.
fn forty_lines() -> String {
    (1..=40)
        .map(|n| format!("LONG-LINE-{n:02} of the spun-off agent's findings"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Start the parent, spin a tab off it, report 40 lines for the spun-off
/// tab, and check the parent's model gets them whole, in one request.
fn a_forty_line_result_reaches_the_parent_whole(t: &Turns) {
    let parent = t.start();
    t.wait_idle(&parent);
    let child = t.ok(&[
        "spinoff",
        "--from",
        &parent,
        "CHILD-TASK-LONG: look into it",
    ]);
    let child = child.lines().next().unwrap().trim().to_string();
    t.model.wait_for("the spun-off agent's task", START, |r| {
        r.asked
            .as_ref()
            .is_some_and(|a| a.user_text.contains("CHILD-TASK-LONG"))
    });
    let before = t.model.log().len();
    let out = t.ok(&["report-result", "--for", &child, &forty_lines()]);
    assert!(
        out.contains(&format!("result 1 sent to tab {parent}")),
        "{out}"
    );
    let header = format!("Result 1 from spun-off tab {child}");
    // The parent's own turn (claude's title request, with a schema, may
    // come first and carry it too).
    let turn = |a: &Asked| !a.after_tool && a.schema.is_none();
    t.model
        .wait_for("the result in the parent's request", TURN, |r| {
            r.asked
                .as_ref()
                .is_some_and(|a| turn(a) && a.user_text.contains(&header))
        });
    // The first request that carries any of it carries all of it: not
    // sent at a newline, nor in pieces. (A result is one line: its own
    // newlines become spaces.)
    let log = t.model.log();
    let carrying: Vec<&Asked> = log
        .iter()
        .skip(before)
        .filter_map(|r| r.asked.as_ref())
        .filter(|a| turn(a) && a.user_text.contains("LONG-LINE-"))
        .collect();
    for n in 1..=40 {
        let line = format!("LONG-LINE-{n:02} of the spun-off agent's findings");
        assert!(
            carrying[0].user_text.contains(&line),
            "{}: {line:?} is not in the parent's first request with the result:\n{}\n\
             the parent's screen:\n{}",
            t.agent,
            carrying[0].user_text,
            t.screen(&parent)
        );
    }
    assert!(
        carrying[0].user_text.contains(&header),
        "{}",
        carrying[0].user_text
    );
    assert_eq!(
        carrying.len(),
        1,
        "{}: the result went {} times:\n{}",
        t.agent,
        carrying.len(),
        t.model.dump()
    );

    // 40 lines with `nerdr send`, once the parent is back at its prompt:
    // its newlines stay new lines, and it goes once.
    let back = poll(TURN, || {
        let row = t.tab_json(&parent);
        row["agent_state"] == "idle" || row["agent_state"] == "done"
    });
    assert!(
        back,
        "the parent never finished its turn: {}",
        t.tab_json(&parent)
    );
    let sent: Vec<String> = (1..=40).map(|n| format!("SENT-LINE-{n:02}")).collect();
    let before = t.model.log().len();
    t.ok(&["send", &parent, &sent.join("\n")]);
    t.model
        .wait_for("the sent lines in the parent's request", TURN, |r| {
            r.asked
                .as_ref()
                .is_some_and(|a| turn(a) && a.user_text.contains("SENT-LINE-"))
        });
    let log = t.model.log();
    let carrying: Vec<&Asked> = log
        .iter()
        .skip(before)
        .filter_map(|r| r.asked.as_ref())
        .filter(|a| turn(a) && a.user_text.contains("SENT-LINE-"))
        .collect();
    assert!(
        carrying[0].user_text.contains(&sent.join("\n")),
        "{}: the 40 lines did not arrive whole, one a line:\n{}\nthe parent's screen:\n{}",
        t.agent,
        carrying[0].user_text,
        t.screen(&parent)
    );
    assert_eq!(carrying.len(), 1, "{}:\n{}", t.agent, t.model.dump());
}

#[test]
fn a_forty_line_result_reaches_codex_whole_in_one_request() {
    let Some(t) = Turns::setup_with_hooks("codex", |url, home| {
        codex_home(url, home, &home.join("proj"), CodexDialogs::NONE)
    }) else {
        return;
    };
    a_forty_line_result_reaches_the_parent_whole(&t);
}

#[test]
fn a_forty_line_result_reaches_claude_whole_in_one_request() {
    let Some(t) = Turns::setup_with_hooks("claude", |url, home| {
        claude_home(url, home, ClaudeDialogs::none())
    }) else {
        return;
    };
    a_forty_line_result_reaches_the_parent_whole(&t);
}
