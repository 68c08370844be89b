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

pub mod identity;
mod rules;
#[cfg(test)]
use rules::would_overwrite;
pub use rules::{busy, failure, in_the_way, ready, risky, Facts, Ready, Source};

/// What the main checkout holds that no commit does. Its checked-out
/// submodules are its own (a merge does not touch them): not counted.
/// The checkout is the person's: the `.gitignore` files of its HEAD are
/// trusted.
fn main_changes(paths: &Paths, repo: &Path) -> Result<Vec<unsaved::Change>, super::GitError> {
    Ok(unsaved::changes(paths, repo, Some("HEAD"))?
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
        .filter(|c| {
            !matches!(
                c.kind,
                unsaved::ChangeKind::Untracked | unsaved::ChangeKind::Ignored
            )
        })
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
    identity: &[(String, String)],
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
        false => unsaved::changes(paths, &src.worktree, base.recorded.then_some(&*base.commit))
            .unwrap_or_default(),
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
        worktree_own_branch: super::listing::own_branch(&src.worktree, &src.branch),
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
    let done = run_merge(paths, src, &target, how, identity);
    if let Err(mut why) = done {
        // git's "Please tell me who you are" names settings of its own
        // process, not of the shell the person typed in: say what works.
        if identity::unknown(&why) {
            why = identity::advice(repo);
        }
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

fn run_merge(
    paths: &Paths,
    src: &Source,
    target: &str,
    how: MergeHow,
    identity: &[(String, String)],
) -> Result<(), String> {
    let repo = src.repo.as_path();
    let worktree = src.worktree.as_path();
    let branch = src.branch.as_str();
    let env: Vec<(&str, &std::ffi::OsStr)> = identity
        .iter()
        .map(|(k, v)| (k.as_str(), std::ffi::OsStr::new(v.as_str())))
        .collect();
    let git = |dir: &Path, args: &[&str]| super::run_env(paths, dir, args, &env).map(drop);
    // Git's own error, the conflicts read before anything is undone.
    // Asked before anything runs: the advice on a rebase's conflict
    // depends on it.
    let holds_target = how == MergeHow::Rebase && {
        let (t, b) = (
            format!("refs/heads/{target}"),
            format!("refs/heads/{branch}"),
        );
        super::query(
            repo,
            &["merge-base", "--is-ancestor", t.as_str(), b.as_str()],
        )
        .is_ok()
    };
    let failed = |dir: &Path, e: super::GitError, how: MergeHow| {
        failure(
            src,
            target,
            how,
            &conflicted(dir),
            &e.to_string(),
            holds_target,
        )
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
mod tests;
