//! Each agent tab in a git repository works in its own worktree on its own
//! branch; closing keeps it unless asked; a worktree that would need a fetch
//! is refused with a clear error and nothing left behind.

use std::path::PathBuf;

use crate::support::git::git;
use crate::support::local::Local;

const CONFIG: &str = "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n";

/// A repository with one commit, as the session's folder.
fn repo(l: &Local) -> PathBuf {
    let r = l.work();
    git(&r, &["init", "-q"]);
    std::fs::create_dir_all(r.join("sub")).unwrap();
    std::fs::write(r.join("sub/file.txt"), "hello\n").unwrap();
    git(&r, &["add", "."]);
    git(&r, &["commit", "-q", "-m", "first"]);
    r
}

fn cwd_of(tab: &serde_json::Value) -> PathBuf {
    std::fs::read_link(format!("/proc/{}/cwd", tab["pid"])).unwrap()
}

fn tab<'a>(tabs: &'a [serde_json::Value], id: &str) -> &'a serde_json::Value {
    tabs.iter().find(|t| t["id"] == id).unwrap()
}

#[test]
fn two_tabs_get_two_worktrees_and_branches() {
    let l = Local::started();
    l.write_config(CONFIG);
    let r = repo(&l);
    // A session in a subfolder (started before any around it) starts in
    // the same subfolder of its worktree.
    let sub = r.join("sub");
    let c = l.ok(&["agent", "sh", "--folder", sub.to_str().unwrap()]);
    let a = l.ok(&["agent", "sh"]);
    let b = l.ok(&["agent", "sh"]);
    let tabs = l.tabs_json(&[]);
    let data = l.path("data/nerdr/worktrees").canonicalize().unwrap();
    for id in [&a, &b] {
        let t = tab(&tabs, id);
        let wt = PathBuf::from(t["worktree"].as_str().expect("a worktree"));
        assert!(
            wt.starts_with(&data),
            "{} not under {}",
            wt.display(),
            data.display()
        );
        assert!(wt.ends_with(id.as_str()));
        assert_eq!(cwd_of(t), wt, "the program runs in its worktree");
        assert!(wt.join("sub/file.txt").is_file());
    }
    let list = git(&r, &["worktree", "list"]);
    assert_eq!(list.lines().count(), 4, "{list}");
    let branches = git(&r, &["branch", "--list", "nerdr/*"]);
    for id in [&a, &b] {
        assert!(branches.contains(&format!("nerdr/{id}")), "{branches}");
    }
    let subtabs = l.tabs_json(&["--folder", sub.to_str().unwrap()]);
    let t = tab(&subtabs, &c);
    assert_eq!(
        cwd_of(t),
        PathBuf::from(t["worktree"].as_str().unwrap()).join("sub")
    );
}

#[test]
fn close_keeps_the_worktree_unless_asked() {
    let l = Local::started();
    l.write_config(CONFIG);
    let r = repo(&l);
    let a = l.ok(&["agent", "sh"]);
    let b = l.ok(&["agent", "sh"]);
    let tabs = l.tabs_json(&[]);
    let (wa, wb) = (
        PathBuf::from(tab(&tabs, &a)["worktree"].as_str().unwrap()),
        PathBuf::from(tab(&tabs, &b)["worktree"].as_str().unwrap()),
    );
    l.ok(&["close", &a]);
    assert!(wa.is_dir(), "close removed the worktree");
    l.ok(&["close", "--remove-worktree", &b]);
    assert!(!wb.exists(), "--remove-worktree left {}", wb.display());
    let list = git(&r, &["worktree", "list"]);
    assert!(!list.contains(b.as_str()), "{list}");
    assert!(list.contains(a.as_str()), "{list}");
    // The branch stays, with whatever the agent committed on it.
    assert!(git(&r, &["branch", "--list", &format!("nerdr/{b}")]).contains(&b));
}

#[test]
fn no_worktree_when_asked_or_configured_or_outside_a_repository() {
    let l = Local::started();
    l.write_config(CONFIG);
    let plain = l.ok(&["agent", "sh"]);
    let t = l.tabs_json(&[]);
    assert!(tab(&t, &plain)["worktree"].is_null());
    assert_eq!(cwd_of(tab(&t, &plain)), l.work().canonicalize().unwrap());
    let r = repo(&l);
    let flag = l.ok(&["agent", "sh", "--no-worktree"]);
    l.write_config(&format!("{CONFIG}[tabs]\nworktree = false\n"));
    let conf = l.ok(&["agent", "sh"]);
    let t = l.tabs_json(&[]);
    for id in [&flag, &conf] {
        assert!(tab(&t, id)["worktree"].is_null());
        assert_eq!(cwd_of(tab(&t, id)), r.canonicalize().unwrap());
    }
    assert_eq!(git(&r, &["worktree", "list"]).lines().count(), 1);
}

#[test]
fn a_worktree_that_needs_a_fetch_is_refused_clearly() {
    let l = Local::started();
    l.write_config(CONFIG);
    let origin = l.path("origin");
    std::fs::create_dir(&origin).unwrap();
    git(&origin, &["init", "-q"]);
    std::fs::write(origin.join("big.txt"), "content\n").unwrap();
    git(&origin, &["add", "."]);
    git(&origin, &["commit", "-q", "-m", "first"]);
    git(&origin, &["config", "uploadpack.allowfilter", "true"]);
    // A partial clone without its blobs, whose remote then goes away.
    let url = format!("file://{}", origin.display());
    let clone = l.work().join("clone");
    git(
        &l.work(),
        &[
            "clone",
            "-q",
            "--filter=blob:none",
            "--no-checkout",
            &url,
            "clone",
        ],
    );
    std::fs::remove_dir_all(&origin).unwrap();
    let err = l.fails(&["agent", "sh", "--folder", clone.to_str().unwrap()]);
    assert!(err.contains("would need a fetch"), "{err}");
    assert!(err.contains("--no-worktree"), "{err}");
    // Nothing half made: no tab, no worktree, no branch.
    assert!(l.tabs_json(&["--all"]).is_empty());
    assert_eq!(git(&clone, &["worktree", "list"]).lines().count(), 1);
    assert_eq!(git(&clone, &["branch", "--list", "nerdr/*"]), "");
}

/// A launch that fails after its worktree was made (here: a sandboxed
/// agent whose sandbox history cannot be kept, so it must not start)
/// leaves no worktree and no branch behind.
#[test]
fn a_launch_that_fails_after_making_its_worktree_leaves_none() {
    let l = Local::started();
    l.write_config("[agents.boxed]\ncommand = [\"bash\", \"--norc\"]\nsandboxed = true\n");
    let r = repo(&l);
    // The history can be read (host git runs, the worktree is made) but
    // not written: its lock file is a folder.
    std::fs::create_dir_all(l.path("state/nerdr/sandbox-history.lock/x")).unwrap();
    let err = l.fails(&["agent", "boxed"]);
    assert!(err.contains("sandbox history"), "{err}");
    assert!(l.tabs_json(&[]).is_empty());
    let list = git(&r, &["worktree", "list"]);
    assert_eq!(list.lines().count(), 1, "the fresh worktree stays:\n{list}");
    assert_eq!(git(&r, &["branch", "--list", "nerdr/*"]), "");
}

#[test]
fn a_repository_without_commits_says_so() {
    let l = Local::started();
    l.write_config(CONFIG);
    git(&l.work(), &["init", "-q"]);
    let err = l.fails(&["agent", "sh"]);
    assert!(err.contains("has no commit yet"), "{err}");
    assert!(l.tabs_json(&[]).is_empty());
}

/// Commit a `.nerdr.toml` naming `setup` as the worktree setup.
fn commit_setup(r: &std::path::Path, setup: &str) {
    std::fs::write(
        r.join(".nerdr.toml"),
        format!("[worktree]\nsetup = \"{setup}\"\n"),
    )
    .unwrap();
    git(r, &["add", "."]);
    git(r, &["commit", "-q", "-m", "setup"]);
}

fn pending(l: &Local) -> Vec<serde_json::Value> {
    serde_json::from_str(&l.ok(&["approvals", "--json"])).unwrap()
}

fn worktree_of(l: &Local, id: &str) -> PathBuf {
    PathBuf::from(tab(&l.tabs_json(&[]), id)["worktree"].as_str().unwrap())
}

#[test]
fn a_worktree_setup_runs_only_after_approval_and_is_asked_again_when_changed() {
    use std::time::Duration;
    let l = Local::started();
    l.write_config(CONFIG);
    let r = repo(&l);
    commit_setup(&r, "echo ran >> setup-ran.txt");

    // Not run before approval: the agent waits for it, and says so.
    let a = l.ok(&["agent", "sh"]);
    let wa = worktree_of(&l, &a);
    l.wait_screen(&a, "the agent starts once the worktree setup");
    let asked = pending(&l);
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0]["question"].as_str().unwrap().contains("echo ran"),
        "{asked:?}"
    );
    let id = asked[0]["id"].as_str().unwrap().to_string();
    // A program in a tab cannot approve it.
    let term = l.ok(&["terminal", &a]);
    l.ok(&[
        "send",
        &term,
        &format!(r#""$NERDR_BIN" approvals approve {id}; echo rc-$?"#),
    ]);
    l.wait_screen(&term, "rc-1");
    l.ok(&["close", &term]);
    assert!(
        !wa.join("setup-ran.txt").exists(),
        "the setup ran before approval"
    );

    // Run once after approval, in that worktree; the answer is confirmed.
    let out = l.run(&["approvals", "approve", &id]);
    crate::support::local::check(&out, true, "nerdr approvals approve", &l);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.starts_with(&format!("approved {id}: ")), "{said}");
    crate::support::wait_until("the setup to run", Duration::from_secs(10), || {
        std::fs::read_to_string(wa.join("setup-ran.txt")).is_ok_and(|s| s == "ran\n")
    });
    assert!(pending(&l).is_empty());

    // The same content again: it runs before the next agent, unasked.
    let b = l.ok(&["agent", "sh"]);
    let wb = worktree_of(&l, &b);
    crate::support::wait_until("the approved setup to run", Duration::from_secs(10), || {
        std::fs::read_to_string(wb.join("setup-ran.txt")).is_ok_and(|s| s == "ran\n")
    });
    assert!(pending(&l).is_empty());
    // Its gate opens before the setup's tab goes: typing reaches the agent.
    crate::support::wait_until("the setup's tab to go", Duration::from_secs(10), || {
        setup_tabs(&l).is_empty()
    });
    l.ok(&["send", &b, "echo agent-after-setup"]);
    l.wait_screen(&b, "\nagent-after-setup");

    // Changed content is asked about again, and does not run meanwhile.
    std::fs::write(
        r.join(".nerdr.toml"),
        "[worktree]\nsetup = \"echo changed >> setup-ran.txt\"\n",
    )
    .unwrap();
    git(&r, &["commit", "-q", "-am", "change setup"]);
    let c = l.ok(&["agent", "sh"]);
    let wc = worktree_of(&l, &c);
    let asked = pending(&l);
    assert_eq!(asked.len(), 1);
    assert!(asked[0]["question"]
        .as_str()
        .unwrap()
        .contains("echo changed"));
    l.ok(&["approvals", "deny", asked[0]["id"].as_str().unwrap()]);
    std::thread::sleep(Duration::from_millis(300));
    assert!(!wc.join("setup-ran.txt").exists(), "a denied setup ran");
    assert!(pending(&l).is_empty());
}

#[test]
fn a_malformed_setup_file_is_named_and_nothing_is_left() {
    let l = Local::started();
    l.write_config(CONFIG);
    let r = repo(&l);
    std::fs::write(r.join(".nerdr.toml"), "[worktree]\nsetpu = \"x\"\n").unwrap();
    git(&r, &["add", "."]);
    git(&r, &["commit", "-q", "-m", "bad"]);
    let err = l.fails(&["agent", "sh"]);
    assert!(
        err.contains(".nerdr.toml") && err.contains("setpu"),
        "{err}"
    );
    assert!(err.contains("--no-worktree"), "{err}");
    assert!(l.tabs_json(&[]).is_empty());
    assert_eq!(git(&r, &["worktree", "list"]).lines().count(), 1);
    assert_eq!(git(&r, &["branch", "--list", "nerdr/*"]), "");
}

#[test]
fn setups_never_run_for_sandboxed_agents_and_are_asked_again_after_one_worked_there() {
    let l = Local::started();
    l.write_config(&format!("{CONFIG}{}", crate::support::BOXED_SLEEPER));
    let r = repo(&l);
    commit_setup(&r, "echo ran >> setup-ran.txt");
    // Approved once, for an unsandboxed agent.
    let a = l.ok(&["agent", "sh"]);
    let id = pending(&l)[0]["id"].as_str().unwrap().to_string();
    l.ok(&["approvals", "approve", &id]);
    let wa = worktree_of(&l, &a);
    crate::support::wait_until(
        "the setup to run",
        std::time::Duration::from_secs(10),
        || wa.join("setup-ran.txt").exists(),
    );

    // A sandboxed agent: nerdr does not run the setup (outside its sandbox)
    // and says so; nothing is asked.
    let b = l.ok(&["agent", "boxed"]);
    let wb = worktree_of(&l, &b);
    let warning = tab(&l.tabs_json(&[]), &b)["warning"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(warning.contains("was not run"), "{warning:?}");
    assert!(pending(&l).is_empty());
    assert!(!wb.join("setup-ran.txt").exists());

    // The repository now has sandbox history: the same approved content is
    // asked about again for the next unsandboxed agent, and not run unasked.
    let c = l.ok(&["agent", "sh"]);
    let wc = worktree_of(&l, &c);
    let asked = pending(&l);
    assert_eq!(asked.len(), 1, "{asked:?}");
    let q = asked[0]["question"].as_str().unwrap();
    assert!(q.contains("this yes is for this run only"), "{q}");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!wc.join("setup-ran.txt").exists(), "ran unasked");
    // Approving it runs it, and does not make it approved for good.
    l.ok(&["approvals", "approve", asked[0]["id"].as_str().unwrap()]);
    crate::support::wait_until(
        "the setup to run",
        std::time::Duration::from_secs(10),
        || wc.join("setup-ran.txt").exists(),
    );
    let d = l.ok(&["agent", "sh"]);
    assert_eq!(pending(&l).len(), 1, "asked again for tab {d}");
}

/// A custom agent whose first act is to read what the setup made.
const READER: &str = "[agents.reader]\ncommand = [\"sh\", \"-c\", \
    \"cat made.txt && echo AGENT-READ-OK; exec bash --norc --noprofile\"]\n";

fn setup_tabs(l: &Local) -> Vec<serde_json::Value> {
    l.tabs_json(&[])
        .into_iter()
        .filter(|t| t["agent"] == "setup")
        .collect()
}

#[test]
fn a_setup_runs_before_its_agent_and_its_tab_goes_on_success_stays_on_failure() {
    use std::time::Duration;
    let l = Local::started();
    l.write_config(&format!("{CONFIG}{READER}"));
    let r = repo(&l);
    commit_setup(&r, "sleep 1; echo made > made.txt");

    // Approved: the setup runs, then the agent, whose first `cat` finds
    // the file; the setup's tab is gone.
    let a = l.ok(&["agent", "reader"]);
    l.wait_screen(
        &a,
        "the agent starts once the worktree setup (sleep 1; echo made > made.txt)",
    );
    let asked = pending(&l);
    l.ok(&["approvals", "approve", asked[0]["id"].as_str().unwrap()]);
    let screen = l.wait_screen(&a, "AGENT-READ-OK");
    assert!(screen.contains("made\n"), "{screen}");
    crate::support::wait_until("the setup's tab to go", Duration::from_secs(10), || {
        setup_tabs(&l).is_empty()
    });
    assert!(tab(&l.tabs_json(&[]), &a)["warning"].is_null());

    // Approved before: the next agent waits for it too, unasked.
    let b = l.ok(&["agent", "reader"]);
    l.wait_screen(&b, "AGENT-READ-OK");
    assert!(pending(&l).is_empty());
    crate::support::wait_until("the setup's tab to go", Duration::from_secs(10), || {
        setup_tabs(&l).is_empty()
    });

    // A failing setup: its tab stays with its output and exit code; the
    // agent starts, warned, naming that tab.
    commit_setup(&r, "echo failing-setup-output; exit 3");
    let c = l.ok(&["agent", "reader"]);
    let asked = pending(&l);
    l.ok(&["approvals", "approve", asked[0]["id"].as_str().unwrap()]);
    l.wait_screen(&c, "made.txt");
    let mut failed = Vec::new();
    crate::support::wait_until("the failed setup's tab", Duration::from_secs(10), || {
        failed = setup_tabs(&l);
        failed.len() == 1 && failed[0]["exit_code"] == 3
    });
    let setup_id = failed[0]["id"].as_str().unwrap().to_string();
    assert_eq!(failed[0]["parent"], c.as_str());
    l.wait_screen(&setup_id, "failing-setup-output");
    let warning = tab(&l.tabs_json(&[]), &c)["warning"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        warning.contains("failed (exit 3)") && warning.contains(&setup_id),
        "{warning:?}"
    );
    assert!(!l.wait_screen(&c, "made.txt").contains("AGENT-READ-OK"));

    // A refused setup: the agent starts without it, warned.
    commit_setup(&r, "echo other > made.txt");
    let d = l.ok(&["agent", "reader"]);
    l.wait_screen(&d, "the agent starts once");
    let asked = pending(&l);
    l.ok(&["approvals", "deny", asked[0]["id"].as_str().unwrap()]);
    l.wait_screen(&d, "made.txt");
    let warning = tab(&l.tabs_json(&[]), &d)["warning"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(warning.contains("was not run"), "{warning:?}");
    assert_eq!(setup_tabs(&l).len(), 1, "only the failed setup's tab");
}

/// A `.nerdr.toml` committed as a link (to a pipe nothing writes, to
/// `/dev/zero`) is not followed: the launch names it at once, instead of
/// hanging on the pipe or filling the core's memory.
#[test]
fn a_setup_file_that_is_a_link_is_refused_not_followed() {
    let l = Local::started();
    l.write_config(CONFIG);
    let r = repo(&l);
    let fifo = l.work().parent().unwrap().join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    std::os::unix::fs::symlink(&fifo, r.join(".nerdr.toml")).unwrap();
    git(&r, &["add", "."]);
    git(&r, &["commit", "-q", "-m", "link"]);
    let started = std::time::Instant::now();
    let err = l.fails(&["agent", "sh"]);
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert!(
        err.contains(".nerdr.toml") && err.contains("not a regular file"),
        "{err}"
    );
    assert!(l.tabs_json(&[]).is_empty());
    assert_eq!(git(&r, &["worktree", "list"]).lines().count(), 1);
    // The core still answers.
    l.ok(&["agent", "sh", "--no-worktree"]);
}
