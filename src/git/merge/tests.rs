use super::*;

fn clean() -> Facts {
    Facts {
        repo: "/src/r".into(),
        checked_out: Some("main".into()),
        main_changes: vec![],
        target: Some("main".into()),
        target_exists: true,
        branch: "nerdr/ab12".into(),
        ahead: 2,
        behind: 0,
        content_merged: false,
        how: MergeHow::Merge,
        worktree_dirty: false,
        worktree_missing: false,
        in_the_way: vec![],
        risky_incoming: vec![],
        worktree_branch: Some("nerdr/ab12".into()),
        worktree_own_branch: true,
        worktree_busy: None,
    }
}

#[test]
fn every_merge_precondition() {
    let dirty = vec![unsaved::Change {
        kind: unsaved::ChangeKind::Modified,
        path: "a.txt".into(),
    }];
    let go = || Ok::<(), &str>(());
    let nothing = || Err::<(), &str>("");
    #[rustfmt::skip]
    let rows: Vec<(&str, Facts, Result<(), &str>)> = vec![
        ("a clean fast-forward", clean(), go()),
        ("squash", Facts { how: MergeHow::Squash, behind: 3, ..clean() }, go()),
        ("merge, target moved on", Facts { behind: 3, ..clean() }, go()),
        ("rebase, target moved on", Facts { how: MergeHow::Rebase, behind: 3, ..clean() }, go()),
        ("dirty worktree left out of a merge", Facts { worktree_dirty: true, ..clean() }, go()),
        ("nothing to merge", Facts { ahead: 0, ..clean() }, nothing()),
        ("squashed before: nothing new", Facts { content_merged: true, ..clean() }, nothing()),
        ("squashed before, squash again", Facts { content_merged: true, how: MergeHow::Squash, ..clean() }, nothing()),
        ("no target", Facts { target: None, ..clean() }, Err("--into BRANCH")),
        ("target missing", Facts { target_exists: false, ..clean() }, Err("has no branch main")),
        ("into itself", Facts { target: Some("nerdr/ab12".into()), checked_out: Some("nerdr/ab12".into()), ..clean() }, Err("into itself")),
        ("detached main checkout", Facts { checked_out: None, ..clean() }, Err("detached HEAD, not on main")),
        ("main on another branch", Facts { checked_out: Some("dev".into()), ..clean() }, Err("on branch dev, not main: switch it there (`git -C /src/r switch main`), or merge into dev with `--into dev`")),
        ("dirty main checkout", Facts { main_changes: dirty.clone(), ..clean() }, Err("modified: a.txt")),
        ("dirty beats nothing to merge", Facts { main_changes: dirty, ahead: 0, ..clean() }, Err("clean checkout")),
        ("ff-only, diverged", Facts { how: MergeHow::FfOnly, behind: 1, ..clean() }, Err("(1 commit of main is not on it), so there is no fast-forward")),
        ("ff-only, diverged more", Facts { how: MergeHow::FfOnly, behind: 2, ..clean() }, Err("(2 commits of main are not on it)")),
        ("ff-only, ahead only", Facts { how: MergeHow::FfOnly, ..clean() }, go()),
        ("rebase, dirty worktree", Facts { how: MergeHow::Rebase, worktree_dirty: true, ..clean() }, Err("commit it there first")),
        ("rebase, worktree gone", Facts { how: MergeHow::Rebase, worktree_missing: true, ..clean() }, Err("which is gone")),
        ("an ignored file in the way", Facts { in_the_way: vec!["secret.log".into()], ..clean() }, Err("write over ignored files in the main checkout /src/r (git overwrites those without a word): secret.log")),
        ("ignored in the way, squash", Facts { in_the_way: vec!["a.log".into()], how: MergeHow::Squash, ..clean() }, Err("a.log")),
        ("incoming attributes, sandboxed", Facts { risky_incoming: vec![".gitattributes".into()], ..clean() }, Err("review them by hand")),
        ("rebase, a rebase in progress", Facts { how: MergeHow::Rebase, worktree_busy: Some("rebase"), ..clean() }, Err("a rebase is in progress")),
        ("merge, a rebase in progress in the worktree", Facts { worktree_busy: Some("rebase"), ..clean() }, go()),
        ("rebase, worktree on another branch", Facts { how: MergeHow::Rebase, worktree_branch: Some("feat".into()), ..clean() }, Err("its worktree is on branch feat")),
        ("rebase, worktree detached", Facts { how: MergeHow::Rebase, worktree_branch: None, ..clean() }, Err("a detached HEAD")),
        ("rebase, not nerdr's branch", Facts { how: MergeHow::Rebase, worktree_own_branch: false, ..clean() }, Err("only the tab's own branch")),
    ];
    for (what, facts, want) in rows {
        let got = ready(&facts);
        match (want, &got) {
            (Ok(()), Ready::Go) => {}
            (Err(""), Ready::NothingToMerge) => {}
            (Err(why), Ready::Refuse(said)) if !why.is_empty() => {
                assert!(said.contains(why), "{what}: {said}")
            }
            (want, got) => panic!("{what}: want {want:?}, got {got:?}"),
        }
    }
}

#[test]
fn untracked_files_in_the_main_checkout_are_gits_to_refuse() {
    let c = |kind, path: &str| unsaved::Change {
        kind,
        path: path.into(),
    };
    let all = vec![
        c(unsaved::ChangeKind::Untracked, "scratch.txt"),
        c(unsaved::ChangeKind::Modified, "a.txt"),
        c(unsaved::ChangeKind::Staged, "b.txt"),
    ];
    assert_eq!(tracked(&all), all[1..].to_vec());
    let untracked_only = Facts {
        main_changes: tracked(&all[..1]),
        ..clean()
    };
    assert_eq!(ready(&untracked_only), Ready::Go);
}

#[test]
fn what_a_merge_would_write_over_and_what_it_must_not_bring() {
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let incoming = v(&[
        "secret.log",
        "tracked.txt",
        "new.txt",
        "d/.gitattributes",
        "build/x",
    ]);
    let ignored = v(&["secret.log", "build/", "other.log", "d"]);
    // `d` is an ignored file: the folder `d/` a merge brings replaces it.
    assert_eq!(
        in_the_way(&incoming, &ignored),
        v(&["secret.log", "d/.gitattributes", "build/x"])
    );
    // (what, written, ignored, in the way)
    #[rustfmt::skip]
    let rows: &[(&str, &str, &str, bool)] = &[
        ("an ignored file", "a.log", "a.log", true),
        ("a file over an ignored folder", "secret", "secret/", true),
        ("a file over a folder holding an ignored file", "keys", "keys/a.txt", true),
        ("into an ignored folder", "build/x", "build/", true),
        ("a folder over an ignored file", "d/x", "d", true),
        ("a name that only starts alike", "secrets", "secret/", false),
        ("a folder alike by prefix", "build2/x", "build/", false),
        ("a file beside an ignored one", "keys.txt", "keys/a.txt", false),
    ];
    for (what, written, ignored, want) in rows {
        let got = !in_the_way(&v(&[written]), &v(&[ignored])).is_empty();
        assert_eq!(got, *want, "{what}");
    }
    assert!(in_the_way(&incoming, &[]).is_empty());
    assert_eq!(risky(&incoming), v(&["d/.gitattributes"]));
    assert_eq!(
        risky(&v(&[".gitmodules", "x.gitattributes"])),
        v(&[".gitmodules"])
    );
    assert_eq!(busy(|f| f == "rebase-apply"), Some("rebase"));
    assert_eq!(busy(|f| f == "CHERRY_PICK_HEAD"), Some("cherry-pick"));
    assert_eq!(busy(|f| f == "MERGE_HEAD"), Some("merge"));
    assert_eq!(busy(|_| false), None);
}

fn source(open: bool) -> Source {
    Source {
        tab: "ab12".into(),
        name: "fixer".into(),
        worktree: "/d/w".into(),
        repo: "/src/r".into(),
        branch: "nerdr/ab12".into(),
        open,
    }
}

#[test]
fn failures_say_what_nerdr_knows_not_what_git_advises() {
    let git = "CONFLICT (content): Merge conflict in a.txt\nAutomatic merge failed; fix \
               conflicts and then commit the result.";
    let conflicts = vec!["a.txt".to_string(), "b/c.txt".to_string()];
    for how in [MergeHow::Merge, MergeHow::Squash, MergeHow::Rebase] {
        let said = failure(&source(true), "main", how, &conflicts, git, false);
        assert!(said.contains("in:\n  a.txt\n  b/c.txt\n"), "{said}");
        assert!(
            !said.contains("then commit") && !said.contains("--continue"),
            "{said}"
        );
        let step = match how {
            MergeHow::Rebase => "`nerdr send fixer \"git rebase main\"`",
            _ => "`nerdr send fixer \"git merge main\"`",
        };
        assert!(said.contains(step), "{said}");
        assert!(said.contains("`git -C /src/r merge nerdr/ab12`"), "{said}");
    }
    let closed = failure(
        &source(false),
        "main",
        MergeHow::Merge,
        &conflicts,
        git,
        false,
    );
    assert!(!closed.contains("nerdr send"), "{closed}");
    let untracked = "error: The following untracked working tree files would be \
                     overwritten by merge:\n\tscratch.txt\n\tdir/x\nPlease move or \
                     remove them before you merge.\nAborting";
    assert_eq!(would_overwrite(untracked), ["scratch.txt", "dir/x"]);
    let said = failure(
        &source(true),
        "main",
        MergeHow::Merge,
        &[],
        untracked,
        false,
    );
    assert!(
        said.contains("overwrite untracked files in the main checkout /src/r: scratch.txt, dir/x"),
        "{said}"
    );
    let other = failure(
        &source(true),
        "main",
        MergeHow::Merge,
        &[],
        "refused by the guard",
        false,
    );
    assert!(other.ends_with("refused by the guard"), "{other}");
}

#[test]
fn conflict_advice_fits_the_strategy_and_does_not_loop() {
    use super::rules::{conflict_advice, Conflict};
    let c = |how, holds_target| Conflict {
        target: "main",
        branch: "nerdr/ab12",
        how,
        holds_target,
    };
    #[rustfmt::skip]
    let rows = [
        ("merge", Some("sh-1"), c(MergeHow::Merge, false), "`nerdr send sh-1 \"git merge main\"`), then run `nerdr merge sh-1` again"),
        ("merge, branch holds main", Some("sh-1"), c(MergeHow::Merge, true), "\"git merge main\""),
        ("squash", Some("sh-1"), c(MergeHow::Squash, false), "\"git merge main\""),
        ("rebase", Some("sh-1"), c(MergeHow::Rebase, false), "`nerdr send sh-1 \"git rebase main\"`), then run `nerdr merge --rebase sh-1` again"),
        ("rebase after the tab merged main", Some("sh-1"), c(MergeHow::Rebase, true), "holds main's head already (it merged main in), so a rebase replays its old commits and conflicts again: a plain `nerdr merge sh-1` (or `nerdr merge --ff-only sh-1`) works now"),
        ("rebase after a merge, tab closed", None, c(MergeHow::Rebase, true), "a plain `nerdr merge nerdr/ab12`"),
        ("closed tab", None, c(MergeHow::Merge, false), ""),
    ];
    for (what, tab, conflict, want) in rows {
        let said = conflict_advice(tab, &conflict);
        assert!(said.contains(want), "{what}: {said}");
        if want.is_empty() {
            assert_eq!(said, "", "{what}");
        }
    }
}
