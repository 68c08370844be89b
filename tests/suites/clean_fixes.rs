//! `nerdr clean` after a plain `nerdr clean` (issue 18): the `nerdr/*`
//! branches it kept beside the worktrees it removed are found by a later
//! `clean --merged`, which deletes the merged ones and keeps and names
//! the others, with commands that work without a worktree. Real binary,
//! real git, under the private `systemd --user`.

use crate::support::repo_session::{s, RepoSession, SH};

#[test]
fn clean_merged_finds_the_branches_a_plain_clean_kept() {
    let Some(st) = RepoSession::on_main(SH) else {
        return;
    };
    // Merged, closed: a plain clean removes its worktree, keeps its branch.
    let (m, wm) = st.tab_and_worktree("sh");
    st.commit(&wm, "m.txt", "m\n", "agent m");
    st.ok(&["merge", &m]);
    st.ok(&["close", &m]);
    // Unmerged work, closed, whose worktree went by hand (its branch stays).
    let (u, wu) = st.tab_and_worktree("sh");
    st.commit(&wu, "u.txt", "u\n", "agent u");
    st.ok(&["close", &u]);
    st.git(&st.repo, &["worktree", "remove", "--force", s(&wu)]);

    let out = st.ok(&["clean"]);
    assert!(
        out.contains(&format!("removed {} (closed tab {m}):", s(&wm))),
        "{out}"
    );
    assert_eq!(
        st.tip(&format!("nerdr/{m}")).len(),
        40,
        "plain clean kept it"
    );
    assert!(
        out.contains(&format!("kept branch nerdr/{u} of ")),
        "the branch with no worktree is named: {out}"
    );

    let out = st.ok(&["clean", "--merged", "--dry-run"]);
    assert!(
        out.contains(&format!("would delete branch nerdr/{m} of ")),
        "{out}"
    );
    assert!(out.contains("its base branch main"), "{out}");
    let out = st.ok(&["clean", "--merged"]);
    assert!(
        out.contains(&format!("deleted branch nerdr/{m} of ")),
        "{out}"
    );
    let branches = st.git(&st.repo, &["branch", "--list", "nerdr/*"]);
    assert!(!branches.contains(&m), "{branches}");
    // The unmerged one stays, with a command that works on it.
    assert!(branches.contains(&u), "unmerged work was lost: {out}");
    let see = format!("git -C {} log -p main..nerdr/{u}", s(&st.repo));
    assert!(out.contains(&see), "{out}");
    assert!(out.contains("1 commit of it is not merged"), "{out}");
    assert!(
        out.contains("no base branch was recorded: the branch the main checkout is on"),
        "a branch with no record is compared with the checkout's branch, and says so: {out}"
    );
    let log = st.git(&st.repo, &["log", "-p", &format!("main..nerdr/{u}")]);
    assert!(log.contains("agent u"), "{log}");

    // A fresh tab has nothing to merge yet: not "merged".
    let (_f, wf) = st.tab_and_worktree("sh");
    let table = st.ok(&["worktrees"]);
    let row = table
        .lines()
        .find(|l| l.contains(s(&wf)))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(
        row.contains("no commits") && !row.contains("merged"),
        "{row}"
    );
}

/// `nerdr quit` names the worktrees it leaves with work not home, as
/// `nerdr close` does.
#[test]
fn quit_names_the_worktrees_it_leaves_with_work_not_home() {
    let Some(st) = RepoSession::on_main(SH) else {
        return;
    };
    let (u, wu) = st.tab_and_worktree("sh");
    st.commit(&wu, "u.txt", "u\n", "agent u");
    let (_clean, _) = st.tab_and_worktree("sh");
    let (_, said) = st.ok_said(&["quit"]);
    assert!(said.contains("closed 2 tabs"), "{said}");
    assert!(
        said.contains(&format!("its worktree {} stays", s(&wu)))
            && said.contains("1 unmerged commit")
            && said.contains(&format!("nerdr/{u}")),
        "{said}"
    );
    assert_eq!(
        said.matches("stays").count(),
        1,
        "only the one with work: {said}"
    );
}
