//! Removing a worktree never loses work without a word (issue 13, item 3):
//! `nerdr close --remove-worktree` refuses a worktree holding work no
//! commit has, naming it and the command to go on; `--force` saves that
//! work under `refs/nerdr/saved/` first, and `nerdr saved` lists it; a
//! sandboxed agent cannot force it. Real binary, real git, as a non-root
//! user under the private `systemd --user`.

use crate::support::repo_session::{boxed_shell, s, RepoSession, SH};

/// A repository with one commit (and `*.log` ignored) in `~/work/r`.
fn setup(config: &str) -> Option<RepoSession> {
    RepoSession::start(
        config,
        &[
            ("work/r/tracked.txt", "one\n"),
            ("work/r/.gitignore", "*.log\n"),
        ],
    )
}

#[test]
fn a_dirty_worktree_is_refused_and_with_force_saved_before_it_goes() {
    let Some(st) = setup(SH) else { return };
    let (tab, wt) = st.tab_and_worktree("sh");
    // Work of every kind: modified, staged, untracked, and an ignored file
    // (not work: not listed, not saved).
    st.sh(&format!(
        "cd {w} && echo two >> tracked.txt && echo s > staged.txt && git add staged.txt \
         && mkdir -p notes && echo n > notes/new.txt && echo junk > build.log",
        w = s(&wt)
    ));

    let (ok, _, err) = st.nerdr(&["close", "--remove-worktree", &tab]);
    assert!(!ok, "a dirty worktree was removed without a word");
    for line in [
        "modified: tracked.txt",
        "staged: staged.txt",
        "untracked: notes/",
    ] {
        assert!(err.contains(line), "{line:?} not in: {err}");
    }
    assert!(!err.contains("build.log"), "an ignored file listed: {err}");
    assert!(
        err.contains(&format!("nerdr close --remove-worktree --force {tab}")),
        "{err}"
    );
    // Nothing happened: the tab and its work are there.
    assert!(st.tabs(&[]).iter().any(|t| t["id"] == tab.as_str()));
    assert_eq!(
        std::fs::read_to_string(wt.join("tracked.txt")).unwrap(),
        "one\ntwo\n"
    );

    let (_, said) = st.ok_said(&["close", "--remove-worktree", "--force", &tab]);
    let reference = format!("refs/nerdr/saved/{tab}");
    assert!(
        said.contains(&format!("saved first as {reference}")),
        "{said}"
    );
    assert!(
        said.contains(&format!("git stash apply {reference}")),
        "{said}"
    );
    assert!(
        said.contains(&format!("the branch nerdr/{tab} stays")),
        "{said}"
    );
    assert!(!wt.exists(), "--force left {}", wt.display());

    // `nerdr saved` lists it, and says how to get it back.
    let listed: Vec<serde_json::Value> =
        serde_json::from_str(&st.ok(&["saved", "--json"])).unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["reference"], reference.as_str());
    let text = st.ok(&["saved"]);
    assert!(
        text.contains(&reference) && text.contains("git checkout -b"),
        "{text}"
    );

    // Everything comes back: as a branch, and into a worktree.
    st.git(&st.repo, &["stash", "apply", &reference]);
    assert_eq!(
        std::fs::read_to_string(st.repo.join("tracked.txt")).unwrap(),
        "one\ntwo\n"
    );
    assert_eq!(
        std::fs::read_to_string(st.repo.join("staged.txt")).unwrap(),
        "s\n"
    );
    assert_eq!(
        std::fs::read_to_string(st.repo.join("notes/new.txt")).unwrap(),
        "n\n"
    );
    let files = st.git(&st.repo, &["ls-tree", "-r", "--name-only", &reference]);
    assert!(
        files.contains("notes/new.txt") && !files.contains("build.log"),
        "{files}"
    );
}

#[test]
fn a_clean_worktree_goes_and_its_branch_stays_with_its_commits() {
    let Some(st) = setup(SH) else { return };
    let (tab, wt) = st.tab_and_worktree("sh");
    st.git(
        &wt,
        &["commit", "-q", "--allow-empty", "-m", "agent's work"],
    );
    let (_, said) = st.ok_said(&["close", "--remove-worktree", &tab]);
    assert!(!wt.exists());
    assert!(!said.contains("saved"), "nothing to save: {said}");
    assert!(
        said.contains(&format!(
            "the branch nerdr/{tab} stays, with 1 commit no other branch has"
        )),
        "{said}"
    );
    assert_eq!(
        st.git(
            &st.repo,
            &["log", "-1", "--format=%s", &format!("nerdr/{tab}")]
        ),
        "agent's work"
    );
    assert_eq!(st.ok(&["saved", "--json"]).trim_end(), "[]");

    // A worktree already removed by hand: nothing to lose, git's record goes.
    let (gone, wg) = st.tab_and_worktree("sh");
    st.sh(&format!("rm -rf {}", s(&wg)));
    st.ok(&["close", "--remove-worktree", &gone]);
    let list = st.git(&st.repo, &["worktree", "list"]);
    assert!(!list.contains(&gone), "{list}");
}

#[test]
fn a_sandboxed_agent_cannot_force_the_removal_of_its_own_dirty_worktree() {
    let Some(st) = setup(&format!("{SH}{}", boxed_shell("boxed", false))) else {
        return;
    };
    let (tab, wt) = st.tab_and_worktree("boxed");
    st.sh(&format!("echo mine > {}/mine.txt", s(&wt)));
    let read_until = |needle: &str| {
        let mut last = String::new();
        let ok = crate::support::poll(std::time::Duration::from_secs(20), || {
            // One line of text, whatever the terminal's width wrapped.
            last = st.ok(&["read", &tab]).replace('\n', "");
            // The typed command holds the needle too: wait for it followed
            // by what the shell printed (an exit code), or alone for a prompt.
            last.match_indices(needle).any(|(i, _)| {
                needle == "$"
                    || last[i + needle.len()..]
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_ascii_digit())
            })
        });
        assert!(ok, "tab {tab} never showed {needle:?}:\n{last}");
        last
    };
    read_until("$");
    st.ok(&[
        "send",
        &tab,
        &format!("\"$NERDR_BIN\" close --remove-worktree --force {tab} 2>&1; echo forced-rc-$?"),
    ]);
    let screen = read_until("forced-rc-");
    assert!(screen.contains("forced-rc-1"), "{screen}");
    assert!(
        screen.contains("cannot force a worktree's removal"),
        "{screen}"
    );
    // Without --force, its own dirty worktree is refused like anyone's.
    st.ok(&[
        "send",
        &tab,
        &format!("\"$NERDR_BIN\" close --remove-worktree {tab} 2>&1; echo plain-rc-$?"),
    ]);
    let screen = read_until("plain-rc-");
    assert!(screen.contains("plain-rc-1"), "{screen}");
    assert!(screen.contains("untracked: mine.txt"), "{screen}");
    assert!(wt.join("mine.txt").is_file());
    assert!(st.tabs(&[]).iter().any(|t| t["id"] == tab.as_str()));
}

#[test]
fn a_restart_that_fails_keeps_the_tabs_worktree_and_branch() {
    let Some(st) = setup(SH) else { return };
    st.env.write_user_file("work/r/sub/file.txt", "f\n");
    st.git(&st.repo, &["add", "."]);
    st.git(&st.repo, &["commit", "-q", "-m", "sub"]);
    let tab = st
        .ok(&["agent", "sh", "--folder", s(&st.repo.join("sub"))])
        .trim_end()
        .to_string();
    let wt = st.worktree_of(&tab);
    st.git(
        &wt,
        &["commit", "-q", "--allow-empty", "-m", "agent's work"],
    );
    // The folder the tab's program starts in is gone: its restart cannot
    // start it there.
    st.sh(&format!(
        "cd {w} && echo keep > keep.txt && rm -rf sub",
        w = s(&wt)
    ));
    let (ok, _, err) = st.nerdr(&["restart", "--force", &tab]);
    assert!(!ok, "the restart was meant to fail: {err}");
    assert!(
        wt.join("keep.txt").is_file(),
        "the restart dropped the worktree: {err}"
    );
    assert_eq!(
        st.git(
            &st.repo,
            &["log", "-1", "--format=%s", &format!("nerdr/{tab}")]
        ),
        "agent's work",
        "the restart deleted the branch"
    );
}

/// A nested repository in the worktree (its own `.git`: an agent's `git
/// init lib`, a clone): host git never looks inside it (that would run its
/// config), so `git status` sees at most its name and `git add -A` stores
/// it as a gitlink, not its files. Removing the worktree would delete its
/// files and its commits: the removal is refused, even with `--force`, and
/// the nested repository is named.
#[test]
fn a_nested_repository_is_never_removed_with_the_worktree() {
    let Some(st) = setup(SH) else { return };
    // Committed as a gitlink on the tab's branch: `git status` is clean.
    let (tab, wt) = st.tab_and_worktree("sh");
    st.sh(&format!(
        "cd {w} && git init -q lib && cd lib && echo c > committed.txt && git add . \
         && git -c user.name=t -c user.email=t@e commit -q -m nested && echo u > uncommitted.txt",
        w = s(&wt)
    ));
    st.git(&wt, &["add", "lib"]);
    st.git(&wt, &["commit", "-q", "-m", "gitlink"]);
    let (ok, _, err) = st.nerdr(&["close", "--remove-worktree", &tab]);
    assert!(!ok, "a nested repository was removed without a word");
    assert!(err.contains("lib"), "{err}");
    // Read as sentences: no source indentation in the middle of a line.
    assert!(!err.contains("   "), "{err}");
    assert!(err.contains("\nmove each nested repository out"), "{err}");
    assert!(wt.join("lib/uncommitted.txt").is_file(), "{err}");
    assert!(st.tabs(&[]).iter().any(|t| t["id"] == tab.as_str()));
    let (ok, _, err) = st.nerdr(&["close", "--remove-worktree", "--force", &tab]);
    assert!(!ok, "--force removed a nested repository it cannot save");
    assert!(err.contains("lib"), "{err}");
    assert!(wt.join("lib/committed.txt").is_file(), "{err}");
    assert!(wt.join("lib/uncommitted.txt").is_file(), "{err}");

    // Untracked, inside an untracked folder: listed, and `--force` does
    // not pass it off as saved.
    let (other, wo) = st.tab_and_worktree("sh");
    st.sh(&format!(
        "cd {w} && mkdir -p deps && git init -q deps/x && cd deps/x && echo c > a.txt \
         && git add . && git -c user.name=t -c user.email=t@e commit -q -m nested \
         && echo u > b.txt",
        w = s(&wo)
    ));
    let (ok, _, err) = st.nerdr(&["close", "--remove-worktree", "--force", &other]);
    assert!(!ok, "--force removed a nested repository it cannot save");
    assert!(err.contains("deps/x"), "{err}");
    assert!(wo.join("deps/x/b.txt").is_file(), "{err}");
    assert!(wo.join("deps/x/a.txt").is_file(), "{err}");
    assert!(st.tabs(&[]).iter().any(|t| t["id"] == other.as_str()));

    // A committed nested repository whose name is not UTF-8.
    let (third, wn) = st.tab_and_worktree("sh");
    st.sh(&format!(
        "cd {w} && n=\"$(printf 'l\\377b')\" && git init -q \"$n\" && cd \"$n\" && echo c > c.txt \
         && git add . && git -c user.name=t -c user.email=t@e commit -q -m nested && cd .. \
         && git add \"$n\" && git -c user.name=t -c user.email=t@e commit -q -m gitlink",
        w = s(&wn)
    ));
    let (ok, _, err) = st.nerdr(&["close", "--remove-worktree", &third]);
    assert!(!ok, "a nested repository with a non-UTF-8 name was removed");
    assert!(err.contains("nested repository"), "{err}");
    assert!(wn.exists(), "{err}");
}

/// Work the program writes while it is being stopped (after the worktree
/// was found clean) is saved before the worktree goes, and the reply says
/// where.
#[test]
fn work_written_while_the_program_stops_is_saved() {
    let config = format!(
        "{SH}[agents.late]\ncommand = [\"sh\", \"-c\", \"trap 'echo late > late.txt; \
         exit 0' HUP TERM; echo ready; while :; do sleep 0.1; done\"]\n"
    );
    let Some(st) = setup(&config) else {
        return;
    };
    let (tab, wt) = st.tab_and_worktree("late");
    let ready = crate::support::poll(std::time::Duration::from_secs(20), || {
        st.ok(&["read", &tab]).contains("ready")
    });
    assert!(ready);
    let (_, said) = st.ok_said(&["close", "--remove-worktree", &tab]);
    let reference = format!("refs/nerdr/saved/{tab}");
    assert!(
        said.contains(&format!("saved first as {reference}")),
        "{said}"
    );
    assert!(!wt.exists(), "{said}");
    assert_eq!(
        st.git(&st.repo, &["show", &format!("{reference}:late.txt")]),
        "late"
    );
}
