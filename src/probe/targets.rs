//! What a sandbox must not reach (docs/ARCHITECTURE.md, "The sandbox check
//! (probe)"), decided from facts the core gathered. Pure: [`Facts`] in,
//! [`Targets`] out, each file or folder with the words that say what it
//! is; the probe's plan is then made from them (`super::plan`).
//!
//! The facts hold the disk as a snapshot ([`Disk`]): [`looked_at`] names
//! the paths the decision reads, the core records each of them (with the
//! file a symlink leads to and, for one that does not exist, every folder
//! above it up to the nearest that does), and [`targets`] reads only that
//! record. Both come from one list ([`Candidates`]), so what is gathered
//! and what is decided cannot drift apart. A path the record lacks counts
//! as absent: there is nothing there for a sandbox to reach.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

use super::mounts::{spot, Mount};
use super::plan::{FileId, Named, Proc, Targets};

/// Everything the decision needs, gathered by the core before it.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    pub nerdr: NerdrPlaces,
    pub core_env: CoreEnv,
    pub launch_env: LaunchEnv,
    /// The core itself, if its start time could be read.
    pub core: Option<Proc>,
    /// The holder as its pid file records it, if there is one.
    pub holder: Option<Proc>,
    /// The core's host runs programs itself (no holder keeps them).
    pub programs_end_with_core: bool,
    pub git: GitFacts,
    /// The command's programs the core found on the host.
    pub programs: Vec<HostProgram>,
    /// Every tab's worktree: this launch's and the other tabs'.
    pub worktrees: Vec<PathBuf>,
    /// The core's own `/proc/self/mountinfo`.
    pub mounts: Vec<Mount>,
    pub disk: Disk,
    /// The system has `/proc` (Linux): a mount table for the probe to read,
    /// and processes to reach through `/proc`, pidfd and ptrace.
    pub linux: bool,
}

/// nerdr's own files and folders.
#[derive(Debug, Clone, Default)]
pub struct NerdrPlaces {
    /// `$NERDR_BIN`, the executable the core runs as.
    pub bin: PathBuf,
    pub run_dir: PathBuf,
    pub client_socket: PathBuf,
    pub client_key: PathBuf,
    pub config_dir: PathBuf,
    pub state_dir: PathBuf,
    pub data_dir: PathBuf,
}

/// The core's environment, as its process has it (a relative value counts
/// as unset).
#[derive(Debug, Clone, Default)]
pub struct CoreEnv {
    pub home: Option<PathBuf>,
    pub xdg_config_home: Option<PathBuf>,
    pub xdg_runtime_dir: Option<PathBuf>,
    /// `PATH` (empty when unset).
    pub path: String,
}

/// The environment the launch runs with.
#[derive(Debug, Clone, Default)]
pub struct LaunchEnv {
    /// `PATH`, or the default a shell would use.
    pub path: String,
    pub dbus_session_bus_address: Option<String>,
}

/// What git on the host trusts.
#[derive(Debug, Clone, Default)]
pub struct GitFacts {
    /// Where the core's `PATH` finds `git`.
    pub core_git: Option<PathBuf>,
    /// `git config --global --path core.attributesFile`, as git printed it.
    pub attributes_file: Option<String>,
    /// `core.hooksPath` as git printed it, globally and in the launch's
    /// repository: the folder the user's git runs hooks from.
    pub hooks_paths: Vec<String>,
    /// The common `.git` folder of the launch's repository (the main
    /// checkout's, also for a worktree).
    pub repo_dirs: Vec<PathBuf>,
}

/// A program of the command and where the host finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostProgram {
    /// What it is, in words: "the wrapper program", ...
    pub role: String,
    pub path: PathBuf,
}

/// The disk as the core saw it: each path looked at that exists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Disk(pub BTreeMap<PathBuf, Seen>);

/// One existing path: its identity (not following a symlink), whether it
/// is a folder (following one), and the path with every symlink resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub dev: u64,
    pub ino: u64,
    pub is_dir: bool,
    pub real: Option<PathBuf>,
}

impl Disk {
    /// `path`'s identity and where it lies among the mounts, or `None` if
    /// it does not exist.
    fn id(&self, mounts: &[Mount], path: &Path) -> Option<FileId> {
        let s = self.0.get(path)?;
        Some(FileId {
            path: path.to_path_buf(),
            dev: s.dev,
            ino: s.ino,
            mount: s.real.as_deref().and_then(|r| spot(mounts, r)),
        })
    }

    fn real(&self, path: &Path) -> Option<&Path> {
        self.0.get(path)?.real.as_deref()
    }

    fn is_dir(&self, path: &Path) -> bool {
        self.0.get(path).is_some_and(|s| s.is_dir)
    }

    /// `path` if it exists, else the nearest folder above it that does.
    fn nearest(&self, path: &Path) -> Option<PathBuf> {
        path.ancestors()
            .find(|a| self.0.contains_key(*a))
            .map(Path::to_path_buf)
    }
}

/// The paths the decision reads, before the disk is asked about them.
struct Candidates {
    processes: Vec<Proc>,
    run_dir: PathBuf,
    client_socket: PathBuf,
    client_key: PathBuf,
    config_dir: PathBuf,
    state_dir: PathBuf,
    repo_dirs: Vec<PathBuf>,
    worktree_dirs: Vec<PathBuf>,
    data_dirs: Vec<PathBuf>,
    runtime_root: Option<PathBuf>,
    user_sockets: Vec<PathBuf>,
    /// Files the core later runs or trusts on the host, with what each is.
    host_files: Vec<(String, PathBuf)>,
    /// Folders a program the core runs on the host could be planted in.
    host_folders: Vec<(String, PathBuf)>,
    /// The folders git config names for hooks (each looked at with the
    /// folder it is in).
    hooks_folders: Vec<PathBuf>,
}

impl Candidates {
    fn paths(&self) -> Vec<PathBuf> {
        let singles = [
            &self.run_dir,
            &self.client_socket,
            &self.client_key,
            &self.config_dir,
            &self.state_dir,
        ];
        let repo = self
            .repo_dirs
            .iter()
            .flat_map(|d| [d.clone(), d.join("config"), d.join("hooks"), d.join("info")]);
        singles
            .into_iter()
            .cloned()
            .chain(repo)
            .chain(self.worktree_dirs.iter().cloned())
            .chain(self.data_dirs.iter().cloned())
            .chain(self.runtime_root.iter().cloned())
            .chain(self.user_sockets.iter().cloned())
            .chain(self.host_files.iter().map(|(_, p)| p.clone()))
            .chain(self.host_folders.iter().map(|(_, p)| p.clone()))
            .chain(
                self.hooks_folders.iter().flat_map(|h| {
                    std::iter::once(h.clone()).chain(h.parent().map(Path::to_path_buf))
                }),
            )
            .collect()
    }
}

/// The paths [`targets`] reads from [`Facts::disk`], for the core to look
/// at first. Pure.
pub fn looked_at(f: &Facts) -> Vec<PathBuf> {
    candidates(f).paths()
}

/// What the probe must show unreachable, given `f`. Pure.
pub fn targets(f: &Facts) -> Targets {
    let c = candidates(f);
    let id = |p: &Path| f.disk.id(&f.mounts, p);
    let ids = |ps: &[PathBuf]| -> Vec<FileId> { ps.iter().filter_map(|p| id(p)).collect() };
    let named = |what: String, file: FileId| Named { what, file };
    let mut host_files = Vec::new();
    let mut host_dirs = Vec::new();
    // A file that is not there yet is planted by whoever may write the
    // nearest folder above it that is. A symlink counts twice: itself (its
    // folder may let it be replaced) and the file it leads to (which may
    // be writable).
    for (what, path) in &c.host_files {
        let real = f.disk.real(path).filter(|r| r != path);
        for p in std::iter::once(path.as_path()).chain(real) {
            match id(p) {
                Some(file) => host_files.push(named(what.clone(), file)),
                None => {
                    if let Some(file) = f.disk.nearest(p).and_then(|a| id(&a)) {
                        let what = format!("the folder where {what} {} would be made", p.display());
                        host_dirs.push(named(what, file));
                    }
                }
            }
        }
    }
    // A hooks folder is made where it is not yet; where something else is
    // there (`/dev/null`, to turn hooks off), git finds no hooks until
    // one is put in its place, in the folder it is in.
    const HOOKS: &str = "the hooks folder git config names";
    let hooks = c
        .hooks_folders
        .iter()
        .filter_map(|h| match f.disk.0.get(h) {
            Some(s) if !s.is_dir => Some((
                format!(
                    "the folder where {HOOKS} {} could be put in its place",
                    h.display()
                ),
                h.parent()?.to_path_buf(),
            )),
            _ => Some((HOOKS.to_string(), h.clone())),
        });
    let folders: Vec<(String, PathBuf)> = c.host_folders.iter().cloned().chain(hooks).collect();
    let mut seen = BTreeSet::new();
    for (what, d) in &folders {
        let Some(at) = f.disk.nearest(d) else {
            continue;
        };
        if !seen.insert(at.clone()) {
            continue;
        }
        let what = if &at == d {
            what.clone()
        } else {
            format!("the folder where {what} {} would be made", d.display())
        };
        if let Some(file) = id(&at) {
            host_dirs.push(named(what, file));
        }
    }
    // One check per file or folder, under the first name it came by.
    let mut seen = BTreeSet::new();
    host_files.retain(|n| seen.insert(n.file.path.clone()));
    host_dirs.retain(|n| seen.insert(n.file.path.clone()));
    let under = |name: &str| -> Vec<PathBuf> { c.repo_dirs.iter().map(|d| d.join(name)).collect() };
    // Without a hooks folder, whoever can make one in .git can add hooks.
    let hooks: Vec<PathBuf> = c
        .repo_dirs
        .iter()
        .map(|d| match d.join("hooks") {
            h if f.disk.is_dir(&h) => h,
            _ => d.clone(),
        })
        .collect();
    let dirs = Dirs {
        config: id(&c.config_dir),
        state: id(&c.state_dir),
        git_hooks: ids(&hooks),
        git_dirs: ids(&c.repo_dirs),
        // Without an info folder, .git itself (checked above) is where it
        // is made.
        git_infos: ids(&under("info")),
        worktrees: ids(&c.worktree_dirs),
        data: ids(&c.data_dirs),
    };
    let links = links(&f.disk, &dirs, &host_dirs);
    Targets {
        run_dir: id(&c.run_dir),
        client_socket: id(&c.client_socket),
        client_key: id(&c.client_key),
        processes: c.processes,
        config_dir: dirs.config,
        state_dir: dirs.state,
        git_configs: ids(&under("config")),
        git_hooks: dirs.git_hooks,
        git_dirs: dirs.git_dirs,
        git_infos: dirs.git_infos,
        worktree_dirs: dirs.worktrees,
        data_dirs: dirs.data,
        runtime_root: c.runtime_root.as_deref().and_then(id),
        user_sockets: ids(&c.user_sockets),
        host_files,
        host_dirs,
        links,
        mount_table: f.linux,
        processes_reachable_by_proc: f.linux,
    }
}

/// The folders the probe must not write into.
struct Dirs {
    config: Option<FileId>,
    state: Option<FileId>,
    git_hooks: Vec<FileId>,
    git_dirs: Vec<FileId>,
    git_infos: Vec<FileId>,
    worktrees: Vec<FileId>,
    data: Vec<FileId>,
}

/// Each of those folders (and of `host_dirs`) whose path leads through a
/// symlink, once: writing into it is tried through the link, which says
/// nothing of whether the link itself can be put back another way.
fn links(disk: &Disk, d: &Dirs, host_dirs: &[Named]) -> Vec<Named> {
    let fixed = [
        ("nerdr's config folder", d.config.iter().collect::<Vec<_>>()),
        ("nerdr's state folder", d.state.iter().collect()),
        ("the git hooks folder", d.git_hooks.iter().collect()),
        ("the main checkout's .git", d.git_dirs.iter().collect()),
        ("the git info folder", d.git_infos.iter().collect()),
        (
            "the folder of other tabs' worktrees",
            d.worktrees.iter().collect(),
        ),
        ("nerdr's data folder", d.data.iter().collect()),
    ];
    let all = fixed
        .into_iter()
        .flat_map(|(what, files)| files.into_iter().map(move |f| (what.to_string(), f)))
        .chain(host_dirs.iter().map(|n| (n.what.clone(), &n.file)));
    let mut seen = BTreeSet::new();
    all.filter(|(_, f)| disk.real(&f.path).is_some_and(|r| r != f.path))
        .filter(|(_, f)| seen.insert(f.path.clone()))
        .map(|(what, f)| Named {
            what,
            file: f.clone(),
        })
        .collect()
}

fn candidates(f: &Facts) -> Candidates {
    let absolute = |p: &Option<PathBuf>| p.clone().filter(|p| p.is_absolute());
    let n = &f.nerdr;
    let mut processes: Vec<Proc> = f.core.iter().cloned().collect();
    // A holder that programs do not outlast is no holder of theirs.
    if !f.programs_end_with_core {
        processes.extend(f.holder.iter().cloned());
    }
    let mut worktree_dirs: Vec<PathBuf> = f
        .worktrees
        .iter()
        .filter_map(|w| w.parent().map(Path::to_path_buf))
        .collect();
    worktree_dirs.sort();
    worktree_dirs.dedup();
    let runtime_root = absolute(&f.core_env.xdg_runtime_dir);
    let mut user_sockets: Vec<PathBuf> = runtime_root
        .iter()
        .flat_map(|r| [r.join("bus"), r.join("systemd/private")])
        .collect();
    // The bus the agent is told of, wherever it is.
    user_sockets.extend(
        f.launch_env
            .dbus_session_bus_address
            .as_deref()
            .map(bus_sockets)
            .unwrap_or_default(),
    );
    user_sockets.sort();
    user_sockets.dedup();
    let mut host_files: Vec<(String, PathBuf)> = vec![("nerdr's executable".into(), n.bin.clone())];
    host_files.extend(f.programs.iter().map(|p| (p.role.clone(), p.path.clone())));
    let home = absolute(&f.core_env.home);
    // git runs with HOME only (no XDG_CONFIG_HOME): both places count.
    let mut config_homes: Vec<PathBuf> = home.iter().map(|h| h.join(".config")).collect();
    config_homes.extend(absolute(&f.core_env.xdg_config_home));
    config_homes.dedup();
    const CONFIG: &str = "the global git config";
    const ATTRIBUTES: &str = "the global git attributes";
    host_files.extend(home.iter().map(|h| (CONFIG.into(), h.join(".gitconfig"))));
    for c in &config_homes {
        host_files.push((CONFIG.into(), c.join("git/config")));
        host_files.push((ATTRIBUTES.into(), c.join("git/attributes")));
    }
    // The attributes file the global config names (`~` expanded by git).
    if let Some(file) = f
        .git
        .attributes_file
        .as_deref()
        .filter(|_| home.is_some())
        .map(|a| PathBuf::from(a.trim()))
        .filter(|a| a.is_absolute())
    {
        host_files.push((ATTRIBUTES.into(), file));
    }
    let mut host_folders: Vec<(String, PathBuf)> = Vec::new();
    if let Some(d) = n.bin.parent() {
        host_folders.push(("the folder of nerdr's executable".into(), d.to_path_buf()));
    }
    if let Some(d) = f.git.core_git.as_deref().and_then(Path::parent) {
        host_folders.push((
            "the folder of the git the core runs".into(),
            d.to_path_buf(),
        ));
    }
    for var in [&f.core_env.path, &f.launch_env.path] {
        for d in std::env::split_paths(var).filter(|d| d.is_absolute()) {
            host_folders.push(("a PATH folder the core runs programs from".into(), d));
        }
    }
    // A relative one lies in each checkout, which its own rules cover.
    let hooks_folders = f
        .git
        .hooks_paths
        .iter()
        .map(|h| PathBuf::from(h.trim()))
        .filter(|h| h.is_absolute())
        .collect();
    Candidates {
        hooks_folders,
        processes,
        run_dir: n.run_dir.clone(),
        client_socket: n.client_socket.clone(),
        client_key: n.client_key.clone(),
        config_dir: n.config_dir.clone(),
        state_dir: n.state_dir.clone(),
        repo_dirs: f.git.repo_dirs.clone(),
        worktree_dirs,
        data_dirs: vec![n.data_dir.clone(), n.data_dir.join("worktrees")],
        runtime_root,
        user_sockets,
        host_files,
        host_folders,
    }
}

/// Every socket a D-Bus address names: the `path=` of each `unix:` entry,
/// wherever it stands among the entry's keys, unescaped. A client falls
/// back from one entry to the next, and a sandbox that reaches any of them
/// needs no address at all to connect: each is a user bus. An abstract
/// socket or another transport names no file (see SECURITY.md, Limits).
fn bus_sockets(address: &str) -> Vec<PathBuf> {
    address
        .split(';')
        .filter_map(|entry| entry.strip_prefix("unix:"))
        .filter_map(|keys| keys.split(',').find_map(|kv| kv.strip_prefix("path=")))
        .map(|p| PathBuf::from(std::ffi::OsString::from_vec(unescape_bus(p))))
        .collect()
}

/// A D-Bus address value with its `%xx` escapes undone. Hand-written: the
/// escape is that one form, and a crate for it would be a dependency for
/// five lines. A `%` without two hex digits stays as it is.
fn unescape_bus(value: &str) -> Vec<u8> {
    let b = value.as_bytes();
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match (
            b[i],
            b.get(i + 1).and_then(|c| hex(*c)),
            b.get(i + 2).and_then(|c| hex(*c)),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push(h * 16 + l);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "targets_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "targets_rules_tests.rs"]
mod rules_tests;
