//! Host git: every git command nerdr runs itself goes through this module,
//! with a fixed, safe environment: no hooks, no pager, no editor, no
//! terminal prompt, no lazy fetch from a promisor remote. [`run`] consults
//! the guard first (refusing, and recording why, in a repository with
//! sandbox history where git could run a planted program); [`query`] runs
//! only commands that run no configured program, which the guard itself
//! needs to gather its facts; [`import`] brings a sandboxed program's
//! work home from its private object store. Nothing else builds a git
//! `Command`.

pub mod base;
pub mod clean;
pub mod guard;
pub mod ignored;
pub mod import;
pub mod left_branch;
pub mod listing;
pub mod merge;
pub mod op;
pub mod patch;
pub mod saved;
pub mod unsaved;
pub mod worktree;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::audit::{Event, Kind};
use crate::paths::Paths;
use guard::verdict::{Reason, Verdict};
use op::Op;

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot run git: {0}")]
    Spawn(std::io::Error),
    #[error("`git {args}` in {dir} failed: {stderr}")]
    Failed {
        args: String,
        dir: PathBuf,
        stderr: String,
    },
    #[error(transparent)]
    Refused(#[from] Refusal),
    #[error("internal error: `git {0}` is not a query, so it must go through the guard")]
    NotAQuery(String),
    #[error(
        "`git {args}` in {dir} did not finish within {secs} s and was stopped (a FIFO or a \
         hung filesystem where git reads?)"
    )]
    TimedOut {
        args: String,
        dir: PathBuf,
        secs: u64,
    },
}

/// How long one host git command may take: an agent could otherwise make
/// git wait for ever (a FIFO where git reads its HEAD or config), and with
/// it the launch that ran it.
const TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(300);

/// Host git refused by the guard.
#[derive(Debug, thiserror::Error)]
pub struct Refusal {
    pub dir: PathBuf,
    pub repo: Option<PathBuf>,
    pub op: Op,
    pub reasons: Vec<Reason>,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let repo = self.repo.as_deref().unwrap_or(&self.dir);
        write!(
            f,
            "nerdr refuses to run `git {}` in {} (sandbox history): {}",
            self.op.command(),
            repo.display(),
            self.reasons
                .first()
                .map(|r| r.to_string())
                .unwrap_or_default()
        )?;
        if self.reasons.len() > 1 {
            write!(
                f,
                " (and {} more reasons: see `nerdr git check {}`)",
                self.reasons.len() - 1,
                self.dir.display()
            )?;
        }
        Ok(())
    }
}

impl Refusal {
    /// The journal entry: the sentence, and the repository, operation,
    /// settings and their files as fields (one value per reason).
    pub fn event(&self) -> Event {
        let repo = self.repo.as_deref().unwrap_or(&self.dir);
        let mut e = Event::new(Kind::GitRefused, self.to_string())
            .field("NERDR_REPO", repo.display().to_string())
            .field("NERDR_GIT_OPERATION", self.op.name());
        for r in &self.reasons {
            e = e
                .field("NERDR_SETTING", &r.setting)
                .field("NERDR_ORIGIN", &r.origin);
        }
        e
    }
}

/// A git command in `dir` with nerdr's safe settings. Private: callers go
/// through [`run`] or [`query`].
fn command<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Command {
    command_with(dir, &[], args)
}

/// The core's PATH without relative or empty entries: those would resolve
/// against whatever folder git runs in.
fn absolute_path() -> std::ffi::OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::env::split_paths(&path).filter(|p| p.is_absolute()))
        .unwrap_or_default()
}

/// `-c` settings that empty filter `drivers`' commands: git then runs no
/// filter for them at all.
pub(crate) fn disarmed(drivers: &[String]) -> Vec<String> {
    drivers
        .iter()
        .flat_map(|d| {
            ["smudge=", "clean=", "process=", "required=false"].map(|k| format!("filter.{d}.{k}"))
        })
        .collect()
}

/// [`command`] with `-c` settings of the caller's before the subcommand.
pub(crate) fn command_with<S: AsRef<OsStr>>(dir: &Path, config: &[String], args: &[S]) -> Command {
    let mut c = Command::new("git");
    c.env_clear()
        .envs(
            std::env::vars_os().filter(|(k, _)| {
                matches!(k.to_str(), Some("HOME" | "USER" | "LOGNAME" | "TMPDIR"))
            }),
        )
        .env("PATH", absolute_path())
        .env("LANG", "C")
        .env("LC_ALL", "C")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_NO_LAZY_FETCH", "1")
        .env("GIT_PAGER", "cat")
        .env("GIT_EDITOR", "false")
        .env("GIT_SEQUENCE_EDITOR", "false")
        .env("GIT_ASKPASS", "false")
        .env("SSH_ASKPASS", "false")
        .arg("-c")
        .arg("core.hooksPath=/dev/null")
        .arg("-c")
        .arg("core.fsmonitor=false")
        // nerdr never signs: no signing program runs (and a commit that
        // must be signed fails rather than goes unsigned).
        .args(["-c", "gpg.program=false"])
        .args(["-c", "gpg.ssh.program=false"])
        .args(["-c", "gpg.x509.program=false"])
        // Never into nested repositories: each runs its own config's
        // filters, and an agent may have made one in its worktree.
        .args(["-c", "diff.ignoreSubmodules=all"])
        .args(["-c", "submodule.recurse=false"])
        .args(["-c", "status.submoduleSummary=false"])
        .args(config.iter().flat_map(|kv| ["-c", kv.as_str()]))
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(std::process::Stdio::null());
    c
}

fn output<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Result<Vec<u8>, GitError> {
    finish(command(dir, args), dir, args)
}

fn finish<S: AsRef<OsStr>>(c: Command, dir: &Path, args: &[S]) -> Result<Vec<u8>, GitError> {
    finish_or_stop(c, dir, args, None)
}

/// [`finish`], also stopped as soon as `stop` is set (as if timed out).
fn finish_or_stop<S: AsRef<OsStr>>(
    c: Command,
    dir: &Path,
    args: &[S],
    stop: Option<&std::sync::atomic::AtomicBool>,
) -> Result<Vec<u8>, GitError> {
    finish_with_input(c, dir, args, None, stop)
}

fn finish_with_input<S: AsRef<OsStr>>(
    mut c: Command,
    dir: &Path,
    args: &[S],
    input: Option<Vec<u8>>,
    stop: Option<&std::sync::atomic::AtomicBool>,
) -> Result<Vec<u8>, GitError> {
    let out = bounded_with_input(&mut c, input, TIME_LIMIT, stop).map_err(|e| match e {
        Bounded::Spawn(e) => GitError::Spawn(e),
        Bounded::TimedOut => GitError::TimedOut {
            args: joined(args),
            dir: dir.to_path_buf(),
            secs: TIME_LIMIT.as_secs(),
        },
    })?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(GitError::Failed {
            args: joined(args),
            dir: dir.to_path_buf(),
            stderr: failure_text(&out.stdout, &out.stderr),
        })
    }
}

/// What a failed git said: its stderr, else the end of its stdout (`git
/// merge` reports conflicts there, and only "Automatic merge failed" if
/// anything on stderr).
fn failure_text(stdout: &[u8], stderr: &[u8]) -> String {
    let err = String::from_utf8_lossy(stderr).trim().to_string();
    let out = String::from_utf8_lossy(stdout);
    let lines: Vec<&str> = out.trim().lines().collect();
    let tail = lines[lines.len().saturating_sub(20)..].join("\n");
    match (err.is_empty(), tail.is_empty()) {
        (_, true) => err,
        (true, false) => tail,
        (false, false) if tail.contains("CONFLICT") => format!("{tail}\n{err}"),
        (false, false) => err,
    }
}

enum Bounded {
    Spawn(std::io::Error),
    TimedOut,
}

/// How often a command that can be stopped on request looks at its flag.
/// Its exit is noticed at once either way: only a stop waits this long.
const STOP_TICK: std::time::Duration = std::time::Duration::from_millis(20);

/// Run `c` to the end, writing `input` (if any) to its stdin, or stop it
/// (and what it started, in its own process group) after `limit`, or once
/// `stop` is set. A thread waits for the exit, so a command is over the
/// moment git is: sleeping between polls cost every guard query up to 5 ms
/// more than git itself.
fn bounded_with_input(
    c: &mut Command,
    input: Option<Vec<u8>>,
    limit: std::time::Duration,
    stop: Option<&std::sync::atomic::AtomicBool>,
) -> Result<std::process::Output, Bounded> {
    use std::io::{Read, Write};
    use std::os::unix::process::CommandExt;
    use std::sync::mpsc::RecvTimeoutError;
    if input.is_some() {
        c.stdin(std::process::Stdio::piped());
    }
    let mut child = c
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(Bounded::Spawn)?;
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            buf
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("piped")));
    let err = drain(Box::new(child.stderr.take().expect("piped")));
    // Written from a thread of its own: git may fill its stdout before it
    // has read all its input (the drains keep reading meanwhile).
    let feed = input.map(|bytes| {
        let mut stdin = child.stdin.take().expect("piped");
        std::thread::spawn(move || {
            let _ = stdin.write_all(&bytes);
        })
    });
    let group = nix::unistd::Pid::from_raw(child.id() as i32);
    let (exited, exit) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let status = child.wait();
        let _ = exited.send(());
        status
    });
    let deadline = std::time::Instant::now() + limit;
    let finished = loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let tick = match stop {
            Some(_) => left.min(STOP_TICK),
            None => left,
        };
        match exit.recv_timeout(tick) {
            Ok(()) | Err(RecvTimeoutError::Disconnected) => break true,
            Err(RecvTimeoutError::Timeout)
                if left.is_zero()
                    || stop.is_some_and(|s| s.load(std::sync::atomic::Ordering::SeqCst)) =>
            {
                break false
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
    };
    if !finished {
        use nix::sys::signal::{killpg, Signal};
        // SIGTERM first: git removes its lock files on it (one left would
        // fail the next update of that ref).
        let _ = killpg(group, Signal::SIGTERM);
        let _ = exit.recv_timeout(std::time::Duration::from_secs(1));
        // Whatever of the group ignored SIGTERM.
        let _ = killpg(group, Signal::SIGKILL);
        let _ = waiter.join();
        return Err(Bounded::TimedOut);
    }
    let status = match waiter.join() {
        Ok(Ok(status)) => status,
        Ok(Err(e)) => return Err(Bounded::Spawn(e)),
        Err(_) => {
            return Err(Bounded::Spawn(std::io::Error::other(
                "waiting for git failed",
            )))
        }
    };
    if let Some(feed) = feed {
        let _ = feed.join();
    }
    Ok(std::process::Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

fn joined<S: AsRef<OsStr>>(args: &[S]) -> String {
    args.iter()
        .map(|a| a.as_ref().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8_lossy(&bytes).trim_end().to_string()
}

/// Run git after the guard allowed it; its trimmed stdout, or an error
/// carrying git's stderr or the guard's refusal (which goes to the
/// journal and core.log).
pub fn run<S: AsRef<OsStr>>(paths: &Paths, dir: &Path, args: &[S]) -> Result<String, GitError> {
    run_env(paths, dir, args, &[])
}

/// [`run`] with variables of the caller's (`GIT_INDEX_FILE`, an identity):
/// set after nerdr's own, and never able to undo the guard's pin.
pub fn run_env<S: AsRef<OsStr>>(
    paths: &Paths,
    dir: &Path,
    args: &[S],
    env: &[(&str, &OsStr)],
) -> Result<String, GitError> {
    run_bytes_env(paths, dir, args, env).map(text)
}

/// [`run_env`], its stdout as git wrote it (a patch keeps its last
/// newline, and bytes that are not UTF-8).
pub fn run_bytes_env<S: AsRef<OsStr>>(
    paths: &Paths,
    dir: &Path,
    args: &[S],
    env: &[(&str, &OsStr)],
) -> Result<Vec<u8>, GitError> {
    let op = Op::of(args);
    let checked = guard::check(&paths.state_dir, dir, op);
    if let Verdict::Refuse(reasons) = checked.verdict {
        let refusal = Refusal {
            dir: dir.to_path_buf(),
            repo: checked.repo,
            op,
            reasons,
        };
        crate::audit::record(paths, &refusal.event());
        tracing::warn!(dir = %dir.display(), op = op.name(), "{refusal}");
        return Err(refusal.into());
    }
    let args = without_submodules(args);
    let mut c = command_with(dir, &disarmed(&checked.disarm), &args);
    c.envs(
        env.iter()
            .filter(|(k, _)| !matches!(*k, "GIT_DIR" | "GIT_COMMON_DIR" | "GIT_WORK_TREE"))
            .map(|(k, v)| (k, v)),
    );
    if let Some(pin) = &checked.pin {
        pinned(&mut c, pin);
    }
    finish(c, dir, &args)
}

/// Hand git the repository the guard checked, so it reads neither a
/// `.git` file nor a `commondir` file again.
fn pinned(c: &mut Command, pin: &guard::Pin) {
    c.env("GIT_DIR", &pin.git_dir)
        .env("GIT_COMMON_DIR", &pin.common_dir);
    if let Some(w) = &pin.work_tree {
        c.env("GIT_WORK_TREE", w);
    }
}

/// `args` with `--ignore-submodules=all` after the commands that compare
/// the working tree: the config setting [`command`] passes loses to a
/// `submodule.<name>.ignore` in `.gitmodules` (which an agent can write),
/// the command-line option does not. Otherwise git runs `git status`
/// inside each submodule, with that repository's own filters.
fn without_submodules<S: AsRef<OsStr>>(args: &[S]) -> Vec<&OsStr> {
    let mut out: Vec<&OsStr> = args.iter().map(AsRef::as_ref).collect();
    let compares_worktree = matches!(
        out.first().and_then(|w| w.to_str()),
        Some("status" | "diff" | "diff-files" | "diff-index")
    );
    if compares_worktree {
        out.insert(1, OsStr::new("--ignore-submodules=all"));
    }
    out
}

/// Run a git command that runs no configured program (see [`Op::Query`]);
/// anything else is an error, whatever the repository.
pub fn query<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Result<String, GitError> {
    query_bytes(dir, args).map(text)
}

pub fn query_bytes<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Result<Vec<u8>, GitError> {
    if Op::of(args) != Op::Query {
        return Err(GitError::NotAQuery(joined(args)));
    }
    output(dir, args)
}

/// [`query_bytes`] with `input` on git's stdin (`cat-file --batch`: many
/// objects read by one git).
pub fn query_with_input<S: AsRef<OsStr>>(
    dir: &Path,
    args: &[S],
    input: Vec<u8>,
) -> Result<Vec<u8>, GitError> {
    if Op::of(args) != Op::Query {
        return Err(GitError::NotAQuery(joined(args)));
    }
    finish_with_input(command(dir, args), dir, args, Some(input), None)
}

#[cfg(test)]
mod bounded_tests {
    use super::*;

    #[test]
    fn a_failure_says_what_git_said_where_it_said_it() {
        assert_eq!(failure_text(b"", b"fatal: no\n"), "fatal: no");
        assert_eq!(
            failure_text(b"CONFLICT (content): in a\n", b""),
            "CONFLICT (content): in a"
        );
        assert_eq!(
            failure_text(b"CONFLICT (content): in a\n", b"error: x\n"),
            "CONFLICT (content): in a\nerror: x"
        );
        assert_eq!(failure_text(b"Updating 1..2\n", b"error: x\n"), "error: x");
    }

    fn bounded(
        mut c: Command,
        limit: std::time::Duration,
        stop: Option<&std::sync::atomic::AtomicBool>,
    ) -> Result<std::process::Output, Bounded> {
        bounded_with_input(&mut c, None, limit, stop)
    }

    #[test]
    fn a_command_past_its_limit_is_stopped_with_what_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("child-lived");
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(format!("(sleep 1; touch {}) & sleep 30", marker.display()));
        let t0 = std::time::Instant::now();
        assert!(matches!(
            bounded(c, std::time::Duration::from_millis(200), None),
            Err(Bounded::TimedOut)
        ));
        assert!(t0.elapsed() < std::time::Duration::from_secs(5));
        std::thread::sleep(std::time::Duration::from_millis(1500));
        assert!(!marker.exists(), "the command's child outlived it");
        let mut ok = Command::new("sh");
        ok.args(["-c", "echo out; echo err >&2"]);
        let out = bounded(ok, std::time::Duration::from_secs(10), None)
            .ok()
            .unwrap();
        assert_eq!(
            (out.stdout, out.stderr),
            (b"out\n".to_vec(), b"err\n".to_vec())
        );
    }

    /// Stopped on request, SIGTERM first (git removes its lock files then).
    #[test]
    fn a_command_is_stopped_when_asked_and_told_first() {
        let dir = tempfile::tempdir().unwrap();
        let told = dir.path().join("told");
        let mut c = Command::new("sh");
        c.arg("-c").arg(format!(
            "trap 'touch {}; exit 1' TERM; sleep 30 & wait",
            told.display()
        ));
        let stop = std::sync::atomic::AtomicBool::new(false);
        let t0 = std::time::Instant::now();
        let got = std::thread::scope(|s| {
            let run = s.spawn(|| bounded(c, std::time::Duration::from_secs(60), Some(&stop)));
            std::thread::sleep(std::time::Duration::from_millis(300));
            stop.store(true, std::sync::atomic::Ordering::SeqCst);
            run.join().unwrap()
        });
        assert!(matches!(got, Err(Bounded::TimedOut)));
        assert!(t0.elapsed() < std::time::Duration::from_secs(5));
        assert!(told.exists(), "no SIGTERM first");
    }
}
