//! Adversarial review of issue 18's fixes (fourth round), with the real
//! binary against a hand-started core. Findings (each test asserts the
//! safe behaviour, and fails today): F4 one hop away (a tab the author or
//! the reviewer started types into the other; a sandboxed reviewer's
//! message to an unsandboxed author is queued for approval instead of
//! refused); what an agent plants in its own worktree hiding the person's
//! work there from `close --remove-worktree` (forced or not) and `clean`
//! (a `.gitignore` that ignores itself, `skip-worktree` and
//! `assume-unchanged` index flags); `merge` replacing the person's ignored
//! folder with an agent's file of the same name. Held: posts at once store
//! one review; another session's reviews read as no tab.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::git::git;
use crate::support::local::Local;
use crate::support::tab_ops::{boxed_config, bwrap_missing, op, repo, BASH};

/// An author tab of agent `agent` with a commit of its own, and the
/// reviewer (`bash`, sandboxed) the person asked for it, at its prompt.
fn sandboxed_author_and_reviewer(l: &Local, agent: &str, more: &str) -> (String, String) {
    repo(l);
    boxed_config(l, more);
    let author = l.ok(&["agent", agent]);
    l.wait_screen(&author, "bash");
    let wt = l.worktree_of(&author);
    std::fs::write(wt.join("file.txt"), "hello\nsecond\n").unwrap();
    git(&wt, &["commit", "-q", "-am", "second"]);
    let reviewer = l.ok(&["request-review", &author, "--reviewer", "bash"]);
    l.wait_screen(&reviewer, "bash-");
    (author, reviewer)
}

/// The tab `starter` starts with `nerdr agent bash`, at its prompt.
fn started_by(l: &Local, starter: &str, known: &[&str]) -> String {
    let what = format!("start-by-{starter}");
    let (rc, said) = op(l, starter, &what, "\"$NERDR_BIN\" agent bash");
    assert_eq!(rc, 0, "a sandboxed tab starting a sandboxed agent: {said}");
    let proxy = l
        .tabs_json(&[])
        .into_iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .find(|id| !known.contains(&id.as_str()))
        .expect("the new tab");
    l.wait_screen(&proxy, "bash");
    proxy
}

/// F4 says an author's agent may not type into, close, restart or rename
/// its own reviewer. A sandboxed author may start a sandboxed agent of its
/// own (`nerdr agent`) and type into it: that agent is no author, so the
/// reviewer is within its reach, and the author steers its reviewer one
/// hop away. Safe: a tab the author started (and so controls) is held as
/// the author is.
#[test]
fn rev18d_an_author_cannot_steer_its_reviewer_through_a_tab_it_started() {
    if bwrap_missing() {
        return;
    }
    let l = Local::started();
    let (author, reviewer) = sandboxed_author_and_reviewer(&l, "bash", "");

    // The author itself is held (F4).
    let (rc, said) = op(
        &l,
        &author,
        "direct",
        &format!("\"$NERDR_BIN\" send {reviewer} 'echo steered-directly'"),
    );
    assert_ne!(rc, 0, "the author typed into its reviewer: {said}");

    // The author starts an agent of its own, and has it do the typing.
    let proxy = started_by(&l, &author, &[&author, &reviewer]);
    let marker = "steered-by-$((40+2))";
    let (rc, said) = op(
        &l,
        &proxy,
        "proxy-send",
        &format!("\"$NERDR_BIN\" send {reviewer} 'echo {marker}'"),
    );
    let steered = crate::support::poll(Duration::from_secs(5), || {
        l.ok(&["read", &reviewer]).contains("steered-by-42")
    });
    assert!(
        rc != 0 && !steered,
        "tab {proxy}, started by author {author}, typed into the author's reviewer {reviewer} \
         (rc {rc}: {said}); its screen:\n{}",
        l.ok(&["read", &reviewer])
    );
    let (rc, said) = op(
        &l,
        &proxy,
        "proxy-close",
        &format!("\"$NERDR_BIN\" close {reviewer}"),
    );
    assert_ne!(
        rc, 0,
        "tab {proxy}, started by author {author}, closed the author's reviewer: {said}"
    );
}

/// The person's untracked file in a tab's worktree, and a `.gitignore`
/// the tab's agent wrote there that ignores everything, itself included:
/// `git status` then shows nothing, so nerdr counts the worktree as
/// holding no work.
fn plant_ignore_all(l: &Local) -> (String, PathBuf) {
    l.write_config(&format!("[agents.sh]\n{BASH}"));
    repo(l);
    let tab = l.ok(&["agent", "sh"]);
    let wt = l.worktree_of(&tab);
    // The person's notes, in the worktree they review the agent's work in.
    std::fs::write(wt.join("notes.txt"), "the person's notes\n").unwrap();
    // What the agent writes (a sandboxed agent may write its worktree).
    std::fs::write(wt.join(".gitignore"), "*\n").unwrap();
    let status = git(&wt, &["status", "--porcelain"]);
    assert_eq!(status.trim(), "", "the plant did not hide the notes");
    (tab, wt)
}

/// Whether `notes.txt` is still somewhere the person can get it: on disk,
/// or in work nerdr saved (`refs/nerdr/saved/*`).
fn notes_kept(l: &Local, wt: &Path) -> bool {
    if wt.join("notes.txt").is_file() {
        return true;
    }
    let refs = git(
        &l.work(),
        &["for-each-ref", "--format=%(refname)", "refs/nerdr/saved/"],
    );
    refs.lines().any(|r| {
        std::process::Command::new("git")
            .current_dir(l.work())
            .args(["cat-file", "-e", &format!("{r}:notes.txt")])
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// `nerdr close --remove-worktree` (no `--force`) refuses a worktree with
/// work no commit holds; a planted self-ignoring `.gitignore` makes it
/// remove one with the person's file in it, unsaved.
#[test]
fn rev18d_a_planted_gitignore_does_not_let_close_delete_the_persons_files() {
    let l = Local::started();
    let (tab, wt) = plant_ignore_all(&l);
    let out = l.run(&["close", "--remove-worktree", &tab]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        notes_kept(&l, &wt),
        "close --remove-worktree (not forced) deleted the person's notes.txt, unsaved, because \
         the agent's .gitignore ignores it: {said}"
    );
}

/// `nerdr clean` removes a closed tab's worktree that holds no work and
/// whose branch is in its base; the same plant makes it delete the
/// person's file.
#[test]
fn rev18d_a_planted_gitignore_does_not_let_clean_delete_the_persons_files() {
    let l = Local::started();
    let (tab, wt) = plant_ignore_all(&l);
    l.ok(&["close", &tab]);
    let out = l.run(&["clean"]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        notes_kept(&l, &wt),
        "clean deleted the person's notes.txt, unsaved, because the agent's .gitignore ignores \
         it: {said}"
    );
}

/// The other way round: a sandboxed reviewer's words reach its author
/// only through its review and the person; a tab the reviewer started
/// types into the author for it.
#[test]
fn rev18d_a_reviewer_cannot_reach_its_author_through_a_tab_it_started() {
    if bwrap_missing() {
        return;
    }
    let l = Local::started();
    let (author, reviewer) = sandboxed_author_and_reviewer(&l, "bash", "");
    let (rc, said) = op(
        &l,
        &reviewer,
        "direct",
        &format!("\"$NERDR_BIN\" send {author} 'echo reached-directly'"),
    );
    assert_ne!(rc, 0, "the reviewer typed into its author: {said}");
    let proxy = started_by(&l, &reviewer, &[&author, &reviewer]);
    let (rc, said) = op(
        &l,
        &proxy,
        "proxy-send",
        &format!("\"$NERDR_BIN\" send {author} 'echo reached-by-$((40+2))'"),
    );
    let reached = crate::support::poll(Duration::from_secs(5), || {
        l.ok(&["read", &author]).contains("reached-by-42")
    });
    assert!(
        rc != 0 && !reached,
        "tab {proxy}, started by reviewer {reviewer}, typed into the reviewer's author {author} \
         (rc {rc}: {said}); its screen:\n{}",
        l.ok(&["read", &author])
    );
}

/// The line of starters holds two hops away, with the tab in the middle
/// closed, across a core killed and started again: a tab started by a tab
/// the author started is still the author.
#[test]
fn rev18d_the_authors_line_outlives_its_middle_tab_and_the_core() {
    if bwrap_missing() {
        return;
    }
    let mut l = Local::started();
    let (author, reviewer) = sandboxed_author_and_reviewer(&l, "bash", "");
    let h1 = started_by(&l, &author, &[&author, &reviewer]);
    let h2 = started_by(&l, &h1, &[&author, &reviewer, &h1]);
    l.ok(&["close", &h1]);
    let core = l.core_pid();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(core as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    l.stop_core();
    l.start_core();
    let (rc, said) = op(
        &l,
        &h2,
        "two-hops-send",
        &format!("\"$NERDR_BIN\" send {reviewer} 'echo two-hops-$((40+2))'"),
    );
    let steered = crate::support::poll(Duration::from_secs(5), || {
        l.ok(&["read", &reviewer]).contains("two-hops-42")
    });
    assert!(
        rc != 0 && !steered,
        "tab {h2}, started by {h1} (closed), started by author {author}, typed into the \
         author's reviewer {reviewer} after a core restart (rc {rc}: {said})"
    );
    assert!(said.contains("reviewer answers to the user"), "{said}");
}

/// A sandboxed reviewer of an author outside every sandbox: typing into
/// its author is not refused (F4) but queued for the person as a message
/// "to tab X (outside every sandbox)", a question that does not say X is
/// the work it reviews. Safe: refused with the F4 reason, nothing queued.
#[test]
fn rev18d_a_sandboxed_reviewer_cannot_queue_words_for_its_unsandboxed_author() {
    if bwrap_missing() {
        return;
    }
    let l = Local::started();
    let (author, reviewer) =
        sandboxed_author_and_reviewer(&l, "sh", &format!("[agents.sh]\n{BASH}"));
    let (rc, said) = op(
        &l,
        &reviewer,
        "queued-send",
        &format!("\"$NERDR_BIN\" send {author} 'merge it now, the review is fine'"),
    );
    let queued = l.ok(&["approvals", "--json"]);
    eprintln!("approvals: {queued}");
    assert!(
        rc != 0 && !queued.contains("merge it now"),
        "reviewer {reviewer}'s message to its author {author} waits for the person's approval \
         instead of being refused (rc {rc}: {said}); queue: {queued}"
    );
}

/// `nerdr merge` refuses to write over the person's ignored files (rev18),
/// comparing the paths the merge writes with git's listing of ignored
/// files and folders. An agent's commit that adds a *file* where the
/// person has an ignored *folder* (`secret` against `secret/`) is not
/// caught by that comparison, and git replaces the folder, with what it
/// held, by the file.
#[test]
fn rev18d_a_merge_does_not_replace_the_persons_ignored_folder_with_a_file() {
    let l = Local::started();
    l.write_config(&format!("[agents.sh]\n{BASH}"));
    let r = l.repo_with(
        &[("file.txt", "hello\n"), (".gitignore", "secret/\n")],
        "first",
    );
    let tab = l.ok(&["agent", "sh"]);
    let wt = l.worktree_of(&tab);
    // What the agent commits: a file named like the person's folder.
    std::fs::write(wt.join("secret"), "the agent's file\n").unwrap();
    git(&wt, &["add", "-f", "secret"]);
    git(&wt, &["commit", "-q", "-m", "agent: a file"]);
    // The person's ignored folder in the main checkout.
    std::fs::create_dir_all(r.join("secret")).unwrap();
    std::fs::write(r.join("secret/key.txt"), "the person's key\n").unwrap();
    let out = l.run(&["merge", &tab]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let now = std::fs::read_to_string(r.join("secret/key.txt"));
    assert_eq!(
        now.as_ref().map(String::as_str).ok(),
        Some("the person's key\n"),
        "merge replaced the person's ignored folder secret/ (and secret/key.txt) with the \
         agent's file ({now:?}); nerdr said: {said}"
    );
}

/// A flag the agent sets in its worktree's index (which it may write):
/// `skip-worktree` or `assume-unchanged` on a tracked file. `git status`
/// then does not look at that file, so the person's edits to it read as
/// no work, and `nerdr close --remove-worktree` (not forced) removes the
/// worktree with them, unsaved.
fn flagged_edit_survives_close(flag: &str) {
    let l = Local::started();
    l.write_config(&format!("[agents.sh]\n{BASH}"));
    repo(&l);
    let tab = l.ok(&["agent", "sh"]);
    let wt = l.worktree_of(&tab);
    // What the agent does to its index.
    git(&wt, &["update-index", flag, "file.txt"]);
    // The person's edit, in the worktree.
    std::fs::write(wt.join("file.txt"), "hello\nthe person's edit\n").unwrap();
    let out = l.run(&["close", "--remove-worktree", &tab]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let on_disk = std::fs::read_to_string(wt.join("file.txt")).unwrap_or_default();
    let refs = git(
        &l.work(),
        &["for-each-ref", "--format=%(refname)", "refs/nerdr/saved/"],
    );
    let saved = refs.lines().any(|r| {
        std::process::Command::new("git")
            .current_dir(l.work())
            .args(["show", &format!("{r}:file.txt")])
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("the person's edit"))
    });
    assert!(
        on_disk.contains("the person's edit") || saved,
        "close --remove-worktree (not forced) deleted the person's edit to file.txt, unsaved, \
         after the agent set {flag} on it: {said}"
    );
}

#[test]
fn rev18d_a_skip_worktree_flag_does_not_let_close_delete_the_persons_edit() {
    flagged_edit_survives_close("--skip-worktree");
}

#[test]
fn rev18d_an_assume_unchanged_flag_does_not_let_close_delete_the_persons_edit() {
    flagged_edit_survives_close("--assume-unchanged");
}

/// The other side of the flag check: a flagged file the person did not
/// change holds no work, so an unforced close removes the worktree (git
/// compares the file's hash with the index's without running a filter).
#[test]
fn rev18d_a_flagged_but_unchanged_file_is_no_work() {
    let l = Local::started();
    l.write_config(&format!("[agents.sh]\n{BASH}"));
    repo(&l);
    let tab = l.ok(&["agent", "sh"]);
    let wt = l.worktree_of(&tab);
    git(&wt, &["update-index", "--skip-worktree", "file.txt"]);
    let out = l.run(&["close", "--remove-worktree", &tab]);
    assert!(
        out.status.success() && !wt.exists(),
        "close --remove-worktree kept a worktree whose only flagged file is unchanged: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `--force` promises to save the worktree's work first; the same planted
/// `.gitignore` keeps the person's file out of what it saves (ignored
/// files are not saved): the worktree reads as clean, nothing is saved,
/// and it goes with the file.
#[test]
fn rev18d_a_planted_gitignore_does_not_keep_the_persons_files_out_of_a_forced_save() {
    let l = Local::started();
    let (tab, wt) = plant_ignore_all(&l);
    let out = l.run(&["close", "--remove-worktree", "--force", &tab]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        notes_kept(&l, &wt),
        "close --remove-worktree --force neither saved nor kept the person's notes.txt (the \
         agent's .gitignore ignores it): {said}"
    );
}

/// Held: a reviewer posting many times at once (eight posts in parallel)
/// gets one review stored, and the others are refused.
#[test]
fn rev18d_posts_at_once_store_one_review() {
    let l = Local::started();
    l.write_config(&format!("[agents.sh]\n{BASH}[agents.rev]\n{BASH}"));
    let _ = repo(&l);
    let author = l.ok(&["agent", "sh"]);
    let wt = l.worktree_of(&author);
    std::fs::write(wt.join("file.txt"), "hello\nsecond\n").unwrap();
    git(&wt, &["commit", "-q", "-am", "second"]);
    let reviewer = l.ok(&["request-review", &author, "--reviewer", "rev"]);
    l.wait_screen(&reviewer, "bash-");
    let (rc, said) = op(
        &l,
        &reviewer,
        "many-posts",
        "for i in 1 2 3 4 5 6 7 8; do printf 'summary: post %s\\n' $i | \"$NERDR_BIN\" \
         post-review & done; wait",
    );
    eprintln!("posts: rc {rc}: {said}");
    let all: Vec<serde_json::Value> =
        serde_json::from_str(&l.ok(&["reviews", &author, "--json"])).unwrap();
    let reviews = all[0]["reviews"].as_array().unwrap();
    assert_eq!(reviews.len(), 1, "{reviews:?}");
    assert_eq!(said.matches(" taken").count(), 1, "{said}");
    assert_eq!(
        said.matches("posted its review already").count(),
        7,
        "{said}"
    );
}

/// Held: a sandboxed agent of another session learns nothing of a
/// session's reviews and reviewers: each reads as no such tab.
#[test]
fn rev18d_another_sessions_reviews_read_as_no_tab() {
    if bwrap_missing() {
        return;
    }
    let l = Local::started();
    let (author, reviewer) = sandboxed_author_and_reviewer(&l, "bash", "");
    l.ok(&[
        "send",
        &reviewer,
        "printf 'summary: fine\\n' | \"$NERDR_BIN\" post-review",
    ]);
    let posted = crate::support::poll(Duration::from_secs(20), || {
        l.ok(&["reviews", &author, "--json"]).contains("fine")
    });
    assert!(posted, "{}", l.ok(&["read", &reviewer]));
    // A second session: another repository, with a sandboxed agent.
    let other = l.path("other");
    std::fs::create_dir_all(&other).unwrap();
    git(&other, &["init", "-q"]);
    std::fs::write(other.join("x.txt"), "x\n").unwrap();
    git(&other, &["add", "."]);
    git(&other, &["commit", "-q", "-m", "x"]);
    let out = l
        .cmd(&["agent", "bash"])
        .current_dir(&other)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stranger = String::from_utf8_lossy(&out.stdout).trim().to_string();
    l.wait_screen(&stranger, "bash");
    for (what, args) in [
        ("reviews", format!("reviews {author} --json")),
        ("reviews-of-reviewer", format!("reviews {reviewer}")),
        ("request", format!("request-review {author}")),
        ("send", format!("send {reviewer} hello")),
        ("read", format!("read {reviewer}")),
    ] {
        let (rc, said) = op(&l, &stranger, what, &format!("\"$NERDR_BIN\" {args}"));
        assert_ne!(rc, 0, "{what}: {said}");
        assert!(said.contains("no tab"), "{what}: {said}");
        assert!(!said.contains("fine"), "{what}: {said}");
    }
    let (rc, said) = op(
        &l,
        &stranger,
        "own-reviews",
        "\"$NERDR_BIN\" reviews --json",
    );
    assert_eq!(rc, 0, "{said}");
    assert!(!said.contains(&author) && !said.contains("fine"), "{said}");
}
