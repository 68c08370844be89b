//! Desktop notifications and the notify command, end to end: nerdr's core
//! under a private `systemd --user` tells a fake
//! `org.freedesktop.Notifications` daemon on the test user's own session
//! bus (`support::fake_notifications`) when a tab no window shows becomes
//! blocked or done.
//! - `fake_daemon`: the fake itself answers a `Notify` sent with systemd's
//!   `busctl` (so a failure of the other tests is nerdr's, not the fake's).

mod fake_daemon;
