//! What `nerdr clean` and `nerdr worktrees` say of one worktree or left
//! branch, and the verdict carried out: the notes on work a closed tab
//! left, how to commit it, and the [`CleanEntry`] of each.

use std::path::{Path, PathBuf};

use crate::git::base::Recorded;
use crate::git::clean::{self, Verdict};
use crate::git::left_branch;
use crate::git::listing;
use crate::git::unsaved::ChangeKind;
use crate::protocol::api::CleanEntry;

/// A closed tab's worktree another open tab still works in.
pub(super) fn shared_note(path: &Path, other: &str, name: &str) -> String {
    let named = match name.is_empty() {
        true => format!("tab {other}"),
        false => format!("tab {other} ({name})"),
    };
    format!(
        "its worktree {} stays with {named}, which works in it too (a handoff shares it)",
        path.display()
    )
}

/// How to commit uncommitted work of `kinds` at `path`: `commit -a`
/// takes no untracked file, so with one `add -A` comes first; staged
/// work alone needs only `commit`. `None` (git could not tell): the
/// command that takes everything.
pub fn commit_advice(path: &Path, kinds: Option<&[ChangeKind]>) -> String {
    let p = path.display();
    let all = format!("git -C {p} add -A && git -C {p} commit");
    let Some(kinds) = kinds else { return all };
    if kinds
        .iter()
        .any(|k| matches!(k, ChangeKind::Untracked | ChangeKind::Ignored))
    {
        all
    } else if kinds.iter().all(|k| *k == ChangeKind::Staged) {
        format!("git -C {p} commit")
    } else {
        format!("git -C {p} commit -a")
    }
}

/// The note for a closed tab's worktree holding `unmerged` commits and
/// uncommitted work of `dirty` kinds, one per path (`None`: git could
/// not tell). `owner` is the id `diff`/`merge` know the worktree by.
pub(super) fn left_note(
    closing: &str,
    owner: &str,
    path: &Path,
    branch: &str,
    unmerged: Option<usize>,
    dirty: Option<&[ChangeKind]>,
) -> Option<String> {
    let plural = |n: usize, one: &str, many: &str| match n {
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    };
    let mut held = Vec::new();
    match unmerged {
        Some(0) => {}
        Some(n) => held.push(plural(n, "unmerged commit", "unmerged commits")),
        None => held.push("commits nerdr cannot compare with their base".into()),
    }
    match dirty.map(<[_]>::len) {
        Some(0) => {}
        Some(n) => held.push(format!(
            "{} with uncommitted work",
            plural(n, "path", "paths")
        )),
        None => held.push("perhaps uncommitted work (git cannot tell)".into()),
    }
    if held.is_empty() {
        return None;
    }
    let commit_first = match dirty.map(<[_]>::len) {
        Some(0) => String::new(),
        _ => format!(
            " (commit the uncommitted work first: `{}`)",
            commit_advice(path, dirty)
        ),
    };
    // A handoff's tab closing after the tab that made the worktree.
    let whose = match closing == owner {
        true => "its worktree".to_string(),
        false => format!("the worktree of tab {owner} it worked in,"),
    };
    Some(format!(
        "{whose} {} stays, on branch {branch}, with {}: see it with `nerdr diff \
         {owner}`, bring it home with `nerdr merge {owner}`{commit_first}",
        path.display(),
        held.join(" and ")
    ))
}

/// A base that moved since it was recorded: the open tab's id, the
/// worktree and the base to record.
pub(super) fn moved_base(f: &listing::Facts) -> Option<(Option<String>, PathBuf, Recorded)> {
    let b = f.base.as_ref().filter(|b| b.moved)?;
    Some((
        f.found.tab.as_ref().map(|k| k.tab.clone()),
        f.found.path.clone(),
        b.record(),
    ))
}

/// What became of a `nerdr/*` branch with no worktree: the verdict,
/// carried out unless `dry_run`.
pub(super) fn left_entry(b: &left_branch::Branch, merged: bool, dry_run: bool) -> CleanEntry {
    let mut e = CleanEntry {
        path: b.input.repo.clone(),
        branch: Some(b.input.branch.clone()),
        tab: None,
        tab_name: None,
        action: "kept".into(),
        branch_deleted: false,
        why: String::new(),
        branch_only: true,
    };
    match left_branch::verdict(&b.input, merged) {
        left_branch::Verdict::Keep(why) => e.why = why,
        left_branch::Verdict::Delete(why) if dry_run => {
            e.action = "would delete".into();
            e.branch_deleted = true;
            e.why = why;
        }
        left_branch::Verdict::Delete(why) => match left_branch::apply(b) {
            Ok(()) => {
                e.action = "deleted".into();
                e.branch_deleted = true;
                e.why = why;
            }
            Err(kept) => e.why = kept,
        },
    }
    e
}

/// What became of one worktree: the verdict, carried out unless `dry_run`.
pub(super) fn entry(
    paths: &crate::paths::Paths,
    facts: &listing::Facts,
    verdict: Verdict,
    dry_run: bool,
) -> CleanEntry {
    let mut e = CleanEntry {
        path: facts.found.path.clone(),
        branch: facts.found.branch.clone(),
        tab: facts.found.tab.as_ref().map(|k| k.tab.clone()),
        tab_name: facts.found.tab.as_ref().map(|k| k.name.clone()),
        action: "kept".into(),
        branch_deleted: false,
        why: String::new(),
        branch_only: false,
    };
    let base = facts
        .base
        .as_ref()
        .and_then(|b| b.branch.clone())
        .unwrap_or_default();
    match verdict {
        Verdict::Keep(why) => e.why = why,
        Verdict::Remove { branch } => {
            let said = match (facts.base_gone, branch) {
                (true, true) => format!(
                    "it has no commits of its own (its base branch {base} is gone); its branch \
                     goes too"
                ),
                (true, false) => format!(
                    "it has no commits of its own (its base branch {base} is gone); its branch \
                     stays (`--merged` deletes it)"
                ),
                (false, true) => format!("its work is merged into {base}; its branch goes too"),
                (false, false) => format!(
                    "its work is merged into {base}; its branch stays (`--merged` deletes it)"
                ),
            };
            if dry_run {
                e.action = "would remove".into();
                e.branch_deleted = branch;
                e.why = said;
            } else {
                match clean::apply(paths, facts, branch) {
                    Ok(()) => {
                        e.action = "removed".into();
                        e.branch_deleted = branch;
                        e.why = said;
                    }
                    Err(why) => e.why = why,
                }
            }
        }
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_tab_says_what_it_left_and_how_to_get_it() {
        use ChangeKind::*;
        let note = |u, d: Option<&[ChangeKind]>| {
            left_note("ab12", "ab12", Path::new("/w/ab12"), "nerdr/ab12", u, d)
        };
        assert_eq!(note(Some(0), Some(&[])), None);
        let n = note(Some(2), Some(&[])).unwrap();
        assert_eq!(
            n,
            "its worktree /w/ab12 stays, on branch nerdr/ab12, with 2 unmerged commits: see it \
             with `nerdr diff ab12`, bring it home with `nerdr merge ab12`"
        );
        let n = note(Some(1), Some(&[Modified, Modified, Staged])).unwrap();
        assert!(
            n.contains("1 unmerged commit and 3 paths with uncommitted work"),
            "{n}"
        );
        assert!(
            n.contains("commit the uncommitted work first: `git -C /w/ab12 commit -a`"),
            "{n}"
        );
        let n = note(Some(0), Some(&[Untracked])).unwrap();
        assert!(n.contains("with 1 path with uncommitted work:"), "{n}");
        assert!(
            n.contains("`git -C /w/ab12 add -A && git -C /w/ab12 commit`"),
            "an untracked file is not in `commit -a`: {n}"
        );
        let n = note(None, None).unwrap();
        assert!(
            n.contains("cannot compare") && n.contains("cannot tell"),
            "{n}"
        );
        assert!(n.contains("add -A"), "{n}");
        // A handoff's tab closing after the tab that made the worktree.
        let n = left_note(
            "cd34",
            "ab12",
            Path::new("/w/ab12"),
            "nerdr/ab12",
            Some(1),
            Some(&[]),
        )
        .unwrap();
        assert!(
            n.starts_with("the worktree of tab ab12 it worked in, /w/ab12 stays")
                && n.contains("`nerdr diff ab12`")
                && n.contains("`nerdr merge ab12`")
                && !n.contains("cd34"),
            "{n}"
        );
    }

    #[test]
    fn the_commit_advice_fits_what_is_uncommitted() {
        use ChangeKind::*;
        let w = Path::new("/w");
        let all = "git -C /w add -A && git -C /w commit";
        #[rustfmt::skip]
        let rows: &[(&str, Option<&[ChangeKind]>, &str)] = &[
            ("modified files", Some(&[Modified, StagedAndModified]), "git -C /w commit -a"),
            ("staged only", Some(&[Staged, Staged]), "git -C /w commit"),
            ("an untracked file", Some(&[Untracked]), all),
            ("untracked among modified", Some(&[Modified, Untracked]), all),
            ("ignored by an uncommitted rule", Some(&[Ignored]), all),
            ("git could not tell", None, all),
        ];
        for (what, kinds, want) in rows {
            assert_eq!(commit_advice(w, *kinds), *want, "{what}");
        }
    }

    #[test]
    fn a_shared_worktree_stays_with_the_open_tab() {
        let n = shared_note(Path::new("/w/ab12"), "ab12", "sh-1");
        assert_eq!(
            n,
            "its worktree /w/ab12 stays with tab ab12 (sh-1), which works in it too (a handoff \
             shares it)"
        );
        assert!(!n.contains("merge"), "{n}");
    }
}
