//! `nerdr sandbox -- CMD`: nerdr's own sandbox. This file runs it: load the settings, gather the facts, build
//! bubblewrap's arguments, run CMD under it with its exit code passed
//! through, and keep the audit trail. The decisions live in pure modules:
//! - `settings`: the common sandbox settings schema, merged by trust;
//! - `sources`: which settings files may loosen (those the sandbox cannot
//!   change);
//! - `env`: which variables pass;
//! - `bwrap`: the argument vector; `git_layout`: what of `.git` a commit
//!   writes; `seccomp`: the filter; `weaken`: test-only weakenings;
//! - `private_git`: the program's private copy of the repository's
//!   history; `ref_rules`: which of its branch changes come back;
//!   `bring_home`: bringing them back, live and at the end;
//! - `agent_config`: which of each agent's config starts programs;
//!   `config_merge`: what of a config file comes back after the run
//!   (`config_guard` applies both);
//! - `availability`: can bubblewrap run here, and if not, what to do;
//! - `network`: the seam where the filtering proxy plugs in;
//!   `ask_person`: how it asks the person about a host on neither list
//!   (over the hook socket, as the tab `nerdr sandbox` runs in);
//! - `limits`: the limits in words, for the program inside;
//! - `audit_trail`: one JSON line per decision.
//!
//! The terminal stays CMD's: bubblewrap runs without `--new-session`, so
//! TUIs, resizes and job control work; the seccomp filter stops TIOCSTI
//! instead.

pub mod agent_config;
pub mod ask_person;
pub mod audit_trail;
pub mod availability;
pub mod bring_home;
pub mod bwrap;
mod config_guard;
pub mod config_merge;
pub mod env;
mod facts;
pub mod git_layout;
pub mod init;
pub mod limits;
pub mod network;
pub mod private_git;
pub mod ref_rules;
mod seccomp;
pub mod settings;
mod signals;
pub mod sources;
pub mod weaken;

use std::ffi::OsString;
use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::process::{Command, ExitCode, ExitStatus};
use std::time::Instant;

use anyhow::Context;

use crate::paths::Paths;
use audit_trail::{Start, Trail};
use weaken::Weaken;

/// Exit code when the sandbox refuses to run (as `env` and container
/// runtimes use for "the wrapper failed").
pub const REFUSED: u8 = 125;

pub struct Request {
    pub settings: Option<PathBuf>,
    pub worktree: Option<PathBuf>,
    /// `--worktree-only`: no hook socket inside (`bwrap::Layout::worktree_only`).
    pub worktree_only: bool,
    pub weaken: Weaken,
    pub cmd: Vec<OsString>,
}

pub fn run(req: Request) -> anyhow::Result<ExitCode> {
    let t0 = Instant::now();
    let penv = crate::paths::Env::from_process();
    let paths = Paths::resolve(&penv)?;
    let home = penv
        .home
        .clone()
        .context("HOME is not set: the sandbox needs it to know what to hide")?;
    let cwd = std::env::current_dir().context("cannot read the current folder")?;
    let worktree = match &req.worktree {
        Some(w) => std::fs::canonicalize(w)
            .with_context(|| format!("--worktree {} does not exist", w.display()))?,
        None => facts::find_worktree(&std::fs::canonicalize(&cwd)?),
    };
    let canon_home = std::fs::canonicalize(&home).unwrap_or(home.clone());
    // Home, `/`, or a folder above either or above the runtime dir would
    // hand the sandbox what it exists to keep out.
    let runtime = penv
        .xdg_runtime_dir
        .as_deref()
        .and_then(|r| std::fs::canonicalize(r).ok());
    if canon_home.starts_with(&worktree) || runtime.is_some_and(|r| r.starts_with(&worktree)) {
        anyhow::bail!(
            "refusing to make {} writable as the worktree; run `nerdr sandbox` in a project folder or pass --worktree DIR",
            worktree.display()
        );
    }
    // Its bind would bring back every tab's worktree the sandbox hides.
    let data_held = [paths.data_dir.clone()]
        .into_iter()
        .chain(facts::DATA_HIDDEN.iter().map(|n| paths.data_dir.join(n)))
        .filter_map(|d| std::fs::canonicalize(d).ok())
        .find(|d| d.starts_with(&worktree));
    if let Some(d) = data_held {
        anyhow::bail!(
            "refusing to make {} writable as the worktree: it holds nerdr's data folder {} \
             (every tab's worktree); run `nerdr sandbox` in a project folder or pass --worktree \
             DIR, or move NERDR_DATA_DIR out of it",
            worktree.display(),
            d.display()
        );
    }

    // Settings: the user's own files, --settings, then the project's.
    let (layers, source_warnings) = sources::load(
        &home,
        &paths,
        req.settings.as_deref(),
        &worktree,
        &facts::all_agent_dirs(&home),
    )?;
    let (settings, warnings) = settings::merge(&layers);
    let session = audit_trail::new_session_id();
    // Shared: the proxy reports its decisions from its own threads.
    let trail = std::sync::Arc::new(Trail::open(&paths, &session).with_context(|| {
        format!(
            "cannot open the audit trail in {}",
            paths.data_dir.join("audit").display()
        )
    })?);
    for w in source_warnings
        .iter()
        .cloned()
        .chain(warnings.iter().map(|w| w.to_string()))
    {
        eprintln!("nerdr sandbox: warning: {w}");
        trail.setting(&w);
    }
    let agent = env::agent_name(&req.cmd);
    let mut vars: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    vars = env::clean(&vars, &agent);

    if !settings.enabled {
        let why = "`sandbox.enabled` is false in the user's settings";
        eprintln!(
            "nerdr sandbox: warning: running `{}` WITHOUT a sandbox: {why}",
            agent
        );
        trail.unsandboxed(why);
        return finish(&trail, t0, spawn_plain(&req.cmd, &vars));
    }

    let bwrap = crate::executable::find_on_path("bwrap", std::env::var_os("PATH").as_deref());
    let Some(bwrap) = bwrap else {
        let facts = availability::probe();
        return unavailable(&trail, &settings, &facts, &req.cmd, &vars, t0);
    };
    let (version, disables_userns) = availability::version_and_features(&bwrap);

    // The network: loopback only, and nerdr's proxy (unless weakened to
    // the host's network, where it would be pointless).
    let (net, proxy) = if req.weaken.has(weaken::Weakening::NoNetNs) {
        (network::Network::default(), None)
    } else {
        // Read from nerdr sandbox's own environment: the program's is
        // cleaned, and the question is asked from out here, as the tab.
        let asker = ask_person::HookAsker::from_env(
            std::env::var_os("NERDR_TAB"),
            std::env::var_os("NERDR_SOCKET"),
        )
        .map(|a| std::sync::Arc::new(a) as std::sync::Arc<dyn crate::proxy::asking::Asker>);
        let (net, socket) =
            network::plan(&settings.network, &trail, &session, &paths.state_dir, asker)?;
        (net, Some(socket))
    };
    vars.extend(net.env.iter().cloned());
    let exe = std::env::current_exe().context("cannot find nerdr's own binary")?;
    let mut cmd: Vec<OsString> = vec![exe.into(), "sandbox-init".into()];
    cmd.extend(net.inner_init.iter().cloned());
    cmd.push("--".into());
    cmd.extend(req.cmd.iter().cloned());

    let (mut layout, fact_warnings) = facts::gather(facts::Inputs {
        home: &home,
        runtime_dir: penv.xdg_runtime_dir.as_deref(),
        paths: &paths,
        worktree: &worktree,
        cwd: &cwd,
        agent: &agent,
        settings: &settings,
        network_binds: net.binds.clone(),
        bwrap_disables_userns: disables_userns,
        weaken: req.weaken.clone(),
        cmd,
    })?;
    layout.worktree_only = req.worktree_only;
    for w in &fact_warnings {
        eprintln!("nerdr sandbox: warning: {w}");
        trail.setting(w);
    }
    for d in config_guard::recover_leftovers(&paths.state_dir, &trail) {
        let w = format!(
            "{} was left by an earlier run that ended while setting up, and could not be \
             checked; nothing in it was carried back: look through it, then remove it",
            d.display()
        );
        eprintln!("nerdr sandbox: warning: {w}");
        trail.setting(&w);
    }
    let guard = config_guard::prepare(&layout.home, &paths.state_dir, &session, &agent)?;
    layout
        .writable
        .retain(|e| !guard.replaces.contains(&e.path));
    layout.agent_config = guard.binds.clone();
    // Every run's private copies, this one's included: its own are bound
    // in place already.
    layout.hidden.push(bwrap::Entry::dir(
        std::fs::canonicalize(&paths.state_dir)
            .unwrap_or_else(|_| paths.state_dir.clone())
            .join(config_guard::PRIVATE_DIR),
    ));
    if !req.weaken.is_empty() {
        eprintln!(
            "nerdr sandbox: warning: WEAKENED sandbox for testing: {}",
            req.weaken
        );
    }
    // What the program writes is the repository's (or the folder's) from
    // now on: host git there is guarded before anything runs, whoever
    // started the sandbox. No record, no run.
    // What of it the sandbox keeps read-only is remembered with it: host
    // git may trust a main checkout's `.git/config` this run cannot write.
    let kept = bwrap::kept_read_only(&layout.git, &req.weaken);
    if let Err(e) = crate::git::guard::record_run(&paths.state_dir, &worktree, &kept) {
        let why = format!(
            "cannot record that a sandboxed program writes {}: {e}; nerdr would then run host git there unguarded",
            worktree.display()
        );
        eprintln!("nerdr sandbox: refusing to run: {why}");
        trail.unsandboxed(&format!("refused: {why}"));
        trail.exit(REFUSED as i32, None, t0.elapsed().as_millis() as u64);
        return Ok(ExitCode::from(REFUSED));
    }
    // The repository's history stays read-only; the program commits into
    // a private copy, and its branch comes home through host git.
    if let Some(common) = layout.git.common() {
        for left in private_git::leftovers(&paths.data_dir, common) {
            bring_home::recover(left, &trail);
        }
    }
    let private = private_git::prepare(&paths.data_dir, &session, &layout.git)?;
    layout.private_git = private.as_ref().map(|p| p.binds.clone());
    let watcher = match (private, git_head_file(&layout.git)) {
        (Some(p), Some(head)) => {
            let worktrees = paths.data_dir.join("worktrees");
            let worktrees = std::fs::canonicalize(&worktrees).unwrap_or(worktrees);
            let h = bring_home::Homecoming::start(
                p,
                &session,
                &worktree,
                &worktrees,
                head,
                trail.clone(),
            )
            .context("cannot read the repository's branches before the run")?;
            Some(bring_home::Watcher::spawn(h).context("cannot watch the sandbox's branch")?)
        }
        _ => None,
    };

    let programs = seccomp::programs(!disables_userns).map_err(|e| anyhow::anyhow!(e))?;
    let seccomp_fds = programs
        .iter()
        .map(|p| memfd_with(p, c"nerdr-seccomp"))
        .collect::<anyhow::Result<Vec<OwnedFd>>>()?;
    layout.seccomp_fds = seccomp_fds.iter().map(|f| f.as_raw_fd()).collect();
    let (status_read, status_write) = status_pipe()?;
    let redirects_before = layout
        .git
        .watched_dir()
        .map(git_layout::redirects_in)
        .unwrap_or_default();
    layout.status_fd = Some(status_write.as_raw_fd());
    // The limits in words, from the same layout the arguments come from.
    let limits_text = limits::text(
        &layout,
        &limits::NetWords {
            proxy: format!("http://127.0.0.1:{}", network::PORT),
            allowed: net.allowed.clone(),
            asks: net.asks,
        },
    );
    let limits_fd = memfd_with(limits_text.as_bytes(), c"nerdr-limits")?;
    layout.limits_fd = Some(limits_fd.as_raw_fd());

    trail.start(&Start {
        cmd: req
            .cmd
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        worktree: worktree.clone(),
        settings_hash: settings.hash(),
        bwrap_version: version.clone().unwrap_or_else(|| "unknown".into()),
        kernel_features: bwrap::features(&layout),
        weakened: req.weaken.names(),
    });

    let mut command = Command::new(&bwrap);
    command
        .args(bwrap::args(&layout))
        .env_clear()
        .envs(vars.iter().cloned())
        .env(limits::VAR, bwrap::LIMITS_PATH);
    // See `init`: bwrap must outlive the terminal's Ctrl-C; the init inside
    // restores the defaults for CMD.
    // SAFETY: signal(2) is async-signal-safe, as pre_exec requires, and so
    // is nix's wrapper (no allocation); SIG_IGN installs no handler.
    unsafe {
        use nix::sys::signal::{signal, SigHandler, Signal};
        use std::os::unix::process::CommandExt;
        command.pre_exec(|| {
            let _ = signal(Signal::SIGINT, SigHandler::SigIgn);
            let _ = signal(Signal::SIGQUIT, SigHandler::SigIgn);
            Ok(())
        });
    }
    let child = command
        .spawn()
        .with_context(|| format!("cannot run {}", bwrap.display()))?;
    // Our copies: bwrap has its own now, and the pipe's end must close with
    // bwrap's alone.
    drop(seccomp_fds);
    drop(limits_fd);
    drop(status_write);
    let status_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::fs::File::from(status_read).read_to_string(&mut text);
        text
    });
    let status = signals::wait_forwarding(child);
    remove_planted_redirects(&trail, &layout.git, &redirects_before);
    if let Some(h) = watcher.and_then(bring_home::Watcher::stop) {
        h.finish();
    }
    guard.finish(&trail);
    let reported = status_reader.join().unwrap_or_default();
    if !reported.contains("child-pid") {
        // bwrap ended before starting CMD: it could not build the sandbox.
        let facts = availability::probe();
        return unavailable(&trail, &settings, &facts, &req.cmd, &vars, t0);
    }
    // Stops the proxy: its last lines (connections still open) come
    // before the exit line.
    drop(proxy);
    finish(&trail, t0, status)
}

/// The worktree's HEAD file: which branch it is on.
fn git_head_file(git: &git_layout::GitLayout) -> Option<PathBuf> {
    git.watched_dir().map(|d| d.join("HEAD"))
}

/// Remove what the program planted in the git dir that would send host git
/// to another repository's config (`commondir`, `gitdir`,
/// `config.worktree`) or cut its history short (`shallow`): single files cannot be bound read-only without
/// breaking git's lock-and-rename, so they are checked after the run.
fn remove_planted_redirects(trail: &Trail, git: &git_layout::GitLayout, before: &[&str]) {
    let Some(dir) = git.watched_dir() else {
        return;
    };
    let after = git_layout::redirects_in(dir);
    for name in git_layout::appeared(before, &after) {
        let path = dir.join(name);
        let why = git_layout::why_removed(name);
        let removed = match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&path),
            _ => std::fs::remove_file(&path),
        };
        match removed {
            Ok(()) => {
                eprintln!("nerdr sandbox: WARNING: removed {}: {why}", path.display());
                trail.removed(&path, why);
            }
            Err(e) => {
                eprintln!(
                    "nerdr sandbox: WARNING: {} appeared during the run and could not be removed ({e}); remove it before using git there",
                    path.display()
                );
                trail.setting(&format!(
                    "{} appeared during the run, not removed: {e}",
                    path.display()
                ));
            }
        }
    }
}

/// Refuse (the default) or, when the user's settings say
/// `failIfUnavailable = false`, run unsandboxed with a warning.
fn unavailable(
    trail: &Trail,
    settings: &settings::Effective,
    facts: &availability::Facts,
    cmd: &[OsString],
    vars: &[(OsString, OsString)],
    t0: Instant,
) -> anyhow::Result<ExitCode> {
    let advice = availability::advice(facts).unwrap_or_else(|| {
        "bubblewrap could not start the sandbox; see its message above".to_string()
    });
    if settings.fail_if_unavailable {
        eprintln!("nerdr sandbox: refusing to run without a sandbox: {advice}");
        trail.unsandboxed(&format!("refused: {advice}"));
        trail.exit(REFUSED as i32, None, t0.elapsed().as_millis() as u64);
        return Ok(ExitCode::from(REFUSED));
    }
    eprintln!(
        "nerdr sandbox: warning: running WITHOUT a sandbox (failIfUnavailable = false): {advice}"
    );
    trail.unsandboxed(&advice);
    finish(trail, t0, spawn_plain(cmd, vars))
}

fn spawn_plain(cmd: &[OsString], vars: &[(OsString, OsString)]) -> std::io::Result<ExitStatus> {
    let child = Command::new(&cmd[0])
        .args(&cmd[1..])
        .env_clear()
        .envs(vars.iter().cloned())
        .spawn()?;
    signals::wait_forwarding(child)
}

fn finish(
    trail: &Trail,
    t0: Instant,
    status: std::io::Result<ExitStatus>,
) -> anyhow::Result<ExitCode> {
    use std::os::unix::process::ExitStatusExt;
    let ms = t0.elapsed().as_millis() as u64;
    let status = match status {
        Ok(s) => s,
        Err(e) => {
            trail.exit(127, None, ms);
            return Err(anyhow::Error::new(e).context("cannot start the program"));
        }
    };
    let (code, signal) = match (status.code(), status.signal()) {
        (Some(c), _) => (c, None),
        (None, Some(s)) => (128 + s, Some(s)),
        (None, None) => (1, None),
    };
    trail.exit(code, signal, ms);
    Ok(ExitCode::from(code.clamp(0, 255) as u8))
}

/// An in-memory file holding `bytes`, inheritable (no close-on-exec), read
/// from its start.
fn memfd_with(bytes: &[u8], name: &std::ffi::CStr) -> anyhow::Result<OwnedFd> {
    use nix::sys::memfd::{memfd_create, MemFdCreateFlag};
    use std::io::{Seek, SeekFrom, Write};
    // No MFD_CLOEXEC: inheritable on purpose.
    let fd = memfd_create(name, MemFdCreateFlag::empty())
        .map_err(std::io::Error::from)
        .with_context(|| format!("memfd_create for {name:?}"))?;
    let mut file = std::fs::File::from(fd);
    file.write_all(bytes)?;
    file.seek(SeekFrom::Start(0))?;
    Ok(file.into())
}

/// bwrap's status pipe: the read end stays ours (close-on-exec), the write
/// end goes to bwrap.
fn status_pipe() -> anyhow::Result<(OwnedFd, OwnedFd)> {
    let (r, w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).context("pipe")?;
    nix::fcntl::fcntl(
        w.as_raw_fd(),
        nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty()),
    )
    .context("fcntl")?;
    Ok((r, w))
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::os::fd::AsRawFd;

    use nix::fcntl::{fcntl, FcntlArg, FdFlag, SealFlag};

    /// bwrap reads the seccomp filter and the limits file from descriptors
    /// it inherits: they must survive exec, hold the bytes from their
    /// start, and be what `memfd_create(name, 0)` makes (no sealing, so
    /// `F_SEAL_SEAL` alone).
    #[test]
    fn data_files_are_inheritable_memfds_read_from_their_start() {
        let fd = super::memfd_with(b"limits\n", c"nerdr-test").unwrap();
        let raw = fd.as_raw_fd();
        let flags = FdFlag::from_bits_truncate(fcntl(raw, FcntlArg::F_GETFD).unwrap());
        assert!(!flags.contains(FdFlag::FD_CLOEXEC), "close-on-exec");
        let seals = SealFlag::from_bits_truncate(fcntl(raw, FcntlArg::F_GET_SEALS).unwrap());
        assert_eq!(seals, SealFlag::F_SEAL_SEAL);
        let target = std::fs::read_link(format!("/proc/self/fd/{raw}")).unwrap();
        assert!(
            target.to_string_lossy().starts_with("/memfd:nerdr-test"),
            "{target:?}"
        );
        let mut text = String::new();
        std::fs::File::from(fd).read_to_string(&mut text).unwrap();
        assert_eq!(text, "limits\n");
    }
}
