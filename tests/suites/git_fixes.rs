//! A newcomer's trial (handoffs, reviews, merges): a handoff's tab
//! closing leaves the worktree to the tab that made it, and the advice
//! names that tab and a commit command that takes untracked files; a
//! removal counts unmerged commits; a reviewer's worktree whose base
//! branch `clean --merged` deleted is compared with its recorded base
//! commit and cleanable; `nerdr merge` commits as the shell's
//! `GIT_AUTHOR_*`/`GIT_COMMITTER_*`, and says how to set an identity when
//! git has none. Real binary, real git, under the private `systemd --user`.

use crate::support::repo_session::{s, RepoSession, SH};

/// The open tab `id`'s name, as `nerdr tabs` lists it.
fn name_of(st: &RepoSession, id: &str) -> String {
    st.tab_row(id)["name"].as_str().unwrap().to_string()
}

#[test]
fn a_handoff_tab_closing_leaves_the_worktree_to_its_tab_with_advice_that_works() {
    let Some(st) = RepoSession::on_main(SH) else {
        return;
    };
    let (a, wa) = st.tab_and_worktree("sh");
    st.commit(&wa, "c.txt", "c\n", "agent c");
    std::fs::write(wa.join("d.txt"), "d\n").unwrap();
    let n = st.ok(&["handoff", "--from", &a, "--to", "sh", "x"]);
    let n = n.trim();
    assert_ne!(n, a);

    // Both tabs are listed with the worktree.
    let table = st.ok(&["worktrees"]);
    let row = table.lines().find(|l| l.contains(s(&wa))).unwrap();
    assert!(row.contains(&a) && row.contains(n), "{table}");
    let json = st.worktree_row(&wa);
    assert_eq!(json["tab"], a.as_str(), "{json}");
    assert_eq!(json["also"][0]["tab"], n, "{json}");

    let a_name = name_of(&st, &a);
    let (_, said) = st.ok_said(&["close", n]);
    assert!(
        said.contains(&format!(
            "its worktree {} stays with tab {a} ({a_name}), which works in it too",
            s(&wa)
        )),
        "{said}"
    );
    assert!(!said.contains("nerdr merge"), "no merge advice: {said}");

    let (_, said) = st.ok_said(&["close", &a]);
    let add = format!("git -C {0} add -A && git -C {0} commit", s(&wa));
    assert!(
        said.contains("1 unmerged commit and 1 path with uncommitted work")
            && said.contains(&format!("`nerdr diff {a}`"))
            && said.contains(&format!("`nerdr merge {a}`"))
            && said.contains(&add),
        "{said}"
    );
    // The advice works.
    let diff = st.ok(&["diff", &a]);
    assert!(diff.contains("c.txt") && diff.contains("d.txt"), "{diff}");

    // The handoff's tab closed after the one that made the worktree, by
    // `quit`: said once, by the id diff and merge know it by.
    let (b, wb) = st.tab_and_worktree("sh");
    std::fs::write(wb.join("e.txt"), "e\n").unwrap();
    let m = st.ok(&["handoff", "--from", &b, "--to", "sh", "x"]);
    let m = m.trim();
    let (_, said) = st.ok_said(&["quit"]);
    let wb_said = said.lines().filter(|l| l.contains(s(&wb))).count();
    assert_eq!(wb_said, 1, "the shared worktree said once: {said}");
    assert!(
        said.contains(&format!("`nerdr merge {b}`"))
            && !said.contains(&format!("nerdr merge {m}"))
            && said.contains(&format!("git -C {0} add -A && git -C {0} commit", s(&wb))),
        "{said}"
    );
}

#[test]
fn removing_a_reviewed_tabs_worktree_counts_its_unmerged_commit() {
    let Some(st) = RepoSession::on_main(SH) else {
        return;
    };
    let (c, wc) = st.tab_and_worktree("sh");
    st.commit(&wc, "c.txt", "c\n", "agent c");
    // The reviewer's branch holds the author's commit too.
    let r = st.ok(&["request-review", &c, "--reviewer", "sh"]);
    st.ok(&["close", r.trim()]);
    let (_, said) = st.ok_said(&["close", &c, "--remove-worktree"]);
    assert!(
        said.contains(&format!(
            "the branch nerdr/{c} stays, with 1 unmerged commit: see it with `nerdr diff \
             nerdr/{c}`"
        )),
        "{said}"
    );
}

#[test]
fn a_reviewer_whose_authors_branch_went_is_compared_with_its_base_commit() {
    let Some(st) = RepoSession::on_main(SH) else {
        return;
    };
    // Two authors, each with an open reviewer: one idle, one that commits.
    let (b, wb) = st.tab_and_worktree("sh");
    st.commit(&wb, "b.txt", "b\n", "agent b");
    let idle = st.ok(&["request-review", &b, "--reviewer", "sh"]);
    let idle = idle.trim().to_string();
    let widle = st.worktree_of(&idle);
    let (c, wc) = st.tab_and_worktree("sh");
    st.commit(&wc, "c.txt", "c\n", "agent c");
    let busy = st.ok(&["request-review", &c, "--reviewer", "sh"]);
    let busy = busy.trim().to_string();
    let wbusy = st.worktree_of(&busy);
    st.commit(&wbusy, "note.txt", "n\n", "reviewer's note");
    for author in [&b, &c] {
        st.ok(&["merge", author]);
        st.ok(&["close", author]);
    }
    let out = st.ok(&["clean", "--merged"]);
    assert!(
        out.contains(&format!("removed {}", s(&wb)))
            && st
                .git(&st.repo, &["branch", "--list", &format!("nerdr/{b}")])
                .is_empty(),
        "the authors' branches went: {out}"
    );
    st.ok(&["close", &idle]);
    st.ok(&["close", &busy]);

    let row = st.worktree_row(&widle);
    assert_eq!(row["ahead"], 0, "{row}");
    assert_eq!(row["no_commits"], true, "{row}");

    let out = st.ok(&["clean"]);
    assert!(
        out.contains(&format!("removed {}", s(&widle))),
        "the reviewer with nothing of its own goes: {out}"
    );
    assert!(!widle.exists(), "{out}");
    // The one with a commit of its own stays, with advice that works.
    assert!(wbusy.exists(), "{out}");
    assert!(
        out.contains(&format!(
            "1 commit of nerdr/{busy} is its own, and its base branch nerdr/{c} is gone"
        )) && out.contains(&format!("`nerdr merge nerdr/{busy} --into BRANCH`")),
        "{out}"
    );
    let diff = st.ok(&["diff", &format!("nerdr/{busy}")]);
    assert!(
        diff.contains("note.txt") && !diff.contains("c.txt"),
        "{diff}"
    );
    st.ok(&["merge", &format!("nerdr/{busy}"), "--into", "main"]);
    assert!(st.repo.join("note.txt").exists());
}

/// `~/.gitconfig` with no identity, and git told not to guess one.
const NO_IDENTITY: (&str, &str) = (
    ".gitconfig",
    "[user]\n\tuseConfigOnly = true\n[init]\n\tdefaultBranch = main\n",
);

#[test]
fn merge_commits_as_the_shells_git_identity_and_says_how_to_set_one() {
    let Some(st) = RepoSession::start(SH, &[NO_IDENTITY, ("work/r/tracked.txt", "one\n")]) else {
        return;
    };
    let merge = |args: &[&str], identity: bool| {
        let mut cmd = st.env.user_cmd(&[&["nerdr", "merge"], args].concat());
        cmd.current_dir(&st.repo);
        if identity {
            cmd.env("GIT_AUTHOR_NAME", "Ada Author")
                .env("GIT_AUTHOR_EMAIL", "ada@example.com")
                .env("GIT_COMMITTER_NAME", "Cy Committer")
                .env("GIT_COMMITTER_EMAIL", "cy@example.com");
        }
        cmd.output().unwrap()
    };
    let (a, wa) = st.tab_and_worktree("sh");
    st.commit(&wa, "a.txt", "a\n", "agent a");
    st.commit(&st.repo, "main.txt", "m\n", "main moves on");
    let before = st.head();

    let out = merge(&[&a], false);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("git config --global user.name") && !err.contains("Please tell me"),
        "{err}"
    );
    assert_eq!(st.head(), before, "nothing merged");

    let out = merge(&[&a], true);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let who = st.git(&st.repo, &["log", "-1", "--format=%an <%ae> / %cn <%ce>"]);
    assert_eq!(
        who,
        "Ada Author <ada@example.com> / Cy Committer <cy@example.com>"
    );

    let (q, wq) = st.tab_and_worktree("sh");
    st.commit(&wq, "q.txt", "q\n", "agent q");
    let out = merge(&[&q, "--squash"], true);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let who = st.git(&st.repo, &["log", "-1", "--format=%cn %s"]);
    assert!(who.starts_with("Cy Committer Work of tab"), "{who}");

    // Only the identity names, on one line each.
    let mut cmd = st.env.user_cmd(&["nerdr", "merge", &q]);
    cmd.current_dir(&st.repo).env("GIT_AUTHOR_NAME", "a\nb");
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("GIT_AUTHOR_NAME holds a NUL or a line break"),
        "{err}"
    );
}
