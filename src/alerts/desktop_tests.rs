//! The desktop notification against a real D-Bus daemon of the test's own
//! (`dbus-daemon` with a private config and socket) and a fake
//! notification service on it, recording each call.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use zbus::zvariant::OwnedValue;

use super::*;

/// A private bus: `dbus-daemon` on a socket in a temp folder; killed (by
/// its PID) on drop.
struct Bus {
    daemon: Child,
    address: String,
    _dir: tempfile::TempDir,
}

impl Bus {
    fn start() -> Option<Bus> {
        if Command::new("dbus-daemon")
            .arg("--version")
            .output()
            .is_err()
        {
            let why = "dbus-daemon is not installed (apt-get install dbus)";
            assert!(
                std::env::var("NERDR_MUST_TEST").as_deref() != Ok("1"),
                "NERDR_MUST_TEST=1 but {why}"
            );
            // Straight to fd 2: eprintln! is captured, and hidden for a test
            // that passes.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "SKIPPED: alerts::desktop: {why}");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("bus");
        let config = dir.path().join("bus.conf");
        std::fs::write(
            &config,
            format!(
                r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>"#,
                socket.display()
            ),
        )
        .unwrap();
        let daemon = Command::new("dbus-daemon")
            .arg(format!("--config-file={}", config.display()))
            .arg("--nofork")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let bus = Bus {
            daemon,
            address: format!("unix:path={}", socket.display()),
            _dir: dir,
        };
        wait_for(&socket);
        Some(bus)
    }
}

impl Drop for Bus {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

/// Until the daemon listens: its socket file exists a moment before it
/// does (bind, then listen), and a connection then is refused.
fn wait_for(socket: &Path) {
    let start = Instant::now();
    while std::os::unix::net::UnixStream::connect(socket).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "dbus-daemon made no socket at {}",
            socket.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// What a fake daemon does with a call.
#[derive(Clone, Copy)]
enum Answer {
    Id(u32),
    Error,
    Never,
}

/// App name, summary, body, urgency, replaces_id.
type Call = (String, String, String, u8, u32);

#[derive(Clone)]
struct FakeDaemon {
    calls: Arc<Mutex<Vec<Call>>>,
    answer: Answer,
    markup: bool,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl FakeDaemon {
    #[allow(clippy::too_many_arguments)]
    async fn notify(
        &self,
        app_name: String,
        replaces_id: u32,
        _app_icon: String,
        summary: String,
        body: String,
        _actions: Vec<String>,
        hints: HashMap<String, OwnedValue>,
        _expire_timeout: i32,
    ) -> zbus::fdo::Result<u32> {
        let urgency = hints
            .get("urgency")
            .and_then(|v| u8::try_from(v).ok())
            .unwrap_or(u8::MAX);
        self.calls
            .lock()
            .unwrap()
            .push((app_name, summary, body, urgency, replaces_id));
        match self.answer {
            Answer::Id(id) => Ok(id),
            Answer::Error => Err(zbus::fdo::Error::Failed("the daemon is unwell".into())),
            Answer::Never => std::future::pending().await,
        }
    }

    fn get_capabilities(&self) -> Vec<String> {
        let mut caps = vec!["body".to_owned()];
        if self.markup {
            caps.push("body-markup".to_owned());
        }
        caps
    }
}

async fn serve(bus: &Bus, answer: Answer) -> (zbus::Connection, FakeDaemon) {
    serve_with(bus, answer, false).await
}

async fn serve_with(bus: &Bus, answer: Answer, markup: bool) -> (zbus::Connection, FakeDaemon) {
    let fake = FakeDaemon {
        calls: Arc::default(),
        answer,
        markup,
    };
    let conn = zbus::connection::Builder::address(bus.address.as_str())
        .unwrap()
        .serve_at(PATH, fake.clone())
        .unwrap()
        .name(NAME)
        .unwrap()
        .build()
        .await
        .unwrap();
    (conn, fake)
}

#[tokio::test]
async fn the_daemon_gets_the_summary_and_body() {
    let Some(bus) = Bus::start() else { return };
    let (_conn, fake) = serve(&bus, Answer::Id(42)).await;
    let id = send(&bus.address, 0, "claude needs you", "tab ab12 in /p", LIMIT)
        .await
        .unwrap();
    assert_eq!(id, 42);
    assert_eq!(
        *fake.calls.lock().unwrap(),
        vec![(
            "nerdr".to_owned(),
            "claude needs you".to_owned(),
            "tab ab12 in /p".to_owned(),
            URGENCY_NORMAL,
            0
        )]
    );
}

#[tokio::test]
async fn no_daemon_on_the_bus_is_a_quick_error() {
    let Some(bus) = Bus::start() else { return };
    // The bus's own answer, not the wait running out (no clock is read:
    // CI's load made a wall-clock bound fail a correct answer).
    let err = send(&bus.address, 0, "s", "b", LIMIT).await.unwrap_err();
    assert!(!matches!(err, Failed::TimedOut(_)), "{err}");
    assert!(
        err.to_string().contains("ServiceUnknown") || err.to_string().contains(NAME),
        "{err}"
    );
}

#[tokio::test]
async fn no_bus_at_all_is_a_quick_error() {
    let dir = tempfile::tempdir().unwrap();
    let address = format!("unix:path={}", dir.path().join("no-bus").display());
    // A failed connect, not the wait running out.
    assert!(matches!(
        send(&address, 0, "s", "b", LIMIT).await,
        Err(Failed::Bus(_))
    ));
}

#[tokio::test]
async fn an_error_reply_is_an_error() {
    let Some(bus) = Bus::start() else { return };
    let (_conn, fake) = serve(&bus, Answer::Error).await;
    let err = send(&bus.address, 0, "s", "b", LIMIT).await.unwrap_err();
    assert!(err.to_string().contains("the daemon is unwell"), "{err}");
    assert_eq!(fake.calls.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_daemon_that_never_answers_is_given_up_on() {
    let Some(bus) = Bus::start() else { return };
    let (_conn, fake) = serve(&bus, Answer::Never).await;
    let limit = Duration::from_millis(500);
    let err = send(&bus.address, 0, "s", "b", limit).await.unwrap_err();
    assert!(matches!(err, Failed::TimedOut(d) if d == limit), "{err}");
    assert_eq!(fake.calls.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_daemon_that_reads_markup_gets_the_body_escaped() {
    let body = "tab ab12 in /home/u/R&D/<x>";
    for (markup, want) in [
        (true, "tab ab12 in /home/u/R&amp;D/&lt;x&gt;"),
        (false, body),
    ] {
        let Some(bus) = Bus::start() else { return };
        let (_conn, fake) = serve_with(&bus, Answer::Id(1), markup).await;
        send(&bus.address, 0, "claude is done", body, LIMIT)
            .await
            .unwrap();
        let calls = fake.calls.lock().unwrap().clone();
        assert_eq!(calls.len(), 1, "markup: {markup}");
        assert_eq!(calls[0].2, want, "markup: {markup}");
    }
}

#[tokio::test]
async fn a_notification_can_replace_an_earlier_one() {
    let Some(bus) = Bus::start() else { return };
    let (_conn, fake) = serve(&bus, Answer::Id(7)).await;
    send(&bus.address, 41, "claude is done", "b", LIMIT)
        .await
        .unwrap();
    assert_eq!(fake.calls.lock().unwrap()[0].4, 41);
}
