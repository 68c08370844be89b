//! When a merge may start and what its failures mean, as pure rules over
//! plain data (table-tested in `merge::tests`); `merge` gathers the facts
//! and runs git.

use std::path::PathBuf;

use super::super::unsaved;
use crate::protocol::work::MergeHow;

/// What [`ready`] looks at, as plain data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    pub repo: PathBuf,
    /// The main checkout's branch; `None` on a detached HEAD.
    pub checked_out: Option<String>,
    /// What the main checkout holds that no commit does, untracked files
    /// aside: git refuses by itself a merge that would overwrite one.
    pub main_changes: Vec<unsaved::Change>,
    /// The branch to merge into (`None`: unknown, nothing given).
    pub target: Option<String>,
    pub target_exists: bool,
    pub branch: String,
    /// The tab's commits the target lacks, and the reverse.
    pub ahead: usize,
    pub behind: usize,
    /// The target holds all of the branch's changes already (a squash
    /// merge of it, a cherry-pick), though not its commits.
    pub content_merged: bool,
    pub how: MergeHow,
    /// The tab's worktree holds work no commit has (left out of a merge).
    pub worktree_dirty: bool,
    pub worktree_missing: bool,
    /// The paths the merge brings in that exist in the main checkout as
    /// files no commit of it holds (ignored ones: git would overwrite
    /// them, or delete them on `merge --abort`).
    pub in_the_way: Vec<String>,
    /// The incoming range adds or changes a `.gitattributes` or
    /// `.gitmodules` (these paths), in a repository with sandbox history.
    pub risky_incoming: Vec<String>,
    /// The branch the tab's worktree has checked out (`None`: detached).
    pub worktree_branch: Option<String>,
    /// The worktree's branch is `nerdr/<id>` for its own folder.
    pub worktree_own_branch: bool,
    /// A rebase, merge or cherry-pick in progress in the tab's worktree.
    pub worktree_busy: Option<&'static str>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ready {
    Go,
    /// The target has every commit of the branch already.
    NothingToMerge,
    Refuse(String),
}

/// When a merge may start: see the messages.
pub fn ready(f: &Facts) -> Ready {
    let repo = f.repo.display();
    let Some(target) = &f.target else {
        return Ready::Refuse(format!(
            "where {} goes back is unknown (its worktree was made on a detached HEAD): name the \
             branch with --into BRANCH",
            f.branch
        ));
    };
    if !f.target_exists {
        return Ready::Refuse(format!(
            "{repo} has no branch {target}: name another with --into BRANCH"
        ));
    }
    if *target == f.branch {
        return Ready::Refuse(format!("{target} cannot be merged into itself"));
    }
    match &f.checked_out {
        None => {
            return Ready::Refuse(format!(
                "the main checkout {repo} is on a detached HEAD, not on {target}: switch it \
                 there (`git -C {repo} switch {target}`), then merge again"
            ))
        }
        Some(b) if b != target => {
            return Ready::Refuse(format!(
                "the main checkout {repo} is on branch {b}, not {target}: switch it there \
                 (`git -C {repo} switch {target}`), or merge into {b} with `--into {b}`"
            ))
        }
        Some(_) => {}
    }
    if !f.main_changes.is_empty() {
        return Ready::Refuse(format!(
            "the main checkout {repo} holds work no commit has (untracked and ignored files \
             aside):{}\n\
             commit it or set it aside first: nerdr merges only into a clean checkout, so a \
             failed merge can leave it exactly as it was",
            unsaved::listed(&f.main_changes, 20)
        ));
    }
    if f.ahead == 0 || f.content_merged {
        return Ready::NothingToMerge;
    }
    if !f.in_the_way.is_empty() {
        return Ready::Refuse(format!(
            "the merge would write over ignored files in the main checkout {repo} (git \
             overwrites those without a word): {}\nmove them away (or commit them), then merge \
             again",
            f.in_the_way.join(", ")
        ));
    }
    if !f.risky_incoming.is_empty() {
        return Ready::Refuse(format!(
            "{} adds or changes {} where a sandboxed agent worked: git would run the filters \
             and drivers they name (or fetch the submodules) while merging; review them by \
             hand (`git -C {repo} diff {target}...{} -- {}`) and merge by hand if they are \
             what you want (`git -C {repo} merge {}`)",
            f.branch,
            f.risky_incoming.join(", "),
            f.branch,
            f.risky_incoming.join(" "),
            f.branch
        ));
    }
    if f.how == MergeHow::Rebase && !f.worktree_missing {
        if let Some(what) = f.worktree_busy {
            return Ready::Refuse(format!(
                "--rebase rebases {} in the tab's worktree, where a {what} is in progress: \
                 finish it or abort it there first (nerdr leaves it alone)",
                f.branch
            ));
        }
        if f.worktree_branch.as_deref() != Some(f.branch.as_str()) || !f.worktree_own_branch {
            return Ready::Refuse(format!(
                "--rebase rewrites only the tab's own branch, and its worktree is on {}, not \
                 nerdr's branch for the tab: switch it back there first, or merge without \
                 --rebase",
                match &f.worktree_branch {
                    Some(b) => format!("branch {b}"),
                    None => "a detached HEAD".into(),
                }
            ));
        }
    }
    match f.how {
        MergeHow::FfOnly if f.behind > 0 => Ready::Refuse(format!(
            "{target} is not an ancestor of {} ({} commit{} of {target} {} not on it), so \
             there is no fast-forward: merge without --ff-only, or with --rebase or --squash",
            f.branch,
            f.behind,
            if f.behind == 1 { "" } else { "s" },
            if f.behind == 1 { "is" } else { "are" }
        )),
        MergeHow::Rebase if f.worktree_missing => Ready::Refuse(format!(
            "--rebase rebases {} in the tab's worktree, which is gone: merge without --rebase",
            f.branch
        )),
        MergeHow::Rebase if f.worktree_dirty => Ready::Refuse(format!(
            "--rebase rewrites {} in the tab's worktree, which holds work no commit has: commit \
             it there first (or merge without --rebase, which leaves it out)",
            f.branch
        )),
        _ => Ready::Go,
    }
}

/// The tab's side of a merge.
#[derive(Debug, Clone)]
pub struct Source {
    pub tab: String,
    /// The tab's name, for the squash commit's message.
    pub name: String,
    pub worktree: PathBuf,
    pub repo: PathBuf,
    pub branch: String,
    /// The tab is open (its agent can be asked to resolve a conflict).
    pub open: bool,
}

/// Of the `written` paths (those a merge writes), the ones that would
/// replace ignored files of the checkout: `ignored` is git's listing of
/// them, a folder all of whose files are ignored ending in `/`. A path is
/// in the way when it is an ignored file, lies in an ignored folder or
/// under an ignored file (a folder would replace that file), or is itself
/// a folder holding ignored files (a file would replace them). Compared
/// as paths, not strings: `secret` written over an ignored `secret/`
/// deleted the person's folder (adversarial review). Untracked files that
/// are not ignored git refuses to overwrite by itself.
pub fn in_the_way(written: &[String], ignored: &[String]) -> Vec<String> {
    written
        .iter()
        .filter(|p| {
            ignored.iter().any(|i| {
                let i = i.trim_end_matches('/');
                p.as_str() == i
                    || p.strip_prefix(i).is_some_and(|rest| rest.starts_with('/'))
                    || i.strip_prefix(p.as_str())
                        .is_some_and(|rest| rest.starts_with('/'))
            })
        })
        .cloned()
        .collect()
}

/// Of the `incoming` paths, the `.gitattributes` and `.gitmodules` files.
pub fn risky(incoming: &[String]) -> Vec<String> {
    incoming
        .iter()
        .filter(|p| {
            let name = p.rsplit('/').next().unwrap_or(p);
            name == ".gitattributes" || name == ".gitmodules"
        })
        .cloned()
        .collect()
}

/// What is in progress in a worktree whose git dir holds `has` entries.
pub fn busy(has: impl Fn(&str) -> bool) -> Option<&'static str> {
    [
        ("rebase-merge", "rebase"),
        ("rebase-apply", "rebase"),
        ("MERGE_HEAD", "merge"),
        ("CHERRY_PICK_HEAD", "cherry-pick"),
        ("REVERT_HEAD", "revert"),
    ]
    .into_iter()
    .find(|(f, _)| has(f))
    .map(|(_, what)| what)
}

/// The files git named as untracked ones a merge would overwrite.
pub fn would_overwrite(git_said: &str) -> Vec<String> {
    let mut files = Vec::new();
    let mut inside = false;
    for line in git_said.lines() {
        if line.contains("untracked working tree files would be") {
            inside = true;
        } else if inside && line.starts_with('\t') {
            files.push(line.trim().to_string());
        } else {
            inside = false;
        }
    }
    files
}

/// Why a merge failed, in nerdr's words: the conflicting files or the
/// untracked ones in the way, and what to do; else git's own error.
pub fn failure(
    src: &Source,
    target: &str,
    how: MergeHow,
    conflicts: &[String],
    git_said: &str,
    holds_target: bool,
) -> String {
    let repo = src.repo.display();
    let branch = &src.branch;
    let in_the_way = would_overwrite(git_said);
    if !in_the_way.is_empty() {
        return format!(
            "the merge would overwrite untracked files in the main checkout {repo}: {}
move              them away (or commit them), then merge again",
            in_the_way.join(", ")
        );
    }
    if conflicts.is_empty() {
        return match how {
            MergeHow::Merge => format!("the merge failed: {git_said}"),
            MergeHow::FfOnly => format!("the fast-forward failed: {git_said}"),
            MergeHow::Squash => format!("the squash merge failed: {git_said}"),
            MergeHow::Rebase => format!(
                "the rebase of {branch} onto {target} failed, and was undone (the tab's branch \
                 is as it was): {git_said}"
            ),
        };
    }
    let what = match how {
        MergeHow::Rebase => format!(
            "the rebase of {branch} onto {target} conflicts (and was undone: the tab's branch is \
             as it was)"
        ),
        _ => format!("{branch} and {target} conflict"),
    };
    let files: String = conflicts.iter().map(|c| format!("\n  {c}")).collect();
    let tab = if src.name.is_empty() {
        &src.tab
    } else {
        &src.name
    };
    let advice = conflict_advice(
        src.open.then_some(tab.as_str()),
        &Conflict {
            target,
            branch,
            how,
            holds_target,
        },
    );
    format!(
        "{what} in:{files}\nto bring it home, {advice}merge by hand in the main checkout: `git -C \
         {repo} merge {branch}`"
    )
}

/// A conflict's facts for [`conflict_advice`].
#[derive(Debug, Clone, Copy)]
pub struct Conflict<'a> {
    pub target: &'a str,
    pub branch: &'a str,
    pub how: MergeHow,
    /// The branch holds the target's head (the tab merged it in).
    pub holds_target: bool,
}

/// What to do about a conflict, fitting the strategy: `tab` is the open
/// tab whose agent can be asked. A rebase replays the branch's commits, so
/// one that merged the target in conflicts again however often the agent
/// merges: then a plain merge (or a fast-forward) is the way, not advice
/// that loops.
pub fn conflict_advice(tab: Option<&str>, c: &Conflict) -> String {
    let Conflict { target, branch, .. } = *c;
    let handle = tab.unwrap_or(branch);
    match (c.how, c.holds_target, tab) {
        (MergeHow::Rebase, true, _) => format!(
            "{branch} holds {target}'s head already (it merged {target} in), so a rebase \
             replays its old commits and conflicts again: a plain `nerdr merge {handle}` (or \
             `nerdr merge --ff-only {handle}`) works now; or "
        ),
        (MergeHow::Rebase, false, Some(tab)) => format!(
            "ask the agent to rebase its branch onto {target} and resolve them (`nerdr send \
             {tab} \"git rebase {target}\"`), then run `nerdr merge --rebase {tab}` again; or "
        ),
        (_, _, Some(tab)) => format!(
            "ask the agent to merge {target} into its branch and resolve them (`nerdr send \
             {tab} \"git merge {target}\"`), then run `nerdr merge {tab}` again; or "
        ),
        (_, _, None) => String::new(),
    }
}
