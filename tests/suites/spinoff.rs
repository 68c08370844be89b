//! Spinoffs end to end (README.md, "Spinoffs"). The real claude
//! (`$NERDR_AGENT_CLIS`), offline against the fake model, runs `nerdr
//! spinoff` through its shell tool: a new claude starts in a tab and
//! worktree of its own, gets the task as its first prompt, commits and
//! runs `nerdr report-result`, and the result reaches the first claude as
//! a message, in the next request it makes. The rules with shells are in
//! `spinoff_rules.rs`.

use std::path::Path;
use std::time::Duration;

use crate::suites::agent_states::{claude_home, ClaudeDialogs};
use crate::suites::agent_turns::Turns;
use crate::support::fake_model::Turn;
use crate::support::poll;

/// claude's start behind a loaded machine, then a turn.
const START: Duration = Duration::from_secs(150);
const TURN: Duration = Duration::from_secs(150);

/// What the parent's model has it run.
const SPIN: &str = "\"${NERDR_BIN:-nerdr}\" spinoff 'CHILD-TASK-7: write child.txt'";
/// What the spun-off claude's model has it run, on its task.
const REPORT: &str = "echo from-child > child.txt && git add child.txt && \
                      git commit -q -m child-work && \
                      \"${NERDR_BIN:-nerdr}\" report-result 'RESULT-FROM-CHILD-42 all done'";

#[test]
fn claude_spins_off_a_task_and_its_result_reaches_it_as_a_message() {
    let Some(t) = Turns::setup_with_hooks("claude", |url, home| {
        claude_home(url, home, ClaudeDialogs::none())
    }) else {
        return;
    };
    // First match wins: the child's task before the parent's request (the
    // parent's result message carries neither marker).
    t.model.when_user_says("CHILD-TASK-7", Turn::run(REPORT));
    t.model.when_user_says("PLEASE-SPIN", Turn::run(SPIN));
    let parent = t.start();
    t.wait_idle(&parent);
    let parent_wt = t.tab_json(&parent)["worktree"]
        .as_str()
        .expect("the parent has a worktree")
        .to_string();
    // Something uncommitted in the parent: not carried, and counted.
    std::fs::write(
        Path::new(&parent_wt).join("README"),
        "changed, uncommitted\n",
    )
    .unwrap();
    let since = t.prompt(&parent, "PLEASE-SPIN now");
    t.wait_tool_result(&parent, since);
    assert!(
        t.a_tool_result_holds("1 uncommitted change of tab"),
        "the spinoff's output did not count the uncommitted change:\n{}",
        t.model.dump()
    );

    // A new tab, spun off from the parent, with a worktree and branch of
    // its own.
    let mut child = serde_json::Value::Null;
    let spun = poll(START, || {
        let tabs: Vec<serde_json::Value> =
            serde_json::from_str(&t.ok(&["tabs", "--json"])).unwrap();
        child = tabs
            .into_iter()
            .find(|r| r["spun_off_from"] == parent.as_str())
            .unwrap_or_default();
        !child.is_null()
    });
    assert!(spun, "no spun-off tab:\n{}", t.model.dump());
    let child_id = child["id"].as_str().unwrap().to_string();
    assert_eq!(child["agent"], "claude");
    let child_wt = child["worktree"].as_str().expect("a worktree").to_string();
    assert_ne!(child_wt, parent_wt);
    assert_eq!(
        std::fs::read_to_string(Path::new(&child_wt).join("README")).unwrap(),
        "hello\n",
        "the parent's uncommitted change was carried"
    );

    // Its first prompt is the task.
    t.model.wait_for("the spun-off agent's task", START, |r| {
        r.asked.as_ref().is_some_and(|a| {
            a.user_text.contains("CHILD-TASK-7") && a.user_text.contains("report-result")
        })
    });

    // Its result reaches the parent: the next request the parent makes
    // carries it, with the branch, the commit and the diffstat.
    let branch = format!("nerdr/{child_id}");
    let header = format!("Result 1 from spun-off tab {child_id}");
    t.model
        .wait_for("the result in the parent's request", TURN, |r| {
            r.asked.as_ref().is_some_and(|a| {
                a.user_text.contains("RESULT-FROM-CHILD-42") && a.user_text.contains(&header)
            })
        });
    let log = t.model.log();
    let asked = log
        .iter()
        .filter_map(|r| r.asked.as_ref())
        .find(|a| a.user_text.contains(&header))
        .unwrap();
    for want in [branch.as_str(), "child-work", "child.txt", "1 file changed"] {
        assert!(
            asked.user_text.contains(want),
            "{want:?} not in {}",
            asked.user_text
        );
    }
    assert!(
        !asked.user_text.contains("written in a sandbox"),
        "{}",
        asked.user_text
    );
    let mut listed = serde_json::Value::Null;
    let delivered = poll(TURN, || {
        listed = serde_json::from_str(&t.ok(&["spinoffs", "--json"])).unwrap();
        listed[0]["results"][0]["held"] == "delivered"
    });
    assert!(delivered, "{listed}");
    assert_eq!(listed[0]["tab"], child_id.as_str());
    assert_eq!(listed[0]["parent"], parent.as_str());
}

/// What the spun-off claude answers its task with, reporting nothing.
const CHILD_ANSWER: &str = "CHILD-ANSWER-99: the bug is in the parser";

#[test]
fn a_spinoff_whose_turn_ends_without_a_report_is_marked_and_the_persons_report_reaches_its_parent()
{
    let Some(t) = Turns::setup_with_hooks("claude", |url, home| {
        claude_home(url, home, ClaudeDialogs::none())
    }) else {
        return;
    };
    t.model
        .when_user_says("CHILD-TASK-8", Turn::Say(CHILD_ANSWER.into()));
    let parent = t.start();
    t.wait_idle(&parent);
    // The person spins the parent's work off; the spun-off claude answers
    // in words and never runs report-result.
    let child = t.ok(&["spinoff", "--from", &parent, "CHILD-TASK-8: look into it"]);
    let child = child.lines().next().unwrap().trim().to_string();
    t.model.wait_for("the spun-off agent's answer", START, |r| {
        r.asked
            .as_ref()
            .is_some_and(|a| a.user_text.contains("CHILD-TASK-8"))
    });
    // Its turn ended with no report: marked in the tab list.
    let mut row = serde_json::Value::Null;
    let due = poll(TURN, || {
        row = t.tab_json(&child);
        row["report_due"] == true
    });
    assert!(
        due,
        "the spun-off tab was never marked report_due: {row}\n{}",
        t.model.dump()
    );
    assert!(
        t.tab_json(&parent).get("report_due").is_none(),
        "the parent is no spinoff"
    );

    // The person reports its last answer, read from its conversation log.
    let before = t.model.log().len();
    let out = t.ok(&["report-result", "--for", &child]);
    assert!(
        out.contains(&format!("result 1 sent to tab {parent}")),
        "{out}"
    );
    let header = format!("Result 1 from spun-off tab {child}");
    t.model
        .wait_for("the result in the parent's request", TURN, |r| {
            r.asked
                .as_ref()
                .is_some_and(|a| a.user_text.contains(&header))
        });
    let log = t.model.log();
    let asked = log
        .iter()
        .skip(before)
        .filter_map(|r| r.asked.as_ref())
        .find(|a| a.user_text.contains(&header))
        .expect("the parent's request after the report");
    for want in [
        "reported by the person",
        "(its last answer, from its conversation)",
        CHILD_ANSWER,
        &format!("nerdr/{child}"),
        "No commits since",
    ] {
        assert!(
            asked.user_text.contains(want),
            "{want:?} not in {}",
            asked.user_text
        );
    }
    // Reported: no longer due.
    let cleared = poll(TURN, || t.tab_json(&child).get("report_due").is_none());
    assert!(cleared, "still report_due: {}", t.tab_json(&child));
}
