//! Desktop notifications and the notify command, end to end: nerdr's core
//! under a private `systemd --user` tells a fake
//! `org.freedesktop.Notifications` daemon on the test user's own session
//! bus (`support::fake_notifications`) when a tab no window shows becomes
//! blocked or done.
//! - `claude`: the real claude (`$NERDR_AGENT_CLIS`) at its permission
//!   prompt: the desktop notification names the tab, the notify command
//!   gets the `NERDR_NOTIFY_*` facts and none of the core's own variables;
//!   approved, its turn's end is told too.
//! - `fake_daemon`: the fake itself answers a `Notify` sent with systemd's
//!   `busctl` (so a failure of the other tests is nerdr's, not the fake's).

mod claude;
mod fake_daemon;
