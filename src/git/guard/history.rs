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
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Import {
    /// Where the imported work was made (agent-writable).
    pub from: PathBuf,
    pub at_us: u64,
}

/// How a folder relates to the history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// Neither the repository nor the folder was ever agent-writable.
    Clean,
    /// The repository has sandbox history.
    Recorded,
    /// The repository git finds is not one with history, but it (or the
    /// folder) lies in a place a sandboxed agent could write: the agent may
    /// have made it, or pointed a worktree's `.git` file at it.
    InWritablePlace { place: PathBuf },
}

impl History {
    /// Where `dir` stands: `common_dir` and `git_dir` as git resolved them
    /// there (canonical).
    pub fn standing(&self, common_dir: &Path, git_dir: &Path, dir: &Path) -> Standing {
        if self.repos.contains_key(common_dir) {
            return Standing::Recorded;
        }
        let places = self.writable();
        for p in [common_dir, git_dir, dir] {
            if let Some(w) = places.iter().find(|w| p.starts_with(w)) {
                return Standing::InWritablePlace {
                    place: w.to_path_buf(),
                };
            }
        }
        Standing::Clean
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

    fn repo(&mut self, common_dir: &Path, now_us: u64) -> &mut RepoHistory {
        self.repos
            .entry(common_dir.to_path_buf())
            .or_insert_with(|| RepoHistory {
                since_us: now_us,
                ..Default::default()
            })
    }

    /// A sandboxed agent runs with `writable` writable, in the repository
    /// at `common_dir` (None: outside any repository).
    pub fn note_run(&mut self, common_dir: Option<&Path>, writable: &Path, now_us: u64) {
        match common_dir {
            Some(c) => {
                self.repo(c, now_us).writable.insert(writable.to_path_buf());
            }
            None => {
                self.folders.insert(writable.to_path_buf());
            }
        }
    }

    /// Sandboxed work made in `from` is imported into the repository at
    /// `common_dir`.
    pub fn note_import(&mut self, common_dir: &Path, from: &Path, now_us: u64) {
        let r = self.repo(common_dir, now_us);
        if !r.imports.iter().any(|i| i.from == from) {
            r.imports.push(Import {
                from: from.to_path_buf(),
                at_us: now_us,
            });
        }
    }
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
mod tests {
    use super::*;

    fn with_run() -> History {
        let mut h = History::default();
        h.note_run(Some(Path::new("/r/.git")), Path::new("/data/wt/r/a"), 1);
        h.note_run(None, Path::new("/scratch"), 2);
        h
    }

    #[test]
    fn standing_of_each_kind_of_folder() {
        let h = with_run();
        let rows: &[(&str, &str, &str, Standing)] = &[
            ("/r/.git", "/r/.git", "/r", Standing::Recorded),
            (
                "/r/.git",
                "/r/.git/worktrees/b",
                "/data/wt/r/b",
                Standing::Recorded,
            ),
            ("/o/.git", "/o/.git", "/o", Standing::Clean),
            (
                // The agent's worktree `.git` file points at a repository it made.
                "/data/wt/r/a/fake.git",
                "/data/wt/r/a/fake.git",
                "/data/wt/r/a",
                Standing::InWritablePlace {
                    place: "/data/wt/r/a".into(),
                },
            ),
            (
                "/scratch/p/.git",
                "/scratch/p/.git",
                "/scratch/p",
                Standing::InWritablePlace {
                    place: "/scratch".into(),
                },
            ),
            // A sibling whose name merely starts the same is not inside.
            (
                "/scratch2/.git",
                "/scratch2/.git",
                "/scratch2",
                Standing::Clean,
            ),
        ];
        for (common, git_dir, dir, want) in rows {
            assert_eq!(
                &h.standing(Path::new(common), Path::new(git_dir), Path::new(dir)),
                want,
                "{dir}"
            );
        }
    }

    #[test]
    fn imports_give_history_and_writable_places() {
        let mut h = History::default();
        h.note_import(Path::new("/dest/.git"), Path::new("/data/wt/src/a"), 5);
        h.note_import(Path::new("/dest/.git"), Path::new("/data/wt/src/a"), 6);
        assert_eq!(
            h.standing(
                Path::new("/dest/.git"),
                Path::new("/dest/.git"),
                Path::new("/dest")
            ),
            Standing::Recorded
        );
        assert_eq!(h.repos[Path::new("/dest/.git")].imports.len(), 1);
        assert_eq!(h.writable(), vec![Path::new("/data/wt/src/a")]);
    }

    #[test]
    fn history_persists_and_a_damaged_file_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(load(tmp.path()).unwrap().repos.is_empty());
        update(tmp.path(), |h| {
            h.note_run(Some(Path::new("/r/.git")), Path::new("/w"), 1)
        })
        .unwrap();
        update(tmp.path(), |h| {
            h.note_run(Some(Path::new("/r/.git")), Path::new("/w2"), 2)
        })
        .unwrap();
        let h = load(tmp.path()).unwrap();
        assert_eq!(h.repos[Path::new("/r/.git")].writable.len(), 2);
        assert_eq!(h.repos[Path::new("/r/.git")].since_us, 1);
        std::fs::write(file(tmp.path()), "{not json").unwrap();
        let e = load(tmp.path()).unwrap_err().to_string();
        assert!(
            e.contains("sandbox-history.json") && e.contains("refuses"),
            "{e}"
        );
        assert!(
            update(tmp.path(), |_| {}).is_err(),
            "a damaged file is not overwritten"
        );
    }
}
