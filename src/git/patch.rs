//! A tab's work as one patch: its branch against its base, plus what its
//! worktree holds that no commit does (modified, staged and untracked
//! files, and ignored ones no trusted rule ignores: [`super::ignored`];
//! the others aside, as for `git status`). The working tree is
//! written as a tree through a temporary index in nerdr's state folder
//! (as `git::saved` does), so the worktree, its index and its refs stay
//! as they were, and `git diff BASE TREE` gives a patch `git apply`
//! reads, untracked files as new files. Every command goes through the
//! guard: in a repository with sandbox history filters are disarmed, or
//! the diff is refused with the guard's reason.

use std::ffi::OsStr;
use std::path::Path;

use super::saved::{copy_index, Scratch};
use super::{query, run_bytes_env, run_env, GitError};
use crate::paths::Paths;

/// The largest patch a reply carries (a frame holds 32 MiB, and JSON
/// escapes some bytes).
pub const MAX_PATCH: usize = 12 << 20;

/// The diff options every patch is made with: plain, whatever the
/// person's config says about colour, external diff programs, text
/// conversion and prefixes.
fn diff_args<'a>(stat: bool, from: &'a str, to: &'a str) -> Vec<&'a str> {
    let mut args = vec![
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--src-prefix=a/",
        "--dst-prefix=b/",
    ];
    if stat {
        args.push("--stat");
    }
    args.extend([from, to]);
    args
}

/// The tree of `worktree` as it is now, untracked files included, and
/// ignored ones that count as work ([`super::ignored::work`]).
pub fn worktree_tree(paths: &Paths, worktree: &Path) -> Result<String, GitError> {
    let index = std::path::PathBuf::from(query(
        worktree,
        &["rev-parse", "--path-format=absolute", "--git-path", "index"],
    )?);
    let scratch = Scratch::new(paths)?;
    copy_index(&index, &scratch.0)?;
    let env: [(&str, &OsStr); 1] = [("GIT_INDEX_FILE", scratch.0.as_os_str())];
    run_env(paths, worktree, &["add", "-A"], &env)?;
    let ignored = super::ignored::work(paths, worktree)?;
    super::ignored::add_forced(paths, worktree, &env, &ignored)?;
    run_env(paths, worktree, &["write-tree"], &env)
}

/// The paths where `worktree` holds work no commit has: those its tree
/// as it is now (`worktree_tree`) changes against its HEAD. `nerdr merge`
/// leaves them out, so `nerdr diff` marks them.
pub fn uncommitted(paths: &Paths, worktree: &Path, tree: &str) -> Result<Vec<String>, GitError> {
    let out = run_env(
        paths,
        worktree,
        &[
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--name-only",
            "-z",
            "HEAD",
            tree,
        ],
        &[],
    )?;
    Ok(out
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect())
}

/// The patch (or with `stat`, git's `--stat`) from `base` to `tree`
/// (what a worktree holds now: [`worktree_tree`]).
pub fn of_tree(
    paths: &Paths,
    worktree: &Path,
    base: &str,
    tree: &str,
    stat: bool,
) -> Result<Vec<u8>, GitError> {
    run_bytes_env(paths, worktree, &diff_args(stat, base, tree), &[])
}

/// The patch from `base` to `branch`'s tip, run in `repo`: for a worktree
/// that is gone, whose commits are all that is left.
pub fn of_branch(
    paths: &Paths,
    repo: &Path,
    base: &str,
    branch: &str,
    stat: bool,
) -> Result<Vec<u8>, GitError> {
    let full = format!("refs/heads/{branch}");
    run_bytes_env(paths, repo, &diff_args(stat, base, &full), &[])
}

/// A patch too large for one reply is an error saying how to get it.
pub fn fits(patch: Vec<u8>, worktree: &Path, base: &str) -> Result<Vec<u8>, String> {
    if patch.len() <= MAX_PATCH {
        return Ok(patch);
    }
    Err(format!(
        "the patch is {} MiB, more than the {} MiB one reply carries; see it with `git -C {} \
         diff {base}` (committed and tracked work; `git status` lists untracked files)",
        patch.len() >> 20,
        MAX_PATCH >> 20,
        worktree.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patches_are_plain_whatever_the_config() {
        let args = diff_args(false, "b", "t");
        for plain in [
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--src-prefix=a/",
        ] {
            assert!(args.contains(&plain), "{args:?}");
        }
        assert_eq!(&args[args.len() - 2..], ["b", "t"]);
        assert!(diff_args(true, "b", "t").contains(&"--stat"));
        assert!(!args.contains(&"--stat"));
    }

    #[test]
    fn a_patch_too_large_says_how_to_see_it() {
        assert!(fits(vec![b'x'; 10], Path::new("/w"), "abc").is_ok());
        let err = fits(vec![b'x'; MAX_PATCH + 1], Path::new("/w"), "abc").unwrap_err();
        assert!(err.contains("git -C /w diff abc"), "{err}");
    }
}
