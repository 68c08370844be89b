//! PTYs owned by this process: each program on its own PTY, in its own
//! session, and (with [`Scopes`]) in its own transient scope before its
//! first instruction runs.
//!
//! Placement works through a shim: this executable, started on the PTY,
//! blocks on a pipe (`nerdr shim`); the scope is created around its PID;
//! only then does it read the go-ahead and exec the program. A failed
//! placement kills the shim, so no program ever runs outside its scope.
//!
//! A holder that re-executed for a hand-over [`adopt`](PtyHost::adopt)s
//! the programs it had: still its children, on the terminals it kept open.

use std::collections::HashMap;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use tokio::sync::{mpsc, oneshot, watch};

use super::input::{InputQueue, Source};
use super::pause::{Frozen, Pause, Worker};
use super::pty_tasks::{exit_code, finish, reap_adopted, wire};
use super::{Host, HostError, HostEvent, Scopes, SpawnSpec, Spawned};
use crate::platform;
use crate::protocol::api::ProgramsMode;

/// How long a program gets to leave after SIGHUP, and again after SIGTERM.
pub const GRACE: Duration = Duration::from_millis(1500);

/// A program from the moment its process exists until the owner forgets
/// it: while it is being placed, while it runs, and after it exited (what it
/// left in its scope or session still gets ended on `stop`).
struct Program {
    pid: u32,
    start_time: u64,
    scope: Option<String>,
    /// The PTY master, kept to hand over (the I/O tasks own their halves).
    master: Option<OwnedFd>,
    /// None until the program runs (it may still be waiting for its scope).
    input: Option<InputQueue>,
    /// Becomes true once the process has been reaped.
    exited: watch::Receiver<bool>,
    /// Stopped before it ran: placement must not let it go.
    cancelled: bool,
}

pub struct PtyHost {
    programs: Arc<Mutex<HashMap<String, Program>>>,
    events: mpsc::Sender<HostEvent>,
    scopes: Option<Arc<dyn Scopes>>,
    /// This executable, run as the shim.
    bin: PathBuf,
    mode: ProgramsMode,
    pause: Pause,
}

/// A program as a hand-over finds it.
pub struct Handed {
    pub pid: u32,
    pub start_time: u64,
    pub scope: Option<String>,
    /// The PTY master, valid while the host lives.
    pub master: Option<RawFd>,
}

/// A program to adopt after a hand-over: already this process's child.
pub struct Adoption {
    pub tab: String,
    pub pid: u32,
    pub start_time: u64,
    pub scope: Option<String>,
    pub master: Option<OwnedFd>,
    /// Whether it was known to have ended.
    pub exited: bool,
}

impl PtyHost {
    pub fn new(
        events: mpsc::Sender<HostEvent>,
        scopes: Option<Arc<dyn Scopes>>,
        mode: ProgramsMode,
    ) -> std::io::Result<Self> {
        Ok(PtyHost {
            programs: Arc::default(),
            events,
            scopes,
            bin: std::env::current_exe()?,
            mode,
            pause: Pause::new(),
        })
    }

    /// Stop reading terminals, reaping and launching, once what is in hand
    /// has been delivered as events; all resumes when the guard drops.
    pub async fn freeze(&self) -> Frozen {
        self.pause.freeze().await
    }

    /// Every program's process and terminal, for a hand-over.
    pub fn handed(&self) -> HashMap<String, Handed> {
        self.programs
            .lock()
            .unwrap()
            .iter()
            .map(|(tab, p)| {
                let handed = Handed {
                    pid: p.pid,
                    start_time: p.start_time,
                    scope: p.scope.clone(),
                    master: p.master.as_ref().map(|m| m.as_raw_fd()),
                };
                (tab.clone(), handed)
            })
            .collect()
    }

    /// Take on a program this process kept across a re-execution: read and
    /// feed its terminal, reap it when it ends, stop it on request.
    pub fn adopt(&self, a: Adoption) -> Result<(), HostError> {
        if a.pid == 0 {
            // PID 0 means our own process group to kill and waitpid.
            return Err(HostError::NoSuchTab(a.tab));
        }
        let (exited_tx, exited_rx) = watch::channel(a.exited);
        let mut input = None;
        let mut master = None;
        let mut reader_done = None;
        if let Some(fd) = a.master {
            master = Some(fd.try_clone().map_err(|e| HostError::Pty(e.to_string()))?);
            nix::fcntl::fcntl(
                fd.as_raw_fd(),
                nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
            )
            .map_err(|e| HostError::Pty(e.to_string()))?;
            // SAFETY: the descriptor is a PTY master this process opened
            // before it re-executed, now non-blocking and owned here alone.
            let pty = unsafe { pty_process::Pty::from_fd(fd) }
                .map_err(|e| HostError::Pty(e.to_string()))?;
            let (tx, done) = wire(pty, &a.tab, self.events.clone(), self.pause.worker());
            input = Some(tx);
            reader_done = Some(done);
        }
        self.programs.lock().unwrap().insert(
            a.tab.clone(),
            Program {
                pid: a.pid,
                start_time: a.start_time,
                scope: a.scope,
                master,
                input,
                exited: exited_rx,
                cancelled: false,
            },
        );
        if !a.exited {
            let events = self.events.clone();
            let mut worker = self.pause.worker();
            let (tab, pid) = (a.tab, a.pid);
            tokio::spawn(async move {
                let reaped = reap_adopted(pid, &mut worker).await;
                finish(tab, pid, reaped, reader_done, exited_tx, events).await;
            });
        }
        Ok(())
    }
}

impl Host for PtyHost {
    fn spawn(&self, spec: SpawnSpec) -> oneshot::Receiver<Result<Spawned, HostError>> {
        let (tx, rx) = oneshot::channel();
        // A launch is one piece of work: a hand-over waits for it.
        let Some(share) = self.pause.try_share() else {
            let _ = tx.send(Err(HostError::Failed(
                "the holder is handing over to another version; start it again in a moment".into(),
            )));
            return rx;
        };
        let scope = match (&self.scopes, &spec.scope) {
            (Some(s), Some(name)) => Some((s.clone(), name.clone())),
            _ => None,
        };
        // Forked by the holder's main thread, the one thread a hand-over's
        // exec keeps (see `main_thread`).
        let (started, spec) = {
            let (bin, shim) = (self.bin.clone(), scope.is_some());
            super::main_thread::on_main(move || (start(&bin, &spec, shim), spec))
        };
        let programs = self.programs.clone();
        let events = self.events.clone();
        let worker = self.pause.worker();
        let (exited_tx, exited_rx) = watch::channel(false);
        if let Ok(s) = &started {
            // Known from now on, so a stop during placement cancels it.
            programs.lock().unwrap().insert(
                spec.tab.clone(),
                Program {
                    pid: s.pid,
                    start_time: 0,
                    scope: spec.scope.clone().filter(|_| scope.is_some()),
                    master: None,
                    input: None,
                    exited: exited_rx,
                    cancelled: false,
                },
            );
        }
        tokio::spawn(async move {
            let tab = spec.tab.clone();
            let result = match started {
                Err(e) => Err(e),
                Ok(started) => {
                    let run = Run {
                        programs: programs.clone(),
                        events,
                        exited_tx,
                        worker,
                    };
                    place_and_run(started, spec, scope, run).await
                }
            };
            if result.is_err() {
                programs.lock().unwrap().remove(&tab);
            }
            drop(share);
            let _ = tx.send(result);
        });
        rx
    }

    fn write(&self, tab: &str, bytes: Vec<u8>) -> Result<(), HostError> {
        self.input(tab)?.push(tab, bytes, Source::Typed)
    }

    fn answer(&self, tab: &str, bytes: Vec<u8>) {
        if let Ok(input) = self.input(tab) {
            let _ = input.push(tab, bytes, Source::Answer);
        }
    }

    fn resize(&self, tab: &str, rows: u16, cols: u16) -> Result<(), HostError> {
        self.input(tab)?.resize(tab, rows, cols)
    }

    fn stop(&self, tab: &str) -> oneshot::Receiver<()> {
        let (done, rx) = oneshot::channel();
        let target = {
            let mut programs = self.programs.lock().unwrap();
            match programs.get_mut(tab) {
                // Still waiting to be placed: it never runs.
                Some(p) if p.input.is_none() && !*p.exited.borrow() => {
                    p.cancelled = true;
                    let _ = nix::sys::signal::kill(Pid::from_raw(p.pid as i32), Signal::SIGKILL);
                    None
                }
                Some(p) => Some((p.pid, p.scope.clone(), p.exited.clone())),
                None => None,
            }
        };
        let Some((pid, scope, mut exited)) = target else {
            let _ = done.send(());
            return rx;
        };
        let scopes = self.scopes.clone();
        tokio::spawn(async move {
            if let (Some(scopes), Some(scope)) = (scopes, scope) {
                // The scope holds every process the program made, whatever
                // session or process group they moved to.
                if let Err(e) = scopes.stop(scope.clone()).await {
                    tracing::warn!(scope = %scope, error = %e, "stopping the scope failed; signalling the session");
                    stop_session(pid, &mut exited).await;
                }
            } else {
                stop_session(pid, &mut exited).await;
            }
            let _ = exited.wait_for(|e| *e).await;
            let _ = done.send(());
        });
        rx
    }

    fn forget(&self, tab: &str) {
        self.programs.lock().unwrap().remove(tab);
    }

    fn mode(&self) -> String {
        self.mode.to_string()
    }

    fn programs_end_with_core(&self) -> bool {
        // True when the core owns this host; the holder's own use of it
        // outlives the core by design.
        true
    }

    /// Programs here end with their screens' one model: nothing to keep.
    fn snapshot(&self, _tab: &str, _offset: u64, _rows: u16, _cols: u16, _bytes: Vec<u8>) {}
}

impl PtyHost {
    /// The input queue of `tab`'s program, taken out of the lock (a
    /// clone: a push never waits on the table).
    fn input(&self, tab: &str) -> Result<InputQueue, HostError> {
        self.programs
            .lock()
            .unwrap()
            .get(tab)
            .and_then(|p| p.input.clone())
            .ok_or_else(|| HostError::NoSuchTab(tab.to_string()))
    }
}

/// Shells ignore SIGTERM, so hang up first as a closing terminal would;
/// then ask, then insist. Reaches the session's foreground process group,
/// including what an exited program left running in it.
async fn stop_session(pid: u32, exited: &mut watch::Receiver<bool>) {
    let pgid = Pid::from_raw(pid as i32);
    let group_alive = || killpg(pgid, None).is_ok();
    for sig in [Signal::SIGHUP, Signal::SIGTERM] {
        let _ = killpg(pgid, sig);
        let _ = killpg(pgid, Signal::SIGCONT);
        let gone = async {
            let _ = exited.wait_for(|e| *e).await;
            while group_alive() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        if tokio::time::timeout(GRACE, gone).await.is_ok() {
            return;
        }
    }
    let _ = killpg(pgid, Signal::SIGKILL);
}

struct Started {
    child: tokio::process::Child,
    pty: pty_process::Pty,
    pid: u32,
    /// Write end of the shim's pipe, when the program waits for placement.
    go: Option<OwnedFd>,
}

/// Give the child the signal state of a program started from a login
/// shell, whatever the core was started with: an ignore survives exec, so
/// a core started in the background of a script (SIGINT and SIGQUIT
/// ignored) or under `nohup` would hand on a program that Ctrl-C cannot
/// stop. tmux does the same for its panes.
fn default_signals() {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, SigmaskHow};
    let dfl = SigAction::new(SigHandler::SigDfl, SaFlags::empty(), SigSet::empty());
    for sig in Signal::iterator().filter(|s| !matches!(s, Signal::SIGKILL | Signal::SIGSTOP)) {
        // SAFETY: SIG_DFL installs no handler.
        let _ = unsafe { sigaction(sig, &dfl) };
    }
    let _ = nix::sys::signal::sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None);
}

/// Open the PTY and start the program, or the shim that will become it.
fn start(bin: &PathBuf, spec: &SpawnSpec, shim: bool) -> Result<Started, HostError> {
    let program = spec.argv.first().cloned().unwrap_or_default();
    let spawn_err = |reason: String| HostError::Spawn {
        program: program.clone(),
        reason,
    };
    if spec.argv.is_empty() {
        return Err(spawn_err("empty command".into()));
    }
    let (pty, pts) = pty_process::open().map_err(|e| HostError::Pty(e.to_string()))?;
    pty.resize(pty_process::Size::new(spec.rows, spec.cols))
        .map_err(|e| HostError::Pty(e.to_string()))?;
    // The read end stays open here only until the spawn returns; after that
    // the shim holds the only copy, so closing `go` unread is an EOF to it.
    let mut wait_end = None;
    let mut go = None;
    let mut shim_fd = None;
    let cmd = if shim {
        let (wait, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
            .map_err(|e| spawn_err(format!("cannot make the shim's pipe: {e}")))?;
        let wait_fd = wait.as_raw_fd();
        shim_fd = Some(wait_fd);
        wait_end = Some(wait);
        go = Some(write);
        pty_process::Command::new(bin)
            .arg("shim")
            .arg("--wait-fd")
            .arg(wait_fd.to_string())
            .arg("--")
            .args(&spec.argv)
    } else {
        pty_process::Command::new(&spec.argv[0]).args(&spec.argv[1..])
    };
    // SAFETY: sigaction, sigprocmask and fcntl are async-signal-safe and
    // touch only the child.
    let cmd = unsafe {
        cmd.pre_exec(move || {
            default_signals();
            // The shim's own copy of the pipe survives exec, so it can read it.
            if let Some(fd) = shim_fd {
                nix::fcntl::fcntl(
                    fd,
                    nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty()),
                )?;
            }
            Ok(())
        })
    };
    let child = cmd
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&spec.cwd)
        .spawn(pts)
        .map_err(|e| spawn_err(e.to_string()))?;
    drop(wait_end);
    let pid = child
        .id()
        .ok_or_else(|| spawn_err("it ended before it could be recorded".into()))?;
    Ok(Started {
        child,
        pty,
        pid,
        go,
    })
}

/// What a launched program is wired to.
struct Run {
    programs: Arc<Mutex<HashMap<String, Program>>>,
    events: mpsc::Sender<HostEvent>,
    exited_tx: watch::Sender<bool>,
    worker: Worker,
}

/// Place the started process in its scope (if any), let it run, and wire
/// its PTY to the event stream.
async fn place_and_run(
    started: Started,
    spec: SpawnSpec,
    scope: Option<(Arc<dyn Scopes>, String)>,
    run: Run,
) -> Result<Spawned, HostError> {
    let Run {
        programs,
        events,
        exited_tx,
        mut worker,
    } = run;
    let Started {
        mut child,
        pty,
        pid,
        go,
    } = started;
    if let Some((scopes, name)) = scope {
        let placed = scopes.place(name.clone(), pid).await;
        let cancelled = programs
            .lock()
            .unwrap()
            .get(&spec.tab)
            .is_none_or(|p| p.cancelled);
        let placed = placed.and_then(|()| match cancelled {
            true => Err("the tab was closed while it was starting".to_string()),
            false => Ok(()),
        });
        let released = placed.and_then(|()| {
            use std::io::Write;
            let go = go.expect("a placed program waits on a pipe");
            std::fs::File::from(go)
                .write_all(b"G")
                .map_err(|e| format!("cannot release the program: {e}"))
        });
        if let Err(reason) = released {
            // Nothing of the program has run yet: end the shim and say why.
            let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
            let _ = child.wait().await;
            return Err(HostError::Scope {
                scope: name,
                reason,
            });
        }
    }
    let start_time = platform::proc_start_time(pid).unwrap_or(0);
    let master = pty.as_fd().try_clone_to_owned().ok();
    let tab = spec.tab.clone();
    let (input_tx, reader_done) = wire(pty, &tab, events.clone(), worker.clone());
    let running = match programs.lock().unwrap().get_mut(&tab) {
        Some(prog) if !prog.cancelled => {
            prog.input = Some(input_tx);
            prog.start_time = start_time;
            prog.master = master;
            true
        }
        _ => false,
    };
    if !running {
        // Closed in the instant since placement: end it unseen.
        let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
        let _ = child.wait().await;
        return Err(HostError::Spawn {
            program: spec.argv[0].clone(),
            reason: "the tab was closed while it was starting".into(),
        });
    }
    // Reaper: the program's exit is the tab's exit, even when something it
    // left behind still holds the terminal.
    tokio::spawn(async move {
        let code = loop {
            let share = worker.work().await;
            tokio::select! {
                biased;
                _ = worker.freezing() => drop(share),
                // Cancel-safe: a status reaped is kept in `child`.
                st = child.wait() => break (st.map(exit_code).unwrap_or(-1), share),
            }
        };
        finish(tab, pid, code, Some(reader_done), exited_tx, events).await;
    });
    Ok(Spawned { pid, start_time })
}
