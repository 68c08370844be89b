//! `nerdr merge`: a tab's branch into the branch it started from (or
//! `--into`), in the repository's main checkout. [`ready`] is the pure
//! rule for when a merge may start; [`merge`] gathers its facts, runs it
//! through the guard, and on any failure puts the checkout back as it was
//! (`git merge --abort`, `git reset --merge` after a squash, `git rebase
//! --abort` in the tab's worktree) and checks that it is.
//!
//! `--rebase` rebases the tab's branch onto the target in the tab's own
//! worktree (it must hold no uncommitted work), then fast-forwards the
//! target to it: the main checkout only ever moves forward.

use std::path::{Path, PathBuf};

use super::base::{short, Base};
use super::{query, run, unsaved};
use crate::paths::Paths;
use crate::protocol::work::{MergeHow, Merged};

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
            "{target} is not an ancestor of {} ({} commit{} of {target} are not on it), so \
             there is no fast-forward: merge without --ff-only, or with --rebase or --squash",
            f.branch,
            f.behind,
            if f.behind == 1 { "" } else { "s" }
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

/// What the main checkout holds that no commit does. Its checked-out
/// submodules are its own (a merge does not touch them): not counted.
fn main_changes(paths: &Paths, repo: &Path) -> Result<Vec<unsaved::Change>, super::GitError> {
    Ok(unsaved::changes(paths, repo)?
        .into_iter()
        .filter(|c| c.kind != unsaved::ChangeKind::NestedRepository)
        .collect())
}

/// The paths `branch` changes since it left `target` (what a merge brings
/// in), `.gitattributes` and renames included as plain paths.
fn incoming(
    paths: &Paths,
    repo: &Path,
    target: &str,
    branch: &str,
    filter: &str,
) -> Result<Vec<String>, String> {
    let range = format!("refs/heads/{target}...refs/heads/{branch}");
    let filter = format!("--diff-filter={filter}");
    let out = run(
        paths,
        repo,
        &[
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--no-renames",
            "--name-only",
            "-z",
            &filter,
            &range,
        ],
    )
    .map_err(|e| e.to_string())?;
    Ok(out
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect())
}

/// Of the `written` paths (those a merge writes), the ones the checkout
/// holds as ignored files: `ignored` is git's listing of them, a folder
/// all of whose files are ignored ending in `/`. Untracked files that are
/// not ignored git refuses to overwrite by itself.
pub fn in_the_way(written: &[String], ignored: &[String]) -> Vec<String> {
    written
        .iter()
        .filter(|p| {
            ignored
                .iter()
                .any(|i| *i == **p || (i.ends_with('/') && p.starts_with(i.as_str())))
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

fn worktree_busy(worktree: &Path) -> Option<&'static str> {
    let git_dir = query(
        worktree,
        &["rev-parse", "--path-format=absolute", "--git-dir"],
    )
    .ok()?;
    let git_dir = PathBuf::from(git_dir);
    busy(|f| git_dir.join(f).symlink_metadata().is_ok())
}

/// The ignored files and folders of the checkout (git's own listing).
fn ignored(repo: &Path) -> Option<Vec<String>> {
    let out = query(
        repo,
        &[
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--exclude-standard",
            "--directory",
        ],
    )
    .ok()?;
    Some(
        out.split('\0')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect(),
    )
}

fn tracked(changes: &[unsaved::Change]) -> Vec<unsaved::Change> {
    changes
        .iter()
        .filter(|c| c.kind != unsaved::ChangeKind::Untracked)
        .cloned()
        .collect()
}

/// The squash commit nerdr made of `branch` on `target`, if there is one.
fn squashed_in(paths: &Paths, repo: &Path, branch: &str, target: &str) -> Option<String> {
    let grep = format!("--grep=({branch}), squashed by nerdr");
    let out = run(
        paths,
        repo,
        &[
            "log",
            "--no-color",
            "-F",
            grep.as_str(),
            "--format=%H",
            "-1",
            &format!("refs/heads/{target}"),
        ],
    )
    .ok()?;
    out.lines().next().map(str::to_string)
}

/// The unmerged paths git left in `dir` (a conflicted merge or rebase).
fn conflicted(dir: &Path) -> Vec<String> {
    let out = query(dir, &["ls-files", "-u", "-z"]).unwrap_or_default();
    let mut paths: Vec<String> = out
        .split('\0')
        .filter_map(|e| e.split_once('\t').map(|(_, p)| p.to_string()))
        .collect();
    paths.dedup();
    paths
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
    let ask = match src.open {
        true => {
            let tab = if src.name.is_empty() {
                &src.tab
            } else {
                &src.name
            };
            format!(
                "ask the agent to merge {target} into its branch and resolve them (`nerdr send \
                 {tab} \"git merge {target}\"`), then run `nerdr merge` again; or "
            )
        }
        false => String::new(),
    };
    format!(
        "{what} in:{files}\nto bring it home, {ask}merge by hand in the main checkout: `git -C \
         {repo} merge {branch}`"
    )
}

fn tip(dir: &Path, branch: &str) -> Result<String, String> {
    query(
        dir,
        &[
            "rev-parse",
            "--verify",
            &format!("refs/heads/{branch}^{{commit}}"),
        ],
    )
    .map_err(|e| e.to_string())
}

/// Gather the facts, check them, merge, and on failure restore.
pub fn merge(
    paths: &Paths,
    src: &Source,
    base: &Base,
    into: Option<String>,
    how: MergeHow,
) -> Result<Merged, String> {
    let repo = &src.repo;
    let target = into.or_else(|| base.branch.clone());
    let target_exists = target.as_deref().is_some_and(|t| tip(repo, t).is_ok());
    let all_main_changes = main_changes(paths, repo).map_err(|e| {
        format!(
            "cannot tell whether the main checkout {} is clean, so nothing was merged: {e}",
            repo.display()
        )
    })?;
    let worktree_missing = !src.worktree.exists();
    let worktree_changes = match worktree_missing {
        true => Vec::new(),
        false => unsaved::changes(paths, &src.worktree).unwrap_or_default(),
    };
    let (ahead, behind) = match (&target, target_exists) {
        (Some(t), true) => super::listing::ahead_behind(repo, &src.branch, t)
            .ok_or_else(|| format!("cannot compare {} with {t}", src.branch))?,
        _ => (0, 0),
    };
    let content_merged = match (&target, ahead) {
        (Some(t), 1..) if target_exists => {
            super::listing::content_merged(paths, repo, &src.branch, t)
        }
        _ => false,
    };
    // What the branch changes (any way), and what it writes (all but
    // deletions: a path it deletes is not written in the checkout).
    let listed = |filter: &str| match (&target, ahead) {
        (Some(t), 1..) if target_exists => incoming(paths, repo, t, &src.branch, filter)
            .map_err(|e| format!("nothing was merged: cannot list what it brings in: {e}")),
        _ => Ok(Vec::new()),
    };
    let incoming = listed("ACDMRTUXB")?;
    let written = listed("d")?;
    let ignored_before = ignored(repo);
    let in_the_way = match (&ignored_before, written.is_empty()) {
        (_, true) => Vec::new(),
        (Some(i), false) => in_the_way(&written, i),
        (None, false) => {
            return Err(format!(
                "nothing was merged: cannot list the ignored files of the main checkout {}",
                repo.display()
            ))
        }
    };
    let sandboxed = super::guard::has_history(&paths.state_dir, repo);
    let facts = Facts {
        in_the_way,
        risky_incoming: match sandboxed {
            true => risky(&incoming),
            false => Vec::new(),
        },
        worktree_branch: match worktree_missing {
            true => None,
            false => super::base::current_branch(&src.worktree),
        },
        worktree_own_branch: super::clean::own_branch(&src.worktree, &src.branch),
        worktree_busy: match worktree_missing {
            true => None,
            false => worktree_busy(&src.worktree),
        },
        repo: repo.clone(),
        checked_out: super::base::current_branch(repo),
        main_changes: tracked(&all_main_changes),
        target: target.clone(),
        target_exists,
        branch: src.branch.clone(),
        ahead,
        behind,
        content_merged,
        how,
        worktree_dirty: !worktree_changes.is_empty(),
        worktree_missing,
    };
    let mut notes = Vec::new();
    if let Some(n) = base.guessed_note(&src.worktree) {
        notes.push(n);
    }
    if !worktree_changes.is_empty() && how != MergeHow::Rebase {
        notes.push(format!(
            "the tab's worktree holds work no commit has, left out of the merge:{}",
            unsaved::listed(&worktree_changes, 10)
        ));
    }
    let target = match ready(&facts) {
        Ready::Refuse(why) => return Err(format!("nothing was merged: {why}")),
        Ready::NothingToMerge => {
            let t = target.expect("ready checked it");
            let head = tip(repo, &t)?;
            let already = content_merged.then(|| match squashed_in(paths, repo, &src.branch, &t) {
                Some(c) => format!("already merged (squashed in {})", short(&c)),
                None => format!("already merged: {t} holds all of its changes"),
            });
            return Ok(Merged {
                tab: src.tab.clone(),
                branch: src.branch.clone(),
                into: t,
                repo: repo.clone(),
                how,
                before: head.clone(),
                after: head,
                fast_forward: false,
                notes,
                already,
                new_base: None,
            });
        }
        Ready::Go => target.expect("ready checked it"),
    };
    let before = tip(repo, &target)?;
    let done = run_merge(paths, src, &target, how);
    if let Err(why) = done {
        let mut restored = restore(paths, src, how, &before, &all_main_changes);
        if let (Ok(()), Some(was)) = (&restored, &ignored_before) {
            let now = ignored(repo).unwrap_or_default();
            let gone: Vec<&String> = was.iter().filter(|p| !now.contains(p)).collect();
            if !gone.is_empty() {
                restored = Err(format!(
                    "ignored files of it are gone: {}",
                    gone.iter()
                        .map(|p| p.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        return Err(match restored {
            Ok(()) => format!(
                "{why}\nnothing was merged: the main checkout {} is as it was (HEAD {})",
                repo.display(),
                short(&before)
            ),
            Err(not) => format!("{why}\nand the checkout could not be put back: {not}"),
        });
    }
    let after = tip(repo, &target)?;
    let branch_tip = tip(repo, &src.branch)?;
    // A rebase put the branch on the target's tip as it was: its work
    // starts there now, not where the worktree was made.
    let new_base = (how == MergeHow::Rebase).then(|| before.clone());
    Ok(Merged {
        already: None,
        new_base,
        tab: src.tab.clone(),
        branch: src.branch.clone(),
        into: target,
        repo: repo.clone(),
        how,
        fast_forward: after == branch_tip && how != MergeHow::Squash,
        before,
        after,
        notes,
    })
}

fn run_merge(paths: &Paths, src: &Source, target: &str, how: MergeHow) -> Result<(), String> {
    let repo = src.repo.as_path();
    let worktree = src.worktree.as_path();
    let branch = src.branch.as_str();
    let git = |dir: &Path, args: &[&str]| run(paths, dir, args).map(drop);
    // Git's own error, the conflicts read before anything is undone.
    let failed = |dir: &Path, e: super::GitError, how: MergeHow| {
        failure(src, target, how, &conflicted(dir), &e.to_string())
    };
    match how {
        MergeHow::Merge => {
            git(repo, &["merge", "--no-edit", branch]).map_err(|e| failed(repo, e, how))
        }
        MergeHow::FfOnly => {
            git(repo, &["merge", "--ff-only", branch]).map_err(|e| failed(repo, e, how))
        }
        MergeHow::Squash => {
            let range = format!("refs/heads/{target}..refs/heads/{branch}");
            let log = run(paths, repo, &["log", "--no-color", "--format=* %s", &range])
                .unwrap_or_default();
            git(repo, &["merge", "--squash", branch]).map_err(|e| failed(repo, e, how))?;
            let message = format!(
                "Work of tab {} ({branch}), squashed by nerdr\n\n{log}\n",
                if src.name.is_empty() {
                    &src.tab
                } else {
                    &src.name
                }
            );
            git(repo, &["commit", "-q", "-m", &message])
                .map_err(|e| format!("the squash commit failed: {e}"))
        }
        MergeHow::Rebase => {
            let onto = format!("refs/heads/{target}");
            let old = tip(repo, branch)?;
            // Only a rebase nerdr started is nerdr's to abort.
            if let Some(what) = worktree_busy(worktree) {
                return Err(format!(
                    "a {what} is in progress in the tab's worktree: finish it or abort it there \
                     first"
                ));
            }
            if let Err(e) = git(worktree, &["rebase", &onto]) {
                let why = failed(worktree, e, how);
                if worktree_busy(worktree).is_some() {
                    let _ = git(worktree, &["rebase", "--abort"]);
                }
                return Err(why);
            }
            git(repo, &["merge", "--ff-only", branch]).map_err(|e| {
                let why = failed(repo, e, MergeHow::FfOnly);
                // The worktree held no uncommitted work (`ready`), so
                // the branch goes back where it was with nothing lost.
                match git(worktree, &["reset", "-q", "--keep", &old]) {
                    Ok(()) => format!("{why}\n(the rebase of {branch} was undone)"),
                    Err(e) => format!(
                        "{why}\n{branch} stays rebased onto {target} (it was at {}; undoing \
                         the rebase failed: {e})",
                        short(&old)
                    ),
                }
            })
        }
    }
}

/// Put the main checkout back after a failed merge, and check it is: its
/// HEAD where it was, and no work no commit holds (it was clean before).
fn restore(
    paths: &Paths,
    src: &Source,
    how: MergeHow,
    before: &str,
    was: &[unsaved::Change],
) -> Result<(), String> {
    let repo = &src.repo;
    match how {
        MergeHow::Merge => {
            if query(repo, &["rev-parse", "--verify", "--quiet", "MERGE_HEAD"]).is_ok() {
                run(paths, repo, &["merge", "--abort"]).map_err(|e| e.to_string())?;
            }
        }
        MergeHow::Squash => {
            let head = query(repo, &["rev-parse", "HEAD"]).map_err(|e| e.to_string())?;
            if head == before {
                run(paths, repo, &["reset", "--merge"]).map_err(|e| e.to_string())?;
                // The message `merge --squash` left for a commit that
                // will not come (the checkout was clean, so it was ours).
                if let Ok(msg) = query(
                    repo,
                    &[
                        "rev-parse",
                        "--path-format=absolute",
                        "--git-path",
                        "SQUASH_MSG",
                    ],
                ) {
                    let _ = std::fs::remove_file(msg);
                }
            }
        }
        MergeHow::FfOnly | MergeHow::Rebase => {}
    }
    let head = query(repo, &["rev-parse", "HEAD"]).map_err(|e| e.to_string())?;
    if head != before {
        return Err(format!(
            "HEAD is {} (it was {})",
            short(&head),
            short(before)
        ));
    }
    let changes = main_changes(paths, repo).map_err(|e| e.to_string())?;
    let new: Vec<unsaved::Change> = changes.into_iter().filter(|c| !was.contains(c)).collect();
    if !new.is_empty() {
        return Err(format!(
            "it holds changes now:{}",
            unsaved::listed(&new, 10)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
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
            ("ff-only, diverged", Facts { how: MergeHow::FfOnly, behind: 1, ..clean() }, Err("no fast-forward")),
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
        assert_eq!(
            in_the_way(&incoming, &ignored),
            v(&["secret.log", "build/x"])
        );
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
            let said = failure(&source(true), "main", how, &conflicts, git);
            assert!(said.contains("in:\n  a.txt\n  b/c.txt\n"), "{said}");
            assert!(
                !said.contains("then commit") && !said.contains("--continue"),
                "{said}"
            );
            assert!(
                said.contains("`nerdr send fixer \"git merge main\"`"),
                "{said}"
            );
            assert!(said.contains("`git -C /src/r merge nerdr/ab12`"), "{said}");
        }
        let closed = failure(&source(false), "main", MergeHow::Merge, &conflicts, git);
        assert!(!closed.contains("nerdr send"), "{closed}");
        let untracked = "error: The following untracked working tree files would be \
                         overwritten by merge:\n\tscratch.txt\n\tdir/x\nPlease move or \
                         remove them before you merge.\nAborting";
        assert_eq!(would_overwrite(untracked), ["scratch.txt", "dir/x"]);
        let said = failure(&source(true), "main", MergeHow::Merge, &[], untracked);
        assert!(
            said.contains(
                "overwrite untracked files in the main checkout /src/r: scratch.txt, dir/x"
            ),
            "{said}"
        );
        let other = failure(
            &source(true),
            "main",
            MergeHow::Merge,
            &[],
            "refused by the guard",
        );
        assert!(other.ends_with("refused by the guard"), "{other}");
    }
}
