//! Talking to the service manager that started this process (the core's
//! unit, the holder's transient service): READY, STATUS, WATCHDOG, STOPPING.
//! Without a manager (`NOTIFY_SOCKET` unset) every call is a no-op.
//!
//! Each message is a blocking send on the manager's datagram socket: a
//! manager that stops reading it (busy, stopped, its queue full) blocks the
//! sender until it reads again. [`StatusLine`] keeps that off the caller.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use sd_notify::NotifyState;

pub fn ready(status: &str) {
    let _ = sd_notify::notify(false, &[NotifyState::Ready, NotifyState::Status(status)]);
}

pub fn stopping() {
    let _ = sd_notify::notify(
        false,
        &[NotifyState::Stopping, NotifyState::Status("stopping")],
    );
}

/// How often to ping the watchdog (half its timeout), if one is set for us.
pub fn watchdog_interval() -> Option<Duration> {
    let mut usec = 0;
    sd_notify::watchdog_enabled(false, &mut usec).then(|| Duration::from_micros(usec / 2))
}

pub fn watchdog() {
    let _ = sd_notify::notify(false, &[NotifyState::Watchdog]);
}

/// The service manager's STATUS line, sent by a thread of its own: a
/// manager that stops reading blocks that thread, never the caller (the
/// core's async workers, or whoever holds its state lock). Only the newest
/// line waits to be sent; lines set meanwhile are skipped, as the manager
/// shows only the last one anyway.
#[derive(Clone)]
pub struct StatusLine {
    next: Arc<(Mutex<Option<String>>, Condvar)>,
}

impl StatusLine {
    /// With no manager to tell, no thread: [`StatusLine::set`] does nothing.
    pub fn start() -> std::io::Result<Self> {
        let line = StatusLine {
            next: Arc::new((Mutex::new(None), Condvar::new())),
        };
        if std::env::var_os("NOTIFY_SOCKET").is_some() {
            let next = line.next.clone();
            std::thread::Builder::new()
                .name("nerdr-status".into())
                .spawn(move || send_forever(&next))?;
        }
        Ok(line)
    }

    pub fn set(&self, status: String) {
        let (slot, ready) = &*self.next;
        *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(status);
        ready.notify_one();
    }
}

fn send_forever(next: &(Mutex<Option<String>>, Condvar)) {
    let (slot, ready) = next;
    loop {
        let status = {
            let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if let Some(s) = slot.take() {
                    break s;
                }
                slot = ready.wait(slot).unwrap_or_else(|e| e.into_inner());
            }
        };
        status_now(&status);
    }
}

fn status_now(status: &str) {
    let _ = sd_notify::notify(false, &[NotifyState::Status(status)]);
}
