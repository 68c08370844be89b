//! A spinoff's result for a parent that waits on a question for the
//! person (the real codex at its approval prompt, offline against the
//! fake model) is not typed into the question: it is kept, and typed once
//! the parent is back at its prompt after the person answered.

use std::time::Duration;

use crate::suites::agent_states::{codex_home, CodexDialogs};
use crate::suites::agent_turns::Turns;
use crate::support::fake_model::Turn;
use crate::support::poll;

const START: Duration = Duration::from_secs(150);
const TURN: Duration = Duration::from_secs(150);

const QUESTION: &str = "Would you like to run the following command?";

#[test]
fn a_result_for_a_parent_at_its_approval_prompt_waits_and_goes_once_it_is_back_at_its_prompt() {
    let Some(t) = Turns::setup_with_hooks("codex", |url, home| {
        codex_home(url, home, &home.join("proj"), CodexDialogs::NONE)
    }) else {
        return;
    };
    t.model.when_user_says(
        "ASK-FIRST",
        Turn::Run {
            command: "echo asked > asked.txt".into(),
            escalate: true,
        },
    );
    let parent = t.start();
    t.wait_idle(&parent);
    let child = t.ok(&["spinoff", "--from", &parent, "CHILD-TASK-B: look into it"]);
    let child = child.lines().next().unwrap().trim().to_string();
    t.model.wait_for("the spun-off agent's task", START, |r| {
        r.asked
            .as_ref()
            .is_some_and(|a| a.user_text.contains("CHILD-TASK-B"))
    });

    // The parent asks before its command: blocked.
    t.prompt(&parent, "Please ASK-FIRST");
    t.wait_screen(&parent, "the approval prompt", TURN, |s| {
        s.contains(QUESTION)
    });
    let blocked = poll(TURN, || t.tab_json(&parent)["agent_state"] == "blocked");
    assert!(blocked, "never blocked: {}", t.tab_json(&parent));

    let out = t.ok(&["report-result", "--for", &child, "RESULT-WHILE-BLOCKED-5"]);
    assert!(
        out.contains(&format!("result 1 kept for tab {parent}"))
            && out.contains("waits on a question"),
        "{out}"
    );
    let screen = t.screen(&parent);
    assert!(
        screen.contains(QUESTION) && !screen.contains("RESULT-WHILE-BLOCKED-5"),
        "the result went into the question:\n{screen}"
    );
    let listed: serde_json::Value = serde_json::from_str(&t.ok(&["spinoffs", "--json"])).unwrap();
    assert_eq!(listed[0]["results"][0]["held"], "waiting", "{listed}");

    // The person approves; the turn ends; the result follows.
    t.ok(&["send", &parent, ""]);
    let header = format!("Result 1 from spun-off tab {child}");
    t.model
        .wait_for("the kept result in the parent's request", TURN, |r| {
            r.asked.as_ref().is_some_and(|a| {
                a.user_text.contains(&header) && a.user_text.contains("RESULT-WHILE-BLOCKED-5")
            })
        });
    let mut listed = serde_json::Value::Null;
    let delivered = poll(TURN, || {
        listed = serde_json::from_str(&t.ok(&["spinoffs", "--json"])).unwrap();
        listed[0]["results"][0]["held"] == "delivered"
    });
    assert!(delivered, "{listed}");
}
