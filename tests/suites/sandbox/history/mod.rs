//! Issue 13, items 2 and 4: a program in `nerdr sandbox` cannot destroy or
//! rewrite what the repository holds (objects, branches, tags), its own
//! branch's commits still reach the host; and a hand-run `nerdr sandbox`
//! gives the repository sandbox history, so the host git guard is on there.

mod attacks;

use std::path::{Path, PathBuf};

use super::{sandbox, setup, text, user_git};
use crate::support::sysenv::SystemdEnv;

/// Item 4: `nerdr sandbox -- true`, run by hand in a linked worktree (no
/// core involved), leaves the repository with sandbox history: `nerdr git
/// check` then refuses a filter planted in its config.
#[test]
fn a_hand_run_sandbox_records_sandbox_history() {
    let Some(env) = setup() else { return };
    let home = env.home().to_path_buf();
    let proj = home.join("proj");
    user_git(
        &env,
        &proj,
        &["worktree", "add", "-q", "-b", "side", "../linked"],
    );
    let linked = home.join("linked");
    let out = sandbox(&env, &linked, &["true"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // A run that stored nothing leaves nothing, and has nothing to say.
    assert!(
        !text(&out.stderr).contains("WARNING"),
        "{}",
        text(&out.stderr)
    );
    let left = private_copies_dir(&home);
    assert_eq!(
        private_copies(&left),
        0,
        "a private copy left in {}",
        left.display()
    );
    user_git(&env, &proj, &["config", "filter.evil.clean", "/bin/cat"]);
    for dir in [&proj, &linked] {
        let out = env.output(&["nerdr", "git", "check", dir.to_str().unwrap()]);
        let said = text(&out.stdout);
        assert!(
            !out.status.success() && said.contains("filter.evil.clean"),
            "{}: host git allowed after a sandboxed run:\n{said}{}",
            dir.display(),
            text(&out.stderr)
        );
    }
}

/// (what, how it is planted, how it is removed, the operation, the setting
/// the refusal names)
type Plant<'a> = (&'a str, &'a [&'a str], &'a [&'a str], &'a str, &'a str);

/// `nerdr sandbox -- true` run by hand in the main checkout kept
/// `.git/config` and `.git/hooks` read-only, and history remembers it:
/// host git there is still allowed (nerdr makes an agent's worktree), while
/// what such a run could write is still refused: an include pointing into
/// the checkout, a filter its `.gitattributes` assigns, fsmonitor naming a
/// file in it.
#[test]
fn a_hand_run_sandbox_in_the_main_checkout_leaves_host_git_usable() {
    let Some(env) = setup() else { return };
    let home = env.home().to_path_buf();
    let proj = home.join("proj");
    let out = sandbox(&env, &proj, &["true"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let check = |op: &str| {
        let out = env.output(&["nerdr", "git", "check", proj.to_str().unwrap(), "--op", op]);
        (
            out.status.success(),
            format!("{}{}", text(&out.stdout), text(&out.stderr)),
        )
    };
    let (ok, said) = check("worktree-add");
    assert!(
        ok,
        "host git refused after a hand run in the main checkout:\n{said}"
    );

    env.run(&["nerdr", "service", "install"]);
    env.write_user_file(
        ".config/nerdr/config.toml",
        "[agents.sh]\ncommand = [\"sleep\", \"1000\"]\n",
    );
    let out = env.output(&["nerdr", "agent", "sh", "--folder", proj.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "nerdr could not start an agent in its worktree: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let list = user_git(&env, &proj, &["worktree", "list", "--porcelain"]);
    assert_eq!(
        list.lines().filter(|l| l.starts_with("worktree ")).count(),
        2,
        "no worktree made for the agent:\n{list}"
    );

    let fsmon = proj.join("fsmon");
    let fsmon = fsmon.to_str().unwrap();
    let plants: &[Plant] = &[
        (
            "an include pointing into the checkout",
            &["config", "include.path", "../evil.inc"],
            &["config", "--unset", "include.path"],
            "worktree-add",
            "include.path",
        ),
        (
            "a filter the checkout's attributes assign",
            &["config", "--global", "filter.evil.smudge", "/bin/cat"],
            &["config", "--global", "--unset", "filter.evil.smudge"],
            "checkout",
            "filter.evil.smudge",
        ),
        (
            "fsmonitor naming a file in the checkout",
            &["config", "--global", "core.fsmonitor", fsmon],
            &["config", "--global", "--unset", "core.fsmonitor"],
            "status",
            "core.fsmonitor",
        ),
    ];
    env.write_user_file("proj/.gitattributes", "* filter=evil\n");
    for (what, plant, remove, op, setting) in plants {
        user_git(&env, &proj, plant);
        let (ok, said) = check(op);
        assert!(
            !ok && said.contains(setting),
            "{what}: `{op}` allowed, or {setting} not named:\n{said}"
        );
        user_git(&env, &proj, remove);
        let (ok, said) = check(op);
        assert!(ok, "{what}: still refused once removed:\n{said}");
    }
}

/// What a program bent on destroying the repository's history tries from
/// inside, each step allowed to fail; then it commits on its own branch.
const DESTROY: &str = r#"
C=$(git rev-parse --git-common-dir)
git update-ref refs/heads/main HEAD~1 2>&1 && echo MOVED-MAIN
git branch -f main HEAD~1 2>&1
git tag -d v1 2>&1 && echo DELETED-TAG
rm -f "$C"/refs/tags/* 2>&1
echo /nowhere > "$C/objects/info/alternates" 2>&1 && echo WROTE-ALTERNATES
printf '0000000000000000000000000000000000000000 refs/heads/main\n' > "$C/packed-refs" 2>&1 && echo WROTE-PACKED-REFS
find "$C/objects" -type f -exec rm -f {} + 2>&1 | tail -1
echo agent-work > agent.txt
git add agent.txt && git commit -q -m from-agent && echo COMMITTED
true
"#;

/// The host's view of what must survive: main, the tag, packed-refs.
fn survivors(env: &SystemdEnv, proj: &Path) -> Vec<String> {
    vec![
        user_git(env, proj, &["rev-parse", "main"]),
        user_git(env, proj, &["rev-parse", "v1"]),
        std::fs::read_to_string(proj.join(".git/packed-refs")).unwrap(),
    ]
}

/// A repository with a packed tag `v1`, a packed and then loose `main`
/// two commits deep, and (for the linked case) a worktree on `nerdr/t1`.
fn history_repo(env: &SystemdEnv, proj: &Path) {
    user_git(env, proj, &["tag", "v1"]);
    user_git(env, proj, &["pack-refs", "--all"]);
    env.write_user_file("proj/second", "2\n");
    user_git(env, proj, &["add", "second"]);
    user_git(env, proj, &["commit", "-q", "-m", "second"]);
}

/// Item 2: in a linked worktree (as the core makes for an agent), the
/// program deletes every object file it can reach, moves `main`, deletes
/// the tag, writes `objects/info/alternates` and `packed-refs`: on the
/// host nothing of it shows, and the commit it made on its own branch is
/// on that branch, with its objects (`git fsck` clean).
#[test]
fn a_sandboxed_program_cannot_destroy_the_repositorys_history() {
    let Some(env) = setup() else { return };
    let home = env.home().to_path_buf();
    let proj = home.join("proj");
    history_repo(&env, &proj);
    linked_worktree(&env, &proj);
    let before = survivors(&env, &proj);
    let out = sandbox(&env, &home.join("linked"), &["bash", "-c", DESTROY]);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_main_is_whole(&env, &proj);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("COMMITTED"),
        "the agent could not commit: {said}"
    );
    // (Moving `main` inside works: it moves the program's private copy.)
    for step in ["DELETED-TAG", "WROTE-ALTERNATES", "WROTE-PACKED-REFS"] {
        assert!(!said.contains(step), "{step} from inside: {said}");
    }
    assert_eq!(
        survivors(&env, &proj),
        before,
        "main, v1 or packed-refs changed"
    );
    assert!(!proj.join(".git/objects/info/alternates").exists());
    assert_eq!(
        user_git(&env, &proj, &["log", "-1", "--format=%s", "nerdr/t1"]),
        "from-agent",
        "the agent's commit did not come home: {said}"
    );
    assert_eq!(
        user_git(&env, &proj, &["show", "nerdr/t1:agent.txt"]),
        "agent-work"
    );
    assert_fsck_is_clean(&env, &proj);
    // The worktree's own view on the host is whole: its index names the
    // program's blob, which came home too.
    let status = user_git(&env, &home.join("linked"), &["status", "--porcelain"]);
    assert_eq!(status, "", "the worktree on the host: {status}");
}

/// Item 2 in a main checkout (a hand-run `nerdr sandbox`, `.git` itself
/// writable): the same attempts change nothing the user has; the program's
/// rewrite of `main` (it moved its private `main` back, then committed)
/// is not a fast-forward, so it is kept under `refs/nerdr/sandboxed/` and
/// the user is told; a plain commit on `main` then comes home.
#[test]
fn in_a_main_checkout_only_a_fast_forward_of_the_branch_comes_home() {
    let Some(env) = setup() else { return };
    let proj = env.home().join("proj");
    history_repo(&env, &proj);
    let before = survivors(&env, &proj);
    let replace = "cp .git/packed-refs /tmp/p && echo junk >> /tmp/p && mv -f /tmp/p .git/packed-refs 2>&1 && echo REPLACED-PACKED-REFS; true";
    let out = sandbox(
        &env,
        &proj,
        &["bash", "-c", &format!("{replace}\n{DESTROY}")],
    );
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{said}");
    assert_main_is_whole(&env, &proj);
    assert!(
        said.contains("COMMITTED"),
        "the program could not commit: {said}"
    );
    for step in [
        "DELETED-TAG",
        "WROTE-ALTERNATES",
        "WROTE-PACKED-REFS",
        "REPLACED-PACKED-REFS",
    ] {
        assert!(!said.contains(step), "{step} from inside: {said}");
    }
    assert_eq!(
        survivors(&env, &proj),
        before,
        "main, v1 or packed-refs changed"
    );
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("not a fast-forward") && stderr.contains("refs/nerdr/sandboxed/"),
        "the user was not told where the rewrite is: {stderr}"
    );
    let kept = user_git(
        &env,
        &proj,
        &[
            "for-each-ref",
            "--format=%(refname)",
            "refs/nerdr/sandboxed/",
        ],
    );
    assert!(kept.ends_with("/heads/main"), "{kept}");
    assert_eq!(
        user_git(&env, &proj, &["log", "--format=%s", &kept]),
        "from-agent\nfirst"
    );

    // A fast-forward of the branch the checkout is on comes home.
    user_git(&env, &proj, &["reset", "-q", "--hard", "main"]);
    let out = sandbox(
        &env,
        &proj,
        &["sh", "-c", "echo more >> second && git commit -qam forward"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        user_git(&env, &proj, &["log", "--format=%s", "main"]),
        "forward\nsecond\nfirst"
    );
    assert_fsck_is_clean(&env, &proj);
    // Nothing of the private copies is left behind.
    let left = private_copies_dir(env.home());
    assert_eq!(
        private_copies(&left),
        0,
        "private copies left in {}",
        left.display()
    );
}

/// Commits on a detached HEAD (and on a branch the program switched its
/// worktree to) are not lost: kept under `refs/nerdr/sandboxed/`, said on
/// stderr; the user's branches do not move.
#[test]
fn a_detached_heads_commits_are_kept() {
    let Some(env) = setup() else { return };
    let home = env.home().to_path_buf();
    let proj = home.join("proj");
    history_repo(&env, &proj);
    linked_worktree(&env, &proj);
    let main = user_git(&env, &proj, &["rev-parse", "main"]);
    let work = "git checkout -q --detach && git commit -q --allow-empty -m detached && echo DONE";
    let out = sandbox(&env, &home.join("linked"), &["sh", "-c", work]);
    let stderr = text(&out.stderr);
    assert!(text(&out.stdout).contains("DONE"), "{stderr}");
    assert!(stderr.contains("detached HEAD"), "{stderr}");
    let kept = user_git(
        &env,
        &proj,
        &[
            "for-each-ref",
            "--format=%(refname) %(subject)",
            "refs/nerdr/sandboxed/",
        ],
    );
    assert!(kept.ends_with("/HEAD detached"), "{kept}");
    assert_eq!(user_git(&env, &proj, &["rev-parse", "main"]), main);
    assert_eq!(user_git(&env, &proj, &["rev-parse", "nerdr/t1"]), main);
    // The worktree's HEAD on the host names the kept commit, whole.
    assert_eq!(
        user_git(&env, &home.join("linked"), &["log", "-1", "--format=%s"]),
        "detached"
    );

    // A detached HEAD with nothing new (on the tag `v1`, behind main)
    // keeps nothing.
    let out = sandbox(
        &env,
        &home.join("linked"),
        &["git", "checkout", "-q", "--detach", "v1"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!text(&out.stderr).contains("kept"), "{}", text(&out.stderr));
}

/// The agent's commits reach its branch on the host as it makes them,
/// while it still runs (an agent lives for hours in its tab), not only
/// when it ends.
#[test]
fn the_branch_comes_home_while_the_program_runs() {
    let Some(env) = setup() else { return };
    let home = env.home().to_path_buf();
    let proj = home.join("proj");
    linked_worktree(&env, &proj);
    let work = "for i in 1 2; do echo $i > n && git add n && git commit -q -m live-$i; done; exec sleep 60";
    assert_t1_comes_home_while_running(&env, &proj, work, "live-2");
    assert_eq!(
        user_git(&env, &proj, &["show", "nerdr/t1:n"]),
        "2",
        "the commit's objects came with it"
    );
}

/// A worktree `../linked` on a new branch `nerdr/t1`, as the core makes
/// for an agent's tab.
fn linked_worktree(env: &SystemdEnv, proj: &Path) {
    user_git(
        env,
        proj,
        &["worktree", "add", "-q", "-b", "nerdr/t1", "../linked"],
    );
}

/// Where `nerdr sandbox` keeps its private copies of repositories.
fn private_copies_dir(home: &Path) -> PathBuf {
    home.join(".local/share/nerdr/sandbox-git")
}

/// How many private copies are in `dir` (none when it is missing).
fn private_copies(dir: &Path) -> usize {
    std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0)
}

/// `main` on the host still holds its two commits, readable.
fn assert_main_is_whole(env: &SystemdEnv, proj: &Path) {
    let log = env.output(&[
        "git",
        "-C",
        proj.to_str().unwrap(),
        "log",
        "--format=%s",
        "main",
    ]);
    assert!(
        log.status.success() && text(&log.stdout) == "second\nfirst\n",
        "the host's history is damaged: {}{}",
        text(&log.stdout),
        text(&log.stderr)
    );
}

/// `git fsck` on the host finds nothing wrong (dangling objects aside).
fn assert_fsck_is_clean(env: &SystemdEnv, proj: &Path) {
    let fsck = env.output(&["git", "-C", proj.to_str().unwrap(), "fsck", "--no-dangling"]);
    assert!(
        fsck.status.success() && text(&fsck.stdout).is_empty(),
        "git fsck: {}{}",
        text(&fsck.stdout),
        text(&fsck.stderr)
    );
}

/// Run `work` under `nerdr sandbox` in `../linked` and wait until the tip
/// of `nerdr/t1` on the host is `subject` while the program still runs.
fn assert_t1_comes_home_while_running(env: &SystemdEnv, proj: &Path, work: &str, subject: &str) {
    let mut c = env.user_cmd(&["nerdr", "sandbox", "--", "sh", "-c", work]);
    c.current_dir(proj.with_file_name("linked"));
    let mut running = c.spawn().unwrap();
    let want = subject;
    let mut subject = String::new();
    let arrived = crate::support::poll(std::time::Duration::from_secs(20), || {
        let out = env.output(&[
            "git",
            "-C",
            proj.to_str().unwrap(),
            "log",
            "-1",
            "--format=%s",
            "nerdr/t1",
        ]);
        subject = text(&out.stdout).trim().to_string();
        subject == want
    });
    let still_running = running.try_wait().unwrap().is_none();
    let _ = running.kill();
    let _ = running.wait();
    assert!(still_running, "the sandbox ended early");
    assert!(
        arrived,
        "nerdr/t1 on the host while the program runs: {subject}"
    );
}

/// The PID of the `nerdr sandbox` whose command line holds `marker`.
fn sandbox_pid(marker: &str) -> Option<i32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        let is_nerdr = args.first()?.ends_with(b"nerdr") && args.get(1)? == b"sandbox";
        let marked = args
            .iter()
            .any(|a| String::from_utf8_lossy(a).contains(marker));
        (is_nerdr && marked).then_some(pid)
    })
}

/// A run killed before its end (SIGKILL, a reboot) left the program's
/// staged file only in its private copy, and the worktree's index naming
/// it: the next run in the repository brings it home.
#[test]
fn a_killed_runs_staged_work_comes_home_with_the_next_run() {
    let Some(env) = setup() else { return };
    let home = env.home().to_path_buf();
    let proj = home.join("proj");
    linked_worktree(&env, &proj);
    let linked = home.join("linked");
    let marker = format!("killed-run-{}", std::process::id());
    let work = format!(
        "echo staged-only > staged.txt && git add staged.txt && touch {marker}; exec sleep 60"
    );
    let mut c = env.user_cmd(&["nerdr", "sandbox", "--", "sh", "-c", &work]);
    c.current_dir(&linked);
    let mut running = c.spawn().unwrap();
    crate::support::wait_until(
        "the program to stage its file",
        std::time::Duration::from_secs(20),
        || linked.join(&marker).exists(),
    );
    let pid = sandbox_pid(&marker).expect("the nerdr sandbox process");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let _ = running.wait();
    let blob = user_git(&env, &linked, &["hash-object", "staged.txt"]);
    let present = |env: &crate::support::sysenv::SystemdEnv| {
        env.output(&["git", "-C", proj.to_str().unwrap(), "cat-file", "-e", &blob])
            .status
            .success()
    };
    assert!(
        !present(&env),
        "the staged blob was home already: the test shows nothing"
    );

    let out = sandbox(&env, &linked, &["true"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        present(&env),
        "the killed run's staged file did not come home"
    );
    assert_eq!(
        user_git(&env, &linked, &["diff", "--cached", "--name-only"]),
        "staged.txt"
    );
    let left = private_copies_dir(&home);
    assert_eq!(
        private_copies(&left),
        0,
        "a private copy left in {}",
        left.display()
    );
}

/// In a worktree nerdr made for a tab, a run switches it to the user's
/// branch `release` (checked out nowhere); the next run, which starts on
/// `release`, commits there: `release` does not move, the commit is kept.
#[test]
fn a_tabs_worktree_switched_to_a_users_branch_moves_only_the_tabs_branch() {
    let Some(env) = setup() else { return };
    let home = env.home().to_path_buf();
    let proj = home.join("proj");
    user_git(&env, &proj, &["branch", "release"]);
    let wt = home.join(".local/share/nerdr/worktrees/proj-1a2b/t1");
    user_git(
        &env,
        &proj,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "nerdr/t1",
            wt.to_str().unwrap(),
        ],
    );
    let release = user_git(&env, &proj, &["rev-parse", "release"]);
    let out = sandbox(&env, &wt, &["git", "checkout", "-q", "release"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        user_git(&env, &wt, &["symbolic-ref", "HEAD"]),
        "refs/heads/release",
        "the switch did not happen: the test shows nothing"
    );
    let out = sandbox(
        &env,
        &wt,
        &["git", "commit", "-q", "--allow-empty", "-m", "onto-release"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        user_git(&env, &proj, &["rev-parse", "release"]),
        release,
        "the user's branch moved"
    );
    let stderr = text(&out.stderr);
    assert!(stderr.contains("only the tab's own branch"), "{stderr}");
    let kept = user_git(
        &env,
        &proj,
        &["log", "-1", "--format=%s", "--glob=refs/nerdr/sandboxed/*"],
    );
    assert_eq!(kept, "onto-release");
}
