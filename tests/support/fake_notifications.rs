//! A fake desktop notification daemon: it owns
//! `org.freedesktop.Notifications` on the session bus of a [`SystemdEnv`]'s
//! test user and records every `Notify` call (app name, summary, body) as
//! a JSON line in a file in that user's HOME, where the test reads it.
//!
//! It must run as the test user: their bus accepts only them. So the test
//! binary runs itself as that user (through `SystemdEnv::user_cmd`), asked
//! to run only [`serve_fake_notifications`], which serves when
//! `NERDR_FAKE_NOTIFICATIONS` names the record folder and returns at once
//! otherwise. That keeps the service in Rust on zbus (the crate nerdr sends
//! with, but the daemon side of it), needs no helper binary in the package
//! and no D-Bus tool beyond the user's own bus.
//!
//! ```ignore
//! let fake = FakeNotifications::start(&env);
//! let n = fake.wait_for("claude's", Duration::from_secs(60), |n| n.summary.contains("claude"));
//! ```

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::poll;
use super::sysenv::SystemdEnv;

const NAME: &str = "org.freedesktop.Notifications";
const PATH: &str = "/org/freedesktop/Notifications";
/// The variable that makes [`serve_fake_notifications`] serve: the record
/// folder.
const RECORD_VAR: &str = "NERDR_FAKE_NOTIFICATIONS";
/// The test's full name in this binary, for `--exact`.
const TEST_NAME: &str = "support::fake_notifications::serve_fake_notifications";

/// One `Notify` call as the daemon got it, and the id it answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notification {
    pub app_name: String,
    /// The id of the notification this one replaces (0: none).
    pub replaces_id: u32,
    pub summary: String,
    pub body: String,
    pub id: u32,
}

/// The running service; killed (by its PID) on drop.
pub struct FakeNotifications {
    child: Child,
    dir: PathBuf,
}

impl FakeNotifications {
    /// Start it on `env`'s user bus and wait until it owns the name.
    pub fn start(env: &SystemdEnv) -> FakeNotifications {
        let marker = env.write_user_file(".fake-notifications/.keep", "");
        let dir = marker.parent().unwrap().to_owned();
        // The test binary, where the user can run it (beside the nerdr
        // under test; a hard link costs nothing).
        let me = std::env::current_exe().expect("the test binary's path");
        let bin = env.nerdr().parent().unwrap().join("nerdr-tests");
        if !bin.exists() && std::fs::hard_link(&me, &bin).is_err() {
            std::fs::copy(&me, &bin)
                .unwrap_or_else(|e| panic!("copy {} to {}: {e}", me.display(), bin.display()));
        }
        let log = std::fs::File::create(dir.join("service.log")).unwrap();
        let mut cmd = env.user_cmd(&[
            bin.as_os_str(),
            "--exact".as_ref(),
            TEST_NAME.as_ref(),
            "--ignored".as_ref(),
            "--nocapture".as_ref(),
            "--test-threads=1".as_ref(),
        ]);
        cmd.env(RECORD_VAR, &dir)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log);
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start the fake notification service: {e}"));
        let mut fake = FakeNotifications { child, dir };
        let ready = poll(Duration::from_secs(30), || {
            fake.dir.join("ready").exists() || matches!(fake.child.try_wait(), Ok(Some(_)))
        });
        assert!(
            ready && fake.dir.join("ready").exists(),
            "the fake notification service never owned {NAME}; its output:\n{}",
            fake.output()
        );
        fake
    }

    /// Every call so far, in order.
    pub fn calls(&self) -> Vec<Notification> {
        read_calls(&self.dir)
    }

    /// Poll until a call matches `pred`; panics naming `what`, with every
    /// call and the service's output, after `timeout`.
    pub fn wait_for(
        &self,
        what: &str,
        timeout: Duration,
        pred: impl Fn(&Notification) -> bool,
    ) -> Notification {
        let mut found = None;
        poll(timeout, || {
            found = self.calls().into_iter().find(|n| pred(n));
            found.is_some()
        });
        found.unwrap_or_else(|| {
            panic!(
                "no {what} notification within {timeout:?}; the calls: {:#?}\nthe service's output:\n{}",
                self.calls(),
                self.output()
            )
        })
    }

    /// What the service printed.
    pub fn output(&self) -> String {
        std::fs::read_to_string(self.dir.join("service.log")).unwrap_or_default()
    }
}

impl Drop for FakeNotifications {
    fn drop(&mut self) {
        // Our own child: the exec chain (nsenter, as-user.sh, setpriv, env)
        // keeps its PID, which cannot be reused before we reap it.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_calls(dir: &Path) -> Vec<Notification> {
    std::fs::read_to_string(dir.join("calls.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

struct Daemon {
    dir: PathBuf,
    next_id: std::sync::atomic::AtomicU32,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Daemon {
    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        app_name: String,
        replaces_id: u32,
        _app_icon: String,
        summary: String,
        body: String,
        _actions: Vec<String>,
        _hints: HashMap<String, zbus::zvariant::OwnedValue>,
        _expire_timeout: i32,
    ) -> u32 {
        use std::io::Write;
        // As a real daemon does: a replaced notification keeps its id.
        let id = match replaces_id {
            0 => self
                .next_id
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst),
            id => id,
        };
        let call = Notification {
            app_name,
            replaces_id,
            summary,
            body,
            id,
        };
        let mut line = serde_json::to_string(&call).unwrap();
        line.push('\n');
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("calls.jsonl"))
            .and_then(|mut f| f.write_all(line.as_bytes()))
            .expect("record the call");
        eprintln!("fake notifications: {call:?}");
        id
    }

    fn get_server_information(&self) -> (String, String, String, String) {
        let s = |v: &str| v.to_owned();
        (s("nerdr-fake"), s("nerdr"), s("1"), s("1.2"))
    }

    fn get_capabilities(&self) -> Vec<String> {
        vec!["body".to_owned()]
    }
}

/// The service's entry point, run by [`FakeNotifications::start`] as the
/// test user; without `NERDR_FAKE_NOTIFICATIONS` it does nothing.
#[test]
#[ignore = "the fake notification service's own entry point; FakeNotifications::start runs it"]
fn serve_fake_notifications() {
    let Some(dir) = std::env::var_os(RECORD_VAR).map(PathBuf::from) else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let daemon = Daemon {
            dir: dir.clone(),
            next_id: 1.into(),
        };
        let _conn = zbus::connection::Builder::session()
            .expect("DBUS_SESSION_BUS_ADDRESS")
            .serve_at(PATH, daemon)
            .unwrap()
            .name(NAME)
            .unwrap()
            .build()
            .await
            .unwrap_or_else(|e| panic!("cannot own {NAME} on the session bus: {e}"));
        std::fs::write(dir.join("ready"), std::process::id().to_string()).unwrap();
        eprintln!("fake notifications: owns {NAME}");
        std::future::pending::<()>().await
    });
}
