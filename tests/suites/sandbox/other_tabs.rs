//! What of other tabs a tab in nerdr's sandbox sees: nerdr's worktrees
//! folder is empty inside but for the tab's own worktree (and its run's
//! folders of private history and audit trails are empty), while the tab
//! still commits in its own worktree and a sandboxed reviewer still reads
//! the commits it reviews, in a worktree of its own.

use std::path::Path;
use std::time::Duration;

use crate::support::repo_session::{RepoSession, SH};

/// An agent in nerdr's own sandbox (bubblewrap, private refs and objects),
/// and the reviewer of every tab.
const JAIL: &str = "[agents.jail]\ncommand = [\"nerdr\", \"sandbox\", \"--\", \"bash\"]\n\
    args = [\"--norc\", \"--noprofile\"]\nsandboxed = true\nprogram = \"bash\"\n\
    [review]\nagent = \"jail\"\n";

fn session() -> Option<RepoSession> {
    if !Path::new("/usr/bin/bwrap").exists() {
        crate::support::sysenv::skip("bubblewrap is not installed");
        return None;
    }
    RepoSession::on_main(&format!("{SH}{JAIL}"))
}

/// The last commit's subject on `branch` in the repository, once a
/// sandboxed tab's commit has come home there (it comes while the tab
/// runs, by inotify then host git).
fn comes_home(st: &RepoSession, branch: &str, subject: &str) {
    let mut log = String::new();
    let home = crate::support::poll(Duration::from_secs(30), || {
        log = st.git(&st.repo, &["log", "-1", "--format=%s", branch]);
        log == subject
    });
    assert!(home, "{subject:?} never came home to {branch}: {log}");
}

#[test]
fn a_sandboxed_tab_commits_in_its_own_worktree_and_sees_no_other() {
    let Some(st) = session() else {
        return;
    };
    let (other, wo) = st.tab_and_worktree("sh");
    std::fs::write(wo.join("draft.txt"), "other tab's draft\n").unwrap();
    let (t, wt) = st.tab_and_worktree("jail");
    let repo_folder = wt.parent().unwrap();
    let data = repo_folder.parent().unwrap().parent().unwrap();
    // nerdr's worktrees folder: its own worktree alone, no other tab's,
    // no record of a base.
    let screen = st.in_tab(&t, &format!("ls -A '{}'", repo_folder.display()), "ls", 30);
    assert!(screen.contains("rc-ls-0"), "{screen}");
    assert!(screen.contains(&t), "its own worktree is gone: {screen}");
    assert!(!screen.contains(&other), "another tab's worktree: {screen}");
    assert!(!screen.contains(".base.json"), "{screen}");
    let screen = st.in_tab(
        &t,
        &format!("cat '{}'", wo.join("draft.txt").display()),
        "peek",
        20,
    );
    assert!(
        screen.contains("rc-peek-1") && !screen.contains("other tab's draft"),
        "{screen}"
    );
    // Every run's private history and audit trail: empty folders.
    let screen = st.in_tab(
        &t,
        &format!(
            "echo n=$(find '{0}/sandbox-git' '{0}/audit' -mindepth 1 | wc -l)",
            data.display()
        ),
        "runs",
        20,
    );
    assert!(screen.contains("n=0rc-runs-0"), "{screen}");
    // Its own worktree: written and committed in, and the commit comes
    // home to its branch.
    let screen = st.in_tab(
        &t,
        "echo mine > mine.txt && git add mine.txt && git commit -q -m from-jail",
        "commit",
        30,
    );
    assert!(
        screen.contains("rc-commit-0"),
        "its commit failed: {screen}"
    );
    comes_home(&st, &format!("nerdr/{t}"), "from-jail");
}

#[test]
fn a_sandboxed_reviewer_reads_its_authors_commits_in_its_own_worktree() {
    let Some(st) = session() else {
        return;
    };
    let (author, wa) = st.tab_and_worktree("jail");
    let screen = st.in_tab(
        &author,
        "echo 'the reviewed line' > work.txt && git add work.txt && git commit -q -m 'author work'",
        "commit",
        30,
    );
    assert!(screen.contains("rc-commit-0"), "{screen}");
    comes_home(&st, &format!("nerdr/{author}"), "author work");
    std::fs::write(wa.join("draft.txt"), "the author's uncommitted draft\n").unwrap();

    let reviewer = st.ok(&["request-review", &author]).trim().to_string();
    let wr = st.worktree_of(&reviewer);
    assert_ne!(wr, wa, "the reviewer has a worktree of its own");
    assert_eq!(st.tab_row(&reviewer)["sandboxed"], true);
    // The commits it reviews: in its worktree, and in its git history.
    let screen = st.in_tab(
        &reviewer,
        "cat work.txt && git log -1 --format=subject=%s",
        "read",
        30,
    );
    assert!(
        screen.contains("the reviewed line") && screen.contains("subject=author work"),
        "the reviewer cannot read the work it reviews: {screen}"
    );
    assert!(screen.contains("rc-read-0"), "{screen}");
    // Not the author's uncommitted work: a review is of commits.
    let screen = st.in_tab(
        &reviewer,
        &format!("cat '{}'", wa.join("draft.txt").display()),
        "draft",
        20,
    );
    assert!(
        screen.contains("rc-draft-1") && !screen.contains("the author's uncommitted draft"),
        "{screen}"
    );
}

/// A worktree holding nerdr's data folder: its writable bind would bring
/// every tab's worktree back over the empty folder hiding them.
#[test]
fn a_worktree_holding_nerdrs_data_folder_is_refused() {
    let Some(env) = super::setup() else {
        return;
    };
    let share = env.home().join(".local/share");
    let worktrees = share.join("nerdr/worktrees");
    env.run(&["mkdir", "-p", &worktrees.display().to_string()]);
    let out = super::sandbox(&env, &share, &["true"]);
    let err = super::text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "refusing to make {} writable as the worktree: it holds nerdr's data folder",
            share.display()
        )),
        "{err}"
    );
}
