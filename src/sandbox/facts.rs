//! The edge: read the disk and the environment into the plain
//! [`Layout`] the bwrap builder decides from. Every path is resolved
//! (symlinks followed) here, so a bind can never be redirected by a link
//! the agent planted; what does not exist is left out (bwrap cannot bind
//! it), except the agent's own config dirs, which are created.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::bwrap::{Entry, Layout};
use super::git_layout;
use super::settings::Effective;
use super::weaken::Weaken;
use crate::paths::Paths;

/// Where each agent keeps its sign-in state, config and caches (relative to
/// HOME): writable in its sandbox, except what `agent_config` protects
/// (`~/.claude.json`, for one, is seen as a private copy). Directories end
/// in `/`; a missing one is created, a missing file (a JSON config) is
/// created as `{}`, since the agent cannot create either in a read-only
/// home.
pub(crate) fn agent_paths(agent: &str) -> &'static [&'static str] {
    match agent {
        "claude" => &[
            ".claude/",
            ".claude.json",
            ".cache/claude/",
            ".cache/claude-cli-nodejs/",
        ],
        "codex" => &[".codex/"],
        "opencode" => &[
            ".config/opencode/",
            ".local/share/opencode/",
            ".local/state/opencode/",
            ".cache/opencode/",
        ],
        "gemini" | "agy" => &[".gemini/"],
        "copilot" => &[".copilot/"],
        "cursor-agent" => &[".cursor/", ".config/cursor/"],
        "grok" => &[".grok/"],
        _ => &[],
    }
}

/// The agents whose dirs [`agent_paths`] knows: each one's are hidden from
/// every other agent (sign-in tokens, transcripts).
const AGENTS: &[&str] = &[
    "claude",
    "codex",
    "opencode",
    "gemini",
    "copilot",
    "cursor-agent",
    "grok",
];

/// What the sandbox of `agent` hides, relative to HOME: the credential
/// stores and every other agent's dirs (the agent's own stay writable).
pub fn hidden_paths(agent: &str) -> Vec<&'static str> {
    let own = agent_paths(agent);
    let mut out: Vec<&'static str> = CREDENTIAL_STORES.to_vec();
    for other in AGENTS {
        for p in agent_paths(other) {
            let p = p.trim_end_matches('/');
            if !own.iter().any(|o| o.trim_end_matches('/') == p) && !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// Every agent's own dirs and files that exist, resolved: what some
/// agent's sandbox can write.
pub fn all_agent_dirs(home: &Path) -> Vec<PathBuf> {
    AGENTS
        .iter()
        .flat_map(|a| agent_paths(a))
        .filter_map(|rel| canonical(&home.join(rel.trim_end_matches('/'))))
        .collect()
}

/// Why a trusted `allowWrite` entry must not be made writable, or `None`:
/// a relative entry or one reached through a symlink in a folder the agent
/// writes (the agent chooses where it leads), or one that would hand over
/// home, `/` or the runtime dir (it would undo the sandbox's own mounts).
fn unsafe_to_write(
    written_as: &str,
    written: &Path,
    real: &Path,
    home: &Path,
    runtime: Option<&Path>,
    agent_writable: &[PathBuf],
) -> Option<String> {
    if !written_as.starts_with('/') && !written_as.starts_with('~') {
        return Some("write it as an absolute path (or from ~/)".into());
    }
    if written != real && agent_writable.iter().any(|w| written.starts_with(w)) {
        return Some(format!(
            "it leads through a folder the sandbox writes to {}",
            real.display()
        ));
    }
    let covers = |p: &Path| p.starts_with(real);
    if covers(home) || runtime.is_some_and(covers) {
        return Some(format!(
            "{} is, or holds, your home or the runtime dir",
            real.display()
        ));
    }
    None
}

/// Credential stores, relative to HOME: hidden unless `allowRead` names
/// them.
pub const CREDENTIAL_STORES: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gh",
    ".config/hub",
    ".docker",
    ".kube",
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".local/share/keyrings",
    ".password-store",
    ".azure",
    ".config/gcloud",
    ".vault-token",
    ".pgpass",
    ".pypirc",
    ".npmrc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".config/containers/auth.json",
    ".terraform.d",
    ".m2/settings.xml",
    ".gradle/gradle.properties",
    ".gem/credentials",
    ".config/op",
    ".config/rclone",
    ".s3cfg",
    ".config/sops",
    // Browser profiles: cookies and saved passwords.
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/vivaldi",
    ".config/microsoft-edge",
    // Shell and REPL histories: tokens typed on command lines.
    ".bash_history",
    ".zsh_history",
    ".histfile",
    ".local/share/fish/fish_history",
    ".python_history",
    ".node_repl_history",
    ".psql_history",
    ".mysql_history",
];

/// nerdr's data folders (in `$NERDR_DATA_DIR`) that are other tabs' and
/// runs' business: every tab's worktree (uncommitted work `nerdr diff`
/// would not show another tab), every run's private git copy (its
/// commits not yet home) and audit trail (its commands, paths, hosts).
/// Hidden from every sandbox; its own worktree and private copy are bound
/// back. nerdr's state folder (tab list, reviews, spinoffs, handoffs,
/// drafts, logs) is hidden as a whole (`Layout::state_dir`).
pub const DATA_HIDDEN: &[&str] = &["worktrees", "sandbox-git", "audit"];

/// The system bus and journald's sockets.
const SYSTEM_SOCKETS: &[&str] = &["/run/dbus", "/run/systemd/journal"];

/// What `gather` needs besides the disk.
pub struct Inputs<'a> {
    pub home: &'a Path,
    pub runtime_dir: Option<&'a Path>,
    pub paths: &'a Paths,
    pub worktree: &'a Path,
    pub cwd: &'a Path,
    pub agent: &'a str,
    pub settings: &'a Effective,
    pub network_binds: Vec<PathBuf>,
    pub bwrap_disables_userns: bool,
    pub weaken: Weaken,
    pub cmd: Vec<OsString>,
}

/// Gather the layout; problems worth telling (a listed path that does not
/// exist) come back as warnings.
pub fn gather(i: Inputs) -> anyhow::Result<(Layout, Vec<String>)> {
    let mut warnings = Vec::new();
    let home = canonical(i.home).unwrap_or_else(|| i.home.to_path_buf());
    let expand = |s: &str| -> PathBuf {
        if s == "~" {
            home.clone()
        } else if let Some(rest) = s.strip_prefix("~/") {
            home.join(rest)
        } else if Path::new(s).is_absolute() {
            PathBuf::from(s)
        } else {
            i.worktree.join(s)
        }
    };

    let mut writable = Vec::new();
    for rel in agent_paths(i.agent) {
        let (rel, dir) = match rel.strip_suffix('/') {
            Some(r) => (r, true),
            None => (*rel, false),
        };
        let p = home.join(rel);
        if std::fs::symlink_metadata(&p).is_err() {
            use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
            if dir {
                let _ = std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(&p);
            } else {
                let created = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(&p);
                if let Ok(mut f) = created {
                    use std::io::Write;
                    let _ = f.write_all(b"{}\n");
                }
            }
        }
        if let Some(e) = entry(&p) {
            writable.push(e);
        }
    }
    let worktree = canonical(i.worktree).unwrap_or_else(|| i.worktree.to_path_buf());
    let runtime = i.runtime_dir.and_then(canonical);
    let agent_writable: Vec<PathBuf> = writable
        .iter()
        .map(|e: &Entry| e.path.clone())
        .chain([worktree.clone()])
        .collect();
    for s in &i.settings.filesystem.allow_write {
        let written = expand(s);
        match entry(&written) {
            Some(e) => match unsafe_to_write(s, &written, &e.path, &home, runtime.as_deref(), &agent_writable) {
                Some(why) => warnings.push(format!("filesystem.allowWrite: {s} is ignored: {why}")),
                None => writable.push(e),
            },
            None => warnings.push(format!(
                "filesystem.allowWrite: {s} does not exist; create it to let the sandbox write there"
            )),
        }
    }

    // The agent's own config that starts programs (and
    // `~/.claude/settings.json`, which nerdr trusts) is `config_guard`'s.
    let mut read_only = Vec::new();
    // Outside what the sandbox writes everything is read-only already; a
    // read-only bind there would bring the host's own /tmp, /proc or
    // runtime dir back over the sandbox's private ones.
    let writable_now: Vec<PathBuf> = writable
        .iter()
        .map(|e: &Entry| e.path.clone())
        .chain([worktree.clone()])
        .collect();
    for s in &i.settings.filesystem.deny_write {
        match entry(&expand(s)) {
            Some(e) if writable_now.iter().any(|w| e.path.starts_with(w)) => read_only.push(e),
            Some(_) => warnings.push(format!(
                "filesystem.denyWrite: {s} is outside what the sandbox may write, so it is \
                 read-only already"
            )),
            None => {}
        }
    }

    let allow_read: Vec<PathBuf> = i
        .settings
        .filesystem
        .allow_read
        .iter()
        .filter_map(|s| canonical(&expand(s)))
        .collect();
    let mut hidden = Vec::new();
    for rel in hidden_paths(i.agent) {
        if let Some(e) = entry(&home.join(rel)) {
            if !allow_read.iter().any(|a| e.path.starts_with(a)) {
                hidden.push(e);
            }
        }
    }
    // The cgroup tree names every tab's scope (`nerdr-agent-<tab>.scope`),
    // and the journal's files every tab nerdr logged: a sandboxed agent
    // must not tell which tabs exist.
    for p in ["/sys/fs/cgroup", "/var/log/journal", "/run/log/journal"] {
        hidden.extend(entry(Path::new(p)));
    }
    for s in &i.settings.filesystem.deny_read {
        hidden.extend(entry(&expand(s)));
    }

    let sockets = i
        .settings
        .network
        .allow_unix_sockets
        .iter()
        .filter_map(|s| canonical(&expand(s)))
        .collect();

    let tmp = Path::new("/tmp");
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().and_then(canonical));
    let keep_in_tmp = [Some(home.clone()), exe_dir]
        .into_iter()
        .flatten()
        .filter(|p| p.starts_with(tmp) && p != tmp)
        .fold(Vec::new(), |mut v, p| {
            if !v.contains(&p) {
                v.push(p);
            }
            v
        });

    let runtime_dir = i.runtime_dir.and_then(canonical);
    let nerdr_read_only = [&i.paths.config_dir, &i.paths.state_dir]
        .into_iter()
        .filter_map(|p| canonical(p))
        .collect();
    let system_sockets = SYSTEM_SOCKETS
        .iter()
        .filter_map(|p| canonical(Path::new(p)))
        .collect();
    let proxy_dir = canonical(&i.paths.state_dir.join("sandbox"));
    let state_dir = canonical(&i.paths.state_dir);
    let hook_socket = canonical(&i.paths.hook_socket());
    let data_hidden = DATA_HIDDEN
        .iter()
        .filter_map(|n| canonical(&i.paths.data_dir.join(n)))
        .collect();
    let nerdr_run_dir = canonical(&i.paths.run_dir)
        .filter(|run| !runtime_dir.as_ref().is_some_and(|rt| run.starts_with(rt)));

    let worktree = canonical(i.worktree)
        .ok_or_else(|| anyhow::anyhow!("the worktree {} does not exist", i.worktree.display()))?;
    let git = git_layout::gather(&worktree, &home)?;
    let cwd = canonical(i.cwd).unwrap_or_else(|| worktree.clone());

    Ok((
        Layout {
            home,
            keep_in_tmp,
            runtime_dir,
            nerdr_read_only,
            proxy_dir,
            state_dir,
            data_hidden,
            hook_socket,
            worktree_only: false,
            nerdr_run_dir,
            system_sockets,
            worktree,
            cwd,
            git,
            private_git: None,
            writable,
            agent_config: Vec::new(),
            read_only,
            hidden,
            sockets,
            network_binds: i.network_binds,
            bwrap_disables_userns: i.bwrap_disables_userns,
            seccomp_fds: Vec::new(),
            status_fd: None,
            limits_fd: None,
            weaken: i.weaken,
            cmd: i.cmd,
        },
        warnings,
    ))
}

fn canonical(p: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(p).ok()
}

/// The resolved path and its kind, if it exists.
fn entry(p: &Path) -> Option<Entry> {
    let c = canonical(p)?;
    let dir = c.is_dir();
    Some(Entry { path: c, dir })
}

/// The worktree to use: `--worktree`, else the nearest folder up from
/// `cwd` holding `.git`, else `cwd`.
pub fn find_worktree(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|d| std::fs::symlink_metadata(d.join(".git")).is_ok())
        .unwrap_or(cwd)
        .to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each agent keeps its own dirs and loses every other agent's; the
    /// credential stores are hidden from all.
    #[test]
    fn each_agent_sees_only_its_own_dirs() {
        let rows: &[(&str, &[&str], &[&str])] = &[
            (
                "claude",
                &[".codex", ".gemini", ".config/opencode", ".cursor", ".grok"],
                &[".claude", ".claude.json", ".cache/claude"],
            ),
            (
                "codex",
                &[".claude", ".claude.json", ".cache/claude", ".gemini"],
                &[".codex"],
            ),
            ("agy", &[".claude", ".codex"], &[".gemini"]),
            (
                "opencode",
                &[".claude", ".copilot"],
                &[".config/opencode", ".local/share/opencode"],
            ),
            (
                "bash",
                &[
                    ".claude", ".codex", ".gemini", ".copilot", ".cursor", ".grok",
                ],
                &[],
            ),
        ];
        for (agent, hidden, kept) in rows {
            let got = hidden_paths(agent);
            for h in *hidden {
                assert!(got.contains(h), "{agent}: {h} not hidden");
            }
            for k in *kept {
                assert!(!got.contains(k), "{agent}: its own {k} hidden");
            }
            for c in [
                ".ssh",
                ".npmrc",
                ".mozilla",
                ".bash_history",
                ".config/rclone",
            ] {
                assert!(got.contains(&c), "{agent}: {c} not hidden");
            }
        }
    }

    #[test]
    fn which_allow_write_entries_are_refused() {
        let home = Path::new("/home/u");
        let rt = Some(Path::new("/run/user/1000"));
        let agent = [
            PathBuf::from("/home/u/proj"),
            PathBuf::from("/home/u/.claude"),
        ];
        // (as written, expanded, real, refused because)
        let rows: [(&str, &str, &str, Option<&str>); 8] = [
            (
                "~/.cache/cargo",
                "/home/u/.cache/cargo",
                "/home/u/.cache/cargo",
                None,
            ),
            ("/opt/tool", "/opt/tool", "/opt/tool", None),
            (
                "build",
                "/home/u/proj/build",
                "/home/u/proj/build",
                Some("absolute"),
            ),
            (
                "/home/u/proj/out",
                "/home/u/proj/out",
                "/home/u",
                Some("leads through"),
            ),
            (
                "~/.claude/x",
                "/home/u/.claude/x",
                "/etc",
                Some("leads through"),
            ),
            ("~", "/home/u", "/home/u", Some("your home")),
            ("/", "/", "/", Some("your home")),
            ("/run/user", "/run/user", "/run/user", Some("runtime dir")),
        ];
        for (as_written, written, real, want) in rows {
            let got = unsafe_to_write(
                as_written,
                Path::new(written),
                Path::new(real),
                home,
                rt,
                &agent,
            );
            match want {
                None => assert_eq!(got, None, "{as_written}"),
                Some(w) => assert!(
                    got.as_deref().is_some_and(|g| g.contains(w)),
                    "{as_written}: {got:?}"
                ),
            }
        }
    }
}
