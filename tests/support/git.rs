//! `git` for building test repositories, with the user's and the system's
//! git config kept out.

use std::path::Path;
use std::process::Command;

/// `git -c user.name=t -c user.email=t@e -C DIR ARGS`: a command line for
/// a test user's git with an identity of its own.
pub fn with_identity<'a>(dir: &'a str, args: &[&'a str]) -> Vec<&'a str> {
    let base = [
        "git",
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@e",
        "-C",
        dir,
    ];
    [&base[..], args].concat()
}

/// Run `git -C DIR ARGS` with a fixed identity and branch name; panics with
/// git's stderr unless it succeeds. Returns trimmed stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "init.defaultBranch=main",
        ])
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim_end().to_string()
}
