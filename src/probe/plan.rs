//! What the probe is to try, decided by the core and handed to the probe on
//! its command line. Each target carries the identity (device and inode,
//! or start time) the core sees, so that a look-alike inside the sandbox (a
//! tmpfs over the folder, a PID reused in a private PID namespace) is not
//! taken for the real thing.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// A file or folder as the core sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileId {
    pub path: PathBuf,
    pub dev: u64,
    pub ino: u64,
    /// Where it lies in its filesystem, so the probe can find it mounted
    /// at another path too (`super::mounts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount: Option<super::mounts::Spot>,
}

impl FileId {
    /// The path's identity now, or `None` if it does not exist. The core
    /// takes identities from the disk record among its gathered facts;
    /// tests take them from the disk.
    #[cfg(test)]
    pub fn of(path: &std::path::Path) -> Option<FileId> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::symlink_metadata(path).ok()?;
        Some(FileId {
            path: path.to_path_buf(),
            dev: m.dev(),
            ino: m.ino(),
            mount: None,
        })
    }
}

/// One way of reaching a process: each is a check of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProcWay {
    /// Read `/proc/PID/environ`.
    Environ,
    /// List `/proc/PID/fd/`.
    Fd,
    /// Open `/proc/PID/mem`.
    Mem,
    /// `pidfd_open` then `pidfd_getfd` one of its descriptors.
    PidfdGetfd,
    /// `ptrace` attach (detached at once).
    Ptrace,
}

impl ProcWay {
    pub const ALL: [ProcWay; 5] = [
        ProcWay::Environ,
        ProcWay::Fd,
        ProcWay::Mem,
        ProcWay::PidfdGetfd,
        ProcWay::Ptrace,
    ];

    fn words(self) -> &'static str {
        match self {
            ProcWay::Environ => "its environment read through /proc/PID/environ",
            ProcWay::Fd => "its open files listed through /proc/PID/fd",
            ProcWay::Mem => "its memory opened through /proc/PID/mem",
            ProcWay::PidfdGetfd => "a descriptor taken with pidfd_getfd",
            ProcWay::Ptrace => "attached with ptrace",
        }
    }

    fn slug(self) -> &'static str {
        match self {
            ProcWay::Environ => "environ",
            ProcWay::Fd => "fd",
            ProcWay::Mem => "mem",
            ProcWay::PidfdGetfd => "pidfd-getfd",
            ProcWay::Ptrace => "ptrace",
        }
    }
}

/// What one check tries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "try", rename_all = "kebab-case")]
pub enum Try {
    /// List a folder.
    ListDir { dir: FileId },
    /// Connect to a Unix socket.
    Connect { socket: FileId },
    /// Read a file.
    Read { file: FileId },
    /// Create (and remove) a uniquely named file in a folder.
    CreateIn { dir: FileId },
    /// Open an existing file for writing, without truncating it or writing
    /// a byte: the user's file is never changed.
    OpenForWrite { file: FileId },
    /// Read the sandbox's own mount table, without which nerdr's folders
    /// mounted at other paths cannot be ruled out: reached if unreadable.
    MountTable,
    /// Reach a process of nerdr's.
    Process {
        role: String,
        pid: u32,
        start_time: u64,
        way: ProcWay,
    },
}

/// One check: a stable id (the probe answers by it), the thing in words
/// for the notice, and what to try.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    pub id: String,
    pub what: String,
    #[serde(flatten)]
    pub try_: Try,
}

/// Everything the probe is to try.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Plan {
    pub checks: Vec<Check>,
}

/// A process of nerdr's the probe must not reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proc {
    pub role: &'static str,
    pub pid: u32,
    pub start_time: u64,
}

/// The facts the plan is made from, gathered by the core.
#[derive(Debug, Clone, Default)]
pub struct Targets {
    /// The client socket's folder, the socket and its key.
    pub run_dir: Option<FileId>,
    pub client_socket: Option<FileId>,
    pub client_key: Option<FileId>,
    /// The core and (when there is one) the holder.
    pub processes: Vec<Proc>,
    /// `$XDG_CONFIG_HOME/nerdr` and `$XDG_STATE_HOME/nerdr`.
    pub config_dir: Option<FileId>,
    pub state_dir: Option<FileId>,
    /// For each of the tab's repositories: its main checkout's `.git/config`
    /// and the folder hooks are made in (`.git/hooks`, or `.git` itself
    /// when there is no hooks folder yet).
    pub git_configs: Vec<FileId>,
    pub git_hooks: Vec<FileId>,
    /// The main checkouts' `.git` folders themselves and their `info`
    /// folders: whoever writes there plants `commondir`, `info/attributes`
    /// or a whole fake repository git then trusts on the host.
    pub git_dirs: Vec<FileId>,
    pub git_infos: Vec<FileId>,
    /// The folders other tabs' worktrees are in.
    pub worktree_dirs: Vec<FileId>,
    /// `$NERDR_DATA_DIR` and `$NERDR_DATA_DIR/worktrees`.
    pub data_dirs: Vec<FileId>,
    /// `$XDG_RUNTIME_DIR` (listed) and the user's other sockets there: the
    /// user bus and the user manager's `systemd/private`, either of which
    /// starts programs outside the sandbox.
    pub runtime_root: Option<FileId>,
    pub user_sockets: Vec<FileId>,
    /// Files the core later runs or trusts on the host: `$NERDR_BIN`, the
    /// wrapper and agent programs, the global git config files.
    pub host_files: Vec<Named>,
    /// Folders where a program the core runs on the host could be planted:
    /// `$NERDR_BIN`'s, `git`'s and the PATH folders; for a file or folder
    /// that does not exist yet, the nearest folder that does.
    pub host_dirs: Vec<Named>,
    /// Each folder above whose path is reached through a symlink: whoever
    /// may write where the link lies (or rename a folder on the way) puts
    /// another in its place, leading wherever it likes, however well the
    /// folder it leads to now is kept.
    pub links: Vec<Named>,
    /// Whether the probe must read its mount table (where there is one).
    pub mount_table: bool,
    /// Whether to try the /proc, pidfd and ptrace ways (Linux only).
    pub processes_reachable_by_proc: bool,
}

/// A file or folder and what it is, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    pub what: String,
    pub file: FileId,
}

/// The checks for `targets`, in a fixed order. Pure.
pub fn plan(t: &Targets) -> Plan {
    let mut checks = Vec::new();
    let mut add = |id: String, what: String, try_: Try| checks.push(Check { id, what, try_ });
    let shown = |f: &FileId| f.path.display().to_string();
    if let Some(d) = &t.run_dir {
        add(
            "client-dir".into(),
            format!("the client socket's folder {} (listed)", shown(d)),
            Try::ListDir { dir: d.clone() },
        );
    }
    if let Some(s) = &t.client_socket {
        add(
            "client-socket".into(),
            format!("the client socket {} (connected)", shown(s)),
            Try::Connect { socket: s.clone() },
        );
    }
    if let Some(k) = &t.client_key {
        add(
            "client-key".into(),
            format!("the client key {} (read)", shown(k)),
            Try::Read { file: k.clone() },
        );
    }
    if let Some(d) = &t.runtime_root {
        add(
            "runtime-dir".into(),
            format!("the runtime folder {} (listed)", shown(d)),
            Try::ListDir { dir: d.clone() },
        );
    }
    for (i, s) in t.user_sockets.iter().enumerate() {
        add(
            format!("user-socket-{i}"),
            format!("the user's socket {} (connected)", shown(s)),
            Try::Connect { socket: s.clone() },
        );
    }
    if t.mount_table {
        add(
            "mount-table".into(),
            "the sandbox's mount table /proc/self/mountinfo could not be read, so nerdr's \
             folders mounted at other paths cannot be ruled out"
                .into(),
            Try::MountTable,
        );
    }
    if t.processes_reachable_by_proc {
        for p in &t.processes {
            for way in ProcWay::ALL {
                add(
                    format!("{}-{}", p.role, way.slug()),
                    format!("the {} (pid {}): {}", p.role, p.pid, way.words()),
                    Try::Process {
                        role: p.role.into(),
                        pid: p.pid,
                        start_time: p.start_time,
                        way,
                    },
                );
            }
        }
    }
    let mut create = |id: String, what: String, d: &FileId| {
        add(
            id,
            format!("{what} {} (written)", shown(d)),
            Try::CreateIn { dir: d.clone() },
        )
    };
    if let Some(d) = &t.config_dir {
        create("config-dir".into(), "nerdr's config folder".into(), d);
    }
    if let Some(d) = &t.state_dir {
        create("state-dir".into(), "nerdr's state folder".into(), d);
    }
    for (i, d) in t.git_hooks.iter().enumerate() {
        create(format!("git-hooks-{i}"), "the git hooks folder".into(), d);
    }
    for (i, d) in t.git_dirs.iter().enumerate() {
        create(format!("git-dir-{i}"), "the main checkout's .git".into(), d);
    }
    for (i, d) in t.git_infos.iter().enumerate() {
        create(format!("git-info-{i}"), "the git info folder".into(), d);
    }
    for (i, d) in t.worktree_dirs.iter().enumerate() {
        create(
            format!("worktrees-{i}"),
            "the folder of other tabs' worktrees".into(),
            d,
        );
    }
    for (i, d) in t.data_dirs.iter().enumerate() {
        create(format!("data-dir-{i}"), "nerdr's data folder".into(), d);
    }
    for (i, d) in t.host_dirs.iter().enumerate() {
        create(format!("host-dir-{i}"), d.what.clone(), &d.file);
    }
    for (i, f) in t.git_configs.iter().enumerate() {
        add(
            format!("git-config-{i}"),
            format!("the git config {} (opened for writing)", shown(f)),
            Try::OpenForWrite { file: f.clone() },
        );
    }
    for (i, f) in t.host_files.iter().enumerate() {
        add(
            format!("host-file-{i}"),
            format!("{} {} (opened for writing)", f.what, shown(&f.file)),
            Try::OpenForWrite {
                file: f.file.clone(),
            },
        );
    }
    for (i, l) in t.links.iter().enumerate() {
        add(
            format!("link-{i}"),
            format!(
                "{} {}, a link or under one (replaced)",
                l.what,
                shown(&l.file)
            ),
            Try::OpenForWrite {
                file: l.file.clone(),
            },
        );
    }
    Plan { checks }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(p: &str) -> FileId {
        FileId {
            path: p.into(),
            dev: 1,
            ino: 2,
            mount: None,
        }
    }

    fn named(what: &str, p: &str) -> Named {
        Named {
            what: what.into(),
            file: id(p),
        }
    }

    #[test]
    fn every_target_gets_its_checks() {
        let t = Targets {
            run_dir: Some(id("/run/user/1/nerdr")),
            client_socket: Some(id("/run/user/1/nerdr/client.sock")),
            client_key: Some(id("/run/user/1/nerdr/key")),
            processes: vec![
                Proc {
                    role: "core",
                    pid: 10,
                    start_time: 5,
                },
                Proc {
                    role: "holder",
                    pid: 11,
                    start_time: 6,
                },
            ],
            config_dir: Some(id("/h/.config/nerdr")),
            state_dir: Some(id("/h/.local/state/nerdr")),
            git_configs: vec![id("/r/.git/config")],
            git_hooks: vec![id("/r/.git/hooks")],
            git_dirs: vec![id("/r/.git")],
            git_infos: vec![id("/r/.git/info")],
            worktree_dirs: vec![id("/d/worktrees/r")],
            data_dirs: vec![id("/d"), id("/d/worktrees")],
            runtime_root: Some(id("/run/user/1")),
            user_sockets: vec![id("/run/user/1/bus"), id("/run/user/1/systemd/private")],
            host_files: vec![named("nerdr's executable", "/b/nerdr")],
            host_dirs: vec![named("a PATH folder", "/b")],
            links: vec![named("a PATH folder", "/b")],
            mount_table: true,
            processes_reachable_by_proc: true,
        };
        let ids: Vec<String> = plan(&t).checks.into_iter().map(|c| c.id).collect();
        assert_eq!(
            ids,
            [
                "client-dir",
                "client-socket",
                "client-key",
                "runtime-dir",
                "user-socket-0",
                "user-socket-1",
                "mount-table",
                "core-environ",
                "core-fd",
                "core-mem",
                "core-pidfd-getfd",
                "core-ptrace",
                "holder-environ",
                "holder-fd",
                "holder-mem",
                "holder-pidfd-getfd",
                "holder-ptrace",
                "config-dir",
                "state-dir",
                "git-hooks-0",
                "git-dir-0",
                "git-info-0",
                "worktrees-0",
                "data-dir-0",
                "data-dir-1",
                "host-dir-0",
                "git-config-0",
                "host-file-0",
                "link-0",
            ]
        );
        // macOS: no /proc, pidfd or ptrace checks.
        let t = Targets {
            processes_reachable_by_proc: false,
            ..t
        };
        assert!(plan(&t)
            .checks
            .iter()
            .all(|c| !matches!(c.try_, Try::Process { .. })));
        // A plan goes through the command line and back whole.
        let p = plan(&t);
        let back: Plan = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        assert_eq!(back, p);
    }
}
