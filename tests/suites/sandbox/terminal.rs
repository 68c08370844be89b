//! The terminal stays the program's: resizes, Ctrl-C, job control.

use super::{setup, text};
use crate::support::sysenv::describe;

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
    let last = super::last_audit_line(&env);
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

/// SIGTERM sent to `nerdr sandbox` alone (a service manager stopping it)
/// ends the sandbox, and the exit is still recorded.
#[test]
fn sigterm_ends_the_sandbox_on_the_record() {
    let Some(env) = setup() else { return };
    let proj = env.home().join("proj");
    let driver = r#"
import os, signal, subprocess, sys, time
p = subprocess.Popen(["nerdr", "sandbox", "--", "sh", "-c", "echo ready; exec sleep 6143"],
                     stdout=subprocess.PIPE)
assert p.stdout.readline() == b"ready\n"
t0 = time.time()
p.send_signal(signal.SIGTERM)
code = p.wait(timeout=20)
print("exit", code, "after %.1f s" % (time.time() - t0))
"#;
    let mut c = env.user_cmd(&["python3", "-c", driver]);
    c.current_dir(&proj);
    let out = crate::support::sysenv::output_of(&mut c);
    assert!(
        text(&out.stdout).contains("exit 143 after"),
        "{}",
        describe(&c, &out)
    );
    let last = super::last_audit_line(&env);
    assert_eq!(last["event"], "exit");
    assert_eq!(last["code"], 143);
    // Nothing left behind (the sandbox's processes die with bubblewrap).
    // Its own duration: other tests run `sleep` as the same user at once.
    crate::support::wait_until(
        "the sandboxed sleep to end",
        std::time::Duration::from_secs(5),
        || {
            env.output(&["pgrep", "-u", env.user(), "-fx", "sleep 6143"])
                .stdout
                .is_empty()
        },
    );
}
