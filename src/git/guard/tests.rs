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
    /// A linked worktree `wt` of `r` on branch `w`, where a sandboxed agent
    /// ran (so `r` has sandbox history).
    fn agent_worktree(&self, r: &Path) -> PathBuf {
        let wt = self.root().join("wt");
        git(
            r,
            &["worktree", "add", "-q", "-b", "w", wt.to_str().unwrap()],
        );
        record_run(&self.paths.state_dir, &wt, &[]).unwrap();
        wt
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
            record_run(&f.paths.state_dir, &r, &[]).unwrap();
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
    assert!(matches!(c.standing, Standing::Recorded { .. }), "{c:?}");
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
    let wt = f.agent_worktree(&r);
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
    record_run(&f.paths.state_dir, &r.join("sub"), &[]).unwrap();
    let h = history::load(&f.paths.state_dir).unwrap();
    let rec = &h.repos[&r.join(".git")];
    assert_eq!(rec.writable.iter().collect::<Vec<_>>(), vec![&r]);
    // A folder outside any repository is remembered as a writable place.
    let scratch = f.root().join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    record_run(&f.paths.state_dir, &scratch, &[]).unwrap();
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
    let wt = f.agent_worktree(&r);
    let c = check(&f.paths.state_dir, &wt, Op::Status);
    assert_eq!(c.verdict, Verdict::Allow);
    let pin = Pin {
        git_dir: r.join(".git/worktrees/wt"),
        common_dir: r.join(".git"),
        work_tree: Some(wt.clone()),
    };
    assert_eq!(c.pin.as_ref(), Some(&pin));
    // The pinned run works like an unpinned one.
    std::fs::write(wt.join("new.txt"), "x").unwrap();
    let st = run(&f.paths, &wt, &["status", "--porcelain"]).unwrap();
    assert!(st.contains("new.txt"), "{st}");
    // The main checkout is pinned too: to its own git dir and common dir.
    assert_eq!(
        check(&f.paths.state_dir, &r, Op::Status).pin,
        Some(Pin {
            git_dir: r.join(".git"),
            common_dir: r.join(".git"),
            work_tree: Some(r.clone()),
        })
    );
    // After the check, the agent rewrites its worktree's commondir to a
    // repository of its own whose config runs a program: the pinned git
    // never reads it.
    let evil = wt.join("evil.git");
    git(&wt, &["init", "-q", "--bare", evil.to_str().unwrap()]);
    let marker = f.root().join("pinned.ran");
    let canary = f.canary(&marker);
    std::fs::write(
        evil.join("config"),
        format!(
            "[core]\n\tbare = false\n[filter \"x\"]\n\tclean = {}\n",
            canary.display()
        ),
    )
    .unwrap();
    std::fs::write(evil.join("info/attributes"), "* filter=x\n").unwrap();
    std::fs::write(
        pin.git_dir.join("commondir"),
        format!("{}\n", evil.display()),
    )
    .unwrap();
    // Same size, new mtime: git hashes it, through the filter if it reads evil.git.
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(wt.join("a.txt"), "b\n").unwrap();
    let mut cmd = crate::git::command(&wt, &["status", "--porcelain"]);
    crate::git::pinned(&mut cmd, &pin);
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("new.txt"));
    assert!(!marker.exists(), "git read the planted commondir");
    // And the guard now refuses there: the common dir is not the recorded one.
    let Verdict::Refuse(reasons) = check(&f.paths.state_dir, &wt, Op::Status).verdict else {
        panic!("allowed");
    };
    assert!(
        reasons.iter().any(|r| r.rule == Rule::CommonDir),
        "{reasons:#?}"
    );
}

/// The review's attack, without a sandbox: from its worktree, the agent
/// writes a repository of its own into the main checkout's `.git` and a
/// `commondir` file pointing at it.
fn plant_common_dir(r: &Path, canary: &Path) -> PathBuf {
    let evil = r.join(".git/evil");
    for d in ["objects", "refs/heads", "info"] {
        std::fs::create_dir_all(evil.join(d)).unwrap();
    }
    std::fs::write(evil.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(
        evil.join("config"),
        format!(
            "[core]\n\trepositoryformatversion = 0\n\tbare = false\n             [filter \"x\"]\n\tsmudge = {c}\n\tclean = {c}\n",
            c = canary.display()
        ),
    )
    .unwrap();
    std::fs::write(evil.join("info/attributes"), "* filter=x\n").unwrap();
    std::fs::write(r.join(".git/commondir"), "evil\n").unwrap();
    evil
}

#[test]
fn a_commondir_planted_in_the_main_git_dir_keeps_the_history_and_is_refused() {
    let f = Fixture::new();
    let r = f.repo("r");
    f.agent_worktree(&r);
    let h = history::load(&f.paths.state_dir).unwrap();
    let rec = &h.repos[&r.join(".git")];
    assert!(rec.git_dirs.contains(&r.join(".git")), "{rec:?}");
    assert!(rec.toplevels.contains(&r), "{rec:?}");
    let marker = f.root().join("planted.ran");
    let canary = f.canary(&marker);
    let evil = plant_common_dir(&r, &canary);
    let c = check(&f.paths.state_dir, &r, Op::WorktreeAdd);
    assert_eq!(c.pin, None);
    assert_eq!(c.repo.as_deref(), Some(r.join(".git").as_path()));
    assert_eq!(
        c.standing,
        Standing::Recorded {
            common_dir: r.join(".git")
        }
    );
    let Verdict::Refuse(reasons) = c.verdict else {
        panic!("allowed");
    };
    assert_eq!(reasons[0].rule, Rule::CommonDir, "{reasons:#?}");
    assert!(
        reasons[0].why.contains(evil.to_str().unwrap()),
        "{reasons:#?}"
    );
    let wt2 = f.root().join("wt2");
    let e = run(
        &f.paths,
        &r,
        &["worktree", "add", "-q", "-b", "w2", wt2.to_str().unwrap()],
    )
    .unwrap_err();
    assert!(matches!(e, GitError::Refused(_)), "{e}");
    assert!(!marker.exists(), "the planted smudge filter ran");
}

#[test]
fn attribute_files_git_reads_are_read_whatever_their_bytes_or_gitignore() {
    let f = Fixture::new();
    let r = f.repo("r");
    record_run(&f.paths.state_dir, &r, &[]).unwrap();
    git(&r, &["config", "filter.fake.smudge", "/bin/cat"]);
    let conversion_files = |r: &Path| -> Vec<String> {
        match check(&f.paths.state_dir, r, Op::Diff).verdict {
            Verdict::Allow => vec![],
            Verdict::Refuse(reasons) => reasons
                .into_iter()
                .filter(|x| x.rule == Rule::Conversion)
                .map(|x| x.why)
                .collect(),
        }
    };
    assert!(conversion_files(&r).is_empty());
    std::fs::write(
        r.join(".git/info/attributes"),
        b"# caf\xe9\n* filter=fake\n",
    )
    .unwrap();
    let found = conversion_files(&r);
    assert!(
        found.iter().any(|w| w.contains("info/attributes")),
        "{found:?}"
    );
    std::fs::remove_file(r.join(".git/info/attributes")).unwrap();
    // An ignored .gitattributes in a folder with tracked files.
    std::fs::create_dir_all(r.join("d")).unwrap();
    std::fs::write(r.join("d/a.txt"), "a\n").unwrap();
    git(&r, &["add", "d/a.txt"]);
    std::fs::write(r.join(".gitignore"), ".gitattributes\n").unwrap();
    std::fs::write(r.join("d/.gitattributes"), "* filter=fake\n").unwrap();
    let found = conversion_files(&r);
    assert!(
        found.iter().any(|w| w.contains("d/.gitattributes")),
        "{found:?}"
    );
    // Staged, then deleted from the working tree: git reads the index.
    git(&r, &["add", "-f", "d/.gitattributes"]);
    std::fs::remove_file(r.join("d/.gitattributes")).unwrap();
    let found = conversion_files(&r);
    assert!(found.iter().any(|w| w.contains("(staged)")), "{found:?}");
}

#[test]
fn host_git_never_runs_a_nested_repository_s_filters() {
    let f = Fixture::new();
    let main = f.repo("r");
    let r = f.root().join("wt");
    git(
        &main,
        &["worktree", "add", "-q", "-b", "w", r.to_str().unwrap()],
    );
    let marker = f.root().join("nested.ran");
    let canary = f.canary(&marker);
    // The agent makes a repository in its worktree with its own clean filter, added as a
    // gitlink and registered in .gitmodules with `ignore = none` (which
    // beats the diff.ignoreSubmodules setting).
    let sub = r.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    git(&sub, &["init", "-q"]);
    std::fs::write(sub.join(".gitattributes"), "* filter=ev\n").unwrap();
    std::fs::write(sub.join("f.txt"), "1\n").unwrap();
    git(&sub, &["add", "."]);
    git(&sub, &["commit", "-q", "-m", "s"]);
    git(
        &sub,
        &["config", "filter.ev.clean", canary.to_str().unwrap()],
    );
    std::fs::write(sub.join("f.txt"), "2\n").unwrap();
    std::fs::write(
        r.join(".gitmodules"),
        "[submodule \"sub\"]\n\tpath = sub\n\turl = ./sub\n\tignore = none\n",
    )
    .unwrap();
    git(&r, &["add", "sub", ".gitmodules"]);
    record_run(&f.paths.state_dir, &r, &[]).unwrap();
    for args in [
        &["status", "--porcelain"][..],
        &["diff"],
        &["diff-files"],
        &["diff-index", "HEAD"],
    ] {
        run(&f.paths, &r, args).unwrap();
        assert!(!marker.exists(), "git {args:?} ran the nested filter");
    }
    // Checkout reporting local changes would look inside, and takes no
    // --ignore-submodules: refused there.
    for args in [
        &["checkout", "-q", "main"][..],
        &["commit", "-q", "-m", "x"],
    ] {
        let e = run(&f.paths, &r, args).unwrap_err();
        let GitError::Refused(refusal) = &e else {
            panic!("git {args:?}: {e}");
        };
        assert_eq!(refusal.reasons[0].rule, Rule::Submodules, "{e}");
        assert!(!marker.exists(), "git {args:?} ran the nested filter");
    }
    // The canary is live: plain git descends and runs it.
    Command::new("git")
        .args(["-C", r.to_str().unwrap(), "status", "--porcelain"])
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(marker.exists(), "the nested clean filter is not live");
}

#[test]
fn disarmed_filters_do_not_run_on_checkout() {
    // What the runner adds for the filter drivers the config names (the
    // guard found no content using them, but a branch may move between the
    // check and the run): a checkout of content that does use one runs no
    // filter.
    let f = Fixture::new();
    let r = f.repo("r");
    let marker = f.root().join("smudged");
    git(
        &r,
        &[
            "config",
            "filter.x.smudge",
            &format!("touch '{}'; cat", marker.display()),
        ],
    );
    std::fs::write(r.join(".gitattributes"), "* filter=x\n").unwrap();
    git(&r, &["add", "."]);
    git(
        &r,
        &["-c", "filter.x.clean=cat", "commit", "-q", "-m", "uses x"],
    );
    let _ = std::fs::remove_file(&marker);
    let add = |dest: &str, settings: &[String]| {
        let mut c = crate::git::command_with(
            &r,
            settings,
            &["worktree", "add", "-q", "--detach", dest, "HEAD"],
        );
        assert!(c.status().unwrap().success());
    };
    add(
        f.root().join("wt-disarmed").to_str().unwrap(),
        &crate::git::disarmed(&["x".to_string()]),
    );
    assert!(!marker.exists(), "the disarmed smudge filter ran");
    add(f.root().join("wt-armed").to_str().unwrap(), &[]);
    assert!(
        marker.exists(),
        "the filter runs when not disarmed: the check can fail"
    );
}

mod fresh;
