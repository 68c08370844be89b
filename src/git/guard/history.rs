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
mod tests {
    use super::*;

    fn loc(common: &str, git_dir: &str, top: Option<&str>) -> Location {
        Location {
            common_dir: common.into(),
            git_dir: git_dir.into(),
            toplevel: top.map(PathBuf::from),
        }
    }

    fn recorded(common: &str) -> Standing {
        Standing::Recorded {
            common_dir: common.into(),
        }
    }

    fn with_run() -> History {
        let mut h = History::default();
        let main = loc("/r/.git", "/r/.git", Some("/r"));
        h.note_run(
            Some((&main, Some(Path::new("/r")))),
            Path::new("/data/wt/r/a"),
            &[],
            1,
        );
        h.note_run(None, Path::new("/scratch"), &[], 2);
        h
    }

    #[test]
    fn standing_of_each_kind_of_folder() {
        let h = with_run();
        let rows: &[(&str, Location, &str, Standing)] = &[
            (
                "the main checkout",
                loc("/r/.git", "/r/.git", Some("/r")),
                "/r",
                recorded("/r/.git"),
            ),
            (
                "another worktree of the repository",
                loc("/r/.git", "/r/.git/worktrees/b", Some("/data/wt/r/b")),
                "/data/wt/r/b",
                recorded("/r/.git"),
            ),
            (
                "a planted .git/commondir: found by the main git dir",
                loc("/r/.git/evil", "/r/.git", Some("/r")),
                "/r",
                recorded("/r/.git"),
            ),
            (
                "a rewritten worktrees/<tab>/commondir: found by the admin folder",
                loc("/tmp/evil", "/r/.git/worktrees/b", Some("/data/wt/r/b")),
                "/data/wt/r/b",
                recorded("/r/.git"),
            ),
            (
                "a planted commondir and core.worktree elsewhere: found by the top folder",
                loc("/elsewhere/.git", "/elsewhere/.git", Some("/r")),
                "/r",
                recorded("/r/.git"),
            ),
            (
                "an unrelated repository",
                loc("/o/.git", "/o/.git", Some("/o")),
                "/o",
                Standing::Clean,
            ),
            (
                "a worktree whose .git file points at a repository the agent made",
                loc(
                    "/data/wt/r/a/fake.git",
                    "/data/wt/r/a/fake.git",
                    Some("/data/wt/r/a"),
                ),
                "/data/wt/r/a",
                Standing::InWritablePlace {
                    place: "/data/wt/r/a".into(),
                },
            ),
            (
                "a repository made in a folder an agent could write",
                loc("/scratch/p/.git", "/scratch/p/.git", Some("/scratch/p")),
                "/scratch/p",
                Standing::InWritablePlace {
                    place: "/scratch".into(),
                },
            ),
            (
                "a sibling whose name merely starts the same is not inside",
                loc("/scratch2/.git", "/scratch2/.git", Some("/scratch2")),
                "/scratch2",
                Standing::Clean,
            ),
        ];
        for (name, at, dir, want) in rows {
            assert_eq!(&h.standing(Some(at), Path::new(dir)), want, "{name}");
        }
        assert_eq!(
            h.standing(None, Path::new("/scratch/x")),
            Standing::InWritablePlace {
                place: "/scratch".into()
            }
        );
        assert_eq!(h.standing(None, Path::new("/x")), Standing::Clean);
    }

    /// One recorded step: a run in the repository at /r (place, kept), a
    /// run in a folder outside any repository, or an import into /r.
    enum Step {
        Run(&'static str, &'static [&'static str]),
        Folder(&'static str),
        Import(&'static str),
    }

    fn after(steps: &[Step]) -> History {
        let main = loc("/r/.git", "/r/.git", Some("/r"));
        let mut h = History::default();
        for (t, s) in steps.iter().enumerate() {
            match s {
                Step::Run(place, kept) => {
                    let kept: Vec<PathBuf> = kept.iter().map(PathBuf::from).collect();
                    h.note_run(
                        Some((&main, Some(Path::new("/r")))),
                        Path::new(place),
                        &kept,
                        t as u64,
                    )
                }
                Step::Folder(place) => h.note_run(None, Path::new(place), &[], t as u64),
                Step::Import(from) => {
                    h.note_import(&main, Some(Path::new("/r")), Path::new(from), t as u64)
                }
            }
        }
        h
    }

    #[test]
    fn what_counts_as_kept_read_only_after_each_sequence_of_runs() {
        use Step::*;
        const KEPT: &[&str] = &["/r/.git/config", "/r/.git/hooks"];
        // (sentence, steps, path, the place it is writable through)
        let rows: &[(&str, &[Step], &str, Option<&str>)] = &[
            (
                "a run in the main checkout that kept .git/config read-only leaves it not agent-writable",
                &[Run("/r", KEPT)],
                "/r/.git/config",
                None,
            ),
            (
                "what is inside a kept folder (.git/hooks) is not agent-writable either",
                &[Run("/r", KEPT)],
                "/r/.git/hooks/pre-commit",
                None,
            ),
            (
                "the rest of the checkout stays agent-writable",
                &[Run("/r", KEPT)],
                "/r/src/evil.inc",
                Some("/r"),
            ),
            (
                "the rest of .git stays agent-writable",
                &[Run("/r", KEPT)],
                "/r/.git/info/attributes",
                Some("/r"),
            ),
            (
                "a path whose name merely starts like a kept one is not kept",
                &[Run("/r", KEPT)],
                "/r/.git/config2",
                Some("/r"),
            ),
            (
                "two runs that both kept it leave it kept",
                &[Run("/r", KEPT), Run("/r", KEPT)],
                "/r/.git/config",
                None,
            ),
            (
                "a later run that could write it (kept nothing) makes it agent-writable",
                &[Run("/r", KEPT), Run("/r", &[])],
                "/r/.git/config",
                Some("/r"),
            ),
            (
                "a later run that kept only the hooks makes the config agent-writable",
                &[Run("/r", KEPT), Run("/r", &["/r/.git/hooks"])],
                "/r/.git/config",
                Some("/r"),
            ),
            (
                "...and the hooks stay kept",
                &[Run("/r", KEPT), Run("/r", &["/r/.git/hooks"])],
                "/r/.git/hooks/x",
                None,
            ),
            (
                "a run recorded before (history from before this change, or a wrapped agent) that could write it: never kept",
                &[Run("/r", &[]), Run("/r", KEPT)],
                "/r/.git/config",
                Some("/r"),
            ),
            (
                "an earlier run over a folder holding the checkout could write it: never kept",
                &[Folder("/"), Run("/r", KEPT)],
                "/r/.git/config",
                Some("/"),
            ),
            (
                "a later run over a folder holding the checkout makes it agent-writable",
                &[Run("/r", KEPT), Folder("/")],
                "/r/.git/config",
                Some("/"),
            ),
            (
                "a later import from a folder holding it makes it agent-writable",
                &[Run("/r", KEPT), Import("/r/.git")],
                "/r/.git/config",
                Some("/r"),
            ),
            (
                "a run in a linked worktree elsewhere leaves the main checkout's kept paths kept",
                &[Run("/r", KEPT), Run("/data/wt/r/a", &[])],
                "/r/.git/config",
                None,
            ),
            (
                "a linked worktree's run keeping the common dir's config does not stop a main checkout's run keeping it",
                &[Run("/data/wt/r/a", &["/r/.git/config"]), Run("/r", KEPT)],
                "/r/.git/config",
                None,
            ),
            (
                "a writable place inside a kept folder is writable all the same",
                &[Run("/r", KEPT), Run("/r/.git/hooks/x", &[])],
                "/r/.git/hooks/x/run",
                Some("/r/.git/hooks/x"),
            ),
        ];
        for (name, steps, path, want) in rows {
            let h = after(steps);
            let places = h.writable();
            let kept = h.kept_read_only();
            assert_eq!(
                writable_place(&places, &kept, Path::new(path)),
                want.map(Path::new),
                "{name}"
            );
        }
    }

    #[test]
    fn a_history_without_kept_paths_reads_as_keeping_none() {
        let old = r#"{"version":1,"repos":{"/r/.git":{"since_us":1,"writable":["/r"]}}}"#;
        let h: History = serde_json::from_str(old).unwrap();
        assert!(h.kept_read_only().is_empty());
        assert_eq!(
            writable_place(&h.writable(), &[], Path::new("/r/.git/config")),
            Some(Path::new("/r"))
        );
    }

    #[test]
    fn a_history_written_before_git_dirs_were_kept_finds_the_main_git_dir_by_its_key() {
        let old = r#"{"version":1,"repos":{"/r/.git":{"since_us":1,"writable":["/w"]}}}"#;
        let h: History = serde_json::from_str(old).unwrap();
        assert_eq!(
            h.standing(
                Some(&loc("/r/.git/evil", "/r/.git", Some("/r"))),
                Path::new("/r")
            ),
            recorded("/r/.git")
        );
    }

    #[test]
    fn imports_give_history_and_writable_places() {
        let mut h = History::default();
        let dest = loc("/dest/.git", "/dest/.git", Some("/dest"));
        h.note_import(
            &dest,
            Some(Path::new("/dest")),
            Path::new("/data/wt/src/a"),
            5,
        );
        h.note_import(
            &dest,
            Some(Path::new("/dest")),
            Path::new("/data/wt/src/a"),
            6,
        );
        assert_eq!(
            h.standing(
                Some(&loc("/dest/.git", "/dest/.git", Some("/dest"))),
                Path::new("/dest")
            ),
            recorded("/dest/.git")
        );
        assert_eq!(h.repos[Path::new("/dest/.git")].imports.len(), 1);
        assert_eq!(
            h.standing(
                Some(&loc("/dest/.git/evil", "/dest/.git", Some("/dest"))),
                Path::new("/dest")
            ),
            recorded("/dest/.git"),
            "found by the main git dir"
        );
        assert_eq!(h.writable(), vec![Path::new("/data/wt/src/a")]);
    }

    #[test]
    fn history_persists_and_a_damaged_file_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(load(tmp.path()).unwrap().repos.is_empty());
        let at = loc("/r/.git", "/r/.git/worktrees/w", Some("/w"));
        update(tmp.path(), |h| {
            h.note_run(Some((&at, Some(Path::new("/r")))), Path::new("/w"), &[], 1)
        })
        .unwrap();
        update(tmp.path(), |h| {
            h.note_run(Some((&at, Some(Path::new("/r")))), Path::new("/w2"), &[], 2)
        })
        .unwrap();
        let h = load(tmp.path()).unwrap();
        let r = &h.repos[Path::new("/r/.git")];
        assert_eq!(r.writable.len(), 2);
        assert_eq!(r.since_us, 1);
        assert_eq!(
            r.git_dirs.iter().collect::<Vec<_>>(),
            vec![Path::new("/r/.git")]
        );
        assert_eq!(
            r.toplevels.iter().collect::<Vec<_>>(),
            vec![Path::new("/r")]
        );
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
