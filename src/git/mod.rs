//! Host git: every git command nerdr runs itself goes through [`run`], with
//! a fixed, safe environment: no hooks, no pager, no editor, no terminal
//! prompt, no lazy fetch from a promisor remote. (Which repositories may run
//! host git at all is the git guard's business, a later layer.)

pub mod worktree;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot run git: {0}")]
    Spawn(std::io::Error),
    #[error("`git {args}` in {dir} failed: {stderr}")]
    Failed {
        args: String,
        dir: PathBuf,
        stderr: String,
    },
}

/// A git command in `dir` with nerdr's safe settings.
pub fn command<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Command {
    let mut c = Command::new("git");
    c.env_clear()
        .envs(std::env::vars_os().filter(|(k, _)| {
            matches!(
                k.to_str(),
                Some("PATH" | "HOME" | "USER" | "LOGNAME" | "TMPDIR")
            )
        }))
        .env("LANG", "C")
        .env("LC_ALL", "C")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_NO_LAZY_FETCH", "1")
        .env("GIT_PAGER", "cat")
        .env("GIT_EDITOR", "false")
        .env("GIT_SEQUENCE_EDITOR", "false")
        .env("GIT_ASKPASS", "false")
        .env("SSH_ASKPASS", "false")
        .arg("-c")
        .arg("core.hooksPath=/dev/null")
        .arg("-c")
        .arg("core.fsmonitor=false")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(std::process::Stdio::null());
    c
}

/// Run git; its trimmed stdout, or an error carrying its stderr.
pub fn run<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Result<String, GitError> {
    let out = command(dir, args).output().map_err(GitError::Spawn)?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_string())
    } else {
        Err(GitError::Failed {
            args: args
                .iter()
                .map(|a| a.as_ref().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" "),
            dir: dir.to_path_buf(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}
