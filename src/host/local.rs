//! Programs as the core's own children, each on its own PTY and in its own
//! session. They end with the core; the holder exists so that they need not.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot, watch};

use super::{Host, HostError, HostEvent, SpawnSpec, Spawned};
use crate::platform;

/// How long a program gets to leave after SIGHUP, and again after SIGTERM.
pub const GRACE: Duration = Duration::from_millis(1500);

enum Input {
    Bytes(Vec<u8>),
    Resize(u16, u16),
}

struct Program {
    pid: u32,
    input: mpsc::UnboundedSender<Input>,
    /// Becomes true once the process has been reaped.
    exited: watch::Receiver<bool>,
}

pub struct LocalHost {
    programs: Arc<Mutex<HashMap<String, Program>>>,
    events: mpsc::UnboundedSender<HostEvent>,
}

impl LocalHost {
    pub fn new(events: mpsc::UnboundedSender<HostEvent>) -> Self {
        LocalHost {
            programs: Arc::default(),
            events,
        }
    }
}

impl Host for LocalHost {
    fn spawn(&self, spec: SpawnSpec) -> Result<Spawned, HostError> {
        let (pty, pts) = pty_process::open().map_err(|e| HostError::Pty(e.to_string()))?;
        pty.resize(pty_process::Size::new(spec.rows, spec.cols))
            .map_err(|e| HostError::Pty(e.to_string()))?;
        let program = spec.argv[0].to_string_lossy().into_owned();
        let mut child = pty_process::Command::new(&spec.argv[0])
            .args(&spec.argv[1..])
            .env_clear()
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&spec.cwd)
            .spawn(pts)
            .map_err(|e| HostError::Spawn {
                program: program.clone(),
                reason: e.to_string(),
            })?;
        let pid = child.id().ok_or_else(|| HostError::Spawn {
            program: program.clone(),
            reason: "it ended before it could be recorded".into(),
        })?;
        let start_time = platform::proc_start_time(pid).unwrap_or(0);

        let (reader, mut writer) = pty.into_split();
        let (input_tx, mut input_rx) = mpsc::unbounded_channel::<Input>();
        let (exited_tx, exited_rx) = watch::channel(false);
        let tab = spec.tab.clone();

        // Writer: the only owner of the master's write half, so input stays
        // in order and a slow program cannot block the core.
        tokio::spawn(async move {
            while let Some(msg) = input_rx.recv().await {
                let ok = match msg {
                    Input::Bytes(b) => writer.write_all(&b).await.is_ok(),
                    Input::Resize(r, c) => writer.resize(pty_process::Size::new(r, c)).is_ok(),
                };
                if !ok {
                    break;
                }
            }
        });

        // Reader and reaper: output first, then the exit, so the screen is
        // complete when the tab is marked exited.
        let events = self.events.clone();
        let programs = self.programs.clone();
        tokio::spawn(async move {
            let mut reader = reader;
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match reader.read(&mut buf).await {
                    // EIO is how Linux reports that the last slave fd closed.
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let _ = events.send(HostEvent::Output {
                            tab: tab.clone(),
                            bytes: buf[..n].to_vec(),
                        });
                    }
                }
            }
            let code = match child.wait().await {
                Ok(st) => exit_code(st),
                Err(_) => -1,
            };
            programs.lock().unwrap().remove(&tab);
            let _ = exited_tx.send(true);
            let _ = events.send(HostEvent::Exited { tab, code });
        });

        self.programs.lock().unwrap().insert(
            spec.tab,
            Program {
                pid,
                input: input_tx,
                exited: exited_rx,
            },
        );
        Ok(Spawned { pid, start_time })
    }

    fn write(&self, tab: &str, bytes: Vec<u8>) -> Result<(), HostError> {
        self.send(tab, Input::Bytes(bytes))
    }

    fn resize(&self, tab: &str, rows: u16, cols: u16) -> Result<(), HostError> {
        self.send(tab, Input::Resize(rows, cols))
    }

    fn stop(&self, tab: &str) -> oneshot::Receiver<()> {
        let (done, rx) = oneshot::channel();
        let target = self
            .programs
            .lock()
            .unwrap()
            .get(tab)
            .map(|p| (p.pid, p.exited.clone()));
        let Some((pid, mut exited)) = target else {
            let _ = done.send(());
            return rx;
        };
        tokio::spawn(async move {
            // Shells ignore SIGTERM, so hang up first as a closing terminal
            // would; then ask, then insist.
            let pgid = Pid::from_raw(pid as i32);
            for sig in [Signal::SIGHUP, Signal::SIGCONT, Signal::SIGTERM] {
                let _ = killpg(pgid, sig);
                if sig == Signal::SIGCONT {
                    continue;
                }
                if tokio::time::timeout(GRACE, exited.wait_for(|e| *e))
                    .await
                    .is_ok()
                {
                    let _ = done.send(());
                    return;
                }
            }
            let _ = killpg(pgid, Signal::SIGKILL);
            let _ = exited.wait_for(|e| *e).await;
            let _ = done.send(());
        });
        rx
    }

    fn mode(&self) -> &'static str {
        "core children (programs end with the core)"
    }
}

impl LocalHost {
    fn send(&self, tab: &str, msg: Input) -> Result<(), HostError> {
        let programs = self.programs.lock().unwrap();
        let p = programs
            .get(tab)
            .ok_or_else(|| HostError::NoSuchTab(tab.to_string()))?;
        p.input
            .send(msg)
            .map_err(|_| HostError::NoSuchTab(tab.to_string()))
    }
}

fn exit_code(st: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    st.code()
        .or_else(|| st.signal().map(|s| 128 + s))
        .unwrap_or(-1)
}
