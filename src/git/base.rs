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

/// The base of `branch`'s worktree: `recorded` (the tab's or the file's),
/// else the merge base of the branch and the main checkout's HEAD, on the
/// main checkout's branch.
pub fn resolve(recorded: Option<Recorded>, repo: &Path, branch: &str) -> Result<Base, GitError> {
    if let Some(r) = recorded {
        return Ok(Base {
            commit: r.commit,
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
        };
        assert_eq!(b(true).guessed_note(Path::new("/w")), None);
        let note = b(false).guessed_note(Path::new("/w")).unwrap();
        assert!(
            note.contains("merge-base") && note.contains("0123456789ab"),
            "{note}"
        );
    }
}
