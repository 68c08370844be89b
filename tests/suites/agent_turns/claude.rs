//! The real claude under `nerdr sandbox`.

use serde_json::Value;

use super::Turns;
use crate::support::agent_home;
use crate::support::fake_model::script::{AFTER_TOOL_TEXT, DEFAULT_TEXT};
use crate::support::fake_model::Turn;

fn setup() -> Option<Turns> {
    Turns::setup("claude", |url, home| agent_home::claude(url, home))
}

fn claude_json(t: &Turns) -> Value {
    let text = std::fs::read_to_string(t.home_file(".claude.json")).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("~/.claude.json: {e}:\n{text}"))
}

#[test]
fn the_real_claude_commits_on_its_branch_and_stays_signed_in_across_a_restart() {
    let Some(t) = setup() else { return };
    t.model.when_user_says(
        "COMMIT-NOW",
        Turn::run("echo from-claude > claude.txt && git add claude.txt && git commit -q -m from-claude"),
    );
    let tab = t.start();
    t.wait_idle(&tab);
    t.prompt(&tab, "Please COMMIT-NOW");
    t.model
        .wait_for("the commit's result", super::TURN, |r| r.after_tool());
    t.wait_screen(&tab, "the closing answer", super::TURN, |s| {
        s.contains(AFTER_TOOL_TEXT) && s.contains(super::IDLE)
    });
    let first = claude_json(&t);
    t.exit(&tab, "/exit");
    t.wait_commit(&tab, "from-claude");

    // What claude wrote to its config in the sandbox is on the host.
    let user_id = first["userID"].clone();
    assert!(user_id.is_string(), "claude wrote no userID: {first:#}");

    // Started again: signed in, no dialog, its state kept; and it works.
    let before = t.model.log().len();
    t.ok(&["restart", &tab]);
    t.wait_idle(&tab);
    t.prompt(&tab, "hello again");
    t.wait_screen(&tab, "the second answer", super::TURN, |s| s.contains(DEFAULT_TEXT));
    assert!(
        t.model.log()[before..]
            .iter()
            .any(|r| r.answer.as_deref().is_some_and(|a| a.contains(DEFAULT_TEXT))),
        "the second turn never reached the model:\n{}",
        t.model.dump()
    );
    let second = claude_json(&t);
    assert_eq!(second["userID"], user_id, "{second:#}");
    assert_eq!(
        second["customApiKeyResponses"], first["customApiKeyResponses"],
        "{second:#}"
    );
    t.exit(&tab, "/exit");
}
