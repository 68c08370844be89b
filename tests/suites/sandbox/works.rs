//! What an agent needs inside the sandbox.

use std::path::PathBuf;

use super::{sandbox, setup, text, user_git};
use crate::support::sysenv::{describe, skip};

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
