//! What the program inside is told: its own tab in `nerdr tabs`, and the limits file.

use super::*;

#[test]
fn from_its_worktree_a_sandboxed_agent_sees_its_own_tab_in_nerdr_tabs() {
    // The agent's folder is its worktree, which is no session's folder:
    // `nerdr tabs` there still lists its own session (its own tab only).
    let steps = "\"$NERDR_BIN\" tabs --json > tabs.json 2> tabs.err\n";
    let Some(s) = Asking::new(steps, "") else {
        return;
    };
    let (tab, worktree) = s.start();
    s.go(&worktree);
    s.screen_shows(&tab, "STEPS-DONE", Duration::from_secs(30));
    let said = std::fs::read_to_string(worktree.join("tabs.json")).unwrap();
    let err = std::fs::read_to_string(worktree.join("tabs.err")).unwrap();
    let seen: Vec<serde_json::Value> =
        serde_json::from_str(&said).unwrap_or_else(|e| panic!("{e}: {said:?} {err}"));
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0]["id"], tab.as_str(), "{seen:?}");
}

#[test]
fn the_limits_file_inside_names_each_limit() {
    let Some(env) = setup() else { return };
    env.write_user_file(".ssh/id_ed25519", "secret\n");
    let settings = env.write_user_file(
        "limits-settings.json",
        "{\"sandbox\": {\"network\": {\"allowedDomains\": [\"example.com\"]}}}",
    );
    let script = "echo \"var=$NERDR_SANDBOX_LIMITS\"; cat \"$NERDR_SANDBOX_LIMITS\"; \
                  (echo x > \"$NERDR_SANDBOX_LIMITS\") 2>/dev/null && echo WRITABLE || echo READ-ONLY";
    let proj = env.home().join("proj");
    let out = sandbox_sh_with_settings(&env, &proj, &settings, script);
    let said = text(&out.stdout);
    assert!(out.status.success(), "{said}\n{}", text(&out.stderr));
    let home = env.home().display().to_string();
    let section = |title: &str| -> String {
        said.split("\n\n")
            .find(|s| s.starts_with(title))
            .map(|s| format!("{s}\n"))
            .unwrap_or_else(|| panic!("no {title:?} section:\n{said}"))
    };
    assert!(
        said.starts_with("var=/tmp/nerdr-sandbox-limits.txt\n"),
        "{said}"
    );
    assert!(
        section("Writable").contains(&format!("  {home}/proj\n")),
        "{said}"
    );
    let read_only = section("Read-only");
    for p in [".git/hooks", ".git/config"] {
        assert!(
            read_only.contains(&format!("  {home}/proj/{p}\n")),
            "{p}: {said}"
        );
    }
    let hidden = section("Hidden");
    // nerdr's state names every tab: hidden, but for its sockets.
    assert!(
        hidden.contains(&format!("  {home}/.local/state/nerdr\n")),
        "{said}"
    );
    assert!(hidden.contains(&format!("  {home}/.ssh\n")), "{said}");
    assert!(
        hidden.contains(&env.runtime_dir().display().to_string()),
        "{said}"
    );
    let network = section("Network");
    assert!(
        network.contains("nerdr's proxy at http://127.0.0.1:3128"),
        "{said}"
    );
    assert!(network.contains("allowed: example.com"), "{said}");
    assert!(
        network.contains("refused with 403"),
        "outside a tab: {said}"
    );
    let privileges = section("Privileges");
    for want in ["no new privileges", "no nested namespaces", "TIOCSTI"] {
        assert!(privileges.contains(want), "{want}: {said}");
    }
    assert!(said.trim_end().ends_with("READ-ONLY"), "{said}");
    // Nothing was left on the host for it.
    assert!(!env.ns_path("/tmp/nerdr-sandbox-limits.txt").exists());
}
