//! Every escape of issue 9's acceptance 2 (but the proxy's), from inside.

use std::net::{TcpListener, UdpSocket};
use std::path::Path;
use std::time::Duration;

use super::{on_pty, setup, text};
use crate::support::sysenv::{describe, SystemdEnv};

/// Attempts that must all fail; each prints `REACHED name` if it worked,
/// `blocked name` if it did not.
const ESCAPES: &str = r##"
set -u
try() { name=$1; shift; if "$@" >/dev/null 2>&1; then echo "REACHED $name"; else echo "blocked $name"; fi; }
try write-home touch "$HOME/escaped"
try write-etc touch /etc/escaped
try write-parent touch ../escaped
try write-symlink sh -c 'echo x > planted-link'
try plant-hardlink ln "$HOME/target.txt" planted-hardlink
try replace-git mv .git .git-moved
try replace-hooks mv .git/hooks .git/hooks-moved
try remove-hooks rm -rf .git/hooks
try add-hook sh -c 'echo "#!/bin/sh" > .git/hooks/pre-commit'
try edit-git-config sh -c 'echo "[core]" >> .git/config'
try read-ssh-key cat "$HOME/.ssh/id_ed25519"
try read-aws cat "$HOME/.aws/credentials"
try write-nerdr-config touch "$HOME/.config/nerdr/x"
try connect-user-bus python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])' "$RT/bus"
try connect-systemd-private python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])' "$RT/systemd/private"
try forge-journal python3 -c 'import socket; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).connect("/run/systemd/journal/socket")'
try list-runtime-dir sh -c "ls -A '$RT' | grep -q ."
try see-outside-pid kill -0 "$OUTSIDE"
try ptrace python3 -c '
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
sys.exit(0 if libc.ptrace(16, int(sys.argv[1]), 0, 0) == 0 else 1)' "$OUTSIDE"
try pidfd-getfd python3 -c '
import ctypes, os, sys
fd = os.pidfd_open(int(sys.argv[1]))
libc = ctypes.CDLL(None, use_errno=True)
sys.exit(0 if libc.syscall(438, fd, 0, 0) >= 0 else 1)' "$OUTSIDE"
test -t 0 && echo "stdin is a terminal"
try tiocsti python3 -c 'import fcntl, termios; fcntl.ioctl(0, termios.TIOCSTI, b"x")'
try tiocsti-high-bits python3 -c '
import ctypes, sys, termios
libc = ctypes.CDLL(None, use_errno=True)
arg = ctypes.c_char(b"x")
# The kernel reads the request as 32 bits: junk above them is still TIOCSTI.
sys.exit(0 if libc.ioctl(0, ctypes.c_ulong(termios.TIOCSTI | (1 << 32)), ctypes.byref(arg)) == 0 else 1)'
try unshare-user unshare -U true
try tcp-host-loopback python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3)' "$TCP_PORT"
try tcp-remote python3 -c 'import socket; socket.create_connection(("192.0.2.1", 80), timeout=3)'
try dns-lookup python3 -c 'import socket; socket.getaddrinfo("example.com", 443)'
try dns-query python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01", ("127.0.0.1", int(sys.argv[1])))
s.settimeout(2); s.recv(512)' "$DNS_PORT"
echo x > /tmp/host-tmp-marker && echo "wrote private tmp"
echo done
"##;

/// What one run of [`ESCAPES`] showed.
struct Escapes {
    stdout: String,
    reached: Vec<String>,
    blocked: usize,
    tcp_arrived: bool,
    dns_arrived: bool,
    report: String,
}

/// Plant what the escapes aim at, start listeners and a process outside,
/// and run [`ESCAPES`] on a PTY in `nerdr sandbox` (with `weaken`, if any).
fn run_escapes(env: &SystemdEnv, weaken: Option<&str>) -> Escapes {
    let home = env.home().to_path_buf();
    let proj = home.join("proj");
    env.write_user_file("target.txt", "outside\n");
    std::os::unix::fs::symlink(home.join("target.txt"), proj.join("planted-link")).unwrap();
    env.write_user_file(".ssh/id_ed25519", "SECRET KEY\n");
    env.write_user_file(".aws/credentials", "[default]\nsecret\n");
    env.write_user_file(".config/nerdr/config.toml", "");
    env.write_user_file("escapes.sh", ESCAPES);
    // Listeners outside: a direct TCP connection and a DNS query to them
    // must not arrive.
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    let dns = UdpSocket::bind("127.0.0.1:0").unwrap();
    dns.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    // A process of the user's outside the sandbox.
    let mut outside = env.user_cmd(&["sleep", "60"]).spawn().unwrap();
    let mut outside_pid = String::new();
    crate::support::wait_until("the outside sleep", Duration::from_secs(10), || {
        let o = env.output(&["pgrep", "-u", env.user(), "-x", "sleep"]);
        outside_pid = text(&o.stdout).lines().next().unwrap_or("").to_string();
        !outside_pid.is_empty()
    });

    let escapes = home.join("escapes.sh");
    let mut args = vec!["nerdr", "sandbox"];
    if let Some(w) = weaken {
        args.extend(["--weaken", w]);
    }
    args.extend(["--", "bash", escapes.to_str().unwrap()]);
    let mut c = on_pty(env, &proj, &args);
    c.env("RT", env.runtime_dir())
        .env("OUTSIDE", &outside_pid)
        .env("TCP_PORT", tcp.local_addr().unwrap().port().to_string())
        .env("DNS_PORT", dns.local_addr().unwrap().port().to_string());
    let out = crate::support::sysenv::output_of(&mut c);
    let _ = outside.kill();
    let _ = outside.wait();
    let stdout = text(&out.stdout);
    let report = describe(&c, &out);
    assert!(out.status.success(), "{report}");
    assert!(stdout.contains("done"), "{report}");
    assert!(stdout.contains("stdin is a terminal"), "{report}");
    tcp.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 512];
    Escapes {
        reached: stdout
            .lines()
            .filter_map(|l| l.split_once("REACHED ").map(|(_, n)| n.trim().to_string()))
            .collect(),
        blocked: stdout.lines().filter(|l| l.starts_with("blocked")).count(),
        tcp_arrived: tcp.accept().is_ok(),
        dns_arrived: dns.recv_from(&mut buf).is_ok(),
        stdout,
        report,
    }
}

#[test]
fn from_inside_every_escape_fails() {
    let Some(env) = setup() else { return };
    let home = env.home().to_path_buf();
    let proj = home.join("proj");
    let e = run_escapes(&env, None);
    assert!(
        e.reached.is_empty(),
        "escapes worked: {:?}{}",
        e.reached,
        e.report
    );
    assert_eq!(e.blocked, 27, "{}", e.report);
    assert!(!e.tcp_arrived, "a TCP connection reached the host");
    assert!(!e.dns_arrived, "a DNS query reached the host");

    // Nothing was written outside.
    assert!(e.stdout.contains("wrote private tmp"));
    assert!(
        !env.ns_path("/tmp/host-tmp-marker").exists(),
        "host /tmp written"
    );
    assert!(!home.join("escaped").exists());
    assert_eq!(
        std::fs::read_to_string(home.join("target.txt")).unwrap(),
        "outside\n"
    );
    assert!(!Path::new("/etc/escaped").exists());
    assert!(proj.join(".git/hooks").is_dir() && !proj.join(".git/hooks/pre-commit").exists());
    assert!(!std::fs::read_to_string(proj.join(".git/config"))
        .unwrap()
        .contains("[core]\n[core]"));
}

/// The same escapes against a sandbox with every weakening: each check
/// that a weakening concerns now reaches its target, so the checks above
/// can fail.
#[test]
fn the_escape_checks_can_fail() {
    let Some(env) = setup() else { return };
    let all = "no-pid-ns,no-net-ns,runtime-visible,hooks-writable,git-config-writable,\
        creds-visible,nerdr-writable,no-seccomp,userns-allowed,home-writable";
    let e = run_escapes(&env, Some(all));
    assert!(e.stdout.contains("WEAKENED"), "{}", e.report);
    for want in [
        "write-home",
        "write-parent",
        "write-symlink",
        "add-hook",
        "edit-git-config",
        "read-ssh-key",
        "read-aws",
        "write-nerdr-config",
        "connect-user-bus",
        "connect-systemd-private",
        "forge-journal",
        "list-runtime-dir",
        "see-outside-pid",
        "tiocsti",
        "tiocsti-high-bits",
        "unshare-user",
        "tcp-host-loopback",
    ] {
        assert!(
            e.reached.iter().any(|r| r == want),
            "{want} not reached:{}",
            e.report
        );
    }
    assert!(e.tcp_arrived && e.dns_arrived, "{}", e.report);
}
