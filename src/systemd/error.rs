//! What can go wrong talking to the user manager, each error naming the
//! unit and the next step. The classification of systemd's D-Bus error
//! names is pure and tested here.

use std::time::Duration;

/// Said wherever the holder cannot work at all without a user manager.
const WITHOUT_SYSTEMD: &str = "run nerdr inside a user session with systemd (`loginctl enable-linger $USER` keeps a manager running without a login), or set NERDR_HOLDER=0 so the core runs programs itself (they then end with it)";

#[derive(Debug, thiserror::Error)]
pub enum SystemdError {
    #[error("cannot find the user bus: {reason}; {WITHOUT_SYSTEMD}")]
    NoAddress { reason: String },
    #[error("no systemd user manager reachable at {address}: {source}; {WITHOUT_SYSTEMD}")]
    Unreachable {
        address: String,
        source: Box<zbus::Error>,
    },
    #[error("invalid unit name {name:?}: {reason}")]
    InvalidName { name: String, reason: String },
    #[error("cannot start {unit}: {reason}")]
    InvalidSpec { unit: String, reason: String },
    #[error("{unit} is not loaded (it ended, or was never started)")]
    NotLoaded { unit: String },
    #[error("{unit} already exists: stop it with `systemctl --user stop {unit}` (or clear a failed one with `systemctl --user reset-failed {unit}`) and try again")]
    UnitExists { unit: String },
    #[error("{unit} has no process left to signal")]
    NoProcess { unit: String },
    #[error("cannot move the process into {unit}: it no longer exists ({detail})")]
    ProcessGone { unit: String, detail: String },
    #[error("{method} for {unit} failed: {source}; see `systemctl --user status {unit}`")]
    Call {
        unit: String,
        method: &'static str,
        source: Box<zbus::Error>,
    },
    #[error("the {kind} job of {unit} ended with result {result:?}, not \"done\"{}; see `systemctl --user status {unit}` and `journalctl --user -u {unit}`", result_hint(unit, kind, result))]
    JobFailed {
        unit: String,
        kind: &'static str,
        result: String,
    },
    #[error("gave up after {after:?} waiting for {what} of {unit}: the user manager is busy or hung; see `systemctl --user status {unit}`")]
    Timeout {
        unit: String,
        what: &'static str,
        after: Duration,
    },
    #[error("the connection to the user manager closed while waiting for {what} of {unit}")]
    Disconnected { unit: String, what: &'static str },
}

/// What a failed job most likely means for nerdr's units. systemd 252
/// reports "failed" in `JobRemoved` for both cases below; the unit's own
/// `Result` ("resources", "timeout", "exit-code") is gone with the unit
/// once it is collected, so the journal is where the detail stays.
fn result_hint(unit: &str, kind: &str, result: &str) -> &'static str {
    match (kind, result) {
        ("start", "failed" | "resources") if unit.ends_with(".scope") => {
            " (the manager could not move the process into the scope: it must belong to the user, and the caller must run inside the user manager's cgroup tree)"
        }
        ("start", "failed" | "timeout") if unit.ends_with(".service") => {
            " (the program exited, or its main process did not send READY=1 within the start timeout)"
        }
        ("start", "dependency") => " (a unit it needs, such as its slice, failed)",
        (_, "canceled") => " (another job for the same unit replaced it)",
        _ => "",
    }
}

/// What a D-Bus error from the manager means, by its error name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    NoSuchUnit,
    UnitExists,
    NoSuchProcess,
    NoSuchPid,
    Other,
}

pub fn refusal(error_name: &str) -> Refusal {
    match error_name {
        "org.freedesktop.systemd1.NoSuchUnit" => Refusal::NoSuchUnit,
        "org.freedesktop.systemd1.UnitExists" => Refusal::UnitExists,
        "org.freedesktop.systemd1.NoSuchProcess" => Refusal::NoSuchProcess,
        "org.freedesktop.DBus.Error.UnixProcessIdUnknown" => Refusal::NoSuchPid,
        _ => Refusal::Other,
    }
}

impl SystemdError {
    /// The typed error for a failed call `method` about `unit`.
    pub fn from_call(unit: &str, method: &'static str, source: zbus::Error) -> Self {
        let (kind, detail) = match &source {
            zbus::Error::MethodError(name, msg, _) => {
                (refusal(name.as_str()), msg.clone().unwrap_or_default())
            }
            _ => (Refusal::Other, String::new()),
        };
        let unit = unit.to_owned();
        match kind {
            Refusal::NoSuchUnit => SystemdError::NotLoaded { unit },
            Refusal::UnitExists => SystemdError::UnitExists { unit },
            Refusal::NoSuchProcess => SystemdError::NoProcess { unit },
            Refusal::NoSuchPid => SystemdError::ProcessGone { unit, detail },
            Refusal::Other => SystemdError::Call {
                unit,
                method,
                source: Box::new(source),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn systemd_error_names_map_to_what_nerdr_does_next() {
        assert_eq!(
            refusal("org.freedesktop.systemd1.NoSuchUnit"),
            Refusal::NoSuchUnit
        );
        assert_eq!(
            refusal("org.freedesktop.systemd1.UnitExists"),
            Refusal::UnitExists
        );
        assert_eq!(
            refusal("org.freedesktop.systemd1.NoSuchProcess"),
            Refusal::NoSuchProcess
        );
        assert_eq!(
            refusal("org.freedesktop.DBus.Error.UnixProcessIdUnknown"),
            Refusal::NoSuchPid
        );
        assert_eq!(
            refusal("org.freedesktop.DBus.Error.AccessDenied"),
            Refusal::Other
        );
    }

    #[test]
    fn a_failed_scope_start_names_the_unit_and_the_likely_cause() {
        let msg = SystemdError::JobFailed {
            unit: "nerdr-agent-1a2b3c4d.scope".into(),
            kind: "start",
            result: "failed".into(),
        }
        .to_string();
        assert!(msg.contains("nerdr-agent-1a2b3c4d.scope"), "{msg}");
        assert!(msg.contains("\"failed\""), "{msg}");
        assert!(msg.contains("could not move the process"), "{msg}");
        assert!(
            msg.contains("journalctl --user -u nerdr-agent-1a2b3c4d.scope"),
            "{msg}"
        );
    }

    #[test]
    fn a_failed_service_start_points_at_readiness() {
        let msg = SystemdError::JobFailed {
            unit: "nerdr-holder.service".into(),
            kind: "start",
            result: "failed".into(),
        }
        .to_string();
        assert!(msg.contains("READY=1"), "{msg}");
        assert!(!msg.contains("move the process"), "{msg}");
    }

    #[test]
    fn an_existing_unit_says_how_to_clear_it() {
        let msg = SystemdError::UnitExists {
            unit: "nerdr-holder.service".into(),
        }
        .to_string();
        assert!(msg.contains("reset-failed nerdr-holder.service"), "{msg}");
    }
}
