//! The tasks that serve one program's terminal and process: a writer (the
//! only owner of the master's write half), a reader that turns output into
//! events, and reapers, for a program launched here (a tokio child) and
//! for one adopted after a re-execution (a child tokio never knew). Each
//! reads, delivers or reaps as one piece of [`Worker`] work, so a
//! hand-over's freeze finds nothing in flight.

use std::time::Duration;

use nix::unistd::Pid;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, watch, OwnedRwLockReadGuard};

use super::input::{Input, InputQueue};
use super::pause::Worker;
use super::HostEvent;

/// The most one read of a program's output takes.
const READ_MAX: usize = 64 * 1024;

/// Start the tasks that feed a program's terminal and read it.
pub fn wire(
    pty: pty_process::Pty,
    tab: &str,
    events: mpsc::Sender<HostEvent>,
    mut worker: Worker,
) -> (InputQueue, tokio::task::JoinHandle<()>) {
    let (reader, mut writer) = pty.into_split();
    let (input, mut input_rx) = InputQueue::new();
    // Writer: the only owner of the master's write half, so input stays in
    // order and a slow program cannot block the caller (its queue is
    // bounded instead: `host::input`).
    let (queue, named) = (input.drain(), tab.to_string());
    tokio::spawn(async move {
        while let Some(msg) = input_rx.recv().await {
            let ok = match msg {
                Input::Bytes(b) => {
                    let ok = writer.write_all(&b).await.is_ok();
                    queue.written(&named, b.len());
                    ok
                }
                Input::Resize(r, c) => writer.resize(pty_process::Size::new(r, c)).is_ok(),
            };
            if !ok {
                break;
            }
        }
    });
    // Reader: forwards output for as long as anything holds the PTY open.
    // A read and the delivery of its bytes are one piece of work, so a
    // freeze never strands bytes outside the screen.
    let tab = tab.to_string();
    let reader_done = tokio::spawn(async move {
        let mut reader = reader;
        // Read into spare capacity, never zeroed, so an idle tab's buffer
        // costs only the pages its largest read wrote. A zeroed buffer is
        // written whole when allocated, which kept 64 KiB resident in
        // every tab (`bench/idle.py`).
        let mut buf = Vec::with_capacity(READ_MAX);
        loop {
            let share = worker.work().await;
            let n = tokio::select! {
                biased;
                _ = worker.freezing() => continue,
                r = reader.read_buf(&mut buf) => match r {
                    // EIO is how Linux reports that the last slave fd closed.
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                },
            };
            let ev = HostEvent::Output {
                tab: tab.clone(),
                bytes: buf[..n].to_vec(),
                generation: None,
            };
            buf.clear();
            // Waits while the consumer is behind: backpressure.
            if events.send(ev).await.is_err() {
                break;
            }
            drop(share);
        }
    });
    (input, reader_done)
}

/// Report a program's end, with the share of work its reaping took (the
/// report is part of that work). Output already written gets a moment to
/// arrive first, so the screen is complete when the tab shows as exited.
pub async fn finish(
    tab: String,
    pid: u32,
    (code, _share): (i32, OwnedRwLockReadGuard<()>),
    reader_done: Option<tokio::task::JoinHandle<()>>,
    exited_tx: watch::Sender<bool>,
    events: mpsc::Sender<HostEvent>,
) {
    if let Some(done) = reader_done {
        let _ = tokio::time::timeout(Duration::from_millis(300), done).await;
    }
    // Kept until forgotten: a stop still ends what it left behind.
    let _ = exited_tx.send(true);
    let _ = events
        .send(HostEvent::Exited {
            tab,
            code,
            pid: Some(pid),
        })
        .await;
}

/// Wait for an adopted child to end and reap it. It is this process's
/// child (a re-execution keeps parenthood), but not tokio's: wait on each
/// SIGCHLD for this PID alone, so no other child's status is taken.
pub async fn reap_adopted(pid: u32, worker: &mut Worker) -> (i32, OwnedRwLockReadGuard<()>) {
    use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
    use tokio::signal::unix::{signal, SignalKind};
    // Registered before the first look, so an exit in between is not missed.
    let mut sigchld = signal(SignalKind::child()).ok();
    loop {
        let share = worker.work().await;
        let looked = tokio::select! {
            biased;
            _ = worker.freezing() => None,
            code = async {
                loop {
                    match waitpid(Pid::from_raw(pid as i32), Some(WaitPidFlag::WNOHANG)) {
                        Ok(WaitStatus::Exited(_, c)) => return c,
                        Ok(WaitStatus::Signaled(_, s, _)) => return 128 + s as i32,
                        // Not ours after all, or already reaped: the code is lost.
                        Err(_) => return -1,
                        Ok(_) => match sigchld.as_mut() {
                            Some(s) => {
                                s.recv().await;
                            }
                            None => return -1,
                        },
                    }
                }
            } => Some(code),
        };
        match looked {
            Some(code) => return (code, share),
            None => drop(share),
        }
    }
}

pub fn exit_code(st: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    st.code()
        .or_else(|| st.signal().map(|s| 128 + s))
        .unwrap_or(-1)
}
