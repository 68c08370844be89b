//! The notify command: real programs (`sh`), its environment, its bounds.

use std::time::Instant;

use super::*;

fn os(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
    pairs.iter().map(|(k, v)| (k.into(), v.into())).collect()
}

#[test]
fn the_environment_drops_what_nerdr_and_the_service_manager_own() {
    let core = os(&[
        ("PATH", "/usr/bin"),
        ("HOME", "/home/u"),
        ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus"),
        ("NERDR_HOLDER", "0"),
        ("NERDR_TAB", "secret"),
        ("HERDR_PANE", "x"),
        ("NOTIFY_SOCKET", "/run/user/1000/systemd/notify"),
        ("LISTEN_FDS", "2"),
        ("LISTEN_PID", "7"),
        ("LISTEN_FDNAMES", "hook:client"),
        ("WATCHDOG_USEC", "1"),
        ("WATCHDOG_PID", "7"),
        ("INVOCATION_ID", "abc"),
        ("JOURNAL_STREAM", "8:9"),
        ("MANAGERPID", "1"),
        ("SYSTEMD_EXEC_PID", "7"),
        ("LANG", "C.UTF-8"),
    ]);
    let notify = vec![
        ("NERDR_NOTIFY_TAB".to_owned(), "ab12".to_owned()),
        ("NERDR_NOTIFY_STATE".to_owned(), "done".to_owned()),
    ];
    assert_eq!(
        command_env(core, &notify),
        os(&[
            ("PATH", "/usr/bin"),
            ("HOME", "/home/u"),
            ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus"),
            ("LANG", "C.UTF-8"),
            ("NERDR_NOTIFY_TAB", "ab12"),
            ("NERDR_NOTIFY_STATE", "done"),
        ])
    );
}

fn sh(script: &str) -> Vec<String> {
    vec!["sh".into(), "-c".into(), script.into()]
}

#[tokio::test]
async fn the_command_gets_exactly_its_environment_and_the_home_folder() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let env = os(&[
        ("PATH", "/usr/bin:/bin"),
        ("NERDR_NOTIFY_TEXT", "claude in tab ab12 is done"),
    ]);
    let script = format!("{{ pwd; env | sort; }} > {}", out.display());
    let outcome = run(&sh(&script), env, dir.path(), RUN_LIMIT).await;
    assert!(matches!(outcome, Outcome::Succeeded), "{outcome:?}");
    let seen = std::fs::read_to_string(&out).unwrap();
    // The shell adds these itself.
    let own = ["PWD=", "SHLVL=", "_="];
    let seen: Vec<&str> = seen
        .lines()
        .filter(|l| !own.iter().any(|o| l.starts_with(o)))
        .collect();
    assert_eq!(
        seen,
        [
            dir.path().to_str().unwrap(),
            "NERDR_NOTIFY_TEXT=claude in tab ab12 is done",
            "PATH=/usr/bin:/bin",
        ]
    );
}

#[tokio::test]
async fn a_failing_command_says_its_status_and_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let outcome = run(
        &sh("echo 'no such sound' >&2; exit 3"),
        os(&[("PATH", "/usr/bin:/bin")]),
        dir.path(),
        RUN_LIMIT,
    )
    .await;
    match outcome {
        Outcome::Failed { status, stderr } => {
            assert_eq!(status.code(), Some(3));
            assert_eq!(stderr, "no such sound\n");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_missing_program_does_not_start() {
    let dir = tempfile::tempdir().unwrap();
    let outcome = run(
        &["nerdr-no-such-program".to_owned()],
        os(&[("PATH", "/usr/bin:/bin")]),
        dir.path(),
        RUN_LIMIT,
    )
    .await;
    assert!(
        matches!(&outcome, Outcome::NotStarted(e) if e.kind() == std::io::ErrorKind::NotFound),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_hanging_command_is_killed_with_what_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    // A child in the background keeps stderr open, as a daemonising
    // player might; killing only the first process would leave it.
    let script = format!(
        "sleep 300 & echo $! > {p}; echo $$ >> {p}; wait",
        p = pids.display()
    );
    let start = Instant::now();
    let outcome = run(
        &sh(&script),
        os(&[("PATH", "/usr/bin:/bin")]),
        dir.path(),
        Duration::from_millis(500),
    )
    .await;
    assert!(matches!(outcome, Outcome::Killed), "{outcome:?}");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    let pids = std::fs::read_to_string(&pids).unwrap();
    for pid in pids.split_whitespace() {
        let pid: i32 = pid.parse().unwrap();
        // Reaped (the shell) or killed and reaped by init: gone either way,
        // or at worst a zombie on its way out.
        let gone = |pid: i32| match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z'),
        };
        let t = Instant::now();
        while !gone(pid) {
            if t.elapsed() > Duration::from_secs(5) {
                // Ours (its shell wrote its PID just now): end it before failing.
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
                panic!("pid {pid} still runs");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn runs_beyond_the_bound_get_no_place() {
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    let a = Slot::take(&COUNT, 2).unwrap();
    let b = Slot::take(&COUNT, 2).unwrap();
    assert!(Slot::take(&COUNT, 2).is_none());
    drop(a);
    let c = Slot::take(&COUNT, 2).unwrap();
    assert!(Slot::take(&COUNT, 2).is_none());
    drop((b, c));
    assert_eq!(COUNT.load(Ordering::SeqCst), 0);
}
