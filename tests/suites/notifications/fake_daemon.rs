//! The fake notification daemon, checked on its own.

use std::time::Duration;

use crate::support::fake_notifications::{FakeNotifications, Notification};
use crate::support::sysenv::SystemdEnv;

#[test]
fn the_fake_daemon_records_a_notify_call_on_the_users_bus() {
    let Some(env) = SystemdEnv::start() else {
        return;
    };
    let fake = FakeNotifications::start(&env);
    env.run(&[
        "busctl",
        "--user",
        "call",
        // The expire timeout, -1, is not an option.
        "--",
        "org.freedesktop.Notifications",
        "/org/freedesktop/Notifications",
        "org.freedesktop.Notifications",
        "Notify",
        "susssasa{sv}i",
        "someapp",
        "0",
        "",
        "a summary",
        "a body",
        "0",
        "0",
        "-1",
    ]);
    let got = fake.wait_for("busctl's", Duration::from_secs(10), |_| true);
    assert_eq!(
        got,
        Notification {
            app_name: "someapp".into(),
            replaces_id: 0,
            summary: "a summary".into(),
            body: "a body".into(),
            id: 1,
        }
    );
}
