//! What the sandbox does with signals, seen from the processes themselves:
//! the program starts with the signal state a program started outside
//! gets (nothing ignored or blocked that was not), although bubblewrap runs
//! with SIGINT and SIGQUIT ignored; SIGHUP to `nerdr sandbox` reaches the
//! program; and the proxy bridge `sandbox-init` leaves behind ends with the
//! program even without a PID namespace.

use super::{sandbox, setup, text};
use crate::support::sysenv::describe;

/// `SigIgn` and `SigBlk` of `/proc/self/status` as printed by `grep`, as
/// numbers.
fn sig_masks(status: &str) -> (u64, u64) {
    let field = |name: &str| {
        let line = status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .unwrap_or_else(|| panic!("no {name} in {status:?}"));
        u64::from_str_radix(line.trim(), 16).unwrap()
    };
    (field("SigIgn:"), field("SigBlk:"))
}

/// An ignored signal survives exec (and a shell cannot undo one it was
/// started with), and so does a blocked one: the program inside must see
/// the same dispositions and mask as the same program run outside, and in
/// particular SIGINT, SIGQUIT (ignored in bubblewrap), SIGPIPE (ignored by
/// Rust's runtime in `nerdr`), SIGTERM and SIGHUP (forwarded by `nerdr
/// sandbox`) neither ignored nor blocked.
#[test]
fn the_program_starts_with_the_signals_it_would_outside() {
    let Some(env) = setup() else { return };
    let proj = env.home().join("proj");
    let read = ["grep", "-E", "^Sig(Ign|Blk):", "/proc/self/status"];
    let outside = env.run(&read);
    let inside = sandbox(&env, &proj, &read);
    let report = format!(
        "outside:\n{}\ninside:\n{}\nstderr: {}",
        text(&outside.stdout),
        text(&inside.stdout),
        text(&inside.stderr)
    );
    assert!(inside.status.success(), "{report}");
    // The standard signals only: glibc takes 32 and 33 for itself and
    // installs handlers for them in whichever process needs them (here
    // bubblewrap), which replaces an ignore inherited from the harness.
    let standard = |(ign, blk): (u64, u64)| (ign & 0x7fff_ffff, blk & 0x7fff_ffff);
    let (ign, blk) = sig_masks(&text(&inside.stdout));
    assert_eq!(
        standard((ign, blk)),
        standard(sig_masks(&text(&outside.stdout))),
        "{report}"
    );
    for (name, sig) in [
        ("SIGHUP", 1),
        ("SIGINT", 2),
        ("SIGQUIT", 3),
        ("SIGPIPE", 13),
        ("SIGTERM", 15),
    ] {
        let bit = 1u64 << (sig - 1);
        assert_eq!(ign & bit, 0, "{name} ignored inside: {report}");
        assert_eq!(blk & bit, 0, "{name} blocked inside: {report}");
    }
}

/// Without a PID namespace nothing kills what is left inside when the
/// program ends; the bridge `sandbox-init` forked (the sandbox's one way to
/// the proxy) is the program's child and asks for SIGKILL when its parent
/// dies, so it does not outlive the run listening inside.
#[test]
fn the_proxy_bridge_ends_with_the_program_without_a_pid_namespace() {
    let Some(env) = setup() else { return };
    let proj = env.home().join("proj");
    let driver = r#"
import os, subprocess, sys, time
def procs():
    found = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                argv = f.read().split(b"\0")
            with open("/proc/%s/stat" % d) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        found[int(d)] = (ppid, argv)
    return found
def bridges_under(root):
    ps = procs()
    def under(pid):
        while pid in ps and pid > 1:
            if pid == root:
                return True
            pid = ps[pid][0]
        return False
    return [p for p, (_, argv) in ps.items()
            if argv[1:2] == [b"sandbox-init"] and b"--bridge-port" in argv and under(p)]
def alive(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return b"--bridge-port" in f.read().split(b"\0")
    except OSError:
        return False
p = subprocess.Popen(["nerdr", "sandbox", "--weaken", "no-pid-ns", "--",
                      "sh", "-c", "echo ready; sleep 2"], stdout=subprocess.PIPE)
assert p.stdout.readline() == b"ready\n"
during = bridges_under(p.pid)
print("during", during)
print("exit", p.wait(timeout=30))
deadline = time.time() + 5
while any(alive(b) for b in during) and time.time() < deadline:
    time.sleep(0.1)
left = [b for b in during if alive(b)]
print("left", left)
for b in left:
    os.kill(b, 9)
"#;
    let mut c = env.user_cmd(&["python3", "-c", driver]);
    c.current_dir(&proj);
    let out = crate::support::sysenv::output_of(&mut c);
    let s = text(&out.stdout);
    let report = describe(&c, &out);
    assert!(out.status.success(), "{report}");
    assert!(
        s.lines()
            .any(|l| l.starts_with("during [") && l != "during []"),
        "no bridge seen while the program ran: {report}"
    );
    assert!(s.contains("exit 0"), "{report}");
    assert!(
        s.contains("left []"),
        "the bridge outlived the program: {report}"
    );
}

/// SIGHUP sent to `nerdr sandbox` alone (its terminal went away) reaches
/// the program through the forwarding handler, and the exit is recorded;
/// SIGTERM's twin is `terminal::sigterm_ends_the_sandbox_on_the_record`.
#[test]
fn sighup_is_forwarded_to_the_program() {
    let Some(env) = setup() else { return };
    let proj = env.home().join("proj");
    let driver = r#"
import signal, subprocess
p = subprocess.Popen(["nerdr", "sandbox", "--", "sh", "-c", "echo ready; exec sleep 60"],
                     stdout=subprocess.PIPE)
assert p.stdout.readline() == b"ready\n"
p.send_signal(signal.SIGHUP)
try:
    print("exit", p.wait(timeout=20))
except subprocess.TimeoutExpired:
    p.kill()
    print("still running")
"#;
    let mut c = env.user_cmd(&["python3", "-c", driver]);
    c.current_dir(&proj);
    let out = crate::support::sysenv::output_of(&mut c);
    assert!(
        text(&out.stdout).contains("exit 129"),
        "{}",
        describe(&c, &out)
    );
    let last = super::last_audit_line(&env);
    assert_eq!(last["event"], "exit");
    assert_eq!(last["code"], 129);
}
