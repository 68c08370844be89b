//! Where a tab's work started: the commit its worktree was made from and
//! the branch the main checkout was on then (where `nerdr merge` takes the
//! work back). Recorded when the worktree is made, in the tab's record
//! (`core::state::Worktree`, so it survives core restarts) and in a small
//! file beside the worktree (`<worktree>.base.json`, so it outlives the
//! tab: `nerdr worktrees` and `nerdr clean` look at closed tabs' worktrees
//! too). A worktree made before either existed falls back to `git
//! merge-base` with the main checkout's HEAD, and says so.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{query, GitError};

/// What was recorded when the worktree was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recorded {
    /// The commit the worktree started from.
    pub commit: String,
    /// The main checkout's branch then; `None` on a detached HEAD.
    #[serde(default)]
    pub branch: Option<String>,
}

/// A worktree's base as the commands use it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Base {
    pub commit: String,
    /// The branch to merge back into; `None` when unknown (a detached
    /// HEAD then and now).
    pub branch: Option<String>,
    /// Whether it was recorded, or guessed by `git merge-base`.
    pub recorded: bool,
    /// The recorded base was behind the commit the branch now sits on (the
    /// target was merged into the branch since), and moved up to it: the
    /// caller records the new one.
    #[serde(default)]
    pub moved: bool,
}

impl Base {
    /// What to record for this base.
    pub fn record(&self) -> Recorded {
        Recorded {
            commit: self.commit.clone(),
            branch: self.branch.clone(),
        }
    }
}

impl Base {
    /// A sentence for output when the base was guessed.
    pub fn guessed_note(&self, worktree: &Path) -> Option<String> {
        (!self.recorded).then(|| {
            format!(
                "no base was recorded for {} (made before nerdr recorded bases): using `git \
                 merge-base` with the main checkout's HEAD ({}), on branch {}",
                worktree.display(),
                short(&self.commit),
                self.branch.as_deref().unwrap_or("(none: detached HEAD)")
            )
        })
    }
}

pub fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

/// Where a worktree starts when made now from `repo`'s main checkout: its
/// HEAD commit and branch.
pub fn start_point(repo: &Path) -> Result<Recorded, GitError> {
    let commit = query(repo, &["rev-parse", "--verify", "HEAD^{commit}"])?;
    Ok(Recorded {
        commit,
        branch: current_branch(repo),
    })
}

/// The branch checked out in `dir` (short name), `None` on a detached HEAD.
pub fn current_branch(dir: &Path) -> Option<String> {
    query(dir, &["symbolic-ref", "--quiet", "--short", "HEAD"])
        .ok()
        .filter(|b| !b.is_empty())
}

/// The file beside worktree `path` that keeps its base once its tab is gone.
pub fn record_file(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".base.json");
    path.with_file_name(name)
}

/// Write the record beside the worktree. A failure only loses the record
/// for closed tabs (the tab's own record holds it too): logged, not fatal.
pub fn write_record(path: &Path, recorded: &Recorded) {
    let file = record_file(path);
    let result = serde_json::to_vec_pretty(recorded)
        .map_err(std::io::Error::other)
        .and_then(|bytes| std::fs::write(&file, bytes));
    if let Err(e) = result {
        tracing::warn!(file = %file.display(), error = %e, "cannot record the worktree's base");
    }
}

/// The record beside the worktree, if there is one that reads.
pub fn read_record(path: &Path) -> Option<Recorded> {
    let bytes = std::fs::read(record_file(path)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Where a recorded base moves: to the merge base of the branch and its
/// target when the target was merged into the branch since (the recorded
/// base is a proper ancestor of that merge base, and the merge base is not
/// the branch's own tip: that is the branch merged into the target, which
/// moves nothing). Otherwise the target's commits would count as the
/// branch's work. Pure; see [`resolve`] for the facts.
pub fn moved_to<'a>(
    recorded: &str,
    merge_base: &'a str,
    branch_tip: &str,
    recorded_is_ancestor: bool,
) -> Option<&'a str> {
    (merge_base != recorded && merge_base != branch_tip && recorded_is_ancestor)
        .then_some(merge_base)
}

/// `r` moved up to the commit `branch` now sits on, if it moved.
fn advance(repo: &Path, r: &Recorded, branch: &str) -> Option<String> {
    let target = r.branch.as_deref()?;
    let (t, b) = (
        format!("refs/heads/{target}"),
        format!("refs/heads/{branch}"),
    );
    let mb = query(repo, &["merge-base", t.as_str(), b.as_str()]).ok()?;
    let tip = query(repo, &["rev-parse", "--verify", b.as_str()]).ok()?;
    let ancestor = mb != r.commit
        && query(
            repo,
            &[
                "merge-base",
                "--is-ancestor",
                r.commit.as_str(),
                mb.as_str(),
            ],
        )
        .is_ok();
    moved_to(&r.commit, &mb, &tip, ancestor).map(str::to_string)
}

/// The base of `branch`'s worktree: `recorded` (the tab's or the file's,
/// moved up when the target was merged into the branch since: see
/// [`moved_to`]), else the merge base of the branch and the main
/// checkout's HEAD, on the main checkout's branch.
pub fn resolve(recorded: Option<Recorded>, repo: &Path, branch: &str) -> Result<Base, GitError> {
    if let Some(r) = recorded {
        let moved = advance(repo, &r, branch);
        return Ok(Base {
            moved: moved.is_some(),
            commit: moved.unwrap_or(r.commit),
            branch: r.branch,
            recorded: true,
        });
    }
    let full = format!("refs/heads/{branch}");
    let commit = query(repo, &["merge-base", "HEAD", full.as_str()])?;
    Ok(Base {
        commit,
        branch: current_branch(repo),
        recorded: false,
        moved: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_sits_beside_the_worktree() {
        assert_eq!(
            record_file(Path::new("/d/worktrees/r-1234/ab12")),
            PathBuf::from("/d/worktrees/r-1234/ab12.base.json")
        );
    }

    #[test]
    fn a_guessed_base_says_so_and_a_recorded_one_does_not() {
        let b = |recorded| Base {
            commit: "0123456789abcdef".into(),
            branch: Some("main".into()),
            recorded,
            moved: false,
        };
        assert_eq!(b(true).guessed_note(Path::new("/w")), None);
        let note = b(false).guessed_note(Path::new("/w")).unwrap();
        assert!(
            note.contains("merge-base") && note.contains("0123456789ab"),
            "{note}"
        );
    }

    #[test]
    fn a_base_moves_only_when_the_target_came_into_the_branch() {
        #[rustfmt::skip]
        let rows = [
            // recorded, merge base, branch tip, recorded is an ancestor: moved to
            ("nothing happened: the merge base is the base", "b", "b", "t", true, None),
            ("the target merged into the branch (or a rebase)", "b", "m", "t", true, Some("m")),
            ("the branch merged into the target: nothing moves", "b", "t", "t", true, None),
            ("the branch rewritten below its base", "b", "m", "t", false, None),
        ];
        for (what, recorded, mb, tip, ancestor, want) in rows {
            assert_eq!(moved_to(recorded, mb, tip, ancestor), want, "{what}");
        }
    }
}
