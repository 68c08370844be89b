//! Sandbox history: which repositories a sandboxed agent has run in (or
//! had sandboxed work imported into), and every place such an agent could
//! write. Kept in `$XDG_STATE_HOME/nerdr/sandbox-history.json`, written
//! atomically under a lock, and never forgotten: closing tabs, removing
//! worktrees and restarting nerdr leave it as it is. An unreadable file is
//! an error (the guard then refuses), never an empty history.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

const VERSION: u32 = 1;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    pub version: u32,
    /// Keyed by the repository's canonical common git dir.
    pub repos: BTreeMap<PathBuf, RepoHistory>,
    /// Folders outside any repository a sandboxed agent could write: a
    /// repository that appears there later was made by the agent.
    #[serde(default)]
    pub folders: BTreeSet<PathBuf>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepoHistory {
    /// Microseconds since the epoch of the first record.
    pub since_us: u64,
    /// Worktrees (or the main checkout) a sandboxed agent could write.
    pub writable: BTreeSet<PathBuf>,
    #[serde(default)]
    pub imports: Vec<Import>,
    /// The main checkout's git dir(s) (usually the key itself) and top
    /// folder(s), as git reported them when history was recorded. A
    /// lookup by either finds this history even when git is later made to
    /// report another common dir (a `commondir` file planted in `.git`).
    #[serde(default)]
    pub git_dirs: BTreeSet<PathBuf>,
    #[serde(default)]
    pub toplevels: BTreeSet<PathBuf>,
    /// Paths inside writable places that every run able to write them kept
    /// read-only (a main checkout's `.git/config`, `.git/hooks`, ...): the
    /// guard does not count them as agent-writable. See [`History::note_run`].
    #[serde(default)]
    pub kept_read_only: BTreeSet<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Import {
    /// Where the imported work was made (agent-writable).
    pub from: PathBuf,
    pub at_us: u64,
}

/// Where git finds its repository from a folder, canonical: the facts a
/// history lookup and a record are made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// What git reports as the common dir (it follows a `commondir` file).
    pub common_dir: PathBuf,
    pub git_dir: PathBuf,
    /// The working tree's top folder, when there is one.
    pub toplevel: Option<PathBuf>,
}

impl Location {
    /// The main checkout's git dir: the common dir when `git_dir` is one
    /// of its linked worktrees (`<common>/worktrees/<name>`), else the git
    /// dir itself.
    pub fn main_git_dir(&self) -> &Path {
        if is_linked(&self.git_dir, &self.common_dir) {
            &self.common_dir
        } else {
            &self.git_dir
        }
    }
}

/// Whether `git_dir` is the admin folder of a linked worktree of the
/// repository whose common dir is `common_dir`.
pub fn is_linked(git_dir: &Path, common_dir: &Path) -> bool {
    git_dir.parent() == Some(&common_dir.join("worktrees"))
}

/// How a folder relates to the history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// Neither the repository nor the folder was ever agent-writable.
    Clean,
    /// The repository has sandbox history, recorded under this common dir
    /// (which git in the folder may no longer report: the verdict compares).
    Recorded { common_dir: PathBuf },
    /// The repository git finds is not one with history, but it (or the
    /// folder) lies in a place a sandboxed agent could write: the agent may
    /// have made it, or pointed a worktree's `.git` file at it.
    InWritablePlace { place: PathBuf },
}

impl History {
    /// Where `dir` stands, git having found `at` there (None: outside any
    /// repository). A repository is found by its common dir, by its main
    /// git dir (or a linked worktree's admin folder inside it), or by its
    /// main top folder: a planted `commondir` file changes the first but
    /// neither of the others.
    pub fn standing(&self, at: Option<&Location>, dir: &Path) -> Standing {
        let Some(at) = at else {
            return self.in_writable(&[dir]);
        };
        if self.repos.contains_key(&at.common_dir) {
            return Standing::Recorded {
                common_dir: at.common_dir.clone(),
            };
        }
        let by_git_dir = |key: &Path, r: &RepoHistory| {
            std::iter::once(key)
                .chain(r.git_dirs.iter().map(PathBuf::as_path))
                .any(|g| at.git_dir == g || is_linked(&at.git_dir, g))
        };
        let by_top = |r: &RepoHistory| {
            at.toplevel
                .as_ref()
                .is_some_and(|t| r.toplevels.contains(t))
        };
        if let Some((key, _)) = self
            .repos
            .iter()
            .find(|(key, r)| by_git_dir(key, r) || by_top(r))
        {
            return Standing::Recorded {
                common_dir: key.clone(),
            };
        }
        self.in_writable(&[&at.common_dir, &at.git_dir, dir])
    }

    fn in_writable(&self, paths: &[&Path]) -> Standing {
        let places = self.writable();
        let kept = self.kept_read_only();
        for p in paths {
            if let Some(w) = writable_place(&places, &kept, p) {
                return Standing::InWritablePlace {
                    place: w.to_path_buf(),
                };
            }
        }
        Standing::Clean
    }

    /// Every path a run kept read-only inside the place it could write, and
    /// that every other run able to write it kept read-only too.
    pub fn kept_read_only(&self) -> Vec<&Path> {
        self.repos
            .values()
            .flat_map(|r| r.kept_read_only.iter().map(PathBuf::as_path))
            .collect()
    }

    /// Whether `dir` lies inside a place this history names (a
    /// repository's folder, top folder or an agent-writable place): then
    /// the guard will most likely need the folder's configuration. A guess
    /// for speed only; [`History::standing`] decides.
    pub fn may_concern(&self, dir: &Path) -> bool {
        let mut places = self.repos.iter().flat_map(|(key, r)| {
            key.parent()
                .into_iter()
                .chain(r.git_dirs.iter().filter_map(|g| g.parent()))
                .chain(r.toplevels.iter().map(PathBuf::as_path))
        });
        places.any(|p| dir.starts_with(p)) || self.writable().iter().any(|w| dir.starts_with(w))
    }

    /// Every place a sandboxed agent could write, in any repository.
    pub fn writable(&self) -> Vec<&Path> {
        let mut out: Vec<&Path> = self.folders.iter().map(PathBuf::as_path).collect();
        for r in self.repos.values() {
            out.extend(r.writable.iter().map(PathBuf::as_path));
            out.extend(r.imports.iter().map(|i| i.from.as_path()));
        }
        out
    }

    /// A new writable `place` whose run kept `kept` read-only: what else
    /// inside it no longer counts as kept read-only.
    fn drop_kept_within(&mut self, place: &Path, kept: &[PathBuf]) {
        for r in self.repos.values_mut() {
            r.kept_read_only
                .retain(|q| !q.starts_with(place) || kept.contains(q));
        }
    }

    fn repo(&mut self, common_dir: &Path, now_us: u64) -> &mut RepoHistory {
        self.repos
            .entry(common_dir.to_path_buf())
            .or_insert_with(|| RepoHistory {
                since_us: now_us,
                ..Default::default()
            })
    }

    /// A sandboxed agent runs with `writable` writable, in the repository
    /// git found at `at` (None: outside any repository), whose main
    /// checkout's top folder is `main_top` (None: bare), with `kept` (the
    /// paths the sandbox binds read-only; none when nerdr cannot know, as
    /// for an agent under a user's own wrapper) out of its reach.
    ///
    /// A path stays "kept read-only" only while every recorded run whose
    /// writable place covers it kept it so: this run drops those it could
    /// write, and adds those it kept only where no place recorded before
    /// covered them (an earlier run may have written them).
    pub fn note_run(
        &mut self,
        at: Option<(&Location, Option<&Path>)>,
        writable: &Path,
        kept: &[PathBuf],
        now_us: u64,
    ) {
        let before: Vec<PathBuf> = self.writable().iter().map(|p| p.to_path_buf()).collect();
        self.drop_kept_within(writable, kept);
        match at {
            Some((at, main_top)) => {
                let r = self.repo(&at.common_dir, now_us);
                for q in kept {
                    if q.starts_with(writable) && !before.iter().any(|w| q.starts_with(w)) {
                        r.kept_read_only.insert(q.clone());
                    }
                }
                r.writable.insert(writable.to_path_buf());
                r.git_dirs.insert(at.main_git_dir().to_path_buf());
                if let Some(t) = main_top {
                    r.toplevels.insert(t.to_path_buf());
                }
            }
            None => {
                self.folders.insert(writable.to_path_buf());
            }
        }
    }

    /// Sandboxed work made in `from` is imported into the repository at
    /// `common_dir`.
    pub fn note_import(
        &mut self,
        at: &Location,
        main_top: Option<&Path>,
        from: &Path,
        now_us: u64,
    ) {
        self.drop_kept_within(from, &[]);
        let r = self.repo(&at.common_dir, now_us);
        r.git_dirs.insert(at.main_git_dir().to_path_buf());
        if let Some(t) = main_top {
            r.toplevels.insert(t.to_path_buf());
        }
        if !r.imports.iter().any(|i| i.from == from) {
            r.imports.push(Import {
                from: from.to_path_buf(),
                at_us: now_us,
            });
        }
    }
}

/// The place in `places` through which a sandboxed agent could write `p`:
/// one that holds `p` without a path kept read-only inside that place also
/// holding it. (A path kept read-only shields only within places that hold
/// it whole: a place inside it was writable.)
pub fn writable_place<'a>(places: &[&'a Path], kept: &[&Path], p: &Path) -> Option<&'a Path> {
    places
        .iter()
        .copied()
        .find(|w| p.starts_with(w) && !kept.iter().any(|q| q.starts_with(w) && p.starts_with(q)))
}

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error(
        "cannot read the sandbox history {file}: {reason}; nerdr refuses host git until it can \
         (fix or restore the file; deleting it forgets which repositories sandboxed agents wrote)"
    )]
    Unreadable { file: PathBuf, reason: String },
    #[error("cannot record sandbox history in {file}: {reason}")]
    Unwritable { file: PathBuf, reason: String },
}

pub fn file(state_dir: &Path) -> PathBuf {
    state_dir.join("sandbox-history.json")
}

/// The history in `state_dir`; empty when there is none yet.
pub fn load(state_dir: &Path) -> Result<History, HistoryError> {
    let f = file(state_dir);
    let unreadable = |reason: String| HistoryError::Unreadable {
        file: f.clone(),
        reason,
    };
    match std::fs::read(&f) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(History {
            version: VERSION,
            ..Default::default()
        }),
        Err(e) => Err(unreadable(e.to_string())),
        Ok(bytes) => {
            let h: History =
                serde_json::from_slice(&bytes).map_err(|e| unreadable(e.to_string()))?;
            if h.version != VERSION {
                return Err(unreadable(format!(
                    "version {} (this nerdr knows version {VERSION})",
                    h.version
                )));
            }
            Ok(h)
        }
    }
}

/// Change the history under an exclusive lock, then replace the file in
/// one rename (a crash leaves the old file or the new one, never half).
pub fn update(state_dir: &Path, change: impl FnOnce(&mut History)) -> Result<(), HistoryError> {
    let f = file(state_dir);
    let unwritable = |reason: String| HistoryError::Unwritable {
        file: f.clone(),
        reason,
    };
    std::fs::create_dir_all(state_dir).map_err(|e| unwritable(e.to_string()))?;
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(state_dir.join("sandbox-history.lock"))
        .map_err(|e| unwritable(e.to_string()))?;
    let _held = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| unwritable(format!("cannot lock: {e}")))?;
    let mut h = load(state_dir).map_err(|e| unwritable(e.to_string()))?;
    change(&mut h);
    let text = serde_json::to_vec_pretty(&h).map_err(|e| unwritable(e.to_string()))?;
    let tmp = state_dir.join(".sandbox-history.json.tmp");
    let written = std::fs::File::create(&tmp).and_then(|mut t| {
        t.write_all(&text)?;
        t.sync_all()
    });
    written
        .and_then(|_| std::fs::rename(&tmp, &f))
        .map_err(|e| unwritable(e.to_string()))
}

pub fn now_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;
