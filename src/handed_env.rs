//! Environment names nerdr never passes on to a program it starts (an agent,
//! a notify command): what the service manager handed the core, and the
//! prefixes nerdr reserves for itself (and herdr, whose tabs may nest).
//! Shared by `core::env` and `alerts::command`, so the two lists cannot
//! drift apart.

/// The service manager's hand-over to the core: a program given these
/// could speak for the core to systemd (readiness, the watchdog) or take
/// its sockets.
pub const SERVICE_HANDOVER: &[&str] = &[
    "LISTEN_PID",
    "LISTEN_FDS",
    "LISTEN_FDNAMES",
    "NOTIFY_SOCKET",
    "WATCHDOG_PID",
    "WATCHDOG_USEC",
    "INVOCATION_ID",
    "JOURNAL_STREAM",
    "MANAGERPID",
    "SYSTEMD_EXEC_PID",
];

/// Prefixes nerdr reserves: config cannot set them and no program inherits
/// them.
pub const RESERVED_PREFIXES: &[&str] = &["NERDR_", "HERDR_"];

/// Whether `name` is the core's own, never to be passed on.
pub fn is_the_cores(name: &str) -> bool {
    SERVICE_HANDOVER.contains(&name) || RESERVED_PREFIXES.iter().any(|p| name.starts_with(p))
}
