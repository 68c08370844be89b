//! Host git for bringing a sandboxed program's work home from its private
//! object store and refs (`sandbox::private_git`) into the repository.
//!
//! Every object is copied by `git pack-objects` reading the private store
//! and `git index-pack` writing the repository: index-pack computes each
//! object's name from its content (and checks it with fsck), so an object
//! the program stored under a false name cannot take the place of the
//! user's content. Refs move only by compare-and-swap (`update-ref NEW
//! OLD`). These commands run no program the configuration names (no
//! hooks: `core.hooksPath=/dev/null`; no filters, diff or merge drivers,
//! no transport), so like [`super::query`] they need no guard verdict;
//! each runs pinned to the common dir (`GIT_DIR`), never where a `.git`
//! file or `commondir` would lead.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::{command_with, finish_or_stop, text, GitError};

/// The repository work comes home to, and what git takes for its
/// `shallow` file. A main checkout's `.git` is writable inside the
/// sandbox: a `shallow` file planted there while the program runs would
/// make host git take an incomplete history for a complete one (and grafts
/// are kept out by a read-only `info`). So host git reads the one the
/// repository had when the run started, copied outside the sandbox's reach
/// (a path that does not exist: not shallow).
#[derive(Debug, Clone)]
pub struct Repo {
    pub common: PathBuf,
    pub shallow: PathBuf,
    /// Once set, a git command still running is stopped: the program has
    /// ended, and what it planted (a FIFO where git reads) must not hold
    /// `nerdr sandbox` up.
    pub stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

/// The commands this module may run.
const ALLOWED: &[&str] = &[
    "cat-file",
    "for-each-ref",
    "index-pack",
    "merge-base",
    "pack-objects",
    "rev-list",
    "update-ref",
];

/// `git ARGS` on the repository whose common dir is `common`; with
/// `store`, reading (only) that object store.
fn git<S: AsRef<OsStr>>(repo: &Repo, store: Option<&Path>, args: &[S]) -> Command {
    let first = args.first().and_then(|a| a.as_ref().to_str()).unwrap_or("");
    assert!(
        ALLOWED.contains(&first),
        "git {first} is not an import command"
    );
    let common = repo.common.as_path();
    let mut shallow = vec![std::ffi::OsString::from("--shallow-file")];
    shallow.push(repo.shallow.clone().into_os_string());
    shallow.extend(args.iter().map(|a| a.as_ref().to_os_string()));
    let mut c = command_with(common, &[], &shallow);
    // Pinned: a `commondir` planted in a main checkout's `.git` while the
    // program runs sends git elsewhere only without `GIT_COMMON_DIR`.
    c.env("GIT_DIR", common)
        .env("GIT_COMMON_DIR", common)
        .env("GIT_NO_REPLACE_OBJECTS", "1");
    if let Some(s) = store {
        c.env("GIT_OBJECT_DIRECTORY", s)
            .env("GIT_ALTERNATE_OBJECT_DIRECTORIES", common.join("objects"));
    }
    c
}

fn run<S: AsRef<OsStr>>(
    common: &Repo,
    store: Option<&Path>,
    args: &[S],
    stdin: Option<&Path>,
) -> Result<String, GitError> {
    let mut c = git(common, store, args);
    if let Some(f) = stdin {
        c.stdin(Stdio::from(
            std::fs::File::open(f).map_err(GitError::Spawn)?,
        ));
    }
    finish_or_stop(c, &common.common, args, common.stop.as_deref()).map(text)
}

/// The repository's branches: `refs/heads/...` → object id.
pub fn branches(common: &Repo) -> Result<BTreeMap<String, String>, GitError> {
    let out = run(
        common,
        None,
        &[
            "for-each-ref",
            "--format=%(objectname) %(refname)",
            "refs/heads",
        ],
        None,
    )?;
    Ok(out
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(id, name)| (name.to_string(), id.to_string()))
        .collect())
}

/// Every object the private store holds (not those of its alternates).
pub fn store_objects(common: &Repo, store: &Path) -> Result<Vec<String>, GitError> {
    let mut c = git(
        common,
        Some(store),
        &[
            "cat-file",
            "--batch-all-objects",
            "--batch-check=%(objectname)",
        ],
    );
    // Only the store itself: its alternates file names an empty folder
    // outside the sandbox.
    c.env_remove("GIT_ALTERNATE_OBJECT_DIRECTORIES");
    let out = finish_or_stop(
        c,
        &common.common,
        &["cat-file", "--batch-all-objects"],
        common.stop.as_deref(),
    )
    .map(text)?;
    Ok(out.lines().map(String::from).collect())
}

/// Of `ids`, those the repository lacks (`work` holds the list meanwhile).
pub fn missing(common: &Repo, ids: &[String], work: &Path) -> Result<Vec<String>, GitError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let list = work.join("ids");
    std::fs::write(&list, ids.join("\n") + "\n").map_err(GitError::Spawn)?;
    let out = run(
        common,
        None,
        &["cat-file", "--batch-check=%(objectname)"],
        Some(&list),
    )?;
    Ok(out
        .lines()
        .filter_map(|l| l.strip_suffix(" missing"))
        .filter(|id| !id.is_empty())
        .map(String::from)
        .collect())
}

/// What to copy from the private store.
pub enum Objects<'a> {
    /// These objects (the whole store, once the program has ended).
    Listed(&'a [String]),
    /// What `tips` reach that the repository's `not` do not (while the
    /// program runs: nothing but what its refs name is read).
    Reachable {
        tips: &'a [&'a str],
        not: &'a [&'a str],
    },
}

/// Copy objects from the private `store` into the repository; `work` is a
/// folder for the pack on its way. Returns how many objects were copied.
pub fn copy(common: &Repo, store: &Path, what: Objects, work: &Path) -> Result<usize, GitError> {
    let list = work.join("pack-input");
    let (input, revs) = match what {
        Objects::Listed([]) => return Ok(0),
        Objects::Listed(ids) => (ids.join("\n") + "\n", false),
        Objects::Reachable { tips, not } => {
            let mut s: String = tips.iter().map(|t| format!("{t}\n")).collect();
            s.push_str("--not\n");
            s.extend(not.iter().map(|n| format!("{n}\n")));
            (s, true)
        }
    };
    std::fs::write(&list, input).map_err(GitError::Spawn)?;
    let base = work.join("out");
    let mut args = vec!["pack-objects", "-q", "--local"];
    if revs {
        args.push("--revs");
    }
    let base_arg = base.display().to_string();
    args.push(&base_arg);
    let hash = run(common, Some(store), &args, Some(&list))?;
    let pack = work.join(format!("out-{}.pack", hash.trim()));
    let idx = pack.with_extension("idx");
    let count = count_objects(&idx);
    if count > 0 {
        run(
            common,
            None,
            &["index-pack", "--stdin", "--fsck-objects"],
            Some(&pack),
        )?;
    }
    let _ = std::fs::remove_file(&pack);
    let _ = std::fs::remove_file(&idx);
    Ok(count)
}

/// The object count of a version 2 pack index (0 when unreadable).
fn count_objects(idx: &Path) -> usize {
    // Header (8 bytes), then 256 cumulative counts; the last is the total.
    std::fs::read(idx)
        .ok()
        .and_then(|b| b.get(8 + 255 * 4..8 + 256 * 4).map(<[u8]>::to_vec))
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .unwrap_or(0)
}

/// Whether everything `tip` reaches is in the repository.
pub fn complete(common: &Repo, tip: &str) -> bool {
    run(
        common,
        None,
        &[
            "rev-list",
            "--objects",
            "--quiet",
            tip,
            "--not",
            "--branches",
            "--tags",
        ],
        None,
    )
    .is_ok()
}

/// Whether `id` has commits no branch or tag of the repository reaches.
pub fn unreachable(common: &Repo, id: &str) -> bool {
    run(
        common,
        None,
        &["rev-list", "-n1", id, "--not", "--branches", "--tags"],
        None,
    )
    .is_ok_and(|out| !out.is_empty())
}

/// Whether `old` is an ancestor of `new`.
pub fn is_ancestor(common: &Repo, old: &str, new: &str) -> bool {
    run(
        common,
        None,
        &["merge-base", "--is-ancestor", old, new],
        None,
    )
    .is_ok()
}

/// Set `name` to `new` if it still holds `old` (None: if it does not
/// exist); without `old`, whatever it holds.
pub fn update_ref(
    common: &Repo,
    name: &str,
    new: &str,
    old: Option<Option<&str>>,
    why: &str,
) -> Result<(), GitError> {
    let zero = "0".repeat(new.len());
    let mut args = vec!["update-ref", "-m", why, name, new];
    match old {
        Some(Some(o)) => args.push(o),
        Some(None) => args.push(&zero),
        None => {}
    }
    run(common, None, &args, None).map(|_| ())
}
