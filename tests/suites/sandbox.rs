//! `nerdr sandbox -- CMD` for real: bubblewrap, run as the non-root test
//! user of a private `systemd --user` (a sandbox behaves differently under
//! root). Each escape is tried from inside and must fail; what an agent
//! needs (commits, a TUI's resizes, socketpair, /dev/null) must work.

use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use crate::support::sysenv::{describe, skip, SystemdEnv};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// An environment with bubblewrap, a repository `proj` (one commit) and
/// git's identity in the user's config. `None` after a loud skip.
fn setup() -> Option<SystemdEnv> {
    if !Path::new("/usr/bin/bwrap").exists() {
        skip("bubblewrap is not installed (apt-get install -y bubblewrap)");
        return None;
    }
    let env = SystemdEnv::start()?;
    env.write_user_file(
        ".gitconfig",
        "[user]\n\tname = t\n\temail = t@example.com\n[init]\n\tdefaultBranch = main\n",
    );
    env.write_user_file("proj/README", "hello\n");
    let proj = env.home().join("proj");
    user_git(&env, &proj, &["init", "-q"]);
    user_git(&env, &proj, &["add", "README"]);
    user_git(&env, &proj, &["commit", "-q", "-m", "first"]);
    Some(env)
}

fn user_git(env: &SystemdEnv, dir: &Path, args: &[&str]) -> String {
    let mut v = vec![
        "git".to_string(),
        "-C".to_string(),
        dir.display().to_string(),
    ];
    v.extend(args.iter().map(|s| s.to_string()));
    text(&env.run(&v).stdout).trim_end().to_string()
}

/// `nerdr sandbox -- ARGS` as the user in `dir`; whatever happened.
fn sandbox(env: &SystemdEnv, dir: &Path, args: &[&str]) -> Output {
    let mut v = vec!["nerdr", "sandbox", "--"];
    v.extend_from_slice(args);
    let mut c = env.user_cmd(&v);
    c.current_dir(dir);
    crate::support::sysenv::output_of(&mut c)
}

/// Runs its arguments on a new PTY that is their controlling terminal,
/// relays what they print, exits with their code.
const PTY_DRIVER: &str = r#"
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out = b""
while True:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
sys.exit(os.waitstatus_to_exitcode(status) & 0xff)
"#;

/// `args` as the user in `dir` on a real PTY (its controlling terminal).
fn on_pty(env: &SystemdEnv, dir: &Path, args: &[&str]) -> std::process::Command {
    let mut v = vec!["python3", "-c", PTY_DRIVER];
    v.extend_from_slice(args);
    let mut c = env.user_cmd(&v);
    c.current_dir(dir);
    c
}

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

/// Commits, a linked worktree's commits, socketpair, /dev/null, exit codes.
#[test]
fn what_an_agent_needs_works() {
    let Some(env) = setup() else { return };
    let home = env.home().to_path_buf();
    let proj = home.join("proj");
    let work = r#"
set -eu
echo edited >> README
git commit -qam "from inside"
python3 -c 'import socket; a, b = socket.socketpair(); a.send(b"ok"); assert b.recv(2) == b"ok"'
echo discard > /dev/null
echo fine
"#;
    let out = sandbox(&env, &proj, &["bash", "-c", work]);
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(text(&out.stdout).contains("fine"));
    assert_eq!(
        user_git(&env, &proj, &["log", "-1", "--format=%s"]),
        "from inside"
    );

    user_git(
        &env,
        &proj,
        &["worktree", "add", "-q", "-b", "side", "../linked"],
    );
    let linked = home.join("linked");
    let out = sandbox(&env, &linked, &["bash", "-c", work]);
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert_eq!(
        user_git(&env, &proj, &["log", "-1", "--format=%s", "side"]),
        "from inside"
    );
    // ... and its .git file and the main checkout stay out of reach.
    let out = sandbox(
        &env,
        &linked,
        &["sh", "-c", "echo 'gitdir: /tmp' > .git || touch ../proj/x || touch ../proj/.git/hooks/x || exit 0; exit 1"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));

    // nerdr's hook socket (in its read-only state dir) still answers:
    // agents' hooks and `nerdr probe` report through it.
    let state = home.join(".local/state/nerdr");
    env.write_user_file(".local/state/nerdr/.keep", "");
    let sock = state.join("nerdr.sock");
    let listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    std::fs::set_permissions(&sock, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let connect = format!(
        "import socket; socket.socket(socket.AF_UNIX).connect('{}')",
        sock.display()
    );
    let out = sandbox(&env, &proj, &["python3", "-c", &connect]);
    assert!(
        out.status.success(),
        "hook socket unreachable: {}",
        text(&out.stderr)
    );
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_ok(), "the connection did not arrive");
    let out = sandbox(&env, &proj, &["touch", state.join("x").to_str().unwrap()]);
    assert!(!out.status.success(), "nerdr's state dir is writable");

    let out = sandbox(&env, &proj, &["sh", "-c", "exit 7"]);
    assert_eq!(out.status.code(), Some(7));
    let out = sandbox(&env, &proj, &["sh", "-c", "kill -TERM $$"]);
    assert_eq!(out.status.code(), Some(128 + 15));
}

/// A TUI on a real PTY sees SIGWINCH and the new size.
#[test]
fn a_tui_resizes() {
    let Some(env) = setup() else { return };
    let proj = env.home().join("proj");
    let tui = r#"
import fcntl, os, signal, struct, termios
def size():
    r, c, _, _ = struct.unpack("HHHH", fcntl.ioctl(0, termios.TIOCGWINSZ, b"\0" * 8))
    return r, c
# Held pending until asked for, so it cannot arrive mid-print.
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGWINCH})
os.write(1, b"ready %d %d\n" % size())
info = signal.sigtimedwait({signal.SIGWINCH}, 15)
os.write(1, b"winch %d %d\n" % size() if info else b"no winch\n")
"#;
    env.write_user_file("tui.py", tui);
    let driver = r#"
import fcntl, os, pty, struct, sys, termios, time
pid, fd = pty.fork()
if pid == 0:
    os.execvp("nerdr", ["nerdr", "sandbox", "--", "python3", sys.argv[1]])
def setsize(r, c):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", r, c, 0, 0))
out = b""
deadline = time.time() + 20
resized = False
while time.time() < deadline:
    try:
        chunk = os.read(fd, 1024)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
    if b"ready" in out and not resized:
        setsize(30, 100)
        resized = True
    if b"winch" in out:
        break
sys.stdout.write(out.decode(errors="replace"))
"#;
    let script = env.home().join("tui.py");
    let mut c = env.user_cmd(&["python3", "-c", driver, script.to_str().unwrap()]);
    c.current_dir(&proj);
    let out = crate::support::sysenv::output_of(&mut c);
    let s = text(&out.stdout);
    assert!(s.contains("ready"), "{}", describe(&c, &out));
    assert!(s.contains("winch 30 100"), "{}", describe(&c, &out));
}

/// Ctrl-C on the terminal reaches the program; `nerdr sandbox` outlives
/// it to pass its exit on and close the audit trail.
#[test]
fn ctrl_c_reaches_the_program() {
    let Some(env) = setup() else { return };
    let proj = env.home().join("proj");
    let driver = r#"
import os, pty, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execvp("nerdr", ["nerdr", "sandbox", "--", "sh", "-c", "echo ready; exec sleep 30"])
out = b""
t0 = time.time()
while time.time() - t0 < 20:
    chunk = os.read(fd, 1024)
    out += chunk
    if b"ready" in out:
        os.write(fd, b"\x03")
        break
_, status = os.waitpid(pid, 0)
print("exit", os.waitstatus_to_exitcode(status), "after %.1f s" % (time.time() - t0))
"#;
    let mut c = env.user_cmd(&["python3", "-c", driver]);
    c.current_dir(&proj);
    let out = crate::support::sysenv::output_of(&mut c);
    let s = text(&out.stdout);
    assert!(s.contains("exit 130 after"), "{}", describe(&c, &out));
    let dir = env.home().join(".local/share/nerdr/audit");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let last = std::fs::read_to_string(file).unwrap();
    let last: serde_json::Value = serde_json::from_str(last.lines().last().unwrap()).unwrap();
    assert_eq!(last["event"], "exit");
    assert_eq!(last["code"], 130);
    assert_eq!(
        last["signal"],
        serde_json::Value::Null,
        "bwrap reports 128+signal"
    );
}

/// Job control: Ctrl-Z stops the sandboxed program with `nerdr sandbox`
/// as one job of an interactive shell, `fg` resumes it.
#[test]
fn job_control_works() {
    let Some(env) = setup() else { return };
    let proj = env.home().join("proj");
    let driver = r#"
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])
out = b""
def wait_for(needle, t=15):
    global out
    end = time.time() + t
    while time.time() < end:
        if select.select([fd], [], [], 0.2)[0]:
            out += os.read(fd, 4096)
        if needle in out:
            return
    sys.exit("never saw %r in %r" % (needle, out))
os.write(fd, b"PS1='$ '\n")
# The markers are split on the command line, so its echo cannot match.
os.write(fd, b"nerdr sandbox -- sh -c 'echo sta\"\"rted; sleep 1; echo res\"\"umed; exit 3'\n")
wait_for(b"started")
os.write(fd, b"\x1a")
wait_for(b"Stopped")
time.sleep(1.5)
if b"resumed" in out:
    sys.exit("ran on while stopped: %r" % out)
os.write(fd, b"fg\n")
wait_for(b"resumed")
os.write(fd, b"echo status=$?\n")
wait_for(b"status=3")
os.write(fd, b"exit\n")
print(out.decode(errors="replace"))
"#;
    let mut c = env.user_cmd(&["python3", "-c", driver]);
    c.current_dir(&proj);
    let out = crate::support::sysenv::output_of(&mut c);
    assert!(out.status.success(), "{}", describe(&c, &out));
}

/// A project's settings cannot loosen (warned, not applied); the user's
/// own can. And every decision is one line of the audit file and one
/// journal entry.
#[test]
fn project_settings_only_tighten_and_every_decision_is_audited() {
    let Some(env) = setup() else { return };
    let home = env.home().to_path_buf();
    let proj = home.join("proj");
    env.write_user_file("cache/.keep", "");
    let loosen = r#"{"sandbox": {"filesystem": {"allowWrite": ["~/cache"]}}}"#;
    env.write_user_file("proj/.claude/settings.local.json", loosen);
    let out = sandbox(
        &env,
        &proj,
        &["touch", &format!("{}/cache/x", home.display())],
    );
    assert!(!out.status.success(), "a project loosened the sandbox");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("settings.local.json:1: sandbox.filesystem.allowWrite: ignored: a project's settings can only tighten"),
        "{stderr}"
    );

    env.write_user_file(".config/nerdr/sandbox.json", loosen);
    let out = sandbox(
        &env,
        &proj,
        &["touch", &format!("{}/cache/x", home.display())],
    );
    assert!(
        out.status.success(),
        "the user's own settings did not loosen: {}",
        text(&out.stderr)
    );
    assert!(home.join("cache/x").exists());

    // The audit file of that last run: start, the project's ignored key, exit.
    let dir = home.join(".local/share/nerdr/audit");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    files.sort_by_key(|f| std::fs::metadata(f).unwrap().modified().unwrap());
    let last = files.pop().unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&last).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(
        std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&last)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let events: Vec<&str> = lines.iter().map(|l| l["event"].as_str().unwrap()).collect();
    assert_eq!(events, ["setting", "start", "exit"], "{lines:?}");
    assert_eq!(lines[1]["bwrap_version"], "0.8.0");
    assert!(lines[1]["kernel_features"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f == "seccomp"));
    assert_eq!(lines[1]["settings_hash"].as_str().unwrap().len(), 64);
    assert_eq!(lines[2]["code"], 0);
    let session = lines[0]["session"].as_str().unwrap().to_string();

    let field = format!("NERDR_SANDBOX_SESSION={session}");
    let mut journal = Vec::new();
    crate::support::wait_until("the journal entries", Duration::from_secs(10), || {
        journal = env.journal(&[&field]);
        journal.len() >= lines.len()
    });
    assert_eq!(journal.len(), lines.len());
    for (entry, line) in journal.iter().zip(&lines) {
        assert_eq!(entry["MESSAGE_ID"], "6f3c1e2a9b7d4c58a1e0f2b3c4d5e607");
        let mirrored: serde_json::Value =
            serde_json::from_str(entry["NERDR_AUDIT_JSON"].as_str().unwrap()).unwrap();
        assert_eq!(&mirrored, line);
    }
}

/// No bubblewrap: refuse, say how to fix it, exit 125.
#[test]
fn without_bubblewrap_it_refuses_and_says_what_to_do() {
    let Some(env) = setup() else { return };
    let proj = env.home().join("proj");
    let nerdr_dir = env.nerdr().parent().unwrap().to_path_buf();
    let mut c = env.user_cmd(&["nerdr", "sandbox", "--", "/bin/true"]);
    c.current_dir(&proj).env("PATH", &nerdr_dir);
    let out = crate::support::sysenv::output_of(&mut c);
    assert_eq!(out.status.code(), Some(125), "{}", describe(&c, &out));
    assert!(
        text(&out.stderr).contains("apt install bubblewrap"),
        "{}",
        describe(&c, &out)
    );
}

/// `sandbox.enabled = false` in the user's own settings runs the program
/// without a sandbox, loudly and on the record; in a project's it is
/// ignored.
#[test]
fn disabled_by_the_user_runs_unsandboxed_on_the_record() {
    let Some(env) = setup() else { return };
    let home = env.home().to_path_buf();
    let proj = home.join("proj");
    let off = r#"{"sandbox": {"enabled": false}}"#;
    let escape = format!("{}/outside", home.display());

    env.write_user_file("proj/.claude/settings.json", off);
    let out = sandbox(&env, &proj, &["touch", &escape]);
    assert!(!out.status.success(), "a project turned the sandbox off");
    assert!(
        text(&out.stderr).contains("sandbox.enabled: ignored"),
        "{}",
        text(&out.stderr)
    );

    env.write_user_file(".claude/settings.json", off);
    let out = sandbox(&env, &proj, &["touch", &escape]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("WITHOUT a sandbox"),
        "{}",
        text(&out.stderr)
    );
    let audit = home.join(".local/share/nerdr/audit");
    let all: String = std::fs::read_dir(&audit)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert!(all.contains(r#""event":"unsandboxed""#), "{all}");
}

/// `nerdr doctor` says whether the sandbox can run here.
#[test]
fn doctor_reports_bubblewrap() {
    let Some(env) = setup() else { return };
    let out = env.output(&["nerdr", "doctor", "--json"]);
    let checks: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("doctor --json: {e}: {}", text(&out.stdout)));
    let b = checks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "bubblewrap")
        .unwrap_or_else(|| panic!("no bubblewrap check: {checks}"));
    assert_eq!(b["status"], "ok", "{b}");
    assert!(
        b["detail"].as_str().unwrap().contains("namespaces work"),
        "{b}"
    );
}

/// The real Claude Code starts in the sandbox as the agent: its welcome
/// screen shows (it then finds no network: that is the proxy's part), and
/// its own config dir is where it writes. Needs the npm CLIs, as
/// `agent_clis.rs` does (`NERDR_AGENT_CLIS`).
#[test]
fn claude_starts_in_the_sandbox() {
    let Some(clis) = std::env::var_os("NERDR_AGENT_CLIS").map(PathBuf::from) else {
        skip("NERDR_AGENT_CLIS is not set (see tests/suites/agent_clis.rs)");
        return;
    };
    let Some(env) = setup() else { return };
    let proj = env.home().join("proj");
    let driver = r#"
import os, pty, re, select, signal, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execvp("nerdr", ["nerdr", "sandbox", "--", "claude"])
out = b""
end = time.time() + 90
while time.time() < end:
    if select.select([fd], [], [], 0.5)[0]:
        try:
            out += os.read(fd, 65536)
        except OSError:
            break
    if b"Welcome" in out:
        break
os.kill(pid, signal.SIGTERM)
os.waitpid(pid, 0)
sys.stdout.write(re.sub(rb"\x1b\[[0-9;?<>]*[a-zA-Z]", b" ", out).decode(errors="replace"))
"#;
    let mut c = env.user_cmd(&["python3", "-c", driver]);
    let path = format!(
        "{}:{}:/usr/local/bin:/usr/bin:/bin",
        env.nerdr().parent().unwrap().display(),
        clis.display()
    );
    c.current_dir(&proj)
        .env("PATH", path)
        .env("TERM", "xterm-256color");
    let out = crate::support::sysenv::output_of(&mut c);
    assert!(
        text(&out.stdout).contains("Welcome"),
        "{}",
        describe(&c, &out)
    );
    assert!(env.home().join(".claude").is_dir());
    assert!(env.home().join(".claude.json").is_file());
}
