//! The host git guard: in a repository where a sandboxed agent has worked,
//! nerdr runs no git command that could run a program the agent planted
//! (DESIGN.md, "Host git guard"). This module gathers the facts (history,
//! the configuration git would use, attribute files) with queries that run
//! no configured program, and hands them to the pure [`verdict::decide`].
//! Recording history is here too: [`record_run`], [`record_import`].

mod attributes;
pub mod config;
pub mod history;
pub mod verdict;

use std::path::{Path, PathBuf};

use crate::git::op::Op;
use crate::git::query;
use history::{HistoryError, Standing};
use verdict::{Facts, Reason, Rule, Verdict};

/// The guard's answer for one operation in one folder.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The repository's common git dir, when `dir` is in one.
    pub repo: Option<PathBuf>,
    pub standing: Standing,
    pub verdict: Verdict,
    /// When git runs inside an agent-writable place (an agent's worktree),
    /// the git dir and work tree the guard checked: the runner passes them
    /// as `GIT_DIR`/`GIT_WORK_TREE`, so an agent that rewrites the
    /// worktree's `.git` file between the check and the run cannot send
    /// git to a repository nobody checked.
    pub pin: Option<(PathBuf, PathBuf)>,
}

/// Where git finds its repository from `dir`: (common dir, git dir),
/// canonical.
fn locate(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let out = query(
        dir,
        &[
            "rev-parse",
            "--path-format=absolute",
            "--git-common-dir",
            "--git-dir",
        ],
    )
    .ok()?;
    let mut lines = out.lines();
    let canon = |p: &str| std::fs::canonicalize(p).unwrap_or_else(|_| PathBuf::from(p));
    let common = canon(lines.next()?);
    let git_dir = canon(lines.next()?);
    Some((common, git_dir))
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
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
        };
    }
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let located = locate(&dir);
    let repo = located.as_ref().map(|(c, _)| c.clone());
    let refuse = |standing: Standing, reason: Reason| Checked {
        repo: repo.clone(),
        standing,
        verdict: Verdict::Refuse(vec![reason]),
        pin: None,
    };
    let history = match history::load(state_dir) {
        Ok(h) => h,
        Err(e) => return refuse(Standing::Recorded, unreadable(&e, state_dir)),
    };
    let standing = match &located {
        Some((common, git_dir)) => history.standing(common, git_dir, &dir),
        None => history.standing(&dir, &dir, &dir),
    };
    if standing == Standing::Clean {
        return Checked {
            repo,
            standing,
            verdict: Verdict::Allow,
            pin: None,
        };
    }
    let entries = match config::gather(&dir) {
        Ok(e) => e,
        Err(e) => {
            return refuse(
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
        (Some((common, _)), true) => {
            attributes::gather(&dir, common, &entries, home.as_deref(), &drivers)
        }
        _ => Vec::new(),
    };
    let writable = history.writable();
    let verdict = verdict::decide(&Facts {
        standing: &standing,
        op,
        entries: &entries,
        writable: &writable,
        cwd: &dir,
        home: home.as_deref(),
        filter_uses: &filter_uses,
        realpath: &realpath,
    });
    let in_writable = writable.iter().any(|w| dir.starts_with(w));
    let pin = match (&located, &verdict, in_writable) {
        (Some((_, git_dir)), Verdict::Allow, true) => {
            query(&dir, &["rev-parse", "--show-toplevel"])
                .ok()
                .map(|top| (git_dir.clone(), PathBuf::from(top)))
        }
        _ => None,
    };
    Checked {
        repo,
        standing,
        verdict,
        pin,
    }
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
/// outside any, the folder) gets sandbox history, and the place it can
/// write (its worktree, or the main checkout) is remembered for good.
pub fn record_run(state_dir: &Path, dir: &Path) -> Result<(), HistoryError> {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let (common, writable) = match locate(&dir) {
        Some((common, _)) => {
            let top = query(&dir, &["rev-parse", "--show-toplevel"])
                .ok()
                .map(|t| std::fs::canonicalize(&t).unwrap_or_else(|_| PathBuf::from(t)))
                .unwrap_or_else(|| dir.clone());
            (Some(common), top)
        }
        None => (None, dir.clone()),
    };
    let now = history::now_us();
    history::update(state_dir, |h| h.note_run(common.as_deref(), &writable, now))
}

/// Sandboxed work made in `from` is imported into the repository at
/// `dest`: it gets sandbox history even if no agent ever starts there.
/// (No import command exists yet; this is its hook.)
#[allow(dead_code)]
pub fn record_import(state_dir: &Path, dest: &Path, from: &Path) -> Result<(), HistoryError> {
    let Some((common, _)) = locate(dest) else {
        return Err(HistoryError::Unwritable {
            file: history::file(state_dir),
            reason: format!("{} is not in a git repository", dest.display()),
        });
    };
    let from = std::fs::canonicalize(from).unwrap_or_else(|_| from.to_path_buf());
    let now = history::now_us();
    history::update(state_dir, |h| h.note_import(&common, &from, now))
}

#[cfg(test)]
mod tests;
