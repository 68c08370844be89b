//! The nerdr skill in a real agent's context (README.md, "Agent
//! integration"): `nerdr integration install` puts `SKILL.md` in the
//! agent's skills folder, and the real claude and codex, offline against
//! the fake model, carry it in what they send the model.

use std::time::Duration;

use crate::suites::agent_states::{claude_home, codex_home, ClaudeDialogs, CodexDialogs};
use crate::suites::agent_turns::Turns;

/// Words of the skill's description (its front matter), which an agent
/// lists among its skills.
const DESCRIPTION: &str = "Working under nerdr (when $NERDR_TAB is set)";

fn carries_the_skill(t: &Turns) {
    assert!(
        t.home_file(&format!(".{}/skills/nerdr/SKILL.md", t.agent))
            .is_file(),
        "install put no skill in place"
    );
    let tab = t.start();
    t.wait_idle(&tab);
    t.prompt(&tab, "hello SKILL-CHECK");
    // The turn's own request, with the tools: claude asks for a title
    // first, with the prompt and without them.
    t.model
        .wait_for("the prompt's turn", Duration::from_secs(150), |r| {
            r.body.contains("SKILL-CHECK") && r.body.contains("\"tools\"")
        });
    // claude reads its skills folder while it starts; on a loaded machine
    // (CI, 2 cores) the first turn has gone out before (seen once). The
    // skill must be in the context of the turns after.
    if !t.model.log().iter().any(|r| r.body.contains(DESCRIPTION)) {
        t.wait_idle(&tab);
        t.prompt(&tab, "again SKILL-CHECK-2");
        t.model
            .wait_for("the second turn", Duration::from_secs(150), |r| {
                r.body.contains("SKILL-CHECK-2") && r.body.contains("\"tools\"")
            });
    }
    assert!(
        t.model.log().iter().any(|r| r.body.contains(DESCRIPTION)),
        "{} never sent the nerdr skill to the model:\n{}",
        t.agent,
        t.model.dump()
    );
}

#[test]
fn claude_has_the_nerdr_skill_in_its_context() {
    let Some(t) = Turns::setup_with_hooks("claude", |url, home| {
        claude_home(url, home, ClaudeDialogs::none())
    }) else {
        return;
    };
    carries_the_skill(&t);
}

#[test]
fn codex_has_the_nerdr_skill_in_its_context() {
    let Some(t) = Turns::setup_with_hooks("codex", |url, home| {
        codex_home(url, home, &home.join("proj"), CodexDialogs::NONE)
    }) else {
        return;
    };
    carries_the_skill(&t);
}
