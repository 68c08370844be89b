//! The facts the sandbox check decides from, gathered at the edge: the
//! core's environment, nerdr's paths, the holder's pid file, the launch's
//! programs and repository (`git rev-parse`), git's global attributes file
//! (`git config --global`), the mount table, and what each path the
//! decision reads is on disk. All of it blocks (stat, canonicalize, git):
//! [`gather`] runs on a blocking thread, never on an async worker and
//! never under the core's state lock. What the facts mean is decided in
//! `probe::targets` (what must not be reached) and
//! `probe::placement::in_agent_reach` (programs the agent may rewrite).

use std::path::{Path, PathBuf};

use super::programs::{find_program, path_of};
use super::state::Worktree;
use crate::paths::Paths;
use crate::probe::plan::Proc;
use crate::probe::targets::{
    looked_at, CoreEnv, Disk, Facts, GitFacts, HostProgram, LaunchEnv, NerdrPlaces, Seen,
};

/// What the core hands over: the launch and what it alone knows.
pub(super) struct Ask {
    pub(super) paths: Paths,
    pub(super) bin: PathBuf,
    /// The command's words the probe goes among (wrapper first).
    pub(super) command_words: Vec<String>,
    /// The file name that names the agent among them.
    pub(super) program: String,
    pub(super) env: Vec<(String, String)>,
    pub(super) cwd: PathBuf,
    pub(super) folder: PathBuf,
    pub(super) worktree: Option<Worktree>,
    /// The worktrees of the other tabs.
    pub(super) other_worktrees: Vec<PathBuf>,
    pub(super) programs_end_with_core: bool,
}

/// What was found.
pub(super) struct Gathered {
    pub(super) facts: Facts,
    pub(super) programs: Vec<Program>,
    pub(super) reach: Reach,
}

/// What `probe::placement::in_agent_reach` decides from, symlinks
/// resolved: the command's programs, the launch's PATH folders and the
/// folders the agent may write (its worktree and its folder).
pub(super) struct Reach {
    pub(super) programs: Vec<(String, Option<PathBuf>)>,
    pub(super) path_dirs: Vec<PathBuf>,
    pub(super) writable: Vec<PathBuf>,
}

pub(super) const AGENT_PROGRAM: &str = "the agent's program";

/// A program word of the command, and where the host finds it.
pub(super) struct Program {
    pub(super) role: &'static str,
    pub(super) word: String,
    pub(super) resolved: Option<PathBuf>,
}

/// Gather everything. Blocking.
pub(super) fn gather(ask: &Ask) -> Gathered {
    super::held::assert_unlocked("gathering the sandbox check's facts");
    let p = &ask.paths;
    let env_path = |k: &str| std::env::var_os(k).map(PathBuf::from);
    let core_env = CoreEnv {
        home: env_path("HOME"),
        xdg_config_home: env_path("XDG_CONFIG_HOME"),
        xdg_runtime_dir: env_path("XDG_RUNTIME_DIR"),
        path: std::env::var("PATH").unwrap_or_default(),
    };
    let me = std::process::id();
    let core = crate::platform::proc_start_time(me)
        .ok()
        .map(|start_time| Proc {
            role: "core",
            pid: me,
            start_time,
        });
    // Read only where a holder keeps the programs: a pid file left over
    // (or one that blocks, a FIFO) must not hold up a launch without one.
    let holder = (!ask.programs_end_with_core)
        .then(|| crate::peer::read_recorded(&p.state_dir.join("holder.pid")))
        .flatten()
        .map(|r| Proc {
            role: "holder",
            pid: r.pid,
            start_time: r.start_time,
        });
    let repo_folder = match &ask.worktree {
        Some(w) => &w.repo,
        None => &ask.folder,
    };
    let repo_dirs = crate::git::worktree::repo_of(repo_folder)
        .map(|r| r.common_dir)
        .into_iter()
        .collect();
    // git needs a folder to run in; without an absolute HOME there is no
    // global config to ask about.
    let attributes_file = core_env
        .home
        .as_deref()
        .filter(|h| h.is_absolute())
        .and_then(|h| {
            crate::git::query(h, &["config", "--global", "--path", "core.attributesFile"]).ok()
        });
    // The hooks folder git runs hooks from instead of `.git/hooks`: the
    // global setting (for every repository) and the one the launch's
    // repository uses.
    let hooks_config = ["config", "--path", "core.hooksPath"];
    let hooks_paths = core_env
        .home
        .as_deref()
        .filter(|h| h.is_absolute())
        .and_then(|h| {
            crate::git::query(h, &["config", "--global", "--path", "core.hooksPath"]).ok()
        })
        .into_iter()
        .chain(crate::git::query(repo_folder, &hooks_config).ok())
        .collect();
    let programs = programs_of(&ask.command_words, &ask.program, &ask.env, &ask.cwd);
    let mut facts = Facts {
        nerdr: NerdrPlaces {
            bin: ask.bin.clone(),
            run_dir: p.run_dir.clone(),
            client_socket: p.client_socket(),
            client_key: p.client_key(),
            config_dir: p.config_dir.clone(),
            state_dir: p.state_dir.clone(),
            data_dir: p.data_dir.clone(),
        },
        launch_env: LaunchEnv {
            path: path_of(&ask.env),
            dbus_session_bus_address: ask
                .env
                .iter()
                .find(|(k, _)| k == "DBUS_SESSION_BUS_ADDRESS")
                .map(|(_, v)| v.clone()),
        },
        core,
        holder,
        programs_end_with_core: ask.programs_end_with_core,
        git: GitFacts {
            core_git: find_program("git", &core_env.path, Path::new("/")),
            attributes_file,
            hooks_paths,
            repo_dirs,
        },
        core_env,
        programs: programs
            .iter()
            .filter_map(|prog| {
                Some(HostProgram {
                    role: prog.role.into(),
                    path: prog.resolved.clone()?,
                })
            })
            .collect(),
        worktrees: ask
            .other_worktrees
            .iter()
            .chain(ask.worktree.as_ref().map(|w| &w.path))
            .cloned()
            .collect(),
        mounts: crate::probe::mounts::parse(
            &std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default(),
        ),
        disk: Disk::default(),
        linux: cfg!(target_os = "linux"),
    };
    for path in looked_at(&facts) {
        look(&mut facts.disk, &path);
    }
    let reach = reach(&programs, &ask.env, &ask.worktree, &ask.folder);
    Gathered {
        facts,
        programs,
        reach,
    }
}

/// Record `path` on `disk` if it exists, with the file it leads to; if it
/// does not, record the nearest folder above it that does.
fn look(disk: &mut Disk, path: &Path) {
    use std::os::unix::fs::MetadataExt;
    for at in path.ancestors() {
        if disk.0.contains_key(at) {
            return;
        }
        let Ok(m) = std::fs::symlink_metadata(at) else {
            continue;
        };
        let real = std::fs::canonicalize(at).ok();
        disk.0.insert(
            at.to_path_buf(),
            Seen {
                dev: m.dev(),
                ino: m.ino(),
                is_dir: std::fs::metadata(at).is_ok_and(|m| m.is_dir()),
                real: real.clone(),
            },
        );
        if let Some(r) = real.filter(|r| r != at) {
            look(disk, &r);
        }
        return;
    }
}

/// The wrapper (the command's first word, already resolved) and the word
/// the probe goes in place of (resolved as the sandbox would, from the
/// launch's PATH and folder).
fn programs_of(
    command_words: &[String],
    program: &str,
    env: &[(String, String)],
    cwd: &Path,
) -> Vec<Program> {
    let mut out = Vec::new();
    let path = path_of(env);
    if let Some(first) = command_words.first() {
        out.push(Program {
            role: "the wrapper program",
            word: first.clone(),
            resolved: Some(PathBuf::from(first)),
        });
    }
    let file_name = |w: &str| w.rsplit('/').next().unwrap_or(w).to_owned();
    let agent_at = command_words
        .iter()
        .skip(1)
        .rposition(|w| file_name(w) == program)
        .map(|i| i + 1);
    // Words the wrapper is given before the agent's: one naming a file (a
    // script the wrapper runs, a policy it reads) is as much the sandbox as
    // the wrapper itself. Folders (bind targets) are not programs.
    let middle =
        &command_words[1.min(command_words.len())..agent_at.unwrap_or(command_words.len())];
    for w in middle.iter().filter(|w| !w.starts_with('-')) {
        let at = cwd.join(w);
        if at.is_file() {
            let resolved = std::fs::canonicalize(&at).unwrap_or(at);
            out.push(Program {
                role: "a file the wrapper is given",
                word: resolved.display().to_string(),
                resolved: Some(resolved),
            });
        } else if w.contains('/') && !w.starts_with('/') && !w.contains(char::is_whitespace) {
            out.push(Program {
                role: "a file the wrapper is given",
                word: w.clone(),
                resolved: None,
            });
        }
    }
    if let Some(w) = agent_at.map(|i| &command_words[i]) {
        out.push(Program {
            role: AGENT_PROGRAM,
            word: w.clone(),
            resolved: find_program(w, &path, cwd),
        });
    }
    out
}

fn reach(
    programs: &[Program],
    env: &[(String, String)],
    worktree: &Option<Worktree>,
    folder: &Path,
) -> Reach {
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or(p.to_path_buf());
    Reach {
        programs: programs
            .iter()
            .map(|p| (p.word.clone(), p.resolved.as_deref().map(real)))
            .collect(),
        path_dirs: std::env::split_paths(&path_of(env))
            // A relative folder is looked up from wherever the program runs.
            .map(|d| match d.is_absolute() {
                true => real(&d),
                false => d,
            })
            .collect(),
        writable: worktree
            .iter()
            .map(|w| w.path.as_path())
            .chain([folder])
            .map(real)
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_recorded_with_the_file_it_leads_to_or_the_nearest_folder_above_it() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let dir = root.join("a");
        std::fs::create_dir(&dir).unwrap();
        let file = dir.join("f");
        std::fs::write(&file, "").unwrap();
        let link = root.join("link");
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        let through = link.join("f");
        let missing = root.join("missing/x");
        let mut disk = Disk::default();
        for p in [&through, &missing, &link] {
            look(&mut disk, p);
        }
        let seen = |p: &Path| disk.0.get(p).cloned();
        // A file reached through a symlinked folder, and the file itself.
        let f = seen(&through).expect("the file through the link");
        assert_eq!(f.real.as_deref(), Some(file.as_path()));
        assert!(!f.is_dir);
        assert_eq!(seen(&file).map(|s| (s.dev, s.ino)), Some((f.dev, f.ino)));
        // Not there: only the nearest folder above it that is.
        assert_eq!(seen(&missing), None);
        assert_eq!(seen(&root.join("missing")), None);
        assert!(seen(&root).expect("the nearest existing folder").is_dir);
        // A symlink to a folder is a folder, with its own identity.
        let l = seen(&link).unwrap();
        assert!(l.is_dir);
        assert_eq!(l.real.as_deref(), Some(dir.as_path()));
        assert_ne!(Some((l.dev, l.ino)), seen(&dir).map(|s| (s.dev, s.ino)));
    }
}
