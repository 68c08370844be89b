//! One git worktree per agent tab, so agents working in one repository do
//! not trip over each other: `$NERDR_DATA_DIR/worktrees/<repo-id>/<tab>` on a
//! new branch `nerdr/<tab>` from HEAD.

use std::path::{Path, PathBuf};

use super::{query, run, GitError};
use crate::paths::Paths;

/// The repository a folder is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    /// The main worktree's top folder.
    pub toplevel: PathBuf,
    /// The common git dir: identifies the repository across its worktrees.
    pub common_dir: PathBuf,
    /// Where the folder sits inside the worktree ("" at the top).
    pub prefix: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    #[error(
        "{repo} has no commit yet, and a worktree starts from one; commit something first, \
         or start the agent in the folder itself with --no-worktree"
    )]
    Unborn { repo: PathBuf },
    #[error(
        "creating the worktree for {repo} would need a fetch from its remote (a partial clone \
         missing objects); nerdr does not fetch for you: run `git fetch` there, or use --no-worktree"
    )]
    NeedsFetch { repo: PathBuf },
    #[error(transparent)]
    Git(#[from] GitError),
}

/// The repository `folder` is in, or None outside any.
pub fn repo_of(folder: &Path) -> Option<Repo> {
    let out = query(
        folder,
        &[
            "rev-parse",
            "--show-toplevel",
            "--git-common-dir",
            "--show-prefix",
        ],
    )
    .ok()?;
    let mut lines = out.lines();
    let toplevel = PathBuf::from(lines.next()?);
    let common = PathBuf::from(lines.next()?);
    let common_dir = if common.is_absolute() {
        common
    } else {
        folder.join(common)
    };
    let prefix = PathBuf::from(lines.next().unwrap_or(""));
    Some(Repo {
        toplevel,
        common_dir: std::fs::canonicalize(&common_dir).unwrap_or(common_dir),
        prefix,
    })
}

/// `<name>-<hash>`: readable, and unique per repository.
pub fn repo_id(repo: &Repo) -> String {
    let name = repo
        .toplevel
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "repo".into());
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut h: u64 = 0xcbf29ce484222325;
    for b in repo.common_dir.as_os_str().as_encoded_bytes() {
        h = (h ^ *b as u64).wrapping_mul(0x100000001b3);
    }
    format!("{name}-{:08x}", h as u32)
}

pub fn branch(tab: &str) -> String {
    format!("nerdr/{tab}")
}

/// A worktree just made, and where its work starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Made {
    pub path: PathBuf,
    pub base: super::base::Recorded,
}

/// Make the tab's worktree from the main checkout's HEAD, recording that
/// commit and branch as its base (see `git::base`).
/// Refused by the guard in a repository with sandbox history where the
/// checkout could run a planted program.
pub fn create(paths: &Paths, repo: &Repo, tab: &str) -> Result<Made, WorktreeError> {
    let Ok(base) = super::base::start_point(&repo.toplevel) else {
        return Err(WorktreeError::Unborn {
            repo: repo.toplevel.clone(),
        });
    };
    create_at(paths, repo, tab, base)
}

/// Make tab `tab`'s worktree on a new branch `nerdr/<tab>` at `base`'s
/// commit, and record `base` beside it: a reviewer's starts at its
/// author's head, with the author's branch as the one its work goes to.
pub fn create_at(
    paths: &Paths,
    repo: &Repo,
    tab: &str,
    base: super::base::Recorded,
) -> Result<Made, WorktreeError> {
    let path = paths
        .data_dir
        .join("worktrees")
        .join(repo_id(repo))
        .join(tab);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| {
            GitError::Spawn(std::io::Error::new(
                e.kind(),
                format!("cannot create {}: {e}", parent.display()),
            ))
        })?;
    }
    let path_arg = path.as_os_str().to_owned();
    let branch = branch(tab);
    let args: Vec<&std::ffi::OsStr> = vec![
        "worktree".as_ref(),
        "add".as_ref(),
        "-b".as_ref(),
        branch.as_ref(),
        path_arg.as_ref(),
        // The commit recorded, not HEAD again: the checkout may move meanwhile.
        base.commit.as_ref(),
    ];
    match run(paths, &repo.toplevel, &args) {
        Ok(_) => {
            super::base::write_record(&path, &base);
            Ok(Made { path, base })
        }
        Err(GitError::Failed { stderr, .. }) if needs_fetch(&stderr) => {
            // Leave nothing half made behind.
            let _ = query(&repo.toplevel, &["worktree", "prune"]);
            let _ = std::fs::remove_dir_all(&path);
            let _ = query(&repo.toplevel, &["branch", "-D", &branch]);
            Err(WorktreeError::NeedsFetch {
                repo: repo.toplevel.clone(),
            })
        }
        Err(e) => Err(e.into()),
    }
}

/// What git says when it would have to fetch missing objects.
pub fn needs_fetch(stderr: &str) -> bool {
    let s = stderr.to_ascii_lowercase();
    s.contains("promisor") || s.contains("lazy fetching disabled") || s.contains("could not fetch")
}

/// Remove the tab's worktree (its branch stays, with any commits on it),
/// and the record of its base beside it.
pub fn remove(paths: &Paths, repo_toplevel: &Path, path: &Path) -> Result<(), GitError> {
    let p = path.as_os_str().to_owned();
    let args: Vec<&std::ffi::OsStr> = vec![
        "worktree".as_ref(),
        "remove".as_ref(),
        "--force".as_ref(),
        p.as_ref(),
    ];
    run(paths, repo_toplevel, &args)?;
    let _ = std::fs::remove_file(super::base::record_file(path));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fetch_messages_are_recognised() {
        let rows = [
            ("fatal: could not fetch 1234 from promisor remote", true),
            (
                "error: lazy fetching disabled; some objects may not be available",
                true,
            ),
            ("fatal: 'nerdr/x' is already checked out", false),
            ("fatal: a branch named 'nerdr/x' already exists", false),
        ];
        for (msg, want) in rows {
            assert_eq!(needs_fetch(msg), want, "{msg}");
        }
    }

    #[test]
    fn repo_ids_are_readable_and_distinct() {
        let r = |top: &str, common: &str| Repo {
            toplevel: top.into(),
            common_dir: common.into(),
            prefix: "".into(),
        };
        let a = repo_id(&r("/src/my app", "/src/my app/.git"));
        assert!(a.starts_with("my_app-"), "{a}");
        assert_ne!(a, repo_id(&r("/src/my app", "/other/.git")));
    }
}
