//! Running `PROGRAM --help` to see what an installed agent supports: the
//! only part of feature detection that touches the system. It runs with
//! stdin from /dev/null, in `/`, with a small clean environment, in a
//! process group of its own that is killed when the time is up. Reading the
//! text is `features.rs`.

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

/// How long `--help` may take. The brief guess was 5 s, but opencode
/// 1.18.33 (a Bun binary of 185 MB) took 4.7-5.8 s on a loaded two-core
/// machine, and gemini 0.61.0 almost 12 s; 10 s covers the agents nerdr
/// asks (copilot, codex, opencode).
pub const HELP_TIMEOUT: Duration = Duration::from_secs(10);

/// Each stream is read up to this much (help texts are a few KiB; the rest
/// is drained and dropped so the program does not block on a full pipe).
const OUTPUT_CAP: u64 = 1 << 20;

/// The part of the caller's environment the program gets. Node-based CLIs
/// need `HOME` (and `PATH` for their `#!/usr/bin/env node`); nothing else
/// of the caller's is passed, so no token or socket path leaks into it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HelpEnv {
    pub path: Option<OsString>,
    pub home: Option<OsString>,
}

impl HelpEnv {
    /// `PATH` and `HOME` from `NAME=value` pairs (the attached client's
    /// environment, as the core keeps it).
    pub fn from_pairs(pairs: &[(String, String)]) -> HelpEnv {
        let get = |name: &str| {
            pairs
                .iter()
                .rev()
                .find(|(k, _)| k == name)
                .map(|(_, v)| OsString::from(v))
        };
        HelpEnv {
            path: get("PATH"),
            home: get("HOME"),
        }
    }
}

/// What `--help` printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelpOutput {
    /// stdout, then stderr (some programs print help on stderr; codex
    /// prints warnings there).
    pub text: String,
    /// Whether it exited with status 0.
    pub success: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HelpError {
    #[error("cannot run `{} --help`: {error}", program.display())]
    Spawn { program: PathBuf, error: String },

    #[error(
        "`{} --help` did not finish within {} s and was killed; \
         check that it runs without a terminal",
        program.display(),
        after.as_secs_f32()
    )]
    Timeout { program: PathBuf, after: Duration },
}

/// Run `program --help` and collect what it prints, within `timeout`.
/// Blocking: call it from a blocking thread (`spawn_blocking`).
pub fn run_help(program: &Path, env: &HelpEnv, timeout: Duration) -> Result<HelpOutput, HelpError> {
    let deadline = Instant::now() + timeout;
    let mut child = spawn(program, env).map_err(|e| HelpError::Spawn {
        program: program.to_owned(),
        error: e.to_string(),
    })?;
    let timed_out = || HelpError::Timeout {
        program: program.to_owned(),
        after: timeout,
    };
    // Its own group (see `spawn`): the group id is the child's pid.
    let group = Pid::from_raw(child.id() as i32);
    // Killing by group id hits only what this run started: the child is
    // reaped only after `killpg`, so its pid (and with it the group id)
    // cannot have been reused by another process; a zombie holds both.
    let kill = |child: &mut std::process::Child| {
        let _ = killpg(group, Signal::SIGKILL); // ESRCH: the group is already gone
        let _ = child.wait();
    };

    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    read_in_thread(0, stdout, tx.clone());
    read_in_thread(1, stderr, tx);
    let mut streams: [Option<Vec<u8>>; 2] = [None, None];
    // Both streams end when every process holding them has exited or
    // closed them; a daemon the program left behind keeps them open, which
    // also counts against the time.
    while streams.iter().any(Option::is_none) {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((i, bytes)) => streams[i] = Some(bytes),
            Err(_) => {
                kill(&mut child);
                return Err(timed_out());
            }
        }
    }
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Ok(None) | Err(_) => {
                kill(&mut child);
                return Err(timed_out());
            }
        }
    };
    let [out, err] = streams.map(Option::unwrap_or_default);
    let mut text = String::from_utf8_lossy(&out).into_owned();
    text.push('\n');
    text.push_str(&String::from_utf8_lossy(&err));
    Ok(HelpOutput {
        text,
        success: status.success(),
    })
}

fn spawn(program: &Path, env: &HelpEnv) -> std::io::Result<std::process::Child> {
    let mut command = Command::new(program);
    command
        .arg("--help")
        .env_clear()
        // Plain text: no colours, no terminal queries.
        .env("NO_COLOR", "1")
        .env("TERM", "dumb")
        // Not the agent's worktree: a project config there must not
        // change (or run code in) what is only a question about flags.
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // A group of its own, so a timeout kills whatever it started too.
        .process_group(0);
    if let Some(path) = &env.path {
        command.env("PATH", path);
    }
    if let Some(home) = &env.home {
        command.env("HOME", home);
    }
    // ETXTBSY: the program is being written right now (an updater, or in
    // tests a script another thread's fork still holds open). It clears
    // within moments; anything else is reported at once.
    let mut tries = 0;
    loop {
        match command.spawn() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && tries < 5 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            result => return result,
        }
    }
}

/// Read `stream` to its end on a thread of its own and send `(index,
/// bytes)`; bytes past [`OUTPUT_CAP`] are read and dropped.
fn read_in_thread(
    index: usize,
    stream: impl Read + Send + 'static,
    tx: mpsc::Sender<(usize, Vec<u8>)>,
) {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let mut limited = stream.take(OUTPUT_CAP);
        let _ = limited.read_to_end(&mut bytes);
        let _ = std::io::copy(&mut limited.into_inner(), &mut std::io::sink());
        // The receiver is gone after a timeout; nothing to tell anyone.
        let _ = tx.send((index, bytes));
    });
}
