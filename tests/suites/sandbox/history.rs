//! Issue 13, items 2 and 4: a program in `nerdr sandbox` cannot destroy or
//! rewrite what the repository holds (objects, branches, tags), its own
//! branch's commits still reach the host; and a hand-run `nerdr sandbox`
//! gives the repository sandbox history, so the host git guard is on there.

use super::{sandbox, setup, text, user_git};

/// Item 4: `nerdr sandbox -- true`, run by hand in a linked worktree (no
/// core involved), leaves the repository with sandbox history: `nerdr git
/// check` then refuses a filter planted in its config.
#[test]
fn a_hand_run_sandbox_records_sandbox_history() {
    let Some(env) = setup() else { return };
    let home = env.home().to_path_buf();
    let proj = home.join("proj");
    user_git(
        &env,
        &proj,
        &["worktree", "add", "-q", "-b", "side", "../linked"],
    );
    let linked = home.join("linked");
    let out = sandbox(&env, &linked, &["true"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    user_git(&env, &proj, &["config", "filter.evil.clean", "/bin/cat"]);
    for dir in [&proj, &linked] {
        let out = env.output(&["nerdr", "git", "check", dir.to_str().unwrap()]);
        let said = text(&out.stdout);
        assert!(
            !out.status.success() && said.contains("filter.evil.clean"),
            "{}: host git allowed after a sandboxed run:\n{said}{}",
            dir.display(),
            text(&out.stderr)
        );
    }
}
