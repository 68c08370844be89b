//! A closed tab whose worktree went (`nerdr close --remove-worktree`)
//! leaves its branch `nerdr/<id>`: `nerdr diff` and `nerdr merge` take
//! that branch (or the old id) against the base recorded when the
//! worktree went, and a `nerdr/*` branch with no known base is refused,
//! the error naming it and the git commands to use instead. Real binary,
//! real git, under the private `systemd --user`.

use crate::support::repo_session::{RepoSession, SH};

#[test]
fn a_closed_tabs_branch_without_its_worktree_is_diffed_and_merged() {
    let Some(st) = RepoSession::on_main(SH) else {
        return;
    };
    let t = st.tab("sh");
    let wt = st.worktree_of(&t);
    st.commit(&wt, "a.txt", "a\n", "agent a");
    // The main checkout moves on meanwhile: its commit is no work of the tab.
    std::fs::write(st.repo.join("main.txt"), "main\n").unwrap();
    st.git(&st.repo, &["add", "main.txt"]);
    st.git(&st.repo, &["commit", "-q", "-m", "main moves"]);
    let (_, said) = st.ok_said(&["close", "--remove-worktree", &t]);
    assert!(!wt.exists());
    let branch = format!("nerdr/{t}");
    assert!(
        said.contains(&format!("`nerdr diff {branch}`"))
            && said.contains(&format!("`nerdr merge {branch}`")),
        "{said}"
    );

    // Its branch and its old id both name it; the diff is its work alone.
    let by_branch = st.ok(&["diff", &branch]);
    let by_id = st.ok(&["diff", &t]);
    assert_eq!(by_branch, by_id);
    assert!(
        by_branch.contains("+a") && !by_branch.contains("main.txt"),
        "{by_branch}"
    );
    let out = st.ok(&["merge", &branch]);
    assert!(out.contains(&format!("merged {branch} into main")), "{out}");
    assert_eq!(
        std::fs::read_to_string(st.repo.join("a.txt")).unwrap(),
        "a\n"
    );

    // A nerdr branch nothing recorded a base for: named, with what to do.
    st.git(&st.repo, &["branch", "nerdr/beef0001", "HEAD~1"]);
    for cmd in ["diff", "merge"] {
        let err = st.fails(&[cmd, "nerdr/beef0001"]);
        assert!(
            err.contains("the branch nerdr/beef0001 has no known base")
                && err.contains("merge nerdr/beef0001`"),
            "{cmd}: {err}"
        );
    }
}
