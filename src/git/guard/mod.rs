//! The host git guard: in a repository where a sandboxed agent has worked,
//! nerdr runs no git command that could run a program the agent planted.
//! This module gathers the facts (history, the configuration git would
//! use, attribute files) with queries that run no configured program, and
//! hands them to the pure [`verdict::decide`].
//! Recording history is here too: [`record_run`] (by the core before it
//! launches a sandboxed agent, and by `nerdr sandbox` itself before its
//! program starts), [`record_import`].

mod attributes;
mod boolean;
pub mod config;
pub mod history;
pub mod verdict;

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::git::op::Op;
use crate::git::query;
use history::{HistoryError, Location, Standing};
use verdict::{Facts, Reason, Rule, Verdict};

/// The guard's answer for one operation in one folder.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The repository's common git dir, when `dir` is in one.
    pub repo: Option<PathBuf>,
    pub standing: Standing,
    pub verdict: Verdict,
    /// The repository the guard checked, which the runner hands git in
    /// its environment: an agent that rewrites a worktree's `.git` file or
    /// plants a `commondir` file between the check and the run cannot
    /// send git to a repository nobody checked.
    pub pin: Option<Pin>,
    /// Filter drivers the config names, to run with their commands emptied:
    /// the verdict found no content that uses them, but an agent may move
    /// a branch between the check and the run.
    pub disarm: Vec<String>,
}

/// `GIT_DIR`, `GIT_COMMON_DIR` and (where there is one) `GIT_WORK_TREE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    pub git_dir: PathBuf,
    pub common_dir: PathBuf,
    pub work_tree: Option<PathBuf>,
}

impl Pin {
    fn of(at: &Location) -> Pin {
        Pin {
            git_dir: at.git_dir.clone(),
            common_dir: at.common_dir.clone(),
            work_tree: at.toplevel.clone(),
        }
    }
}

fn canon(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Where git finds its repository from `dir` (canonical), in one
/// `rev-parse` (`--show-toplevel` would fail outside a work tree).
fn locate(dir: &Path) -> Option<Location> {
    let out = query(
        dir,
        &[
            "rev-parse",
            "--path-format=absolute",
            "--git-common-dir",
            "--git-dir",
            "--is-inside-work-tree",
            "--show-cdup",
        ],
    )
    .ok()?;
    let mut lines = out.lines();
    let common_dir = canon(Path::new(lines.next()?));
    let git_dir = canon(Path::new(lines.next()?));
    let toplevel = match lines.next()? {
        "true" => Some(canon(&dir.join(lines.next().unwrap_or("")))),
        _ => None,
    };
    Some(Location {
        common_dir,
        git_dir,
        toplevel,
    })
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
}

/// Whether sandboxed agents have worked in the repository around `dir` (or
/// could write `dir`): what is there may be their work. Fails closed: an
/// unreadable history counts as history.
pub fn has_history(state_dir: &Path, dir: &Path) -> bool {
    let dir = canon(dir);
    match history::load(state_dir) {
        Ok(h) => h.standing(locate(&dir).as_ref(), &dir) != Standing::Clean,
        Err(_) => true,
    }
}

/// Decide whether nerdr may run `op` in `dir`, with the history kept in
/// `state_dir`. Fails closed: a history or config it cannot read refuses.
pub fn check(state_dir: &Path, dir: &Path, op: Op) -> Checked {
    if op == Op::Query {
        return Checked {
            repo: None,
            standing: Standing::Clean,
            verdict: Verdict::Allow,
            pin: None,
            disarm: Vec::new(),
        };
    }
    let dir = canon(dir);
    let history = history::load(state_dir);
    // Where the history likely concerns the folder, the configuration is
    // read alongside the location (two gits at once): it is needed then.
    // Only a guess for speed: if it misses, the config is read after.
    let guess = matches!(&history, Ok(h) if h.may_concern(&dir));
    let (located, early_entries) = std::thread::scope(|s| {
        let entries = guess.then(|| s.spawn(|| config::gather(&dir)));
        let located = locate(&dir);
        (located, entries.and_then(|t| t.join().ok()))
    });
    let repo = located.as_ref().map(|at| at.common_dir.clone());
    let pin = located.as_ref().map(Pin::of);
    let refuse = |repo: &Option<PathBuf>, standing: Standing, reason: Reason| Checked {
        repo: repo.clone(),
        standing,
        verdict: Verdict::Refuse(vec![reason]),
        pin: None,
        disarm: Vec::new(),
    };
    let history = match history {
        Ok(h) => h,
        Err(e) => {
            return refuse(
                &repo,
                Standing::Recorded {
                    common_dir: repo.clone().unwrap_or_else(|| dir.clone()),
                },
                unreadable(&e, state_dir),
            )
        }
    };
    let standing = history.standing(located.as_ref(), &dir);
    // Name the repository the history knows, not wherever a planted
    // `commondir` sends git.
    let repo = match &standing {
        Standing::Recorded { common_dir } => Some(common_dir.clone()),
        _ => repo,
    };
    if standing == Standing::Clean {
        return Checked {
            repo,
            standing,
            verdict: Verdict::Allow,
            pin,
            disarm: Vec::new(),
        };
    }
    let entries = match early_entries.unwrap_or_else(|| config::gather(&dir)) {
        Ok(e) => e,
        Err(e) => {
            return refuse(
                &repo,
                standing,
                Reason {
                    rule: Rule::Unreadable,
                    setting: "config".into(),
                    value: String::new(),
                    origin: dir.display().to_string(),
                    why: format!("cannot read the configuration git would use: {e}"),
                    todo: "fix the repository's config so `git config --list` works there".into(),
                },
            )
        }
    };
    let home = home();
    let drivers = verdict::configured_filters(&entries);
    let filter_uses = match (&located, op.converts() && !drivers.is_empty()) {
        (Some(at), true) => attributes::gather(&dir, at, &entries, home.as_deref(), &drivers),
        _ => Vec::new(),
    };
    let commondir_file = located
        .as_ref()
        .is_some_and(|at| at.git_dir.join("commondir").symlink_metadata().is_ok());
    let writable = history.writable();
    let kept_read_only = history.kept_read_only();
    let in_writable = history::writable_place(&writable, &kept_read_only, &dir).is_some();
    let gitmodules = match &located {
        Some(at) if in_writable && op.may_enter_submodules() => gitmodules(&dir, at),
        _ => None,
    };
    let verdict = verdict::decide(&Facts {
        standing: &standing,
        op,
        location: located.as_ref(),
        commondir_file,
        entries: &entries,
        writable: &writable,
        kept_read_only: &kept_read_only,
        cwd: &dir,
        home: home.as_deref(),
        filter_uses: &filter_uses,
        gitmodules: gitmodules.as_deref(),
        realpath: &realpath,
    });
    let pin = match verdict {
        Verdict::Allow => pin,
        Verdict::Refuse(_) => None,
    };
    Checked {
        repo,
        standing,
        verdict,
        pin,
        disarm: drivers,
    }
}

/// Where git would read submodule settings from: the working tree's
/// `.gitmodules`, else the index's, else HEAD's.
fn gitmodules(dir: &Path, at: &Location) -> Option<String> {
    if let Some(top) = &at.toplevel {
        let file = top.join(".gitmodules");
        if file.symlink_metadata().is_ok() {
            return Some(file.display().to_string());
        }
    }
    [":.gitmodules", "HEAD:.gitmodules"]
        .into_iter()
        .find(|spec| query(dir, &["cat-file", "-e", spec]).is_ok())
        .map(String::from)
}

/// `p` with symlinks resolved as far as it exists; the rest (a file an
/// agent may write later) appended as written.
fn realpath(p: &Path) -> PathBuf {
    let mut tail = Vec::new();
    let mut head = p;
    loop {
        if let Ok(real) = std::fs::canonicalize(head) {
            return tail.iter().rev().fold(real, |acc, c| acc.join(c));
        }
        match (head.parent(), head.file_name()) {
            (Some(parent), Some(name)) => {
                tail.push(name.to_os_string());
                head = parent;
            }
            _ => return p.to_path_buf(),
        }
    }
}

fn unreadable(e: &HistoryError, state_dir: &Path) -> Reason {
    Reason {
        rule: Rule::Unreadable,
        setting: "sandbox history".into(),
        value: String::new(),
        origin: history::file(state_dir).display().to_string(),
        why: e.to_string(),
        todo: "until then nerdr runs no host git".into(),
    }
}

/// A sandboxed agent is about to run in `dir`: the repository there (or,
/// outside any, the folder) gets sandbox history under its common dir, its
/// main git dir and its main top folder, and the place the agent can write
/// (its worktree, or the main checkout) is remembered for good, with what
/// in it the sandbox keeps read-only (`kept`: `nerdr sandbox` knows; the
/// core, starting an agent under a wrapper it does not know, passes none).
pub fn record_run(state_dir: &Path, dir: &Path, kept: &[PathBuf]) -> Result<(), HistoryError> {
    let dir = canon(dir);
    let located = locate(&dir);
    let writable = located
        .as_ref()
        .and_then(|at| at.toplevel.clone())
        .unwrap_or_else(|| dir.clone());
    let main_top = located.as_ref().and_then(main_toplevel);
    let kept: Vec<PathBuf> = kept.iter().map(|p| canon(p)).collect();
    let now = history::now_us();
    history::update(state_dir, |h| {
        h.note_run(
            located.as_ref().map(|at| (at, main_top.as_deref())),
            &writable,
            &kept,
            now,
        )
    })
}

/// The main checkout's top folder: the folder itself, or, from a linked
/// worktree, the first entry `git worktree list` gives (None: bare).
fn main_toplevel(at: &Location) -> Option<PathBuf> {
    if !history::is_linked(&at.git_dir, &at.common_dir) {
        return at.toplevel.clone();
    }
    let out =
        crate::git::query_bytes(&at.common_dir, &["worktree", "list", "--porcelain", "-z"]).ok()?;
    // The first record (up to an empty field) is the main worktree;
    // `bare` in it means there is no main working tree.
    let first: Vec<&[u8]> = out
        .split(|b| *b == 0)
        .take_while(|f| !f.is_empty())
        .collect();
    let path = first.first()?.strip_prefix(b"worktree ")?;
    let bare = first.iter().any(|f| *f == b"bare");
    (!bare).then(|| canon(Path::new(std::ffi::OsStr::from_bytes(path))))
}

/// Sandboxed work made in `from` is imported into the repository at
/// `dest`: it gets sandbox history even if no agent ever starts there.
/// (No import command exists yet; this is its hook.)
#[allow(dead_code)]
pub fn record_import(state_dir: &Path, dest: &Path, from: &Path) -> Result<(), HistoryError> {
    let Some(at) = locate(dest) else {
        return Err(HistoryError::Unwritable {
            file: history::file(state_dir),
            reason: format!("{} is not in a git repository", dest.display()),
        });
    };
    let from = canon(from);
    let main_top = main_toplevel(&at);
    let now = history::now_us();
    history::update(state_dir, |h| {
        h.note_import(&at, main_top.as_deref(), &from, now)
    })
}

#[cfg(test)]
mod tests;
