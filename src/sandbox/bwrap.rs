//! bubblewrap's argument vector, from plain data. Pure: every path here was
//! resolved (symlinks followed) and checked for existence by `facts.rs`;
//! this file only decides what is mounted where, and in which order.
//!
//! Order matters, because a later mount covers an earlier one:
//! 1. the host's root read-only, fresh `/dev` and `/proc`, a private `/tmp`
//!    (with the home folder and nerdr's binary kept if they lie in it);
//! 2. the runtime dir hidden (tmpfs), then the sockets the user allowed;
//! 3. nerdr's data folders that are other tabs' business hidden (other
//!    tabs' worktrees, other runs' private git copies and audit trails), so
//!    that what follows binds the agent's own back inside them; then what
//!    the agent may write: its own config dirs (then, over them, its
//!    private config copies and read-only config), `allowWrite`, the
//!    worktree, and what `git commit` writes (the admin dir, and private
//!    copies over the repository's objects, refs and logs, with the real
//!    objects read-only inside the private store);
//! 4. read-only again inside those: `.git/hooks`, `.git/config` and the other
//!    git admin files, nerdr's config and state, `denyWrite`; then nerdr's
//!    state dir an empty tmpfs with the hook socket alone (not even that
//!    with `--worktree-only`); over the proxy sockets' folder an empty
//!    tmpfs with only this session's socket;
//! 5. last, hidden: credential stores, `denyRead`, nerdr's client socket
//!    folder, the system bus and the journal's sockets, so nothing bound
//!    before can expose them.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::git_layout::GitLayout;
use super::private_git::{PrivateGit, SHARED};
use super::weaken::{Weaken, Weakening};

/// A path that exists, and whether it is a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: PathBuf,
    pub dir: bool,
}

impl Entry {
    pub fn dir(p: impl Into<PathBuf>) -> Self {
        Entry {
            path: p.into(),
            dir: true,
        }
    }
    #[cfg(test)]
    pub fn file(p: impl Into<PathBuf>) -> Self {
        Entry {
            path: p.into(),
            dir: false,
        }
    }
}

/// A bind of `src` at `dest` (the agent's private config copies, and
/// what of its config is read-only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bind {
    pub src: PathBuf,
    pub dest: PathBuf,
    pub read_only: bool,
}

impl Bind {
    pub fn rw(src: &Path, dest: &Path) -> Self {
        Bind {
            src: src.to_path_buf(),
            dest: dest.to_path_buf(),
            read_only: false,
        }
    }
    /// The same path inside as outside.
    pub fn same(p: &Path, read_only: bool) -> Self {
        Bind {
            src: p.to_path_buf(),
            dest: p.to_path_buf(),
            read_only,
        }
    }
}

/// Everything the argument vector depends on.
#[derive(Debug, Clone)]
pub struct Layout {
    pub home: PathBuf,
    /// Folders under `/tmp` that stay visible (read-only) over the private
    /// `/tmp`: the home folder and nerdr's own binary, where they lie there.
    pub keep_in_tmp: Vec<PathBuf>,
    /// `$XDG_RUNTIME_DIR`, if it exists.
    pub runtime_dir: Option<PathBuf>,
    /// nerdr's config and state dirs (those that exist): read-only.
    pub nerdr_read_only: Vec<PathBuf>,
    /// The folder of every session's proxy socket, if it exists: an empty
    /// tmpfs with only this session's socket (`network_binds`) in it, so
    /// no other session's proxy (and policy) is reachable.
    pub proxy_dir: Option<PathBuf>,
    /// nerdr's state dir, if it exists: hidden (an empty, read-only tmpfs
    /// over the read-only bind) but for `hook_socket` and `proxy_dir`. It
    /// holds the tab list, the core's log and the audit file, which name
    /// every tab: a sandboxed agent must not tell which tabs exist.
    pub state_dir: Option<PathBuf>,
    /// nerdr's data folders that exist and hold other tabs' and runs'
    /// work: `worktrees` (every tab's uncommitted work), `sandbox-git`
    /// (every run's private commits) and `audit` (every run's commands and
    /// hosts). Hidden (an empty, read-only tmpfs) before the worktree is
    /// bound, so a tab's own worktree inside comes back and no other does.
    /// `nerdr sandbox` refuses a worktree holding one of them (its bind
    /// would bring them all back).
    pub data_hidden: Vec<PathBuf>,
    /// The hook socket (inside `state_dir`), if it exists: kept, so
    /// `nerdr` commands and hooks inside reach the core (unless
    /// `worktree_only`).
    pub hook_socket: Option<PathBuf>,
    /// `nerdr sandbox --worktree-only`: the hook socket stays hidden with
    /// the rest of nerdr's state dir, so the program reaches nerdr only
    /// through files in its worktree (`crate::file_reports`).
    pub worktree_only: bool,
    /// nerdr's client socket folder, if it exists: hidden.
    pub nerdr_run_dir: Option<PathBuf>,
    /// The system's sockets that exist (`/run/dbus`, the journal's):
    /// hidden, so the agent can neither reach the system bus nor write
    /// journal entries that look like nerdr's audit entries.
    pub system_sockets: Vec<PathBuf>,
    /// The worktree (writable) and where the program starts.
    pub worktree: PathBuf,
    pub cwd: PathBuf,
    pub git: GitLayout,
    /// The private copies of the repository's history (`private_git`).
    /// Without them the repository's history stays read-only and commits
    /// fail: never the repository's own folders writable.
    pub private_git: Option<PrivateGit>,
    /// The agent's own config and cache dirs, and `allowWrite`.
    pub writable: Vec<Entry>,
    /// Over the agent's dirs, in order: its private config copies and
    /// shadow folders, and its read-only config (`config_guard`).
    pub agent_config: Vec<Bind>,
    /// `denyWrite`, and files the agent must not change for its next run
    /// (the user's own settings inside its config dir).
    pub read_only: Vec<Entry>,
    /// Credential stores and `denyRead`.
    pub hidden: Vec<Entry>,
    /// `allowUnixSockets` that would otherwise be hidden.
    pub sockets: Vec<PathBuf>,
    /// PROXY SEAM: binds the network plan adds (the proxy's Unix socket).
    pub network_binds: Vec<PathBuf>,
    /// This bubblewrap has `--disable-userns` (0.8.0 and later).
    pub bwrap_disables_userns: bool,
    /// The descriptors bwrap reads the seccomp programs from.
    pub seccomp_fds: Vec<i32>,
    /// The descriptor bwrap reports the child's pid and exit on.
    pub status_fd: Option<i32>,
    /// LIMITS SEAM: the descriptor bwrap reads the limits file from
    /// (`limits.rs`), bound read-only at [`LIMITS_PATH`].
    pub limits_fd: Option<i32>,
    pub weaken: Weaken,
    pub cmd: Vec<OsString>,
}

/// Where the limits file (`limits.rs`) is inside: the private `/tmp` is
/// the one place bwrap can create a file to mount on.
pub const LIMITS_PATH: &str = "/tmp/nerdr-sandbox-limits.txt";

/// The kernel features the arguments ask for, for the audit trail.
pub fn features(l: &Layout) -> Vec<&'static str> {
    let mut f = vec!["user-ns", "mount-ns"];
    if !l.weaken.has(Weakening::NoPidNs) {
        f.push("pid-ns");
    }
    if !l.weaken.has(Weakening::NoNetNs) {
        f.push("net-ns");
    }
    f.extend(["ipc-ns", "uts-ns", "no-new-privs", "cap-drop-all"]);
    if !l.seccomp_fds.is_empty() && !l.weaken.has(Weakening::NoSeccomp) {
        f.push("seccomp");
    }
    if l.bwrap_disables_userns && !l.weaken.has(Weakening::UsernsAllowed) {
        f.push("disable-userns");
    }
    f
}

/// bwrap's arguments (without the program name).
pub fn args(l: &Layout) -> Vec<OsString> {
    let mut a = Args::default();
    let w = &l.weaken;

    // 1. The host read-only; fresh /dev, /proc; private /tmp.
    a.push(["--ro-bind", "/", "/"]);
    a.push(["--dev", "/dev"]);
    a.push(["--proc", "/proc"]);
    a.push(["--tmpfs", "/tmp"]);
    for p in &l.keep_in_tmp {
        a.bind("--ro-bind", p);
    }

    // 2. The runtime dir: the user bus, systemd's private socket, nerdr's
    // client socket and every other per-login socket live there.
    if !w.has(Weakening::RuntimeVisible) {
        if let Some(rt) = &l.runtime_dir {
            a.path2("--tmpfs", rt);
        }
    }
    for s in &l.sockets {
        a.bind("--bind", s);
    }

    // 3. What the agent writes.
    if w.has(Weakening::HomeWritable) {
        a.bind("--bind", &l.home);
    }
    // Other tabs' worktrees and other runs' history: empty folders, before
    // the agent's own worktree (and what it writes) is bound back inside.
    for d in &l.data_hidden {
        a.path2("--tmpfs", d);
    }
    if let Some(git_dir) = git_dir_in_hidden_data(l) {
        a.bind("--ro-bind", git_dir);
    }
    for e in &l.writable {
        a.bind("--bind", &e.path);
    }
    for b in &l.agent_config {
        a.path2(if b.read_only { "--ro-bind" } else { "--bind" }, &b.src);
        a.path(&b.dest);
    }
    a.bind("--bind", &l.worktree);
    let git_protected = git_binds(&l.git, l.private_git.as_ref(), w, &mut a);

    // 4. Read-only inside what was made writable.
    for (flag, p) in &git_protected {
        a.bind(flag, p);
    }
    if !w.has(Weakening::NerdrWritable) {
        for p in &l.nerdr_read_only {
            a.bind("--ro-bind", p);
        }
    } else {
        for p in &l.nerdr_read_only {
            a.bind("--bind", p);
        }
    }
    for e in &l.read_only {
        a.bind("--ro-bind", &e.path);
    }
    // nerdr's state dir names every tab (its tab list, logs, audit file):
    // an empty folder in its place, with the hook socket alone.
    let state = l
        .state_dir
        .as_ref()
        .filter(|_| !w.has(Weakening::NerdrWritable));
    if let Some(dir) = state {
        a.path2("--tmpfs", dir);
        if let Some(s) = l.hook_socket.as_ref().filter(|_| !l.worktree_only) {
            a.bind("--ro-bind", s);
        }
    }
    // After nerdr's state dir (it holds the folder): this session's socket
    // alone in an empty folder.
    if let Some(dir) = &l.proxy_dir {
        a.path2("--tmpfs", dir);
    }
    for s in &l.network_binds {
        a.bind("--bind", s);
    }
    if let Some(dir) = &l.proxy_dir {
        a.path2("--remount-ro", dir);
    }
    if let Some(dir) = state {
        a.path2("--remount-ro", dir);
    }
    for d in &l.data_hidden {
        a.path2("--remount-ro", d);
    }

    // 5. Hidden last.
    let mut hidden: Vec<Entry> = Vec::new();
    if !w.has(Weakening::CredsVisible) {
        hidden.extend(l.hidden.iter().cloned());
    }
    if !w.has(Weakening::RuntimeVisible) {
        if let Some(run) = &l.nerdr_run_dir {
            hidden.push(Entry::dir(run.clone()));
        }
        hidden.extend(l.system_sockets.iter().cloned().map(Entry::dir));
    }
    // What lies in the state dir is hidden with it already, and bwrap
    // could not make a mount point in its read-only, empty stand-in.
    if let Some(dir) = state {
        hidden.retain(|e| !e.path.starts_with(dir));
    }
    hidden.retain(|e| !in_hidden_data(l, &e.path));
    for e in &hidden {
        if e.dir {
            // An empty, read-only directory in its place.
            a.path2("--tmpfs", &e.path);
            a.path2("--remount-ro", &e.path);
        } else {
            a.push(["--ro-bind", "/dev/null"]);
            a.path(&e.path);
        }
    }

    // The limits in words, last of the mounts, inside the private /tmp.
    if let Some(fd) = l.limits_fd {
        a.push([
            "--ro-bind-data".to_string(),
            fd.to_string(),
            LIMITS_PATH.to_string(),
        ]);
    }

    // Namespaces and privileges.
    a.push(["--unshare-user"]);
    if !w.has(Weakening::NoPidNs) {
        a.push(["--unshare-pid"]);
    }
    if !w.has(Weakening::NoNetNs) {
        a.push(["--unshare-net"]);
    }
    a.push(["--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]);
    a.push(["--die-with-parent", "--cap-drop", "ALL"]);
    if l.bwrap_disables_userns && !w.has(Weakening::UsernsAllowed) {
        a.push(["--disable-userns"]);
    }
    if !w.has(Weakening::NoSeccomp) {
        for fd in &l.seccomp_fds {
            a.push(["--add-seccomp-fd".to_string(), fd.to_string()]);
        }
    }
    if let Some(fd) = l.status_fd {
        a.push(["--json-status-fd".to_string(), fd.to_string()]);
    }
    a.path2("--chdir", &l.cwd);
    a.push(["--"]);
    a.0.extend(l.cmd.iter().cloned());
    a.0
}

/// The repository's git dir, when it lies in one of nerdr's hidden data
/// folders outside the worktree (a repository kept inside a tab's
/// worktree): read-only again, as the host's `/` is, or git finds no
/// repository. `None` for every other layout.
fn git_dir_in_hidden_data(l: &Layout) -> Option<&Path> {
    let common = l.git.common()?;
    let hidden = l.data_hidden.iter().any(|d| common.starts_with(d));
    (hidden && !common.starts_with(&l.worktree)).then_some(common)
}

/// `p` lies in a hidden data folder and in nothing bound back after it
/// (the worktree, the git dir, what the agent writes): it is hidden
/// already, and bwrap could not make a mount point for it in the
/// read-only, empty folder.
fn in_hidden_data(l: &Layout, p: &Path) -> bool {
    let back = [l.worktree.as_path()]
        .into_iter()
        .chain(git_dir_in_hidden_data(l))
        .chain(l.writable.iter().map(|e| e.path.as_path()))
        .chain(l.agent_config.iter().map(|b| b.dest.as_path()));
    l.data_hidden.iter().any(|d| p.starts_with(d)) && !back.into_iter().any(|b| p.starts_with(b))
}

/// Bind what `git commit` writes (into `a`), and return what must then be
/// bound on top: read-only, or writable where a weakening says so (the
/// common dir of a linked worktree is read-only to begin with).
fn git_binds(
    git: &GitLayout,
    private: Option<&PrivateGit>,
    w: &Weaken,
    a: &mut Args,
) -> Vec<(&'static str, PathBuf)> {
    let common = match git {
        GitLayout::None => return Vec::new(),
        GitLayout::Main { git_dir, .. } => {
            // Bound onto itself so it is a mount point: a mount point cannot
            // be renamed or removed, so `.git` cannot be replaced.
            a.bind("--bind", git_dir);
            git_dir
        }
        GitLayout::Linked {
            admin_dir, common, ..
        } => {
            a.bind("--bind", admin_dir);
            common
        }
    };
    if let Some(p) = private {
        // The private store over the objects, then the real objects
        // read-only inside it where its alternates file looks, then its
        // `info` read-only (no alternates of the program's own). Mount
        // points all, so none can be renamed away.
        let objects = common.join("objects");
        a.bind_to("--bind", &p.objects, &objects);
        a.bind_to("--ro-bind", &objects, &objects.join(SHARED));
        a.bind_to("--ro-bind", &p.objects.join("info"), &objects.join("info"));
        a.bind_to("--bind", &p.refs, &common.join("refs"));
        a.bind_to("--bind", &p.logs, &common.join("logs"));
    }
    protected_binds(git, w)
}

/// What of the git data is bound over the writable places, and how: the
/// `Protected` lists (read-only unless a test weakening says otherwise),
/// and a linked worktree's `.git` file.
fn protected_binds(git: &GitLayout, w: &Weaken) -> Vec<(&'static str, PathBuf)> {
    let mut out = Vec::new();
    let protected = match git {
        GitLayout::None => return out,
        GitLayout::Main { protected, .. } => protected,
        GitLayout::Linked {
            dot_git, protected, ..
        } => {
            // The `.git` file points host git at the admin dir.
            out.push(("--ro-bind", dot_git.clone()));
            protected
        }
    };
    let flag = |weakening| {
        if w.has(weakening) {
            "--bind"
        } else {
            "--ro-bind"
        }
    };
    for p in &protected.hooks {
        out.push((flag(Weakening::HooksWritable), p.clone()));
    }
    for p in &protected.config {
        out.push((flag(Weakening::GitConfigWritable), p.clone()));
    }
    for p in &protected.other {
        out.push(("--ro-bind", p.clone()));
    }
    out
}

/// The repository's paths the program cannot write, for sandbox history:
/// what [`protected_binds`] binds read-only, and the repository's own
/// `objects`, `refs` and `logs`, which every run replaces by private
/// copies (`private_git::prepare` makes them for any repository, or the
/// run does not start).
pub fn kept_read_only(git: &GitLayout, w: &Weaken) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = protected_binds(git, w)
        .into_iter()
        .filter(|(flag, _)| *flag == "--ro-bind")
        .map(|(_, p)| p)
        .collect();
    if let Some(common) = git.common() {
        out.extend(["objects", "refs", "logs"].map(|n| common.join(n)));
    }
    out
}

#[derive(Default)]
struct Args(Vec<OsString>);

impl Args {
    fn push<S: Into<OsString>, const N: usize>(&mut self, words: [S; N]) {
        self.0.extend(words.map(Into::into));
    }
    fn path(&mut self, p: &Path) {
        self.0.push(p.as_os_str().to_owned());
    }
    fn path2(&mut self, flag: &str, p: &Path) {
        self.0.push(flag.into());
        self.path(p);
    }
    /// `flag P P`: the same path inside as outside.
    fn bind(&mut self, flag: &str, p: &Path) {
        self.path2(flag, p);
        self.path(p);
    }
    /// `flag FROM TO`: the host's `from` at `to` inside.
    fn bind_to(&mut self, flag: &str, from: &Path, to: &Path) {
        self.path2(flag, from);
        self.path(to);
    }
}

#[cfg(test)]
#[path = "bwrap_tests.rs"]
mod tests;
