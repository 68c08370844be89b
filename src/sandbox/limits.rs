//! The sandbox's limits in plain words, for the program inside: a short
//! file at [`bwrap::LIMITS_PATH`](super::bwrap::LIMITS_PATH) (named by
//! `NERDR_SANDBOX_LIMITS`), so that an agent whose command fails with
//! "Read-only file system", "Permission denied", a 403 from the proxy or
//! "Operation not permitted" can tell which limit it met and what the
//! person can change. Pure: built from the same [`Layout`] bubblewrap's
//! arguments are built from (so a path another part of nerdr makes
//! writable or protected shows up here by itself), and bound into the
//! sandbox read-only from memory (`--ro-bind-data`): nothing is left on
//! the host.

use std::path::{Path, PathBuf};

use super::bwrap::{Entry, Layout};
use super::git_layout::GitLayout;
use super::weaken::Weakening;

/// The variable naming it.
pub const VAR: &str = "NERDR_SANDBOX_LIMITS";

/// The network as the proxy applies it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetWords {
    /// The proxy's address inside (`http://127.0.0.1:3128`).
    pub proxy: String,
    /// What is allowed (`advice::allowed_summary`).
    pub allowed: String,
    /// Hosts on neither list are asked about (a nerdr tab).
    pub asks: bool,
}

/// The file's text.
pub fn text(l: &Layout, net: &NetWords) -> String {
    let w = &l.weaken;
    let mut out = String::from(
        "nerdr sandbox: the limits of this sandbox. A command failing on one of them \
         (\"Read-only file system\", \"Permission denied\", \"No such file\", a 403 from the \
         proxy, \"Operation not permitted\", \"Device or resource busy\" when replacing a \
         read-only file such as git's packed-refs) met a limit, not a bug: say which to the \
         user.\n\n",
    );

    let mut writable: Vec<PathBuf> = vec![l.worktree.clone()];
    writable.extend(l.writable.iter().map(|e| e.path.clone()));
    writable.extend(git_writable(&l.git));
    if w.has(Weakening::HomeWritable) {
        writable.push(l.home.clone());
    }
    section(
        &mut out,
        "Writable (everything else is read-only)",
        &writable,
    );
    out.push_str("  /tmp (private to this sandbox, empty at start)\n");
    if !l.agent_config.is_empty() {
        out.push_str(
            "  your own config folders are private copies: what in them starts programs \
             (MCP servers, hooks, plugins, notify commands, trust answers) is not carried back \
             after the run; the rest (sign-in, history) is\n",
        );
    }
    if let Some(common) = l.git.common() {
        out.push_str(&format!(
            "  {}: objects, refs and logs are a private copy: new commits on the branch you \
             started on come home to the repository (while you run and at the end); changes to \
             other branches and tags stay in the copy and are never carried back\n",
            shown(common)
        ));
    }
    out.push('\n');

    let mut read_only: Vec<PathBuf> = git_protected(l);
    if !w.has(Weakening::NerdrWritable) {
        // The state dir is listed as hidden below.
        read_only.extend(
            l.nerdr_read_only
                .iter()
                .filter(|p| Some(*p) != l.state_dir.as_ref())
                .cloned(),
        );
    }
    read_only.extend(l.read_only.iter().map(|e| e.path.clone()));
    // The agent's config that starts programs (`agent_config`).
    read_only.extend(
        l.agent_config
            .iter()
            .filter(|b| b.read_only)
            .map(|b| b.dest.clone()),
    );
    section(
        &mut out,
        "Read-only even inside the writable places (git admin files, nerdr's folders, \
         protected settings)",
        &read_only,
    );
    out.push('\n');

    let mut hidden: Vec<PathBuf> = Vec::new();
    if !w.has(Weakening::CredsVisible) {
        hidden.extend(l.hidden.iter().map(|e: &Entry| e.path.clone()));
    }
    if !w.has(Weakening::RuntimeVisible) {
        hidden.extend(l.runtime_dir.iter().cloned());
        hidden.extend(l.nerdr_run_dir.iter().cloned());
        hidden.extend(l.system_sockets.iter().cloned());
    }
    if !w.has(Weakening::NerdrWritable) {
        // Empty but for the hook socket and this session's proxy socket.
        hidden.extend(l.state_dir.iter().cloned());
    }
    // Empty but for this tab's own worktree.
    hidden.extend(l.data_hidden.iter().cloned());
    section(
        &mut out,
        "Hidden (empty or missing inside: credentials, the login's sockets, nerdr's state but \
         for its sockets, other tabs' worktrees)",
        &hidden,
    );
    if l.worktree_only {
        out.push_str(
            "nerdr: unreachable from here (--worktree-only: no hook socket); nerdr commands \
             that need it fail, and reports go as JSON lines to reports.jsonl in \
             $NERDR_DATA_DIR, which nerdr reads\n",
        );
    }
    out.push('\n');

    out.push_str("Network:\n");
    if w.has(Weakening::NoNetNs) {
        out.push_str("  the host's network, unfiltered (WEAKENED for testing)\n");
    } else {
        let others = if net.asks {
            "a request to any other host waits while the user is asked (allow once, for this \
             run, or deny); with no answer it is refused"
        } else {
            "a request to any other host is refused with 403 (no one can be asked: no nerdr \
             window is attached, or this sandbox runs outside nerdr)"
        };
        out.push_str(&format!(
            "  no direct connections: the only way out is nerdr's proxy at {} \
             (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY are set); programs that ignore them have no \
             network\n  allowed: {}\n  {others}\n  to allow a host for good, the user adds it to \
             sandbox.network.allowedDomains in {}\n\n",
            net.proxy,
            net.allowed,
            crate::proxy::advice::SETTINGS_FILES
        ));
    }

    out.push_str("Privileges:\n");
    out.push_str("  no new privileges (setuid programs, sudo, su do not work), no capabilities\n");
    let seccomp = !w.has(Weakening::NoSeccomp) && !l.seccomp_fds.is_empty();
    // bwrap's --disable-userns, or else the seccomp filter, refuses them.
    if (l.bwrap_disables_userns || seccomp) && !w.has(Weakening::UsernsAllowed) {
        out.push_str("  no nested namespaces (unshare, bwrap, containers inside fail)\n");
    }
    if seccomp {
        out.push_str("  typing into the terminal from a program (TIOCSTI, TIOCLINUX) is blocked\n");
    }
    if !w.has(Weakening::NoPidNs) {
        out.push_str("  own process list: programs outside the sandbox are not visible\n");
    }
    out
}

fn section(out: &mut String, title: &str, paths: &[PathBuf]) {
    out.push_str(title);
    out.push_str(":\n");
    if paths.is_empty() {
        out.push_str("  (none)\n");
    }
    for p in paths {
        out.push_str(&format!("  {}\n", shown(p)));
    }
}

/// A path on one line, whatever bytes it holds.
fn shown(p: &Path) -> String {
    crate::protocol::printable(&p.to_string_lossy())
}

/// What of git's admin folders a commit writes: the worktree's own admin
/// dir (a main checkout's `.git`); the repository's objects, refs and
/// logs are private copies, said apart in [`text`].
fn git_writable(git: &GitLayout) -> Vec<PathBuf> {
    match git {
        GitLayout::None => Vec::new(),
        GitLayout::Main { git_dir, .. } => vec![git_dir.clone()],
        GitLayout::Linked { admin_dir, .. } => vec![admin_dir.clone()],
    }
}

/// The git admin files that stay read-only, as the weakenings leave them.
fn git_protected(l: &Layout) -> Vec<PathBuf> {
    let w = &l.weaken;
    let (protected, dot_git) = match &l.git {
        GitLayout::None => return Vec::new(),
        GitLayout::Main { protected, .. } => (protected, None),
        GitLayout::Linked {
            protected, dot_git, ..
        } => (protected, Some(dot_git.clone())),
    };
    let mut out: Vec<PathBuf> = dot_git.into_iter().collect();
    if !w.has(Weakening::HooksWritable) {
        out.extend(protected.hooks.iter().cloned());
    }
    if !w.has(Weakening::GitConfigWritable) {
        out.extend(protected.config.iter().cloned());
    }
    out.extend(protected.other.iter().cloned());
    out
}

#[cfg(test)]
#[path = "limits_tests.rs"]
mod tests;
