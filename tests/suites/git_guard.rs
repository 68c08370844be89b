//! The host git guard on real repositories: a catalogue of crafted
//! repositories, each refused (naming the setting) once a sandboxed agent
//! has worked in it and allowed without that history; the planted canary
//! never runs; history outlives tabs, worktrees and cores; refusals reach
//! the journal with their fields.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::support::git::git;
use crate::support::local::Local;
use crate::support::BOXED_SLEEPER;

/// `boxed`, in a sandbox that passes the check, and `open`, without one.
fn config() -> String {
    format!("{BOXED_SLEEPER}[agents.open]\ncommand = [\"sleep\", \"1000\"]\n")
}

/// One repository of a pair: the same crafted setting, with or without
/// sandbox history.
struct Side {
    repo: PathBuf,
    /// The worktree nerdr made for the first agent there (sandboxed on
    /// the history side).
    wt: PathBuf,
    canary: PathBuf,
    marker: PathBuf,
}

struct Pair {
    l: Local,
    hist: Side,
    plain: Side,
}

impl Pair {
    fn new() -> Pair {
        let l = Local::started();
        l.write_config(&config());
        let hist = side(&l, "hist", "boxed");
        let plain = side(&l, "plain", "open");
        Pair { l, hist, plain }
    }

    fn global_config(&self, text: &str) {
        std::fs::write(self.l.path("home/.gitconfig"), text).unwrap();
    }

    /// `nerdr git check DIR --op OP`: (succeeded, stdout).
    fn check(&self, dir: &Path, op: &str) -> (bool, String) {
        let out = self
            .l
            .run(&["git", "check", dir.to_str().unwrap(), "--op", op]);
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    }

    /// The history side refuses `op` naming `setting`, the plain side
    /// allows it; starting another agent in the history repository (a
    /// `worktree add`) is refused too, and the canary never runs there.
    fn assert_guarded(&self, op: &str, setting: &str) {
        let (ok, out) = self.check(&self.hist.repo, op);
        assert!(!ok, "history repo allowed for {op}:\n{out}");
        assert!(out.contains(setting), "{setting} not named:\n{out}");
        let (ok, out) = self.check(&self.plain.repo, op);
        assert!(ok, "repo without history refused for {op}:\n{out}");
        if op == "worktree-add" {
            let err = self.l.fails(&[
                "agent",
                "open",
                "--folder",
                self.hist.repo.to_str().unwrap(),
            ]);
            assert!(err.contains("refuses"), "{err}");
        }
        assert!(
            !self.hist.marker.exists(),
            "the planted program ran in the history repo"
        );
        assert!(
            self.l.core_log().contains("git-refused") || op != "worktree-add",
            "no audit entry:\n{}",
            self.l.core_log()
        );
    }

    /// Start an agent in the plain repo: a `worktree add` git runs.
    fn start_plain(&self) {
        self.l.ok(&[
            "agent",
            "open",
            "--folder",
            self.plain.repo.to_str().unwrap(),
        ]);
    }
}

fn side(l: &Local, name: &str, agent: &str) -> Side {
    let repo = l.work().join(name);
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    std::fs::write(repo.join("a.txt"), "a\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    let repo = repo.canonicalize().unwrap();
    let tab = l.ok(&["agent", agent, "--folder", repo.to_str().unwrap()]);
    let tabs = l.tabs_json(&["--folder", repo.to_str().unwrap()]);
    let t = tabs.iter().find(|t| t["id"] == tab.as_str()).unwrap();
    let wt = PathBuf::from(t["worktree"].as_str().expect("a worktree"));
    let marker = l.path(&format!("{name}.ran"));
    // What a planted program would do: leave a mark, pass content through.
    let canary = l.path(&format!("{name}-canary.sh"));
    std::fs::write(
        &canary,
        format!("#!/bin/sh\ntouch '{}'\ncat\n", marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(&canary, std::fs::Permissions::from_mode(0o755)).unwrap();
    Side {
        repo,
        wt,
        canary,
        marker,
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_clean_filter_in_the_repository_config() {
    let p = Pair::new();
    for side in [&p.hist, &p.plain] {
        std::fs::write(side.repo.join(".gitattributes"), "*.txt filter=evil\n").unwrap();
        git(&side.repo, &["add", ".gitattributes"]);
        git(&side.repo, &["commit", "-q", "-m", "attrs"]);
        git(
            &side.repo,
            &["config", "filter.evil.clean", s(&side.canary)],
        );
        git(
            &side.repo,
            &["config", "filter.evil.smudge", s(&side.canary)],
        );
    }
    p.assert_guarded("worktree-add", "filter.evil.clean");
    // The canary is live: without history, the checkout runs it.
    p.start_plain();
    assert!(p.plain.marker.exists(), "the smudge filter did not run");
}

#[test]
fn a_textconv_in_config_worktree() {
    let p = Pair::new();
    for side in [&p.hist, &p.plain] {
        git(&side.repo, &["config", "extensions.worktreeConfig", "true"]);
        git(
            &side.repo,
            &[
                "config",
                "--worktree",
                "diff.evil.textconv",
                s(&side.canary),
            ],
        );
    }
    p.assert_guarded("diff", "diff.evil.textconv");
    p.assert_guarded("worktree-add", "extensions.worktreeconfig");
}

#[test]
fn extensions_worktree_config_alone() {
    let p = Pair::new();
    for side in [&p.hist, &p.plain] {
        git(&side.repo, &["config", "extensions.worktreeConfig", "true"]);
    }
    p.assert_guarded("worktree-add", "sparse-checkout");
}

#[test]
fn an_include_path_into_a_worktree() {
    let p = Pair::new();
    for side in [&p.hist, &p.plain] {
        let inc = side.wt.join("evil.cfg");
        std::fs::write(
            &inc,
            format!("[core]\n\tpager = {}\n", side.canary.display()),
        )
        .unwrap();
        git(&side.repo, &["config", "include.path", s(&inc)]);
    }
    p.assert_guarded("worktree-add", "include.path");
}

#[test]
fn an_include_if_gitdir_file_in_a_worktree() {
    let p = Pair::new();
    let mut text = String::new();
    for side in [&p.hist, &p.plain] {
        // Not written yet: the agent could write it at any time.
        let inc = side.wt.join("later.cfg");
        text.push_str(&format!(
            "[includeIf \"gitdir:{}/\"]\n\tpath = {}\n",
            side.repo.display(),
            inc.display()
        ));
    }
    p.global_config(&text);
    p.assert_guarded("worktree-add", "includeif.gitdir:");
}

#[test]
fn a_global_fsmonitor_into_a_worktree() {
    let p = Pair::new();
    let fsmon = p.hist.wt.join("fsmonitor.sh");
    std::fs::copy(&p.hist.canary, &fsmon).unwrap();
    p.global_config(&format!("[core]\n\tfsmonitor = {}\n", fsmon.display()));
    p.assert_guarded("status", "core.fsmonitor");
    p.assert_guarded("worktree-add", "core.fsmonitor");
}

#[test]
fn a_merge_driver() {
    let p = Pair::new();
    for side in [&p.hist, &p.plain] {
        git(
            &side.repo,
            &[
                "config",
                "merge.evil.driver",
                &format!("{} %O %A %B", s(&side.canary)),
            ],
        );
    }
    p.assert_guarded("checkout", "merge.evil.driver");
}

/// What `git lfs install` writes to the global config, with the canary in
/// place of git-lfs.
fn lfs_installed(p: &Pair) {
    let c = p.hist.canary.display();
    p.global_config(&format!(
        "[filter \"lfs\"]\n\tclean = {c} clean -- %f\n\tsmudge = {c} smudge -- %f\n\trequired = true\n"
    ));
}

#[test]
fn lfs_with_conversion() {
    let p = Pair::new();
    for side in [&p.hist, &p.plain] {
        std::fs::write(side.repo.join(".gitattributes"), "*.bin filter=lfs -text\n").unwrap();
        std::fs::write(side.repo.join("big.bin"), "pointer\n").unwrap();
        git(&side.repo, &["add", "."]);
        git(&side.repo, &["commit", "-q", "-m", "lfs"]);
    }
    lfs_installed(&p);
    p.assert_guarded("worktree-add", "filter.lfs.clean");
    let (_, out) = p.check(&p.hist.repo, "worktree-add");
    assert!(
        out.contains("Git LFS") && out.contains("HEAD:.gitattributes"),
        "{out}"
    );
    // Without history the checkout converts, through the (canary) filter.
    p.start_plain();
    assert!(p.hist.marker.exists(), "the LFS smudge did not run");
}

#[test]
fn lfs_installed_but_unused_is_not_blocked() {
    let p = Pair::new();
    lfs_installed(&p);
    let (ok, out) = p.check(&p.hist.repo, "worktree-add");
    assert!(ok, "{out}");
    assert!(out.contains("sandbox history"), "{out}");
    p.l.ok(&["agent", "open", "--folder", s(&p.hist.repo)]);
    assert!(!p.hist.marker.exists());
}

#[test]
fn fetch_and_push_to_a_local_remote() {
    let p = Pair::new();
    let remote = p.l.work().join("remote.git");
    git(&p.l.work(), &["init", "-q", "--bare", s(&remote)]);
    for side in [&p.hist, &p.plain] {
        git(&side.repo, &["remote", "add", "origin", s(&remote)]);
    }
    p.assert_guarded("fetch", "fetch");
    p.assert_guarded("push", "push");
}

#[test]
fn history_survives_closing_removing_the_worktree_and_restarting() {
    let mut l = Local::started();
    l.write_config(&config());
    let side = side(&l, "r", "boxed");
    let tabs = l.tabs_json(&["--folder", s(&side.repo)]);
    let id = tabs[0]["id"].as_str().unwrap().to_string();
    l.ok(&["close", &id, "--remove-worktree"]);
    assert!(!side.wt.exists(), "the worktree is gone");
    l.stop_core();
    l.start_core();
    git(
        &side.repo,
        &["config", "filter.evil.clean", s(&side.canary)],
    );
    let out = l.run(&["git", "check", s(&side.repo)]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !out.status.success() && text.contains("filter.evil.clean"),
        "{text}"
    );
    // The core refuses too: an unsandboxed agent gets no worktree there.
    let err = l.fails(&["agent", "open", "--folder", s(&side.repo)]);
    assert!(err.contains("filter.evil.clean"), "{err}");
    let log = l.core_log();
    let entry = log
        .lines()
        .find(|line| line.contains("git-refused"))
        .unwrap_or_else(|| panic!("no audit line:\n{log}"));
    for field in [
        "NERDR_REPO",
        "NERDR_GIT_OPERATION",
        "NERDR_SETTING",
        "NERDR_ORIGIN",
    ] {
        assert!(entry.contains(field), "{field}: {entry}");
    }
    let listed = l.ok(&["log", "--git"]);
    assert!(listed.contains("filter.evil.clean"), "{listed}");
}

/// Review 78, finding 1: from its worktree a sandboxed agent (whose
/// wrapper leaves `.git` writable so it can commit) makes a repository of
/// its own inside the main checkout's `.git`, with a smudge filter, and
/// points `.git/commondir` at it. git then reports that planted folder as
/// the common dir; the history must still be found, and refused.
#[test]
fn a_commondir_planted_in_the_main_git_dir() {
    let l = Local::started();
    l.write_config(&config());
    let side = side(&l, "r", "boxed");
    let git_dir = side.repo.join(".git");
    let evil = git_dir.join("evil");
    // What the agent writes: objects, refs and HEAD (a bare copy has
    // them), a config with the filter, attributes assigning it to all.
    git(&side.repo, &["clone", "-q", "--bare", ".", s(&evil)]);
    git(&evil, &["config", "core.bare", "false"]);
    git(&evil, &["config", "filter.x.smudge", s(&side.canary)]);
    git(&evil, &["config", "filter.x.clean", s(&side.canary)]);
    std::fs::create_dir_all(evil.join("info")).unwrap();
    std::fs::write(evil.join("info/attributes"), "* filter=x\n").unwrap();
    std::fs::write(git_dir.join("commondir"), "evil\n").unwrap();
    assert_eq!(
        git(&side.repo, &["rev-parse", "--git-common-dir"]),
        s(&evil),
        "git follows the planted commondir"
    );
    let out = l.run(&["git", "check", s(&side.repo)]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "allowed:\n{text}");
    assert!(
        text.contains("sandbox history")
            && text.contains("commondir")
            && text.contains(s(&git_dir)),
        "{text}"
    );
    // A new agent there (even an unsandboxed one) gets no worktree.
    let err = l.fails(&["agent", "open", "--folder", s(&side.repo)]);
    assert!(
        err.contains("refuses") && err.contains("commondir"),
        "{err}"
    );
    assert!(!side.marker.exists(), "the planted smudge filter ran");
    assert!(l.core_log().contains("git-refused"), "{}", l.core_log());
    // The canary is live: git itself, unguarded, runs it on a checkout.
    let control = l.work().join("control");
    git(
        &side.repo,
        &["worktree", "add", "-q", "-b", "control", s(&control)],
    );
    assert!(
        side.marker.exists(),
        "the planted smudge filter is not live"
    );
}

/// A journal field as strings (journalctl prints a repeated field as an
/// array).
fn field(entry: &serde_json::Value, name: &str) -> Vec<String> {
    match &entry[name] {
        serde_json::Value::String(s) => vec![s.clone()],
        serde_json::Value::Array(a) => a
            .iter()
            .filter_map(|v| v.as_str().map(String::from))
            .collect(),
        _ => vec![],
    }
}

#[test]
fn refusals_reach_the_journal_with_their_fields() {
    use crate::support::sysenv::{wait_until, SystemdEnv};
    const GIT_REFUSED: &str = "MESSAGE_ID=6f3c1e2a9b7d4c58a1e0f2b3c4d5e605";
    let Some(env) = SystemdEnv::start() else {
        return;
    };
    env.run(&["nerdr", "service", "install"]);
    env.write_user_file(".config/nerdr/config.toml", config());
    env.write_user_file("work/r/a.txt", "a\n");
    let repo = env.home().join("work/r");
    let git = |args: &[&str]| {
        env.run(&crate::support::git::with_identity(s(&repo), args));
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "first"]);
    env.run(&["nerdr", "agent", "boxed", "--folder", s(&repo)]);
    git(&["config", "filter.evil.clean", "/bin/cat"]);
    let out = env.output(&["nerdr", "agent", "open", "--folder", s(&repo)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("filter.evil.clean"),
        "{err}"
    );
    let mut entries = Vec::new();
    wait_until(
        "the git refusal in the journal",
        std::time::Duration::from_secs(10),
        || {
            entries = env.journal(&[GIT_REFUSED]);
            !entries.is_empty()
        },
    );
    let e = &entries[0];
    assert_eq!(
        field(e, "NERDR_REPO"),
        vec![repo
            .join(".git")
            .canonicalize()
            .unwrap()
            .display()
            .to_string()]
    );
    assert_eq!(field(e, "NERDR_GIT_OPERATION"), vec!["worktree-add"]);
    assert_eq!(field(e, "NERDR_SETTING"), vec!["filter.evil.clean"]);
    let origin = field(e, "NERDR_ORIGIN");
    assert!(
        origin.len() == 1 && origin[0].ends_with("/work/r/.git/config"),
        "{origin:?}"
    );
    let msg = e["MESSAGE"].as_str().unwrap_or_default();
    assert!(
        msg.contains("filter.evil.clean") && msg.contains("/bin/cat") && msg.contains("--unset"),
        "{msg}"
    );
    let listed = String::from_utf8_lossy(&env.run(&["nerdr", "log", "--git"]).stdout).into_owned();
    assert!(listed.contains("filter.evil.clean"), "{listed}");
}

/// Saving a sandboxed agent's worktree before removing it (`git status`,
/// `git add -A` on a temporary index) runs no filter the agent assigned:
/// with its `.gitattributes` naming a configured filter nothing is run and
/// the worktree stays; without, the filter is disarmed, the work saved.
#[test]
fn saving_a_worktree_before_removal_runs_no_planted_filter() {
    let p = Pair::new();
    p.global_config(&format!(
        "[filter \"canary\"]\n\tclean = {}\n\tsmudge = {}\n",
        s(&p.hist.canary),
        s(&p.hist.canary)
    ));
    let folder = ["--folder", s(&p.hist.repo)];
    let tab = p.l.tabs_json(&folder)[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    std::fs::write(p.hist.wt.join(".gitattributes"), "* filter=canary\n").unwrap();
    std::fs::write(p.hist.wt.join("a.txt"), "changed\n").unwrap();
    let err = p.l.fails(&["close", "--remove-worktree", "--force", &tab]);
    assert!(err.contains("filter.canary"), "{err}");
    assert!(p.hist.wt.join("a.txt").is_file(), "the work went");
    assert!(!p.hist.marker.exists(), "the planted filter ran");

    std::fs::remove_file(p.hist.wt.join(".gitattributes")).unwrap();
    p.l.ok(&["close", "--remove-worktree", "--force", &tab]);
    assert!(!p.hist.wt.exists());
    assert!(!p.hist.marker.exists(), "a configured filter ran");
    let saved = format!("refs/nerdr/saved/{tab}");
    assert_eq!(
        git(&p.hist.repo, &["show", &format!("{saved}:a.txt")]),
        "changed"
    );
}

/// Write `text` over `path` keeping what identifies the file to a cache
/// (`rename`: a new inode, renamed over it; else in place) except the
/// content and the ctime: same size, same times to the nanosecond.
fn same_size_and_times(path: &Path, text: &str, rename: bool) {
    use std::os::unix::fs::MetadataExt;
    let before = std::fs::metadata(path).unwrap();
    assert_eq!(before.len(), text.len() as u64, "not the same size");
    let target = if rename {
        path.parent().unwrap().join(".replacement")
    } else {
        path.to_path_buf()
    };
    std::fs::write(&target, text).unwrap();
    let times = std::fs::FileTimes::new()
        .set_accessed(before.accessed().unwrap())
        .set_modified(before.modified().unwrap());
    std::fs::File::options()
        .write(true)
        .open(&target)
        .unwrap()
        .set_times(times)
        .unwrap();
    if rename {
        std::fs::rename(&target, path).unwrap();
    }
    let after = std::fs::metadata(path).unwrap();
    assert_eq!(after.ino() != before.ino(), rename);
    assert_eq!(
        (after.len(), after.modified().unwrap()),
        (before.len(), before.modified().unwrap())
    );
}

/// Each check reads the files as they are now, in `nerdr git check` (a
/// process per check) and in the core (one process for many checks): an
/// attribute or config file changed in place or renamed over (same size,
/// same times) and a new nested `.gitattributes` are all seen at once.
#[test]
fn every_check_sees_files_changed_in_place_renamed_over_or_new() {
    let l = Local::started();
    l.write_config(&config());
    let side = side(&l, "r", "boxed");
    let r = side.repo.clone();
    // The driver comes from the global config (trusted to name a
    // program): only what the attribute files assign decides.
    let gitconfig = l.path("home/.gitconfig");
    let driver = |name: &str| {
        format!(
            "[filter \"{name}\"]\n\tclean = {c}\n\tsmudge = {c}\n",
            c = side.canary.display()
        )
    };
    std::fs::write(&gitconfig, driver("evil")).unwrap();
    let top = r.join(".gitattributes");
    std::fs::write(&top, "* filter=safe\n").unwrap();
    let nested = r.join("a/b/c/.gitattributes");
    // Refused naming `file` (or allowed, for None), by both.
    let expect = |step: &str, file: Option<&Path>| {
        let out = l.run(&["git", "check", s(&r), "--op", "worktree-add"]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let core = l.run(&["agent", "open", "--folder", s(&r)]);
        let err = String::from_utf8_lossy(&core.stderr).into_owned();
        match file {
            None => {
                assert!(out.status.success(), "{step}: check refused:\n{text}");
                assert!(core.status.success(), "{step}: the core refused:\n{err}");
            }
            Some(f) => {
                let named = format!("{} assigns `filter=evil`", f.display());
                assert!(
                    !out.status.success() && text.contains(&named),
                    "{step}: check did not name {}:\n{text}",
                    f.display()
                );
                assert!(
                    !core.status.success() && err.contains(&named),
                    "{step}: the core did not refuse naming {}:\n{err}",
                    f.display()
                );
            }
        }
    };
    expect("harmless", None);
    same_size_and_times(&top, "* filter=evil\n", false);
    expect("attributes changed in place", Some(&top));
    let text = std::fs::read_to_string(&gitconfig).unwrap();
    same_size_and_times(&gitconfig, &text.replace("evil", "evix"), false);
    expect("config changed in place (the driver renamed)", None);
    same_size_and_times(&gitconfig, &text, true);
    expect("config renamed over (the driver back)", Some(&top));
    same_size_and_times(&top, "* filter=safe\n", true);
    expect("attributes renamed over", None);
    std::fs::create_dir_all(nested.parent().unwrap()).unwrap();
    std::fs::write(&nested, "* filter=evil\n").unwrap();
    expect("a new nested attribute file", Some(&nested));
    assert!(!side.marker.exists(), "the planted filter ran");
}
