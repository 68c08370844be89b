//! A tab's work as one patch: its branch against its base, plus what its
//! worktree holds that no commit does (modified, staged and untracked
//! files, and ignored ones no trusted rule ignores: [`super::ignored`];
//! the others aside, as for `git status`). The working tree is
//! written as a tree through a temporary index in nerdr's state folder
//! (as `git::saved` does), so the worktree, its index and its refs stay
//! as they were, and `git diff BASE TREE` gives a patch `git apply`
//! reads, untracked files as new files. The objects that tree needs are
//! written to a scratch object store beside the index, the repository's
//! own objects its alternate, and removed with it: the repository's
//! store is readable from every sandboxed tab, and a file of this
//! worktree never given to git must not become readable there because
//! the person looked at its diff (adversarial review). Every command
//! goes through the guard: in a repository with sandbox history filters
//! are disarmed, or the diff is refused with the guard's reason.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use super::saved::{copy_index, io, Scratch};
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

/// A worktree's tree as it is now ([`worktree_tree`]) and the scratch
/// index and object store that hold it, removed when dropped.
pub struct Snapshot {
    pub tree: String,
    index: Scratch,
    objects: Objects,
    /// `GIT_ALTERNATE_OBJECT_DIRECTORIES`: the repository's objects.
    alternate: OsString,
}

impl Snapshot {
    /// The variables every git command that writes or reads the tree
    /// runs with: the scratch index, the scratch store, and the
    /// repository's objects as its alternate (read, never written: git
    /// writes only to `GIT_OBJECT_DIRECTORY`).
    fn env(&self) -> [(&str, &OsStr); 3] {
        [
            ("GIT_INDEX_FILE", self.index.0.as_os_str()),
            ("GIT_OBJECT_DIRECTORY", self.objects.0.as_os_str()),
            ("GIT_ALTERNATE_OBJECT_DIRECTORIES", &self.alternate),
        ]
    }
}

/// A scratch object store in nerdr's state folder (hidden from every
/// sandbox), removed when dropped.
struct Objects(PathBuf);

impl Objects {
    fn new(paths: &Paths) -> Result<Objects, GitError> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::create_dir_all(&paths.state_dir).map_err(|e| io(&paths.state_dir, e))?;
        let dir = paths.state_dir.join(format!(
            "diff-{}-{}.objects",
            std::process::id(),
            crate::protocol::handshake::random_hex(8)
        ));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|e| io(&dir, e))?;
        Ok(Objects(dir))
    }
}

impl Drop for Objects {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `dir` as one entry of `GIT_ALTERNATE_OBJECT_DIRECTORIES`: entries are
/// split at `:`, and one that starts with `"` is C-quoted.
fn alternate_entry(dir: &Path) -> OsString {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let bytes = dir.as_os_str().as_bytes();
    if !bytes.contains(&b':') && !bytes.starts_with(b"\"") {
        return dir.as_os_str().to_os_string();
    }
    let mut quoted = vec![b'"'];
    for b in bytes {
        if matches!(b, b'"' | b'\\') {
            quoted.push(b'\\');
        }
        quoted.push(*b);
    }
    quoted.push(b'"');
    OsString::from_vec(quoted)
}

/// The tree of `worktree` as it is now, untracked files included, and
/// ignored ones that count as work ([`super::ignored::work`], trusting
/// the `.gitignore` files of `base`, the tab's recorded base), written
/// to a scratch store: nothing is added to the repository's objects.
pub fn worktree_tree(
    paths: &Paths,
    worktree: &Path,
    base: Option<&str>,
) -> Result<Snapshot, GitError> {
    let git_path = |name: &str| {
        query(
            worktree,
            &["rev-parse", "--path-format=absolute", "--git-path", name],
        )
        .map(PathBuf::from)
    };
    let (real_index, repo_objects) = (git_path("index")?, git_path("objects")?);
    let mut snap = Snapshot {
        tree: String::new(),
        index: Scratch::new(paths)?,
        objects: Objects::new(paths)?,
        alternate: alternate_entry(&repo_objects),
    };
    copy_index(&real_index, &snap.index.0)?;
    let env = snap.env();
    run_env(paths, worktree, &["add", "-A"], &env)?;
    let ignored = super::ignored::work(paths, worktree, base)?;
    super::ignored::add_forced(paths, worktree, &env, &ignored)?;
    snap.tree = run_env(paths, worktree, &["write-tree"], &env)?;
    Ok(snap)
}

/// The paths where `worktree` holds work no commit has: those its tree
/// as it is now (`worktree_tree`) changes against its HEAD. `nerdr merge`
/// leaves them out, so `nerdr diff` marks them.
pub fn uncommitted(
    paths: &Paths,
    worktree: &Path,
    snap: &Snapshot,
) -> Result<Vec<String>, GitError> {
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
            &snap.tree,
        ],
        &snap.env(),
    )?;
    Ok(out
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect())
}

/// The patch (or with `stat`, git's `--stat`) from `base` to what a
/// worktree holds now ([`worktree_tree`]).
pub fn of_tree(
    paths: &Paths,
    worktree: &Path,
    base: &str,
    snap: &Snapshot,
    stat: bool,
) -> Result<Vec<u8>, GitError> {
    run_bytes_env(
        paths,
        worktree,
        &diff_args(stat, base, &snap.tree),
        &snap.env(),
    )
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
    fn an_alternate_with_a_colon_or_quote_is_quoted() {
        let e = |p: &str| alternate_entry(Path::new(p)).into_string().unwrap();
        assert_eq!(e("/r/.git/objects"), "/r/.git/objects");
        assert_eq!(e("/a:b/.git/objects"), "\"/a:b/.git/objects\"");
        assert_eq!(e("\"q\\/objects"), "\"\\\"q\\\\/objects\"");
    }

    #[test]
    fn a_patch_too_large_says_how_to_see_it() {
        assert!(fits(vec![b'x'; 10], Path::new("/w"), "abc").is_ok());
        let err = fits(vec![b'x'; MAX_PATCH + 1], Path::new("/w"), "abc").unwrap_err();
        assert!(err.contains("git -C /w diff abc"), "{err}");
    }
}
