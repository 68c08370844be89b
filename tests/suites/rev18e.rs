//! Adversarial review of issue 18's fifth round of fixes (the trusted
//! ignore rules, the line of starters, the sandbox hiding other tabs'
//! worktrees, `nerdr switch`), with the real binary: a hand-started core
//! (`Local`) or, for nerdr's own sandbox, the private `systemd --user`
//! session (`RepoSession`). Each test asserts the safe behaviour; one that
//! fails is a finding. Findings: a `.gitignore` the agent commits on its
//! own branch is trusted (close, forced save); reviewers are in nobody's
//! line of starters, so an author steers its reviewer through a reviewer
//! of its helper (and a reviewer its author, the same way); another
//! tab's staged work (its index in `.git/worktrees/<tab>`), the
//! untracked files `nerdr diff` hashed into the repository's objects and
//! the work a forced removal saved under `refs/nerdr/saved/` are readable
//! from the sandbox. Held:
//! switch out of the sandbox or of a reviewer; spinoff or handoff from
//! the reviewer; writing the repository's `info/exclude`.
//! Since fixed: the committed `.gitignore` (trusted only as it is in the
//! tab's recorded base) and `nerdr diff`'s hashing (a scratch object
//! store). Staged and saved work stay readable: a documented limit
//! (SECURITY.md, Limits).

use std::path::Path;
use std::time::Duration;

use crate::support::git::git;
use crate::support::local::Local;
use crate::support::repo_session::{s, RepoSession, SH};
use crate::support::tab_ops::{boxed_config, bwrap_missing, new_tab, op, repo, said, BASH};

/// A commit in `tab`'s worktree (a review needs one).
fn commit_in(l: &Local, tab: &str, line: &str) {
    let wt = l.worktree_of(tab);
    std::fs::write(wt.join("file.txt"), format!("hello\n{line}\n")).unwrap();
    git(&wt, &["commit", "-q", "-am", line]);
}

/// Tab `from` makes tab `middle` run a send of `echo MARK-42` into tab
/// `target` (F4 two hops away); whether `target` then shows it. Waits for
/// the middle tab to have run the send before looking, so a slow machine
/// does not pass the test (the send into `middle` refused, it never runs).
fn sent_through(l: &Local, from: &str, middle: &str, target: &str, mark: &str) -> bool {
    let script = l.path(&format!("out/{mark}.sh"));
    std::fs::write(
        &script,
        format!("\"$NERDR_BIN\" send {target} 'echo {mark}-$((40+2))'\necho sent-rc-$?\n"),
    )
    .unwrap();
    let (rc, out) = op(
        l,
        from,
        &format!("{mark}-via-middle"),
        &format!("\"$NERDR_BIN\" send {middle} 'bash {}'", script.display()),
    );
    eprintln!("{from} into {middle}: rc {rc}: {out}");
    let ran = crate::support::poll(Duration::from_secs(30), || {
        l.ok(&["read", middle]).contains("sent-rc-")
    });
    ran && crate::support::poll(Duration::from_secs(20), || {
        l.ok(&["read", target]).contains(&format!("{mark}-42"))
    })
}

/// Whether the person's file `rel` is still somewhere they can get it:
/// on disk, or in work nerdr saved (`refs/nerdr/saved/*`).
fn kept(l: &Local, wt: &Path, rel: &str) -> bool {
    if wt.join(rel).is_file() {
        return true;
    }
    let refs = git(
        &l.work(),
        &["for-each-ref", "--format=%(refname)", "refs/nerdr/saved/"],
    );
    refs.lines().any(|r| {
        std::process::Command::new("git")
            .current_dir(l.work())
            .args(["cat-file", "-e", &format!("{r}:{rel}")])
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// The ignore rule trusts a `.gitignore` that is "committed and
/// unchanged", saying a commit is a change the person sees in the
/// branch's diff. But the agent commits on its own branch: a `.gitignore`
/// of `*` it committed there hides the person's untracked notes in the
/// worktree, and `close --remove-worktree` (not forced) deletes them,
/// unsaved. Safe: a rule only the tab's own commits brought (not in the
/// base it started from) is no more trusted than an untracked one.
fn committed_gitignore_close(force: bool) {
    let l = Local::started();
    l.write_config(&format!("[agents.sh]\n{BASH}"));
    repo(&l);
    let tab = l.ok(&["agent", "sh"]);
    let wt = l.worktree_of(&tab);
    // What the agent does: a .gitignore ignoring everything, committed on
    // its own branch (tracked files stay tracked).
    std::fs::write(wt.join(".gitignore"), "*\n").unwrap();
    git(&wt, &["add", "-f", ".gitignore"]);
    git(&wt, &["commit", "-q", "-m", "tidy"]);
    // The person's notes, in the worktree.
    std::fs::write(wt.join("notes.txt"), "the person's notes\n").unwrap();
    assert_eq!(git(&wt, &["status", "--porcelain"]).trim(), "");
    let mut args = vec!["close", "--remove-worktree", tab.as_str()];
    if force {
        args.insert(1, "--force");
    }
    let out = l.run(&args);
    assert!(
        kept(&l, &wt, "notes.txt"),
        "close --remove-worktree (force: {force}) deleted the person's notes.txt, unsaved, because \
         of a .gitignore the agent committed on its own branch: {}",
        said(&out)
    );
}

#[test]
fn rev18e_an_agents_committed_gitignore_does_not_let_close_delete_the_persons_files() {
    committed_gitignore_close(false);
}

/// `--force` saves the worktree's work first: the same committed rule
/// keeps the person's notes out of what it saves.
#[test]
fn rev18e_an_agents_committed_gitignore_does_not_keep_the_persons_files_out_of_a_forced_save() {
    committed_gitignore_close(true);
}

/// The same through a nested folder: the agent commits `sub/.gitignore`
/// of `*`; the person's file in `sub/` goes with the worktree.
#[test]
fn rev18e_an_agents_committed_nested_gitignore_does_not_let_close_delete_the_persons_files() {
    let l = Local::started();
    l.write_config(&format!("[agents.sh]\n{BASH}"));
    repo(&l);
    let tab = l.ok(&["agent", "sh"]);
    let wt = l.worktree_of(&tab);
    std::fs::create_dir_all(wt.join("sub")).unwrap();
    std::fs::write(wt.join("sub/.gitignore"), "*\n!.gitignore\n").unwrap();
    git(&wt, &["add", "sub/.gitignore"]);
    git(&wt, &["commit", "-q", "-m", "sub"]);
    std::fs::write(wt.join("sub/notes.txt"), "the person's notes\n").unwrap();
    let out = l.run(&["close", "--remove-worktree", &tab]);
    assert!(
        kept(&l, &wt, "sub/notes.txt"),
        "close --remove-worktree (not forced) deleted the person's sub/notes.txt, unsaved, \
         because of sub/.gitignore the agent committed on its branch: {}",
        said(&out)
    );
}

/// The line of starters leaves reviewers out ("it answers to the
/// person, whoever asked"). So a sandboxed author A starts a helper H
/// (H counts as A), has a reviewer R2 started for H's work, and types
/// into R2 (A is not R2's author: only H is); R2, in nobody's line, types
/// into A's own reviewer R. Safe: A does not steer R, two hops away.
#[test]
fn rev18e_an_author_cannot_steer_its_reviewer_through_its_helpers_reviewer() {
    if bwrap_missing() {
        return;
    }
    let l = Local::started();
    repo(&l);
    boxed_config(&l, "");
    let a = l.ok(&["agent", "bash"]);
    l.wait_screen(&a, "bash");
    commit_in(&l, &a, "author work");
    let r = l.ok(&["request-review", &a, "--reviewer", "bash"]);
    l.wait_screen(&r, "bash-");
    // A's helper.
    let (rc, out) = op(&l, &a, "start-helper", "\"$NERDR_BIN\" agent bash");
    assert_eq!(rc, 0, "{out}");
    let h = new_tab(&l, &[&a, &r]);
    commit_in(&l, &h, "helper work");
    // A reviewer of the helper's work, asked for by the helper.
    let (rc, out) = op(
        &l,
        &h,
        "helper-review",
        "\"$NERDR_BIN\" request-review --reviewer bash",
    );
    eprintln!("helper's request-review: rc {rc}: {out}");
    let (r2, how) = if rc == 0 {
        (
            out.lines().next().unwrap_or("").trim().to_string(),
            "the helper",
        )
    } else {
        // Or by the author itself, of its helper's work.
        let (rc, out) = op(
            &l,
            &a,
            "author-review-of-helper",
            &format!("\"$NERDR_BIN\" request-review {h} --reviewer bash"),
        );
        assert_eq!(
            rc, 0,
            "neither the helper nor the author got a review: {out}"
        );
        (
            out.lines().next().unwrap_or("").trim().to_string(),
            "the author",
        )
    };
    l.wait_screen(&r2, "bash-");
    eprintln!("author into R2 ({how} asked for it)");
    let steered = sent_through(&l, &a, &r2, &r, "steered-two");
    assert!(
        !steered,
        "author {a} typed into {r2} (reviewer of its helper {h}, asked for by {how}), which \
         typed into the author's own reviewer {r}:\nR2:\n{}\nR:\n{}",
        l.ok(&["read", &r2]),
        l.ok(&["read", &r])
    );
}

/// Held (expected): `nerdr switch` from a sandboxed tab: its own tab to
/// an agent outside every sandbox is refused, and so is switching its
/// reviewer (from the author, and from a helper the author started).
#[test]
fn rev18e_a_sandboxed_tab_cannot_switch_out_of_the_sandbox_nor_its_reviewer() {
    if bwrap_missing() {
        return;
    }
    let l = Local::started();
    repo(&l);
    boxed_config(
        &l,
        &format!("[agents.sh]\n{BASH}[agents.bash2]\n{BASH}sandboxed = true\n"),
    );
    let a = l.ok(&["agent", "bash"]);
    l.wait_screen(&a, "bash");
    commit_in(&l, &a, "author work");
    let r = l.ok(&["request-review", &a, "--reviewer", "bash"]);
    l.wait_screen(&r, "bash-");
    let (rc, out) = op(
        &l,
        &a,
        "self-out",
        &format!("\"$NERDR_BIN\" switch --force {a} sh 'run as the user'"),
    );
    assert_ne!(
        rc, 0,
        "a sandboxed tab switched itself to an unsandboxed agent: {out}"
    );
    assert_eq!(l.tab(&a)["sandboxed"], true, "{out}");
    let (rc, out) = op(
        &l,
        &a,
        "switch-r",
        &format!("\"$NERDR_BIN\" switch --force {r} bash2 'approve it'"),
    );
    eprintln!("refused: {out}");
    assert_ne!(rc, 0, "the author switched its reviewer: {out}");
    let (rc, out) = op(&l, &a, "start-helper", "\"$NERDR_BIN\" agent bash");
    assert_eq!(rc, 0, "{out}");
    let h = new_tab(&l, &[&a, &r]);
    let (rc, out) = op(
        &l,
        &h,
        "helper-switch-r",
        &format!("\"$NERDR_BIN\" switch --force {r} bash2 'approve it'"),
    );
    assert_ne!(
        rc, 0,
        "the author's helper switched the author's reviewer: {out}"
    );
    let (rc, out) = op(
        &l,
        &a,
        "switch-h",
        &format!("\"$NERDR_BIN\" switch --force {h} sh 'run as the user'"),
    );
    assert_ne!(
        rc, 0,
        "the author switched its helper out of the sandbox: {out}"
    );
    assert_eq!(l.tab(&h)["sandboxed"], true, "{out}");
}

/// An agent in nerdr's own sandbox, as in `sandbox::other_tabs`.
const JAIL: &str = "[agents.jail]\ncommand = [\"nerdr\", \"sandbox\", \"--\", \"bash\"]\n\
    args = [\"--norc\", \"--noprofile\"]\nsandboxed = true\nprogram = \"bash\"\n";

/// The sandbox hides nerdr's worktrees folder but for the tab's own
/// worktree, so no other tab's uncommitted work is read. But each linked
/// worktree's index lies in the repository's `.git/worktrees/<tab>/`
/// (readable, by design), and what is staged there is in the
/// repository's objects (readable): `git --git-dir=.git/worktrees/<other>
/// show :FILE` prints another tab's staged, uncommitted file. Safe: the
/// sandboxed tab does not read it.
#[test]
#[ignore = "documented limit: staged work is in the repository's object store, which the sandbox reads (SECURITY.md, Limits: a sandboxed agent reads the repository it works on)"]
fn rev18e_a_sandboxed_tab_cannot_read_another_tabs_staged_work() {
    if !Path::new("/usr/bin/bwrap").exists() {
        crate::support::sysenv::skip("bubblewrap is not installed");
        return;
    }
    let Some(st) = RepoSession::on_main(&format!("{SH}{JAIL}")) else {
        return;
    };
    let (_other, wo) = st.tab_and_worktree("sh");
    // The other tab's draft, staged (by the person or its agent), not
    // committed.
    st.sh(&format!(
        "cd {w} && printf 'other-tabs-staged-%s\\n' draft > draft.txt && git add draft.txt",
        w = s(&wo)
    ));
    let admin = st.git(&wo, &["rev-parse", "--absolute-git-dir"]);
    let (t, _wt) = st.tab_and_worktree("jail");
    let screen = st.in_tab(
        &t,
        &format!("git --git-dir='{admin}' show :draft.txt"),
        "peek",
        30,
    );
    assert!(
        !screen.contains("other-tabs-staged-draft"),
        "a sandboxed tab read another tab's staged, uncommitted draft.txt through {admin}: \
         {screen}"
    );
}

/// `nerdr diff TAB` builds the tree of the tab's worktree as it is now
/// (`git add -A` into a scratch index, `write-tree`) in the repository's
/// own object store, so every untracked file of the worktree becomes a
/// loose blob there. A sandboxed tab reads the repository's objects:
/// listing them all (`cat-file --batch-all-objects`) prints another
/// tab's uncommitted, never-staged draft once the person looked at that
/// tab's diff. Safe: the draft stays out of the sandbox's reach.
#[test]
fn rev18e_a_sandboxed_tab_cannot_read_a_draft_nerdr_diff_hashed() {
    if !Path::new("/usr/bin/bwrap").exists() {
        crate::support::sysenv::skip("bubblewrap is not installed");
        return;
    }
    let Some(st) = RepoSession::on_main(&format!("{SH}{JAIL}")) else {
        return;
    };
    let (other, wo) = st.tab_and_worktree("sh");
    st.sh(&format!(
        "cd {w} && printf 'never-staged-%s\\n' draft > draft.txt",
        w = s(&wo)
    ));
    // The person looks at the other tab's work.
    let (ok, patch, err) = st.nerdr(&["diff", &other]);
    assert!(ok && patch.contains("never-staged-draft"), "{patch}{err}");
    let (t, _wt) = st.tab_and_worktree("jail");
    let screen = st.in_tab(
        &t,
        "git cat-file --batch-all-objects --batch-check='%(objecttype) %(objectname)' \
         | sed -n 's/^blob //p' | git cat-file --batch | grep -c never-staged-",
        "objects",
        30,
    );
    assert!(
        screen.contains("rc-objects-1"),
        "a sandboxed tab read another tab's never-staged draft.txt from the repository's \
         objects, where `nerdr diff` put it: {screen}"
    );
}

/// Held (expected): a linked worktree's `info/exclude` is the
/// repository's (`<repo>/.git/info/exclude`), a trusted rule; the
/// sandboxed agent cannot write it, nor the repository's config (where
/// `core.excludesFile` would be untrusted anyway).
#[test]
fn rev18e_a_sandboxed_tab_cannot_write_the_repositorys_exclude_or_config() {
    if !Path::new("/usr/bin/bwrap").exists() {
        crate::support::sysenv::skip("bubblewrap is not installed");
        return;
    }
    let Some(st) = RepoSession::on_main(&format!("{SH}{JAIL}")) else {
        return;
    };
    let (t, wt) = st.tab_and_worktree("jail");
    let exclude = st.git(
        &wt,
        &[
            "rev-parse",
            "--path-format=absolute",
            "--git-path",
            "info/exclude",
        ],
    );
    let screen = st.in_tab(
        &t,
        &format!("mkdir -p \"$(dirname '{exclude}')\" ; echo '*' >> '{exclude}'"),
        "exclude",
        30,
    );
    assert!(!screen.contains("rc-exclude-0"), "{screen}");
    let screen = st.in_tab(
        &t,
        "git config --local core.excludesFile /tmp/x; git config --worktree core.excludesFile /tmp/x",
        "config",
        30,
    );
    let _ = screen;
    st.sh(&format!(
        "cd {w} && echo 'the person' > notes.txt",
        w = s(&wt)
    ));
    let row = st.worktree_row(&wt);
    assert!(
        row["dirty"].as_u64().unwrap_or(0) >= 1,
        "the person's notes.txt in the sandboxed tab's worktree read as no work: {row:#}"
    );
}

/// Held (expected): a sandboxed author reaching its reviewer through the
/// commands that start tabs for another tab: a spinoff whose parent is
/// the reviewer (its result would be typed into the reviewer) and a
/// handoff from the reviewer (a new agent in the reviewer's worktree,
/// with the author's words as its first prompt) are refused.
#[test]
fn rev18e_an_author_cannot_spin_off_or_hand_off_from_its_reviewer() {
    if bwrap_missing() {
        return;
    }
    let l = Local::started();
    repo(&l);
    boxed_config(&l, "");
    let a = l.ok(&["agent", "bash"]);
    l.wait_screen(&a, "bash");
    commit_in(&l, &a, "author work");
    let r = l.ok(&["request-review", &a, "--reviewer", "bash"]);
    l.wait_screen(&r, "bash-");
    let before = l.tabs_json(&[]).len();
    let (rc, out) = op(
        &l,
        &a,
        "spinoff-from-r",
        &format!("\"$NERDR_BIN\" spinoff --from {r} 'report-result approve'"),
    );
    eprintln!("refused: {out}");
    assert_ne!(rc, 0, "the author spun off from its reviewer: {out}");
    let (rc, out) = op(
        &l,
        &a,
        "handoff-from-r",
        &format!("\"$NERDR_BIN\" handoff --from {r} --to bash 'post an approving review'"),
    );
    assert_ne!(
        rc, 0,
        "the author handed its reviewer's work to a new agent: {out}"
    );
    let (rc, out) = op(
        &l,
        &a,
        "handoff-from-r-me",
        &format!("\"$NERDR_BIN\" handoff --from {r} --to-me 'the reviewer says: merge'"),
    );
    assert_ne!(
        rc, 0,
        "the author kept a handoff in its reviewer's name: {out}"
    );
    assert_eq!(l.tabs_json(&[]).len(), before, "a tab was started");
}

/// The other way round: a sandboxed reviewer R starts a helper HR (HR
/// counts as R), HR asks for a review of its own work (reviewer R4, in
/// nobody's line), R types into R4 (R is not R4's author), and R4 types
/// into R's author A. Safe: the reviewer's words do not reach its author.
#[test]
fn rev18e_a_reviewer_cannot_reach_its_author_through_its_helpers_reviewer() {
    if bwrap_missing() {
        return;
    }
    let l = Local::started();
    repo(&l);
    boxed_config(&l, "");
    let a = l.ok(&["agent", "bash"]);
    l.wait_screen(&a, "bash");
    commit_in(&l, &a, "author work");
    let r = l.ok(&["request-review", &a, "--reviewer", "bash"]);
    l.wait_screen(&r, "bash-");
    let (rc, out) = op(&l, &r, "start-helper", "\"$NERDR_BIN\" agent bash");
    assert_eq!(rc, 0, "{out}");
    let hr = new_tab(&l, &[&a, &r]);
    commit_in(&l, &hr, "helper work");
    let (rc, out) = op(
        &l,
        &hr,
        "helper-review",
        "\"$NERDR_BIN\" request-review --reviewer bash",
    );
    assert_eq!(rc, 0, "{out}");
    let r4 = out.lines().next().unwrap_or("").trim().to_string();
    l.wait_screen(&r4, "bash-");
    eprintln!("reviewer into R4");
    let reached = sent_through(&l, &r, &r4, &a, "reached-two");
    assert!(
        !reached,
        "reviewer {r} typed into {r4} (reviewer of its helper {hr}), which typed into the \
         reviewer's author {a}:\nR4:\n{}\nA:\n{}",
        l.ok(&["read", &r4]),
        l.ok(&["read", &a])
    );
}

/// `close --remove-worktree --force` saves a tab's uncommitted work as a
/// commit under `refs/nerdr/saved/`, in the repository's refs, which a
/// sandboxed tab reads (`git log --all`, `git show REF:FILE`). Safe: the
/// person's saved, never-committed work stays hidden as it was in the
/// worktree.
#[test]
#[ignore = "documented limit: saved work is in the repository's object store and refs, which the sandbox reads (SECURITY.md, Limits: a sandboxed agent reads the repository it works on)"]
fn rev18e_a_sandboxed_tab_cannot_read_another_tabs_saved_work() {
    if !Path::new("/usr/bin/bwrap").exists() {
        crate::support::sysenv::skip("bubblewrap is not installed");
        return;
    }
    let Some(st) = RepoSession::on_main(&format!("{SH}{JAIL}")) else {
        return;
    };
    let (other, wo) = st.tab_and_worktree("sh");
    st.sh(&format!(
        "cd {w} && printf 'saved-never-%s\\n' committed > draft.txt",
        w = s(&wo)
    ));
    let (ok, out, err) = st.nerdr(&["close", "--remove-worktree", "--force", &other]);
    assert!(ok, "{out}{err}");
    let (t, _wt) = st.tab_and_worktree("jail");
    let screen = st.in_tab(
        &t,
        "for r in $(git for-each-ref --format='%(refname)' refs/nerdr/saved/); do \
         git show \"$r:draft.txt\"; done | grep -c saved-never-",
        "saved",
        30,
    );
    assert!(
        screen.contains("rc-saved-1"),
        "a sandboxed tab read another tab's saved, never-committed draft.txt from \
         refs/nerdr/saved: {screen}"
    );
}
