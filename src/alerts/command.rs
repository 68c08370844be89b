//! The user's own notification command (`[notify] done = ["paplay", ...]`):
//! argv as written, never a shell string, run detached from the core in a
//! process group of its own, in the home folder, with stdin and stdout
//! closed. The state change comes in `NERDR_NOTIFY_*` variables.
//!
//! Bounded both ways, so a command that hangs cannot pile up: each run is
//! killed (its whole process group) after [`RUN_LIMIT`], and at most
//! [`MAX_RUNNING`] run at once; one more is skipped with a log line. A
//! command that cannot start, fails or is killed is a warning naming the
//! config key that set it, with the first line of its stderr.
//!
//! Its environment is the core's own without what belongs to nerdr or to
//! the core's service manager ([`command_env`]): `NERDR_*`/`HERDR_*`, the
//! sockets and fds systemd handed the core (`NOTIFY_SOCKET` would let the
//! command speak for the core to systemd), and the like.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::AsyncReadExt;

/// How long one run may take before its process group is killed.
pub const RUN_LIMIT: Duration = Duration::from_secs(60);
/// How many runs may be under way at once.
pub const MAX_RUNNING: usize = 4;
/// How much of a failing command's stderr is kept for the log line.
const STDERR_KEPT: usize = 4096;

static RUNNING: AtomicUsize = AtomicUsize::new(0);

/// How one run ended.
#[derive(Debug)]
pub enum Outcome {
    Succeeded,
    Failed {
        status: std::process::ExitStatus,
        stderr: String,
    },
    NotStarted(std::io::Error),
    Killed,
}

/// Start `argv` in the background (if fewer than [`MAX_RUNNING`] runs are
/// under way) and log how it ends.
pub fn spawn(argv: Vec<String>, notify_env: Vec<(String, String)>, key: String) {
    let Some(slot) = Slot::take(&RUNNING, MAX_RUNNING) else {
        tracing::warn!(
            key = %key,
            "notify command skipped: {MAX_RUNNING} earlier runs are still going (each is killed after {} s)",
            RUN_LIMIT.as_secs()
        );
        return;
    };
    let env = command_env(std::env::vars_os(), &notify_env);
    let cwd = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
        .unwrap_or_else(|| PathBuf::from("/"));
    tokio::spawn(async move {
        let outcome = run(&argv, env, &cwd, RUN_LIMIT).await;
        drop(slot);
        log(&key, &argv, &outcome);
    });
}

fn log(key: &str, argv: &[String], outcome: &Outcome) {
    let program = argv.first().map_or("", String::as_str);
    match outcome {
        Outcome::Succeeded => tracing::debug!(key = %key, program = %program, "notify command ran"),
        Outcome::Failed { status, stderr } => tracing::warn!(
            key = %key,
            program = %program,
            "notify command `{program}` (set by `{key}` in config.toml) failed ({status}): {}",
            stderr.lines().next().unwrap_or("no output on stderr")
        ),
        Outcome::NotStarted(e) => tracing::warn!(
            key = %key,
            program = %program,
            "notify command `{program}` (set by `{key}` in config.toml) cannot start: {e}; fix or remove the key"
        ),
        Outcome::Killed => tracing::warn!(
            key = %key,
            program = %program,
            "notify command `{program}` (set by `{key}` in config.toml) ran longer than {} s and was killed",
            RUN_LIMIT.as_secs()
        ),
    }
}

/// Run `argv` with exactly `env`, in `cwd`, killing its process group
/// after `limit`.
pub async fn run(
    argv: &[String],
    env: Vec<(OsString, OsString)>,
    cwd: &std::path::Path,
    limit: Duration,
) -> Outcome {
    let Some((program, args)) = argv.split_first() else {
        return Outcome::NotStarted(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "the command is empty",
        ));
    };
    let spawned = tokio::process::Command::new(program)
        .args(args)
        .env_clear()
        .envs(env)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        // A group of its own: killing it on time-out takes what it started.
        .process_group(0)
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => return Outcome::NotStarted(e),
    };
    let pgid = child.id();
    let mut stderr = child.stderr.take().expect("piped");
    let finished = tokio::time::timeout(limit, async {
        let mut kept = Vec::new();
        let mut buf = [0u8; 1024];
        // Read to the end (a full pipe would stall the command), keeping
        // the start.
        while let Ok(n @ 1..) = stderr.read(&mut buf).await {
            let room = STDERR_KEPT.saturating_sub(kept.len());
            kept.extend_from_slice(&buf[..n.min(room)]);
        }
        (child.wait().await, kept)
    })
    .await;
    match finished {
        Ok((Ok(status), _)) if status.success() => Outcome::Succeeded,
        Ok((Ok(status), kept)) => Outcome::Failed {
            status,
            stderr: String::from_utf8_lossy(&kept).into_owned(),
        },
        Ok((Err(e), _)) => Outcome::NotStarted(e),
        Err(_) => {
            if let Some(pgid) = pgid {
                // The group is the child's own (process_group(0)); it is
                // still unreaped, so its id cannot have been reused.
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(pgid as i32),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            let _ = child.wait().await;
            Outcome::Killed
        }
    }
}

/// The command's environment: the core's, without what nerdr or the
/// core's service manager owns, plus nerdr's `NERDR_NOTIFY_*` facts.
pub fn command_env(
    core: impl IntoIterator<Item = (OsString, OsString)>,
    notify: &[(String, String)],
) -> Vec<(OsString, OsString)> {
    let passed = |name: &OsStr| !crate::handed_env::is_the_cores(&name.to_string_lossy());
    let mut env: Vec<(OsString, OsString)> = core.into_iter().filter(|(k, _)| passed(k)).collect();
    env.extend(notify.iter().map(|(k, v)| (k.into(), v.into())));
    env
}

/// One of a bounded number of runs; dropping it frees the place.
struct Slot(&'static AtomicUsize);

impl Slot {
    fn take(running: &'static AtomicUsize, max: usize) -> Option<Slot> {
        running
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
            .map(|_| Slot(running))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
#[path = "command_tests.rs"]
mod tests;
