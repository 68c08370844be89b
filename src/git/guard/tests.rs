//! The guard and the runner on real repositories (git in temp dirs).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::*;
use crate::git::{run, GitError};
use crate::paths::{Env, Paths};

struct Fixture {
    tmp: tempfile::TempDir,
    paths: Paths,
}

impl Fixture {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let paths = Paths::resolve(&Env {
            home: Some(root.join("home")),
            xdg_state_home: Some(root.join("state")),
            xdg_config_home: Some(root.join("config")),
            xdg_data_home: Some(root.join("data")),
            xdg_runtime_dir: Some(root.join("run")),
            nerdr_data_dir: None,
        })
        .unwrap();
        std::fs::create_dir_all(&paths.state_dir).unwrap();
        Fixture { tmp, paths }
    }
    fn root(&self) -> PathBuf {
        self.tmp.path().canonicalize().unwrap()
    }
    /// A repository with one commit.
    fn repo(&self, name: &str) -> PathBuf {
        let r = self.root().join(name);
        std::fs::create_dir_all(&r).unwrap();
        git(&r, &["init", "-q", "-b", "main"]);
        std::fs::write(r.join("a.txt"), "a\n").unwrap();
        git(&r, &["add", "."]);
        git(&r, &["commit", "-q", "-m", "first"]);
        r
    }
    /// A script that leaves `marker` behind when run.
    fn canary(&self, marker: &Path) -> PathBuf {
        let p = self.root().join("canary.sh");
        std::fs::write(
            &p,
            format!(
                "#!/bin/sh\ntouch '{}'\nexec git-upload-pack \"$@\"\n",
                marker.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@e", "-C"])
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn fetch_from_a_local_remote_is_refused_only_with_history_and_runs_nothing() {
    let f = Fixture::new();
    let remote = f.repo("remote");
    for with_history in [false, true] {
        let name = if with_history { "hist" } else { "plain" };
        let r = f.repo(name);
        let marker = f.root().join(format!("{name}.ran"));
        let canary = f.canary(&marker);
        git(&r, &["remote", "add", "origin", remote.to_str().unwrap()]);
        // A local fetch runs remote.<name>.uploadpack: the canary.
        git(
            &r,
            &[
                "config",
                "remote.origin.uploadpack",
                canary.to_str().unwrap(),
            ],
        );
        if with_history {
            record_run(&f.paths.state_dir, &r).unwrap();
        }
        let fetched = run(&f.paths, &r, &["fetch", "-q", "origin"]);
        if with_history {
            let e = fetched.unwrap_err();
            assert!(matches!(e, GitError::Refused(_)), "{e}");
            assert!(e.to_string().contains("does not fetch"), "{e}");
            assert!(!marker.exists(), "the canary ran");
            let pushed = run(&f.paths, &r, &["push", "-q", "origin", "HEAD:x"]).unwrap_err();
            assert!(matches!(pushed, GitError::Refused(_)), "{pushed}");
        } else {
            fetched.unwrap();
            assert!(
                marker.exists(),
                "the canary is live: without history git ran it"
            );
        }
    }
    // Each refusal is an audit entry with its fields.
    let log = std::fs::read_to_string(f.paths.core_log()).unwrap();
    let audit: Vec<&str> = log.lines().filter(|l| l.contains("git-refused")).collect();
    assert_eq!(audit.len(), 2, "{log}");
    for field in [
        "NERDR_REPO",
        "NERDR_GIT_OPERATION",
        "NERDR_SETTING",
        "NERDR_ORIGIN",
    ] {
        assert!(audit[0].contains(field), "{field} missing: {}", audit[0]);
    }
}

#[test]
fn queries_cannot_carry_other_commands() {
    let f = Fixture::new();
    let r = f.repo("r");
    assert!(crate::git::query(&r, &["rev-parse", "HEAD"]).is_ok());
    for args in [
        &["fetch"][..],
        &["diff"],
        &["cat-file", "--textconv", "HEAD:a.txt"],
    ] {
        let e = crate::git::query(&r, args).unwrap_err();
        assert!(matches!(e, GitError::NotAQuery(_)), "{args:?}: {e}");
    }
}

#[test]
fn importing_gives_the_destination_history() {
    let f = Fixture::new();
    let dest = f.repo("dest");
    let src = f.root().join("wt-src");
    std::fs::create_dir_all(&src).unwrap();
    assert_eq!(
        check(&f.paths.state_dir, &dest, Op::Fetch).standing,
        Standing::Clean
    );
    record_import(&f.paths.state_dir, &dest, &src).unwrap();
    let c = check(&f.paths.state_dir, &dest, Op::Fetch);
    assert_eq!(c.standing, Standing::Recorded);
    assert!(matches!(c.verdict, Verdict::Refuse(_)));
    // The place the work was made in counts as agent-writable everywhere.
    git(
        &dest,
        &[
            "config",
            "include.path",
            src.join("x.cfg").to_str().unwrap(),
        ],
    );
    let Verdict::Refuse(r) = check(&f.paths.state_dir, &dest, Op::Diff).verdict else {
        panic!("allowed");
    };
    assert_eq!(r[0].setting, "include.path");
    let not_repo = f.root().join("nothing");
    std::fs::create_dir_all(&not_repo).unwrap();
    assert!(record_import(&f.paths.state_dir, &not_repo, &src).is_err());
}

#[test]
fn a_worktree_git_file_pointed_at_a_planted_repository_is_refused() {
    let f = Fixture::new();
    let r = f.repo("r");
    let wt = f.root().join("wt");
    git(
        &r,
        &["worktree", "add", "-q", "-b", "w", wt.to_str().unwrap()],
    );
    record_run(&f.paths.state_dir, &wt).unwrap();
    // The agent makes its own repository and points its worktree at it.
    let fake = wt.join("fake.git");
    git(&wt, &["init", "-q", "--bare", fake.to_str().unwrap()]);
    std::fs::write(wt.join(".git"), format!("gitdir: {}\n", fake.display())).unwrap();
    std::fs::write(
        fake.join("config"),
        "[core]\nbare = false\n[diff]\nexternal = /bin/true\n",
    )
    .unwrap();
    let Verdict::Refuse(r) = check(&f.paths.state_dir, &wt, Op::Diff).verdict else {
        panic!("allowed");
    };
    assert_eq!(r[0].rule, Rule::InWritablePlace, "{r:#?}");
}

#[test]
fn a_damaged_history_refuses_everything_but_queries() {
    let f = Fixture::new();
    let r = f.repo("r");
    std::fs::write(history::file(&f.paths.state_dir), "garbage").unwrap();
    let Verdict::Refuse(reasons) = check(&f.paths.state_dir, &r, Op::Status).verdict else {
        panic!("allowed");
    };
    assert_eq!(reasons[0].rule, Rule::Unreadable);
    assert!(run(&f.paths, &r, &["status"]).is_err());
    assert!(crate::git::query(&r, &["rev-parse", "HEAD"]).is_ok());
}

#[test]
fn real_paths_follow_symlinks_as_far_as_the_path_exists() {
    let f = Fixture::new();
    let real = f.root().join("real");
    std::fs::create_dir_all(real.join("wt")).unwrap();
    std::os::unix::fs::symlink(&real, f.root().join("link")).unwrap();
    let rows = [
        (
            f.root().join("link/wt/not-yet/x.cfg"),
            real.join("wt/not-yet/x.cfg"),
        ),
        (f.root().join("link"), real.clone()),
        (
            PathBuf::from("/nonexistent-root-xyz/a"),
            PathBuf::from("/nonexistent-root-xyz/a"),
        ),
    ];
    for (p, want) in rows {
        assert_eq!(realpath(&p), want, "{}", p.display());
    }
}

#[test]
fn a_sandboxed_agent_without_a_worktree_makes_the_main_checkout_writable() {
    let f = Fixture::new();
    let r = f.repo("r");
    std::fs::create_dir_all(r.join("sub")).unwrap();
    record_run(&f.paths.state_dir, &r.join("sub")).unwrap();
    let h = history::load(&f.paths.state_dir).unwrap();
    let rec = &h.repos[&r.join(".git")];
    assert_eq!(rec.writable.iter().collect::<Vec<_>>(), vec![&r]);
    // A folder outside any repository is remembered as a writable place.
    let scratch = f.root().join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    record_run(&f.paths.state_dir, &scratch).unwrap();
    git(&scratch, &["init", "-q"]);
    let c = check(&f.paths.state_dir, &scratch, Op::Status);
    assert!(
        matches!(c.standing, Standing::InWritablePlace { .. }),
        "{c:?}"
    );
}

#[test]
fn git_in_an_agent_worktree_is_pinned_to_the_checked_repository() {
    let f = Fixture::new();
    let r = f.repo("r");
    let wt = f.root().join("wt");
    git(
        &r,
        &["worktree", "add", "-q", "-b", "w", wt.to_str().unwrap()],
    );
    record_run(&f.paths.state_dir, &wt).unwrap();
    let c = check(&f.paths.state_dir, &wt, Op::Status);
    assert_eq!(c.verdict, Verdict::Allow);
    assert_eq!(c.pin, Some((r.join(".git/worktrees/wt"), wt.clone())));
    // The pinned run works like an unpinned one.
    std::fs::write(wt.join("new.txt"), "x").unwrap();
    let st = run(&f.paths, &wt, &["status", "--porcelain"]).unwrap();
    assert!(st.contains("new.txt"), "{st}");
    // In the main checkout, which no agent could write, nothing is pinned.
    assert_eq!(check(&f.paths.state_dir, &r, Op::Status).pin, None);
}
