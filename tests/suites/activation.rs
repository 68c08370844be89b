//! How the core gets its sockets: handed over by socket activation (two
//! named fds, never unlinked), or bound by itself (stale files replaced,
//! live ones left to their owner).

use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::process::Stdio;
use std::time::Duration;

use crate::support::local::{check, pid_alive, Local};
use crate::support::wait_until;

fn require_tool(name: &str) -> bool {
    let found = std::process::Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !found {
        crate::support::sysenv::skip(&format!("{name} is not installed"));
    }
    found
}

#[test]
fn activated_core_serves_both_named_sockets_and_never_unlinks_them() {
    if !require_tool("systemd-socket-activate") {
        return;
    }
    let mut l = Local::empty();
    std::fs::create_dir_all(l.path("run/nerdr")).unwrap();
    std::fs::create_dir_all(l.path("state/nerdr")).unwrap();
    let (hook, client) = (l.hook_socket(), l.client_socket());
    // Order of -l differs from the names' order on purpose: the core must
    // go by LISTEN_FDNAMES, not by position.
    let mut activate = std::process::Command::new("systemd-socket-activate");
    activate
        .arg("-l")
        .arg(&client)
        .arg("-l")
        .arg(&hook)
        .arg("--fdname=client:hook");
    // systemd-socket-activate passes on only the variables named with -E.
    let env = l.cmd(&[]);
    for (k, v) in env.get_envs() {
        let mut pair = k.to_owned();
        pair.push("=");
        pair.push(v.unwrap());
        activate.arg("-E").arg(pair);
    }
    let child = activate
        .arg("--")
        .arg(crate::support::local::BIN)
        .arg("core")
        .current_dir(l.work())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    l.core = Some(child);
    wait_until("the activation sockets", Duration::from_secs(10), || {
        hook.exists() && client.exists()
    });
    // The first connection starts the core (activation execs it in place).
    assert!(l.tabs_json(&[]).is_empty());
    let log = l.core_log();
    assert!(log.contains("activated=true"), "core.log:\n{log}");
    // Both sockets are served: the hook socket answers a (refused) request.
    let mut s = UnixStream::connect(&hook).unwrap();
    use std::io::{BufRead, Write};
    s.write_all(b"{\"id\":1,\"method\":\"status\"}\n").unwrap();
    let mut line = String::new();
    std::io::BufReader::new(&s).read_line(&mut line).unwrap();
    assert!(line.contains("\"denied\""), "{line}");

    let pid = l.core_pid();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let mut core = l.core.take().unwrap();
    let status = core.wait().unwrap();
    assert!(status.success(), "core exit on SIGTERM: {status}");
    assert!(
        hook.exists() && client.exists(),
        "an activated socket was unlinked"
    );
}

#[test]
fn hand_started_core_binds_private_sockets() {
    let l = Local::started();
    for (sock, dir) in [
        (l.client_socket(), l.path("run/nerdr")),
        (l.hook_socket(), l.path("state/nerdr")),
    ] {
        let mode = std::fs::metadata(&sock).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", sock.display());
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", dir.display());
    }
    let key = l.path("run/nerdr/key");
    assert_eq!(
        std::fs::metadata(&key).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert!(l.core_log().contains("activated=false"));
}

#[test]
fn a_second_core_does_not_steal_the_socket_and_names_the_owner() {
    let l = Local::started();
    let out = l.run(&["core"]);
    check(&out, false, "second nerdr core", &l);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("another nerdr core owns"), "{err}");
    assert!(err.contains(&format!("pid {}", l.core_pid())), "{err}");
    // The first core still serves, on the same socket file.
    assert!(l.tabs_json(&[]).is_empty());
}

#[test]
fn a_stale_socket_file_is_replaced() {
    let mut l = Local::empty();
    std::fs::create_dir_all(l.path("run/nerdr")).unwrap();
    // A socket file nobody listens on, as a crashed core leaves behind.
    drop(UnixListener::bind(l.client_socket()).unwrap());
    assert!(l.client_socket().exists());
    l.start_core();
    assert!(l.tabs_json(&[]).is_empty());
    assert!(pid_alive(l.core_pid()));
}

#[test]
fn a_file_that_is_not_a_socket_is_left_alone() {
    let l = Local::empty();
    std::fs::create_dir_all(l.path("run/nerdr")).unwrap();
    std::fs::write(l.client_socket(), "mine").unwrap();
    let err = l.fails(&["core"]);
    assert!(err.contains("is not a socket"), "{err}");
    assert_eq!(std::fs::read_to_string(l.client_socket()).unwrap(), "mine");
}
