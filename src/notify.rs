//! Talking to the service manager that started this process (the core's
//! unit, the holder's transient service): READY, STATUS, WATCHDOG, STOPPING.
//! Without a manager (`NOTIFY_SOCKET` unset) every call is a no-op.

use std::time::Duration;

use sd_notify::NotifyState;

pub fn ready(status: &str) {
    let _ = sd_notify::notify(false, &[NotifyState::Ready, NotifyState::Status(status)]);
}

pub fn status(status: &str) {
    let _ = sd_notify::notify(false, &[NotifyState::Status(status)]);
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
