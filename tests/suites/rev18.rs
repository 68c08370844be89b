//! Adversarial review of issue 18 ("bringing work home"): attacks on
//! `nerdr merge`, `nerdr clean` and `nerdr diff` with the real binary and
//! real git. Each test asserts the safe behaviour the review asked for
//! and the fixes gave.

use std::path::{Path, PathBuf};

use crate::support::repo_session::{s, RepoSession, SH};

/// An agent in nerdr's own sandbox (bubblewrap, private refs and objects).
const JAIL: &str = "[agents.jail]\ncommand = [\"nerdr\", \"sandbox\", \"--\", \"bash\"]\n\
    args = [\"--norc\", \"--noprofile\"]\nsandboxed = true\nprogram = \"bash\"\n";

#[test]
fn rev18_a_failed_merge_keeps_the_persons_ignored_files() {
    let Some(st) = RepoSession::on_main(SH) else {
        return;
    };
    let (t, wt) = st.tab_and_worktree("sh");
    st.commit(&wt, "secret.log", "from the agent\n", "agent: a log");
    st.commit(&wt, "tracked.txt", "one\nagent\nthree\n", "agent: two");
    st.commit(&st.repo, "tracked.txt", "one\nperson\nthree\n", "person");
    std::fs::write(st.repo.join("secret.log"), "the person's own\n").unwrap();
    let (ok, _out, err) = st.nerdr(&["merge", &t]);
    assert!(!ok && err.contains("secret.log"), "{err}");
    let now = std::fs::read_to_string(st.repo.join("secret.log"));
    assert_eq!(
        now.as_ref().map(String::as_str).ok(),
        Some("the person's own\n"),
        "the person's ignored secret.log after a refused merge ({now:?}); nerdr said: {err}"
    );
}

#[test]
fn rev18_a_merge_does_not_overwrite_the_persons_ignored_files() {
    let Some(st) = RepoSession::on_main(SH) else {
        return;
    };
    let (t, wt) = st.tab_and_worktree("sh");
    st.commit(&wt, "secret.log", "from the agent\n", "agent: a log");
    std::fs::write(st.repo.join("secret.log"), "the person's own\n").unwrap();
    let (ok, out, err) = st.nerdr(&["merge", &t]);
    eprintln!("merge: ok={ok} {out} {err}");
    let now = std::fs::read_to_string(st.repo.join("secret.log")).unwrap_or_default();
    assert_eq!(
        now, "the person's own\n",
        "merge overwrote an ignored file without a word: {out}{err}"
    );
}

/// `clean --merged` deletes "their nerdr/* branches": not a branch of the
/// person's that a closed tab's worktree happens to have checked out.
#[test]
fn rev18_clean_merged_deletes_only_nerdr_branches() {
    let Some(st) = RepoSession::on_main(SH) else {
        return;
    };
    let (t, wt) = st.tab_and_worktree("sh");
    st.git(&wt, &["switch", "-q", "-c", "feat"]);
    st.commit(&wt, "f.txt", "f\n", "feat: the person's commit");
    let feat = st.tip("feat");
    // Squash-merged into main by hand: its content is there, its commit not.
    st.git(&st.repo, &["merge", "-q", "--squash", "feat"]);
    st.git(&st.repo, &["commit", "-q", "-m", "squash feat"]);
    st.ok(&["close", &t]);
    let out = st.ok(&["clean", "--merged"]);
    eprintln!("clean said: {out}");
    let (exists, said) = st.git_out(&st.repo, &["rev-parse", "--verify", "refs/heads/feat"]);
    let (reachable, _) = st.git_out(
        &st.repo,
        &["merge-base", "--is-ancestor", &feat, "refs/heads/main"],
    );
    assert!(
        exists,
        "clean --merged deleted the person's branch feat (its commit {feat} reachable from main: \
         {reachable}): {said}\n{out}"
    );
}

/// `merge --rebase` while a rebase the person paused is in progress in the
/// tab's worktree: nerdr's `git rebase` fails ("already a rebase-merge
/// directory") and nerdr then runs `git rebase --abort`, throwing away the
/// person's rebase (its amended commit).
#[test]
fn rev18_merge_rebase_keeps_a_rebase_in_progress() {
    let Some(st) = RepoSession::on_main(SH) else {
        return;
    };
    let (t, wt) = st.tab_and_worktree("sh");
    st.commit(&wt, "a.txt", "a\n", "a1");
    st.commit(&wt, "b.txt", "b\n", "b1");
    st.commit(&st.repo, "main.txt", "m\n", "main moves on");
    let (_, said) = st.git_out(
        &wt,
        &[
            "-c",
            "sequence.editor=sed -i 1s/^pick/edit/",
            "rebase",
            "-i",
            "HEAD~2",
        ],
    );
    eprintln!("person's rebase: {said}");
    std::fs::write(wt.join("a.txt"), "a, amended by the person\n").unwrap();
    st.git(&wt, &["commit", "-q", "--amend", "-a", "-m", "a1 amended"]);
    let amended = st.git(&wt, &["rev-parse", "HEAD"]);
    let (ok, out, err) = st.nerdr(&["merge", "--rebase", &t]);
    eprintln!("merge --rebase: ok={ok} {out} {err}");
    let head = st.git(&wt, &["rev-parse", "HEAD"]);
    let in_progress = PathBuf::from(st.git(
        &wt,
        &[
            "rev-parse",
            "--path-format=absolute",
            "--git-path",
            "rebase-merge",
        ],
    ))
    .exists();
    assert!(
        in_progress && head == amended,
        "the person's paused rebase was aborted (HEAD {head}, amended {amended}, in progress \
         {in_progress}): {err}"
    );
}

/// `merge --rebase` rebases whatever branch the tab's worktree has checked
/// out: a branch of the person's (or one a sandboxed agent switched the
/// worktree to) is rewritten, not the tab's branch.
#[test]
fn rev18_merge_rebase_rewrites_only_the_tabs_branch() {
    let Some(st) = RepoSession::on_main(SH) else {
        return;
    };
    let (t, wt) = st.tab_and_worktree("sh");
    st.commit(&wt, "a.txt", "a\n", "tab's work");
    st.git(&wt, &["switch", "-q", "-c", "feat"]);
    st.commit(&wt, "f.txt", "f\n", "the person's feat");
    let feat = st.tip("feat");
    st.commit(&st.repo, "main.txt", "m\n", "main moves on");
    let (ok, out, err) = st.nerdr(&["merge", "--rebase", &t]);
    eprintln!("merge --rebase: ok={ok} {out} {err}");
    assert_eq!(
        st.tip("feat"),
        feat,
        "merge --rebase {t} rewrote branch feat: {out}{err}"
    );
}

/// A FIFO where the worktree's index is: `nerdr diff` must end (git's own
/// commands have a time limit; nerdr's copy of the index has none).
#[test]
fn rev18_diff_ends_with_a_fifo_for_an_index() {
    let Some(st) = RepoSession::on_main(SH) else {
        return;
    };
    let (t, wt) = st.tab_and_worktree("sh");
    let index = st.git(
        &wt,
        &["rev-parse", "--path-format=absolute", "--git-path", "index"],
    );
    std::fs::remove_file(&index).unwrap();
    st.env.run(&["mkfifo", &index]);
    let started = std::time::Instant::now();
    let out = st
        .env
        .output(&["timeout", "40", s(&st.env.nerdr()), "diff", &t]);
    let took = started.elapsed();
    let _ = std::fs::remove_file(&index);
    assert!(
        took < std::time::Duration::from_secs(35),
        "nerdr diff hung for {took:?} on a FIFO index (status {:?}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// What a program in nerdr's real sandbox can do to the files `merge`,
/// `clean` and `diff` trust: the record beside its worktree (must not be
/// writable), its admin dir's `index` (a FIFO: hangs the core's diff) and
/// `HEAD` (names another branch: `clean --merged` and `merge --rebase`
/// then act on that branch).
#[test]
fn rev18_what_a_sandboxed_agent_can_plant() {
    if !Path::new("/usr/bin/bwrap").exists() {
        crate::support::sysenv::skip("bubblewrap is not installed");
        return;
    }
    let Some(st) = RepoSession::on_main(&format!("{SH}{JAIL}")) else {
        return;
    };
    st.git(&st.repo, &["branch", "feat"]);
    let (t, wt) = st.tab_and_worktree("jail");
    let record = wt.with_file_name(format!("{t}.base.json"));
    assert!(record.is_file(), "no record beside {}", wt.display());
    let before = std::fs::read_to_string(&record).unwrap();
    let screen = st.in_tab(
        &t,
        &format!(
            "echo '{{\"commit\":\"--output=/tmp/x\",\"branch\":\"nerdr/{t}\"}}' > '{}'",
            record.display()
        ),
        "rec",
        20,
    );
    eprintln!("record write: {screen}");
    assert_eq!(
        std::fs::read_to_string(&record).unwrap(),
        before,
        "a sandboxed agent rewrote {}",
        record.display()
    );
    // HEAD and index of its admin dir.
    let screen = st.in_tab(
        &t,
        "A=$(git rev-parse --path-format=absolute --git-dir); echo admin=$A; \
         echo 'ref: refs/heads/feat' > $A/HEAD && git status --short --branch | head -3",
        "head",
        20,
    );
    eprintln!("HEAD write: {screen}");
    let screen = st.in_tab(
        &t,
        "A=$(git rev-parse --path-format=absolute --git-dir); rm -f $A/index && mkfifo $A/index \
         && ls -l $A/index",
        "fifo",
        20,
    );
    eprintln!("index FIFO: {screen}");
    let screen = st.in_tab(
        &t,
        &format!("timeout 30 \"$NERDR_BIN\" diff --stat {t}"),
        "diff",
        60,
    );
    eprintln!("own diff: {screen}");
    let listed = st.git(&st.repo, &["worktree", "list", "--porcelain"]);
    eprintln!("host worktree list: {listed}");
    assert!(
        !screen.contains("rc-diff-124"),
        "a sandboxed agent's own `nerdr diff` hung on the FIFO it planted: {screen}"
    );
}

/// Where a sandboxed agent worked: the tab's branch brings a
/// `.gitattributes` assigning the person's own (global) filter, textconv
/// and merge driver; `nerdr diff` and `nerdr merge` must run none of them
/// on the agent's content.
#[test]
fn rev18_incoming_attributes_run_no_driver_where_an_agent_was_sandboxed() {
    if !Path::new("/usr/bin/bwrap").exists() {
        crate::support::sysenv::skip("bubblewrap is not installed");
        return;
    }
    let Some(st) = RepoSession::on_main(&format!("{SH}{JAIL}")) else {
        return;
    };
    let ran = st.env.home().join("canary.ran");
    let canary = st.env.write_user_file(
        "canary.sh",
        format!("#!/bin/sh\necho \"$0 $*\" >> '{}'\ncat\n", ran.display()),
    );
    st.env.run(&["chmod", "755", s(&canary)]);
    let merge_ran = st.env.home().join("merge.ran");
    let driver = st.env.write_user_file(
        "driver.sh",
        format!("#!/bin/sh\ntouch '{}'\nexit 0\n", merge_ran.display()),
    );
    st.env.run(&["chmod", "755", s(&driver)]);
    st.env.write_user_file(
        ".gitconfig",
        format!(
            "[user]\n\tname = t\n\temail = t@e\n[init]\n\tdefaultBranch = main\n\
             [filter \"canary\"]\n\tclean = {c} clean\n\tsmudge = {c} smudge\n\
             [diff \"canary\"]\n\ttextconv = {c}\n\
             [merge \"canary\"]\n\tdriver = {d} %O %A %B\n",
            c = s(&canary),
            d = s(&driver)
        ),
    );
    let (t, wt) = st.tab_and_worktree("jail");
    // The host's git here, as the person: attributes and a conflicting change.
    std::fs::write(
        wt.join(".gitattributes"),
        "* filter=canary diff=canary merge=canary\n",
    )
    .unwrap();
    std::fs::write(wt.join("x.dat"), "agent data\n").unwrap();
    std::fs::write(wt.join("tracked.txt"), "one\nagent\nthree\n").unwrap();
    st.env.run(&[
        "git",
        "-C",
        s(&wt),
        "-c",
        "filter.canary.clean=cat",
        "-c",
        "filter.canary.smudge=cat",
        "add",
        "-A",
    ]);
    st.env.run(&[
        "git",
        "-C",
        s(&wt),
        "-c",
        "filter.canary.clean=cat",
        "commit",
        "-q",
        "-m",
        "agent",
    ]);
    std::fs::write(wt.join("y.dat"), "uncommitted\n").unwrap();
    let _ = std::fs::remove_file(&ran);
    let (ok, out, err) = st.nerdr(&["diff", &t]);
    eprintln!("diff: ok={ok} {err}\n{out}");
    let diff_ran = std::fs::read_to_string(&ran).unwrap_or_default();
    std::fs::write(st.repo.join("tracked.txt"), "one\nperson\nthree\n").unwrap();
    st.git(&st.repo, &["commit", "-q", "-a", "-m", "person"]);
    let (ok, out, err) = st.nerdr(&["merge", &t]);
    eprintln!("merge: ok={ok} {out} {err}");
    let after = std::fs::read_to_string(&ran).unwrap_or_default();
    let (_, status) = st.git_out(&st.repo, &["status", "--porcelain"]);
    let merging = st.repo.join(".git/MERGE_HEAD").exists();
    eprintln!("main checkout after the merge: MERGE_HEAD {merging}, status:\n{status}");
    assert!(
        !merging && status.is_empty(),
        "a failed merge left the main checkout mid-merge: {status}\n{err}"
    );
    assert!(
        diff_ran.is_empty() && after.is_empty() && !merge_ran.exists(),
        "a driver ran on the agent's content: diff {diff_ran:?}, merge {after:?}, merge driver \
         ran: {}",
        merge_ran.exists()
    );
}

/// End to end: a program in nerdr's sandbox switches its worktree to the
/// person's branch `feat` (squash-merged into main, kept); the person
/// closes the tab and runs `nerdr clean --merged`, which promises to
/// delete nerdr/* branches only.
#[test]
fn rev18_a_sandboxed_agent_cannot_make_clean_delete_the_persons_branch() {
    if !Path::new("/usr/bin/bwrap").exists() {
        crate::support::sysenv::skip("bubblewrap is not installed");
        return;
    }
    let Some(st) = RepoSession::on_main(&format!("{SH}{JAIL}")) else {
        return;
    };
    st.git(&st.repo, &["switch", "-q", "-c", "feat"]);
    st.commit(&st.repo, "f.txt", "f\n", "the person's feature");
    let feat = st.tip("feat");
    st.git(&st.repo, &["switch", "-q", "main"]);
    st.git(&st.repo, &["merge", "-q", "--squash", "feat"]);
    st.git(&st.repo, &["commit", "-q", "-m", "squash feat"]);
    let t = st.tab("jail");
    let screen = st.in_tab(
        &t,
        "git switch -q feat && git status --short --branch",
        "sw",
        20,
    );
    eprintln!("inside: {screen}");
    st.ok(&["close", &t]);
    let out = st.ok(&["clean", "--merged"]);
    eprintln!("clean said: {out}");
    let (exists, _) = st.git_out(&st.repo, &["rev-parse", "--verify", "refs/heads/feat"]);
    let (reachable, _) = st.git_out(&st.repo, &["branch", "-a", "--contains", &feat]);
    assert!(
        exists,
        "clean --merged deleted the person's branch feat at the sandboxed agent's say-so (commit \
         {feat} on a branch still: {reachable}): {out}"
    );
}

/// Bad input: each command answers with an error that says what is
/// wrong, never a panic, and the core stays up.
#[test]
fn rev18_bad_input_gives_clear_errors() {
    let Some(st) = RepoSession::on_main(SH) else {
        return;
    };
    let mut said = Vec::new();
    let mut run = |what: &str, args: &[&str]| {
        let (ok, out, err) = st.nerdr(args);
        said.push(format!(
            "{what}: ok={ok} out={} err={}",
            out.trim(),
            err.trim()
        ));
        assert!(!err.contains("panicked"), "{what}: {err}");
    };
    run("unknown tab diff", &["diff", "nosuchtab"]);
    run("unknown tab merge", &["merge", "nosuchtab"]);
    let plain = st.ok(&["agent", "sh", "--no-worktree"]).trim().to_string();
    run("no worktree merge", &["merge", &plain]);
    let (t, wt) = st.tab_and_worktree("sh");
    st.commit(&wt, "a.txt", "a\n", "agent");
    st.env.run(&["rm", "-rf", s(&wt)]);
    run("worktree gone diff", &["diff", &t]);
    run("worktree gone merge --rebase", &["merge", "--rebase", &t]);
    run("worktree gone worktrees", &["worktrees"]);
    run("worktree gone clean dry", &["clean", "--dry-run"]);
    run(
        "into a missing branch",
        &["merge", "--into", "--upload-pack=x", &t],
    );
    run(
        "into a branch with a newline",
        &["merge", "--into", "a\nb", &t],
    );
    let u = st.tab("sh");
    st.env.run(&["rm", "-rf", s(&st.repo)]);
    run("repo gone diff", &["diff", &u]);
    run("repo gone merge", &["merge", &u]);
    run("repo gone worktrees", &["worktrees"]);
    run("repo gone clean", &["clean", "--merged"]);
    run("still up", &["tabs"]);
    eprintln!("{}", said.join("\n"));
    assert!(said.last().unwrap().contains("ok=true"), "{said:#?}");
}

/// A sandboxed agent plants a FIFO as its worktree's index and asks for
/// its own diff many times: each request holds one of the core's blocking
/// threads (and a hook connection slot) for ever. The person's commands
/// that need git must still answer.
#[test]
fn rev18_a_sandboxed_agent_cannot_wedge_the_core_with_diffs() {
    if !Path::new("/usr/bin/bwrap").exists() {
        crate::support::sysenv::skip("bubblewrap is not installed");
        return;
    }
    let Some(st) = RepoSession::on_main(&format!("{SH}{JAIL}")) else {
        return;
    };
    let t = st.tab("jail");
    let pid = st.env.unit_prop("nerdr.service", "MainPID");
    let threads = |pid: &str| {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .unwrap_or_default()
            .lines()
            .find(|l| l.starts_with("Threads:"))
            .unwrap_or("")
            .to_string()
    };
    eprintln!("core {pid} before: {}", threads(&pid));
    let screen = st.in_tab(
        &t,
        &format!(
            "A=$(git rev-parse --path-format=absolute --git-dir); rm -f $A/index && mkfifo \
             $A/index && for r in 1 2 3 4 5 6; do for i in $(seq 100); do timeout 90 \
             \"$NERDR_BIN\" diff --stat {t} >/dev/null 2>&1 & done; wait; done"
        ),
        "flood",
        900,
    );
    eprintln!("flood: {}", &screen[screen.len().saturating_sub(300)..]);
    let count = |l: &str| {
        l.split_whitespace()
            .nth(1)
            .and_then(|n| n.parse::<usize>().ok())
    };
    // Idle blocking threads linger a while (tokio keeps them ten seconds)
    // and a loaded machine ends the diffs later: what must not happen is
    // a thread held for ever, so wait a bounded time for them to go.
    let gone = crate::support::poll(std::time::Duration::from_secs(45), || {
        count(&threads(&pid)).unwrap_or(0) < 40
    });
    let after = threads(&pid);
    eprintln!("core {pid} after: {after}");
    assert!(
        gone,
        "the core holds {after} 45 s after the diffs ended: one blocking thread per diff, for ever"
    );
    let started = std::time::Instant::now();
    let out = st.env.output(&[
        "timeout",
        "60",
        s(&st.env.nerdr()),
        "agent",
        "sh",
        "--folder",
        s(&st.repo),
    ]);
    let took = started.elapsed();
    eprintln!(
        "person's `nerdr agent sh` after the flood: {:?} in {took:?}: {}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && took < std::time::Duration::from_secs(30),
        "the core no longer starts tabs after a sandboxed agent's diff flood ({took:?})"
    );
}

/// Context for the `diff` privilege row: can a program in nerdr's
/// sandbox read another tab's worktree directly? It could while the
/// sandbox bound `/` read-only and nothing over nerdr's worktrees folder;
/// now that folder is empty inside but for the tab's own worktree.
#[test]
fn rev18_a_sandboxed_agent_reading_another_tabs_worktree() {
    if !Path::new("/usr/bin/bwrap").exists() {
        crate::support::sysenv::skip("bubblewrap is not installed");
        return;
    }
    let Some(st) = RepoSession::on_main(&format!("{SH}{JAIL}")) else {
        return;
    };
    let (other, wo) = st.tab_and_worktree("sh");
    std::fs::write(wo.join("other-secret.txt"), "other tab's draft\n").unwrap();
    let t = st.tab("jail");
    let screen = st.in_tab(
        &t,
        &format!("cat '{}'", wo.join("other-secret.txt").display()),
        "peek",
        20,
    );
    eprintln!("peek: {screen}");
    let screen2 = st.in_tab(&t, &format!("\"$NERDR_BIN\" diff {other}"), "d", 20);
    eprintln!(
        "diff of other: {}",
        &screen2[screen2.len().saturating_sub(200)..]
    );
    assert!(
        !screen.contains("other tab's draft") && screen.contains("rc-peek-1"),
        "a sandboxed agent reads another tab's uncommitted work directly: {screen}"
    );
}
