//! Which of a sandboxed program's branch changes come home to the user's
//! repository, and how. Pure: the facts (host values, ancestry, other
//! worktrees) are gathered by `bring_home`; this file only decides.
//!
//! The program writes private copies of the refs (see `private_git`), so
//! nothing it does moves a host ref by itself. What comes back:
//! - the branch the worktree was on when the run started: nerdr's own
//!   `nerdr/<tab>` branches any way (the agent may amend or rebase its own
//!   work), any other branch only by fast-forward (nothing the user had is
//!   rewritten), and a branch with no commits yet is born;
//! - in a worktree nerdr made for a tab, only that tab's `nerdr/<tab>`:
//!   an earlier run may have switched the worktree to another branch, and
//!   the next run must not move that one;
//! - never a branch the user moved on the host meanwhile, nor one checked
//!   out in another worktree (moving it would change that checkout under
//!   the user's feet);
//! - what cannot come back is kept under `refs/nerdr/sandboxed/<session>/`
//!   (so no commit is lost) and the user is told;
//! - other branches stay private, unless the worktree's HEAD names one at
//!   the end: then it is kept, as a detached HEAD is.

use std::path::Path;

/// One branch whose value in the sandbox differs from what nerdr last saw.
#[derive(Debug, Clone, Copy)]
pub struct Change<'a> {
    /// `refs/heads/...`.
    pub name: &'a str,
    /// The worktree's HEAD named this branch when the run started.
    pub start_branch: bool,
    /// The worktree's HEAD names this branch now (only known at the end).
    pub head_names: bool,
    /// Its value on the host now.
    pub host: Option<&'a str>,
    /// What nerdr expects the host to hold: its value at the start, or
    /// what nerdr itself last moved it to.
    pub expected: Option<&'a str>,
    /// Its value in the sandbox.
    pub new: &'a str,
    /// The host value is an ancestor of `new`.
    pub fast_forward: bool,
    /// Another worktree of the repository has it checked out.
    pub checked_out_elsewhere: bool,
    /// In a worktree nerdr made for a tab: that tab's branch.
    pub tab_branch: Option<&'a str>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The host already has it.
    Nothing,
    /// Move the host branch to `new`, compare-and-swap from `host`.
    Move,
    /// Keep `new` under [`kept_ref`], and say why.
    Keep(&'static str),
    /// Not carried back.
    Private,
}

/// The namespace of nerdr's agents' own branches.
pub fn own_branch(name: &str) -> bool {
    name.starts_with("refs/heads/nerdr/")
}

pub fn decide(c: &Change) -> Verdict {
    if c.host == Some(c.new) {
        return Verdict::Nothing;
    }
    if !c.start_branch {
        return if c.head_names {
            Verdict::Keep(
                "the worktree ended on it, and only the branch a run starts on comes back",
            )
        } else {
            Verdict::Private
        };
    }
    if c.tab_branch.is_some_and(|t| t != c.name) {
        return Verdict::Keep("in a tab's worktree only the tab's own branch comes back");
    }
    if c.host != c.expected {
        return Verdict::Keep("the branch moved on the host while the program ran");
    }
    if c.checked_out_elsewhere {
        return Verdict::Keep("the branch is checked out in another worktree");
    }
    if c.host.is_none() || own_branch(c.name) || c.fast_forward {
        return Verdict::Move;
    }
    Verdict::Keep("not a fast-forward: the program rewrote the branch's history")
}

/// The tab's branch when `worktree` is one nerdr made for a tab
/// (`<worktrees>/<repo>-<id>/<tab>`, see `git::worktree::create`).
pub fn tab_branch(worktrees: &Path, worktree: &Path) -> Option<String> {
    let tab = worktree.file_name()?.to_str()?;
    (worktree.parent()?.parent()? == worktrees)
        .then(|| format!("refs/heads/{}", crate::git::worktree::branch(tab)))
}

/// Where work that cannot come back is kept: `refs/nerdr/sandboxed/
/// <session>/<what>`, `what` being the branch's name without `refs/`, or
/// `HEAD`.
pub fn kept_ref(session: &str, what: &str) -> String {
    format!(
        "refs/nerdr/sandboxed/{session}/{}",
        what.strip_prefix("refs/").unwrap_or(what)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "1111111111111111111111111111111111111111";
    const B: &str = "2222222222222222222222222222222222222222";
    const C: &str = "3333333333333333333333333333333333333333";

    /// Every rule, one row each, in the order they apply.
    #[test]
    fn which_changes_come_home() {
        let base = Change {
            name: "refs/heads/nerdr/t1",
            start_branch: true,
            head_names: true,
            host: Some(A),
            expected: Some(A),
            new: B,
            fast_forward: true,
            checked_out_elsewhere: false,
            tab_branch: None,
        };
        type Edit = fn(&mut Change);
        let rows: &[(&str, Edit, Verdict)] = &[
            ("own branch, fast-forward", |_| {}, Verdict::Move),
            (
                "own branch rewritten",
                |c| c.fast_forward = false,
                Verdict::Move,
            ),
            ("already there", |c| c.host = Some(B), Verdict::Nothing),
            (
                "already there, even if not the start branch",
                |c| {
                    c.host = Some(B);
                    c.start_branch = false
                },
                Verdict::Nothing,
            ),
            (
                "another branch the program moved",
                |c| {
                    c.name = "refs/heads/main";
                    c.start_branch = false;
                    c.head_names = false
                },
                Verdict::Private,
            ),
            (
                "another branch the worktree ended on",
                |c| {
                    c.name = "refs/heads/main";
                    c.start_branch = false
                },
                Verdict::Keep(
                    "the worktree ended on it, and only the branch a run starts on comes back",
                ),
            ),
            (
                "a new branch the program made",
                |c| {
                    c.name = "refs/heads/tmp";
                    c.start_branch = false;
                    c.head_names = false;
                    c.host = None;
                    c.expected = None
                },
                Verdict::Private,
            ),
            (
                "a tab's worktree on its own branch",
                |c| c.tab_branch = Some("refs/heads/nerdr/t1"),
                Verdict::Move,
            ),
            (
                "a tab's worktree switched to the user's branch by an earlier run",
                |c| {
                    c.name = "refs/heads/release";
                    c.tab_branch = Some("refs/heads/nerdr/t1")
                },
                Verdict::Keep("in a tab's worktree only the tab's own branch comes back"),
            ),
            (
                "a tab's worktree switched to another tab's branch",
                |c| {
                    c.name = "refs/heads/nerdr/t2";
                    c.tab_branch = Some("refs/heads/nerdr/t1")
                },
                Verdict::Keep("in a tab's worktree only the tab's own branch comes back"),
            ),
            (
                "moved on the host meanwhile",
                |c| c.host = Some(C),
                Verdict::Keep("the branch moved on the host while the program ran"),
            ),
            (
                "made on the host meanwhile",
                |c| {
                    c.host = Some(C);
                    c.expected = None
                },
                Verdict::Keep("the branch moved on the host while the program ran"),
            ),
            (
                "deleted on the host meanwhile",
                |c| c.host = None,
                Verdict::Keep("the branch moved on the host while the program ran"),
            ),
            (
                "checked out in another worktree",
                |c| c.checked_out_elsewhere = true,
                Verdict::Keep("the branch is checked out in another worktree"),
            ),
            (
                "a branch born in the sandbox (no commits before)",
                |c| {
                    c.name = "refs/heads/main";
                    c.host = None;
                    c.expected = None;
                    c.fast_forward = false
                },
                Verdict::Move,
            ),
            (
                "the user's branch, fast-forward",
                |c| c.name = "refs/heads/main",
                Verdict::Move,
            ),
            (
                "the user's branch rewritten",
                |c| {
                    c.name = "refs/heads/main";
                    c.fast_forward = false
                },
                Verdict::Keep("not a fast-forward: the program rewrote the branch's history"),
            ),
            (
                "a branch merely named like nerdr's is the user's",
                |c| {
                    c.name = "refs/heads/nerdrx";
                    c.fast_forward = false
                },
                Verdict::Keep("not a fast-forward: the program rewrote the branch's history"),
            ),
        ];
        for (what, edit, want) in rows {
            let mut c = base;
            edit(&mut c);
            assert_eq!(decide(&c), *want, "{what}");
        }
    }

    #[test]
    fn kept_refs_are_in_nerdrs_namespace() {
        assert_eq!(
            kept_ref("s1", "refs/heads/main"),
            "refs/nerdr/sandboxed/s1/heads/main"
        );
        assert_eq!(kept_ref("s1", "HEAD"), "refs/nerdr/sandboxed/s1/HEAD");
        assert!(own_branch("refs/heads/nerdr/t1"));
        let wts = Path::new("/d/nerdr/worktrees");
        let rows: &[(&str, Option<&str>)] = &[
            ("/d/nerdr/worktrees/r-1a2b/t1", Some("refs/heads/nerdr/t1")),
            ("/d/nerdr/worktrees/t1", None),
            ("/d/nerdr/worktrees/r-1a2b/t1/sub", None),
            ("/home/u/linked", None),
        ];
        for (wt, want) in rows {
            assert_eq!(tab_branch(wts, Path::new(wt)).as_deref(), *want, "{wt}");
        }
        assert!(!own_branch("refs/heads/nerdr"));
        assert!(!own_branch("refs/heads/main"));
    }
}
