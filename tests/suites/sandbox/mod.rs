//! `nerdr sandbox -- CMD` for real: bubblewrap, run as the non-root test
//! user of a private `systemd --user` (a sandbox behaves differently under
//! root).
//! - `escapes`: each escape is tried from inside and must fail, and gets
//!   through a weakened sandbox (so the checks can fail);
//! - `works`: what an agent needs (commits, socketpair, /dev/null, the hook
//!   socket, the real Claude Code);
//! - `terminal`: a TUI's resizes, Ctrl-C, job control on a real PTY;
//! - `signals`: the program's signal dispositions and mask, SIGHUP
//!   forwarded, the proxy bridge ending with the program;
//! - `history`: the repository's history survives a sandboxed program, and
//!   a hand-run sandbox records sandbox history;
//! - `regressions`: the confirmed findings of the adversarial review;
//! - `other_tabs`: other tabs' worktrees are out of sight, the tab's own
//!   and a reviewer's view of its author's commits are not;
//! - `asking`: hosts on neither list asked of the person; the limits file;
//! - `agent_config`: what an agent writes to its own config inside never
//!   starts a program outside (stand-ins, then the real claude and codex);
//! - `worktree_install`: `install = "worktree"` with `--worktree-only`:
//!   reports through the worktree's file, refusals, nothing committed;
//! - `settings`: trust of settings files, the audit trail and its journal
//!   mirror, refusing without bubblewrap, doctor.

mod agent;
mod agent_config;
mod asking;
mod escapes;
mod history;
mod other_tabs;
mod regressions;
mod settings;
mod signals;
mod terminal;
mod works;
mod worktree_install;

use std::path::Path;
use std::process::Output;

use crate::support::sysenv::{skip, SystemdEnv};

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// An environment with bubblewrap, a repository `proj` (one commit) and
/// git's identity in the user's config. `None` after a loud skip.
pub fn setup() -> Option<SystemdEnv> {
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

/// Every line of every audit trail, file by file.
pub fn audit_lines(env: &SystemdEnv) -> Vec<serde_json::Value> {
    let dir = env.home().join(".local/share/nerdr/audit");
    std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .flat_map(|f| {
            std::fs::read_to_string(f.path())
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The last line of the (only) session's audit trail.
pub fn last_audit_line(env: &SystemdEnv) -> serde_json::Value {
    let dir = env.home().join(".local/share/nerdr/audit");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let trail = std::fs::read_to_string(file).unwrap();
    serde_json::from_str(trail.lines().last().unwrap()).unwrap()
}

pub fn user_git(env: &SystemdEnv, dir: &Path, args: &[&str]) -> String {
    let mut v = vec![
        "git".to_string(),
        "-C".to_string(),
        dir.display().to_string(),
    ];
    v.extend(args.iter().map(|s| s.to_string()));
    text(&env.run(&v).stdout).trim_end().to_string()
}

/// `nerdr sandbox -- ARGS` as the user in `dir`; whatever happened.
pub fn sandbox(env: &SystemdEnv, dir: &Path, args: &[&str]) -> Output {
    let mut v = vec!["nerdr", "sandbox", "--"];
    v.extend_from_slice(args);
    let mut c = env.user_cmd(&v);
    c.current_dir(dir);
    crate::support::sysenv::output_of(&mut c)
}

/// `nerdr sandbox --settings SETTINGS -- sh -c SCRIPT` as the user in
/// `dir`; whatever happened.
pub fn sandbox_sh_with_settings(
    env: &SystemdEnv,
    dir: &Path,
    settings: &Path,
    script: &str,
) -> Output {
    let settings = settings.display().to_string();
    let mut c = env.user_cmd(&[
        "nerdr",
        "sandbox",
        "--settings",
        &settings,
        "--",
        "sh",
        "-c",
        script,
    ]);
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
pub fn on_pty(env: &SystemdEnv, dir: &Path, args: &[&str]) -> std::process::Command {
    let mut v = vec!["python3", "-c", PTY_DRIVER];
    v.extend_from_slice(args);
    let mut c = env.user_cmd(&v);
    c.current_dir(dir);
    c
}
