//! Work saved from a worktree before nerdr removes it: one commit per
//! removal under `refs/nerdr/saved/<tab>`, shaped as `git stash` shapes
//! its entries (the working tree, untracked files included, whose parents
//! are HEAD and a commit of the index), so both `git checkout -b NAME REF`
//! and `git stash apply REF` bring it back. Made with plumbing and a
//! temporary index in nerdr's state folder, so the worktree, its index and
//! `refs/stash` stay as they were; every command goes through the guard.
//! Ignored files that count as work ([`super::ignored`]: an agent's
//! planted `.gitignore` is no reason to leave the person's file behind)
//! are saved too, and named in the commit's message and in [`Saved`].

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::{query, run, run_env, GitError};
use crate::paths::Paths;

pub const PREFIX: &str = "refs/nerdr/saved/";

/// Where a worktree's work was saved.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Saved {
    /// `refs/nerdr/saved/<tab>` (or `<tab>-2`, ... when saved before).
    pub reference: String,
    pub commit: String,
    /// The ignored paths saved with the rest, because no rule nerdr
    /// trusts ignores them (a folder with its trailing `/`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<String>,
}

/// The identity of nerdr's own commits: the person's may not be set, and
/// these commits are nerdr's record, not their work's authorship.
const IDENTITY: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "nerdr"),
    ("GIT_AUTHOR_EMAIL", "nerdr@localhost"),
    ("GIT_COMMITTER_NAME", "nerdr"),
    ("GIT_COMMITTER_EMAIL", "nerdr@localhost"),
];

/// Save what `worktree` holds beyond its HEAD (tab `tab`, on `branch`) as
/// a commit under [`PREFIX`]. Ignored files are not saved unless they
/// count as work ([`super::ignored::work`], trusting the `.gitignore`
/// files of `base`, the tab's recorded base).
pub fn save(
    paths: &Paths,
    worktree: &Path,
    tab: &str,
    branch: &str,
    base: Option<&str>,
) -> Result<Saved, GitError> {
    let head = query(worktree, &["rev-parse", "--verify", "HEAD^{commit}"])?;
    let index = PathBuf::from(query(
        worktree,
        &["rev-parse", "--path-format=absolute", "--git-path", "index"],
    )?);
    let scratch = Scratch::new(paths)?;
    // A copy of the worktree's index: staged work and tracked files that
    // are also ignored are kept, and the real index is not touched.
    copy_index(&index, &scratch.0)?;
    let mut env: Vec<(&str, &OsStr)> = IDENTITY.iter().map(|(k, v)| (*k, OsStr::new(v))).collect();
    env.push(("GIT_INDEX_FILE", scratch.0.as_os_str()));
    let index_tree = run_env(paths, worktree, &["write-tree"], &env)?;
    // Flags that tell git not to look at a file (an agent's
    // `update-index --skip-worktree`) would keep its edit out of `add`:
    // cleared in the copy, so the file is saved as it is on disk.
    let listing = super::query_bytes(worktree, &["ls-files", "-v", "-z"])?;
    for path in super::unsaved::flagged(&listing) {
        let path = String::from_utf8_lossy(path).into_owned();
        run_env(
            paths,
            worktree,
            &[
                "update-index",
                "--no-skip-worktree",
                "--no-assume-unchanged",
                "--",
                &path,
            ],
            &env,
        )?;
    }
    run_env(paths, worktree, &["add", "-A"], &env)?;
    let ignored = super::ignored::work(paths, worktree, base)?;
    super::ignored::add_forced(paths, worktree, &env, &ignored)?;
    let work_tree = run_env(paths, worktree, &["write-tree"], &env)?;
    let index_commit = commit_tree(
        paths,
        worktree,
        &env,
        &[&head],
        &format!("index on {branch} (tab {tab})"),
        &index_tree,
    )?;
    let message = format!(
        "nerdr: work of tab {tab} on {branch}, saved before removing its worktree\n\n\
         worktree: {}\n{}",
        worktree.display(),
        ignored_note(&ignored)
    );
    let commit = commit_tree(
        paths,
        worktree,
        &env,
        &[&head, &index_commit],
        &message,
        &work_tree,
    )?;
    // A new name each time: an earlier save is never overwritten.
    for n in 1..=1000 {
        let reference = match n {
            1 => format!("{PREFIX}{tab}"),
            n => format!("{PREFIX}{tab}-{n}"),
        };
        let made = run(
            paths,
            worktree,
            &[
                "update-ref",
                "-m",
                "nerdr: saved before removing a worktree",
                &reference,
                &commit,
                "",
            ],
        );
        match made {
            Ok(_) => {
                return Ok(Saved {
                    reference,
                    commit,
                    ignored,
                })
            }
            Err(GitError::Failed { .. }) if exists(worktree, &reference) => continue,
            Err(e) => return Err(e),
        }
    }
    Err(GitError::Failed {
        args: format!("update-ref {PREFIX}{tab}-N"),
        dir: worktree.to_path_buf(),
        stderr: "a thousand saved states of this tab exist already; delete old ones".into(),
    })
}

/// The lines of a save's message naming the ignored paths it holds.
fn ignored_note(ignored: &[String]) -> String {
    if ignored.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "\nignored, saved all the same (no .gitignore unchanged since the tab's base, \
         info/exclude or global excludes file ignores them):\n",
    );
    for p in ignored {
        s.push_str(&format!("  {}\n", crate::protocol::printable(p)));
    }
    s
}

/// An unsigned commit of `tree` with `parents`, in the order given.
fn commit_tree(
    paths: &Paths,
    worktree: &Path,
    env: &[(&str, &OsStr)],
    parents: &[&str],
    message: &str,
    tree: &str,
) -> Result<String, GitError> {
    let mut args = vec!["commit-tree", "--no-gpg-sign"];
    for p in parents {
        args.extend(["-p", p]);
    }
    args.extend(["-m", message, tree]);
    run_env(paths, worktree, &args, env)
}

fn exists(dir: &Path, reference: &str) -> bool {
    query(dir, &["rev-parse", "--verify", "--quiet", reference]).is_ok()
}

/// Copy a worktree's index (`from`, in a git dir an agent may write) to
/// `to`: only a regular file, opened without following a symlink and
/// without blocking (a FIFO there would hold the copy for ever). A
/// missing index copies nothing.
pub(super) fn copy_index(from: &Path, to: &Path) -> Result<(), GitError> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(from)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io(from, e)),
    };
    let regular = file
        .metadata()
        .map_err(|e| io(from, e))?
        .file_type()
        .is_file();
    if !regular {
        return Err(io(
            from,
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "the worktree's index is not a regular file, so its work cannot be read \
                 safely (remove it there; `git reset` rebuilds it)",
            ),
        ));
    }
    let mut out = std::fs::File::create(to).map_err(|e| io(to, e))?;
    std::io::copy(&mut file, &mut out).map_err(|e| io(from, e))?;
    Ok(())
}

pub(super) fn io(path: &Path, e: std::io::Error) -> GitError {
    GitError::Spawn(std::io::Error::new(
        e.kind(),
        format!("{}: {e}", path.display()),
    ))
}

/// A temporary index file in nerdr's state folder (no agent writes there),
/// removed when dropped.
pub(super) struct Scratch(pub(super) PathBuf);

impl Scratch {
    pub(super) fn new(paths: &Paths) -> Result<Scratch, GitError> {
        std::fs::create_dir_all(&paths.state_dir).map_err(|e| io(&paths.state_dir, e))?;
        let name = format!(
            "saving-{}-{}.index",
            std::process::id(),
            crate::protocol::handshake::random_hex(8)
        );
        Ok(Scratch(paths.state_dir.join(name)))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        let _ = std::fs::remove_file(self.0.with_extension("index.lock"));
    }
}

/// One saved state, as `nerdr saved` lists it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Entry {
    pub reference: String,
    pub commit: String,
    /// When it was saved (ISO 8601).
    pub date: String,
    pub subject: String,
}

/// The saved states of the repository around `dir`, oldest first.
pub fn list(dir: &Path) -> Result<Vec<Entry>, GitError> {
    let out = query(
        dir,
        &[
            "for-each-ref",
            "--sort=creatordate",
            "--format=%(refname)%09%(objectname)%09%(creatordate:iso-strict)%09%(contents:subject)",
            PREFIX,
        ],
    )?;
    Ok(parse_list(&out))
}

/// The lines of [`list`]'s `for-each-ref`: four tab-separated fields.
pub fn parse_list(out: &str) -> Vec<Entry> {
    out.lines()
        .filter_map(|line| {
            let mut f = line.splitn(4, '\t');
            Some(Entry {
                reference: f.next()?.to_string(),
                commit: f.next()?.to_string(),
                date: f.next()?.to_string(),
                subject: f.next().unwrap_or("").to_string(),
            })
        })
        .collect()
}

/// How to get a saved state back, as the person types it.
pub fn how_to_restore(reference: &str) -> String {
    format!(
        "`git checkout -b NAME {reference}` (as a branch), or `git stash apply {reference}` \
         (into the current worktree); `git update-ref -d {reference}` forgets it"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_lines_are_read() {
        let out =
            "refs/nerdr/saved/ab12\tc0ffee\t2026-12-01T14:00:00+00:00\tnerdr: work of tab ab12\n\
                   refs/nerdr/saved/ab12-2\tbeef\t2026-12-01T15:00:00+00:00\t\n\
                   garbage\n";
        let got = parse_list(out);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0].reference, "refs/nerdr/saved/ab12");
        assert_eq!(got[0].commit, "c0ffee");
        assert_eq!(got[0].subject, "nerdr: work of tab ab12");
        assert_eq!(got[1].subject, "");
    }

    #[test]
    fn a_save_message_names_the_ignored_paths_it_holds() {
        assert_eq!(ignored_note(&[]), "");
        let note = ignored_note(&["notes.txt".into(), "venv/".into()]);
        assert!(note.contains("\n  notes.txt\n  venv/\n"), "{note}");
    }
}
