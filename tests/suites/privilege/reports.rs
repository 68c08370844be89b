//! Agent states and the privilege model: a sandboxed agent's hook reports
//! move its own tab's state and no other's, and it may `wait` on and
//! `explain` only the tabs it may `read` (others read as missing).

use super::Setup;

#[test]
fn a_sandboxed_agents_reports_count_only_for_its_own_tab() {
    let Some(s) = Setup::new() else { return };
    let plain = s.ok(&["agent", "sh"]);
    let boxed = s.ok(&["agent", "boxed"]);
    s.screen_shows(&boxed, "$");
    let state = |tab: &str| {
        s.tabs()
            .into_iter()
            .find(|t| t["id"] == tab)
            .map(|t| t["agent_state"].clone())
            .unwrap()
    };
    // Neither agent has rules: only reports move them.
    assert_eq!(state(&plain), "unknown");
    assert_eq!(state(&boxed), "unknown");

    s.ok(&[
        "send",
        &boxed,
        "\"$NERDR_BIN\" hook UserPromptSubmit; echo hook\"-rc=$?\"",
    ]);
    s.screen_shows(&boxed, "hook-rc=0");
    let moved = crate::support::poll(std::time::Duration::from_secs(10), || {
        state(&boxed) == "working"
    });
    assert!(
        moved,
        "the sandboxed agent's report did not reach its own tab"
    );
    assert_eq!(state(&plain), "unknown", "another tab moved");

    // What it may not read, it may not wait on or explain either: such a
    // tab reads as one that does not exist.
    s.ok(&[
        "send",
        &boxed,
        &format!(
            "\"$NERDR_BIN\" wait {plain} --until exited --timeout 2; echo wait\"-rc=$?\"; \
             \"$NERDR_BIN\" explain {plain}; echo explain\"-rc=$?\"; \
             \"$NERDR_BIN\" wait {boxed} --until working --timeout 2; echo own\"-rc=$?\""
        ),
    ]);
    s.screen_shows(&boxed, "own-rc=");
    let screen = s.ok(&["read", &boxed]);
    assert!(screen.contains("wait-rc=1"), "{screen}");
    assert!(screen.contains("explain-rc=1"), "{screen}");
    assert!(screen.contains(&format!("no tab `{plain}`")), "{screen}");
    assert!(screen.contains("own-rc=0"), "{screen}");
}
