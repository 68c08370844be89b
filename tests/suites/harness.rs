//! Self-tests of the private systemd user manager harness (`support::sysenv`).
//! They need root; otherwise they print SKIPPED (and fail with NERDR_MUST_TEST=1).

use std::io::{BufRead, BufReader};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use crate::support::sysenv::{wait_until, SystemdEnv};

const T: Duration = Duration::from_secs(20);

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn unique(tag: &str) -> String {
    let mut b = [0u8; 8];
    getrandom::getrandom(&mut b).unwrap();
    format!("{tag}-{:016x}", u64::from_ne_bytes(b))
}

#[test]
fn manager_answers_as_the_user() {
    let Some(env) = SystemdEnv::start() else {
        return;
    };
    let out = env.run(&["sh", "-c", "id -u; id -Gn; echo $HOME; echo $XDG_RUNTIME_DIR; echo $DBUS_SESSION_BUS_ADDRESS; echo $PATH; pwd"]);
    let s = stdout(&out);
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines[0], env.uid().to_string(), "{s}");
    assert!(lines[1].split(' ').any(|g| g == "systemd-journal"), "{s}");
    assert_eq!(lines[2], env.home().to_str().unwrap(), "{s}");
    assert_eq!(lines[3], format!("/run/user/{}", env.uid()), "{s}");
    assert_eq!(
        lines[4],
        format!("unix:path=/run/user/{}/bus", env.uid()),
        "{s}"
    );
    assert!(
        lines[5].starts_with(env.nerdr().parent().unwrap().to_str().unwrap()),
        "{s}"
    );
    assert_eq!(
        lines[6],
        env.home().to_str().unwrap(),
        "cwd defaults to HOME: {s}"
    );

    let state = stdout(&env.output(&["systemctl", "--user", "is-system-running"]));
    assert!(
        matches!(state.trim(), "running" | "degraded"),
        "state: {state}"
    );
    let version = env.systemctl(&["show", "-P", "Version"]);
    assert!(!version.trim().is_empty(), "manager Version: {version:?}");
    // The user bus answers too (dbus.socket activation).
    let v = stdout(&env.run(&[
        "busctl",
        "--user",
        "get-property",
        "org.freedesktop.systemd1",
        "/org/freedesktop/systemd1",
        "org.freedesktop.systemd1.Manager",
        "Version",
    ]));
    assert!(v.contains(version.trim()), "busctl: {v}");
    // The nerdr binary under test is on the user's PATH and runnable by the user.
    let which = stdout(&env.run(&[
        "sh",
        "-c",
        "command -v nerdr && test -x \"$(command -v nerdr)\"",
    ]));
    assert_eq!(which.trim(), env.nerdr().to_str().unwrap());
    // Runs as the user: exit status 126/127 would mean "cannot execute"/"not found".
    env.run(&[
        "sh",
        "-c",
        "nerdr --version >/dev/null 2>&1; rc=$?; [ $rc -ne 126 ] && [ $rc -ne 127 ]",
    ]);

    // Caller-provided env and cwd reach the command.
    let mut cmd = env.user_cmd(&["sh", "-c", "echo $NERDR_X; pwd"]);
    cmd.env("NERDR_X", "forwarded").current_dir("/tmp");
    let s = stdout(&crate::support::sysenv::run_ok(&mut cmd));
    assert_eq!(s, "forwarded\n/tmp\n");
}

const ECHO_PL: &str = r#"
use strict; use warnings; use Socket;
$| = 1;
die "not socket-activated\n" unless ($ENV{LISTEN_FDS} // '') eq '1' && ($ENV{LISTEN_PID} // 0) == $$;
open(my $l, '+<&=', 3) or die "fd 3: $!\n";
my $n = $ENV{NOTIFY_SOCKET} or die "no NOTIFY_SOCKET\n";
$n =~ s/^@/\0/;
socket(my $s, AF_UNIX, SOCK_DGRAM, 0) or die "socket: $!\n";
send($s, "READY=1\nSTATUS=serving", 0, pack_sockaddr_un($n)) or die "notify: $!\n";
print "harness-echo ready\n";
while (accept(my $c, $l)) { syswrite($c, "hello from harness-echo uid $<\n"); close $c; }
"#;

#[test]
fn socket_activated_notify_service() {
    let Some(env) = SystemdEnv::start() else {
        return;
    };
    env.write_user_file("harness-echo.pl", ECHO_PL);
    env.write_user_file(
        ".config/systemd/user/harness-echo.socket",
        "[Socket]\nListenStream=%t/harness-echo.sock\nSocketMode=0600\n",
    );
    env.write_user_file(
        ".config/systemd/user/harness-echo.service",
        "[Service]\nType=notify\nExecStart=/usr/bin/perl %h/harness-echo.pl\n",
    );
    env.systemctl(&["daemon-reload"]);
    env.systemctl(&["start", "harness-echo.socket"]);
    assert_eq!(
        env.unit_prop("harness-echo.socket", "ActiveState"),
        "active"
    );
    assert_eq!(
        env.unit_prop("harness-echo.service", "ActiveState"),
        "inactive"
    );

    // Connect from the test process through the namespace's /run/user ...
    let sock = env.ns_path(env.runtime_dir().join("harness-echo.sock"));
    let mut line = String::new();
    BufReader::new(
        UnixStream::connect(&sock).unwrap_or_else(|e| panic!("{}: {e}", sock.display())),
    )
    .read_line(&mut line)
    .unwrap();
    assert_eq!(line, format!("hello from harness-echo uid {}\n", env.uid()));
    wait_until("harness-echo.service active", T, || {
        env.unit_prop("harness-echo.service", "ActiveState") == "active"
    });
    assert_eq!(
        env.unit_prop("harness-echo.service", "StatusText"),
        "serving"
    );
    // ... and as the user, from inside (perl again: no socat on the box).
    let out = env.run(&[
        "perl",
        "-MIO::Socket::UNIX",
        "-e",
        "print IO::Socket::UNIX->new(Peer => \"$ENV{XDG_RUNTIME_DIR}/harness-echo.sock\")->getline",
    ]);
    assert_eq!(
        stdout(&out),
        format!("hello from harness-echo uid {}\n", env.uid())
    );
    // Its stdout went to the journal, tagged with the user unit.
    wait_until("harness-echo output in the journal", T, || {
        env.journal_messages(&["_SYSTEMD_USER_UNIT=harness-echo.service"])
            .iter()
            .any(|m| m == "harness-echo ready")
    });
    env.systemctl(&["stop", "harness-echo.service", "harness-echo.socket"]);
}

#[test]
fn systemd_run_scope_moves_the_command() {
    let Some(env) = SystemdEnv::start() else {
        return;
    };
    let out = env.run(&[
        "systemd-run",
        "--user",
        "--scope",
        "--unit=harness-scope-test",
        "--",
        "sh",
        "-c",
        "cat /proc/self/cgroup",
    ]);
    let s = stdout(&out);
    let expect = format!(
        "/{}/user-{uid}.slice/user@{uid}.service/app.slice/harness-scope-test.scope",
        env.cgroup(),
        uid = env.uid()
    );
    assert!(
        s.lines().any(|l| l.ends_with(&expect)),
        "expected a line ending in {expect}:\n{s}"
    );
    // A transient service too.
    env.run(&[
        "systemd-run",
        "--user",
        "--unit=harness-transient",
        "--",
        "sleep",
        "60",
    ]);
    assert_eq!(
        env.unit_prop("harness-transient.service", "ActiveState"),
        "active"
    );
    env.systemctl(&["stop", "harness-transient.service"]);
}

#[test]
fn journal_receives_user_messages() {
    let Some(env) = SystemdEnv::start() else {
        return;
    };
    let marker = unique("harness-journal");
    env.run(&["systemd-cat", "-t", "nerdr-harness-test", "echo", &marker]);
    wait_until("marker in the journal (read as root)", T, || {
        env.journal(&["SYSLOG_IDENTIFIER=nerdr-harness-test"])
            .iter()
            .any(|e| e["MESSAGE"] == marker.as_str() && e["_UID"] == env.uid().to_string().as_str())
    });
    // The user can read it as well (group systemd-journal, and its own user journal).
    for args in [
        &[
            "journalctl",
            "--no-pager",
            "-o",
            "cat",
            "-t",
            "nerdr-harness-test",
        ][..],
        &[
            "journalctl",
            "--no-pager",
            "-o",
            "cat",
            "--user",
            "-t",
            "nerdr-harness-test",
        ][..],
    ] {
        let s = stdout(&env.run(args));
        assert!(s.lines().any(|l| l == marker), "{args:?}:\n{s}");
    }
    // User units are attributed: journalctl --user -u works as the user.
    let marker2 = unique("harness-unit");
    // (The logger stays alive: journald attributes a line to a unit by reading
    // /proc/<pid>/cgroup, which fails for a process that already exited.)
    env.run(&[
        "systemd-run",
        "--user",
        "--unit=harness-logger",
        "--",
        "sh",
        "-c",
        &format!("echo {marker2}; exec sleep 60"),
    ]);
    wait_until("user unit output via journalctl --user -u", T, || {
        stdout(&env.output(&[
            "journalctl",
            "--no-pager",
            "-o",
            "cat",
            "--user",
            "-u",
            "harness-logger",
        ]))
        .lines()
        .any(|l| l == marker2)
    });
}

#[test]
fn environments_are_independent() {
    // Start both at once (named threads, so a SKIPPED line names this test).
    let name = std::thread::current().name().unwrap_or("?").to_string();
    let (a, b) = std::thread::scope(|s| {
        let start = |tag: &str| {
            std::thread::Builder::new()
                .name(format!("{name} ({tag})"))
                .spawn_scoped(s, SystemdEnv::start)
                .unwrap()
        };
        let (a, b) = (start("a"), start("b"));
        (a.join().unwrap(), b.join().unwrap())
    });
    let (Some(a), Some(b)) = (a, b) else { return };
    assert_ne!(a.cgroup(), b.cgroup());
    assert_ne!(a.home(), b.home());
    // Same /run/user/<uid> path, different tmpfs.
    a.run(&["touch", a.runtime_dir().join("only-in-a").to_str().unwrap()]);
    assert!(a.ns_path(a.runtime_dir().join("only-in-a")).exists());
    assert!(!b.ns_path(b.runtime_dir().join("only-in-a")).exists());
    // /tmp is private too (same uid in both), but HOME is shared with the host.
    a.run(&["touch", "/tmp/only-in-a"]);
    assert!(!b.output(&["test", "-e", "/tmp/only-in-a"]).status.success());
    assert!(!std::path::Path::new("/tmp/only-in-a").exists());
    a.run(&["touch", "a-home-file"]);
    assert!(a.home().join("a-home-file").exists());
    // Units and journals are separate.
    a.run(&[
        "systemd-run",
        "--user",
        "--unit=only-in-a",
        "--",
        "sleep",
        "60",
    ]);
    assert_eq!(a.unit_prop("only-in-a.service", "ActiveState"), "active");
    assert_eq!(b.unit_prop("only-in-a.service", "LoadState"), "not-found");
    let marker = unique("only-in-a");
    a.run(&["systemd-cat", "-t", "nerdr-harness-test", "echo", &marker]);
    wait_until("marker in a's journal", T, || {
        a.journal_messages(&["SYSLOG_IDENTIFIER=nerdr-harness-test"])
            .contains(&marker)
    });
    assert!(!b
        .journal_messages(&["SYSLOG_IDENTIFIER=nerdr-harness-test"])
        .contains(&marker));
    // Dropping one leaves the other working.
    let (a_cg, a_base) = (
        a.cgroup().to_string(),
        a.home().parent().unwrap().to_path_buf(),
    );
    drop(a);
    assert!(!std::path::Path::new("/sys/fs/cgroup/systemd")
        .join(&a_cg)
        .exists());
    assert!(!a_base.exists());
    b.systemctl(&["is-system-running"]);
    // Sequentially: a fresh one after a drop.
    drop(b);
    let Some(c) = SystemdEnv::start() else { return };
    c.systemctl(&["show", "-p", "Version"]);
}

#[test]
fn teardown_kills_what_the_test_left_running() {
    let Some(env) = SystemdEnv::start() else {
        return;
    };
    // A command still running, a daemonized grandchild and a scope.
    let mut cmd = env.user_cmd(&["sh", "-c", "setsid sleep 301 & echo $!; exec sleep 302"]);
    let mut child = cmd.stdout(std::process::Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let orphan: u32 = line.trim().parse().unwrap();
    let mut scope = env
        .user_cmd(&[
            "systemd-run",
            "--user",
            "--scope",
            "--unit=harness-left-running",
            "--",
            "sleep",
            "303",
        ])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_until("harness-left-running.scope active", T, || {
        env.unit_prop("harness-left-running.scope", "ActiveState") == "active"
    });
    let cgroup = env.cgroup().to_string();
    drop(env);
    assert!(!std::path::Path::new("/sys/fs/cgroup/systemd")
        .join(&cgroup)
        .exists());
    for (what, c) in [("sleep 302", &mut child), ("scope", &mut scope)] {
        let mut status = None;
        wait_until(&format!("{what} gone after teardown"), T, || {
            status = c.try_wait().unwrap();
            status.is_some()
        });
        use std::os::unix::process::ExitStatusExt;
        let sig = status.unwrap().signal();
        assert!(
            matches!(sig, Some(libc::SIGKILL | libc::SIGTERM)),
            "{what}: {status:?}"
        );
    }
    wait_until("daemonized grandchild gone", T, || {
        std::fs::read(format!("/proc/{orphan}/cmdline")).map_or(true, |c| c != b"sleep\x00301\x00")
    });
}
