//! Bringing an agent's work home (issue 18): `nerdr diff` and `nerdr
//! worktrees` give the exact patch and counts of a tab's work, `nerdr
//! merge` merges it in the main checkout or leaves the checkout exactly as
//! it was, through the git guard where a sandboxed agent worked, and never
//! for a sandboxed caller; `nerdr clean` removes only merged work. Real
//! binary, real git, as a non-root user under the private `systemd --user`.

use crate::support::repo_session::{boxed_shell, s, RepoSession, SH};

/// A refused merge left the checkout exactly as it was.
fn unchanged(st: &RepoSession, head: &str, err: &str) {
    assert_eq!(st.head(), head, "HEAD moved: {err}");
    assert_eq!(st.status(), "", "the checkout changed: {err}");
    assert!(!st.repo.join(".git/MERGE_HEAD").exists(), "{err}");
}

#[test]
fn diff_and_worktrees_give_the_exact_patch_and_counts() {
    let Some(st) = RepoSession::on_main(SH) else {
        return;
    };
    let base = st.head();
    let (tab, wt) = st.tab_and_worktree("sh");
    // Two commits on the tab's branch, the main checkout one ahead...
    st.commit(&wt, "tracked.txt", "one\nTWO\nthree\n", "agent: two");
    st.commit(&wt, "b.txt", "b\n", "agent: b");
    st.commit(&st.repo, "main.txt", "m\n", "main moves on");
    // ...and uncommitted work: a change, a new file, an ignored one.
    std::fs::write(wt.join("b.txt"), "b\nmore\n").unwrap();
    std::fs::write(wt.join("new.txt"), "new\n").unwrap();
    std::fs::write(wt.join("build.log"), "junk\n").unwrap();

    let row = st.worktree_row(&wt);
    assert_eq!(row["tab"], tab.as_str(), "{row:#}");
    assert_eq!(row["branch"], format!("nerdr/{tab}"), "{row:#}");
    assert_eq!(row["base"], base.as_str(), "{row:#}");
    assert_eq!(row["base_branch"], "main", "{row:#}");
    assert_eq!(row["base_recorded"], true, "{row:#}");
    assert_eq!(row["ahead"], 2, "{row:#}");
    assert_eq!(row["behind"], 1, "{row:#}");
    assert_eq!(
        row["dirty"], 2,
        "modified b.txt, untracked new.txt: {row:#}"
    );
    assert_eq!(row["merged"], false, "{row:#}");
    let table = st.ok(&["worktrees"]);
    assert!(
        table.contains(&tab) && table.contains("dirty (2)"),
        "{table}"
    );

    let patch = st.ok(&["diff", &tab]);
    let stat = st.ok(&["diff", "--stat", &tab]);
    assert!(!patch.contains('\x1b'), "colour when piped: {patch}");
    assert!(patch.contains("+new"), "{patch}");
    assert!(
        !patch.contains("main.txt"),
        "the main checkout's commit: {patch}"
    );
    assert!(!patch.contains("build.log"), "an ignored file: {patch}");
    // git's own: the untracked file marked intent-to-add, against the base.
    st.git(&wt, &["add", "-N", "new.txt"]);
    let want = st.git_raw(&wt, &["diff", "--no-color", &base]);
    assert_eq!(patch, want, "nerdr diff differs from git diff");
    let want_stat = st.git_raw(&wt, &["diff", "--no-color", "--stat", &base]);
    assert_eq!(stat, want_stat);
    // The patch applies to the base as git's does.
    assert_eq!(st.ok(&["diff", &tab]), want, "intent-to-add changed it");

    // The base survives a core restart (the tab's record).
    st.env.systemctl(&["restart", "nerdr.service"]);
    let row = st.worktree_row(&wt);
    assert_eq!(row["base"], base.as_str(), "{row:#}");
    assert_eq!(row["base_recorded"], true, "{row:#}");

    // A tab without a worktree says so.
    let plain = st.ok(&["agent", "sh", "--no-worktree"]).trim().to_string();
    let err = st.fails(&["diff", &plain]);
    assert!(err.contains("no worktree of its own"), "{err}");
}

#[test]
fn merge_fast_forwards_squashes_and_refuses_leaving_the_checkout_as_it_was() {
    let Some(st) = RepoSession::on_main(SH) else {
        return;
    };

    // Fast-forward.
    let (a, wa) = st.tab_and_worktree("sh");
    st.commit(&wa, "a.txt", "a\n", "agent a");
    std::fs::write(wa.join("later.txt"), "not yet\n").unwrap();
    let (ok, out, err) = st.nerdr(&["merge", "--ff-only", &a]);
    assert!(ok, "{err}");
    assert!(out.contains("fast-forward"), "{out}");
    assert!(
        err.contains("left out of the merge") && err.contains("later.txt"),
        "{err}"
    );
    assert!(!st.repo.join("later.txt").exists());
    assert_eq!(st.head(), st.tip(&format!("nerdr/{a}")));
    assert_eq!(
        std::fs::read_to_string(st.repo.join("a.txt")).unwrap(),
        "a\n"
    );
    assert_eq!(st.status(), "");

    // Squash, with the main checkout moved on: one new commit on top.
    let (b, wb) = st.tab_and_worktree("sh");
    st.commit(&wb, "b1.txt", "1\n", "agent b one");
    st.commit(&wb, "b2.txt", "2\n", "agent b two");
    st.commit(&st.repo, "main.txt", "m\n", "main moves on");
    let before = st.head();
    let out = st.ok(&["merge", "--squash", &b]);
    assert!(out.contains("squashed"), "{out}");
    assert_eq!(st.git(&st.repo, &["rev-parse", "HEAD^"]), before);
    let parents = st.git(&st.repo, &["log", "-1", "--format=%P"]);
    assert_eq!(parents, before, "a squash has one parent");
    let message = st.git(&st.repo, &["log", "-1", "--format=%B"]);
    assert!(
        message.contains("* agent b one") && message.contains("* agent b two"),
        "{message}"
    );
    assert!(st.repo.join("b1.txt").is_file() && st.repo.join("b2.txt").is_file());
    assert_eq!(st.status(), "");

    // A conflict: refused, and the checkout is exactly as it was, in each way.
    let (c, wc) = st.tab_and_worktree("sh");
    st.commit(&wc, "tracked.txt", "one\nagent\nthree\n", "agent c");
    st.commit(&st.repo, "tracked.txt", "one\nperson\nthree\n", "person");
    let head = st.head();
    for how in [&[][..], &["--squash"][..], &["--rebase"][..]] {
        let err = st.fails(&[&["merge"], how, &[c.as_str()]].concat());
        // nerdr's words: the files and what to do, not git's advice to
        // finish a merge nerdr has undone.
        assert!(err.contains("conflict"), "{how:?}: {err}");
        assert!(err.contains(" in:\n  tracked.txt\n"), "{how:?}: {err}");
        // The advice fits the strategy: a rebase's is to rebase.
        let step = match how.is_empty() || how[0] == "--squash" {
            true => "\"git merge main\"`",
            false => "\"git rebase main\"`",
        };
        assert!(
            err.contains(step) && err.contains("nerdr send"),
            "{how:?}: {err}"
        );
        assert!(
            err.contains(&format!("git -C {} merge nerdr/{c}", s(&st.repo))),
            "{how:?}: {err}"
        );
        for advice in ["then commit", "--continue", "--abort", "CONFLICT ("] {
            assert!(
                !err.contains(advice),
                "{how:?}: git's advice {advice:?}: {err}"
            );
        }
        assert!(err.contains("is as it was"), "{how:?}: {err}");
        unchanged(&st, &head, &err);
        assert_eq!(
            std::fs::read_to_string(st.repo.join("tracked.txt")).unwrap(),
            "one\nperson\nthree\n"
        );
    }
    let tip = st.tip(&format!("nerdr/{c}"));
    let err = st.fails(&["merge", "--rebase", &c]);
    assert!(err.contains("undone"), "{err}");
    assert!(err.contains(" in:\n  tracked.txt\n"), "{err}");
    unchanged(&st, &head, &err);
    assert_eq!(
        st.tip(&format!("nerdr/{c}")),
        tip,
        "the rebase was not undone"
    );
    assert_eq!(st.git(&wc, &["status", "--porcelain"]), "");
    let err = st.fails(&["merge", "--ff-only", &c]);
    assert!(err.contains("no fast-forward"), "{err}");
    unchanged(&st, &head, &err);
    // The tab merged main in (a merge's advice): a rebase would replay
    // the old commits and conflict again, so nerdr says a plain merge
    // works now, not the same advice again.
    let (merged_in, said) = st.git_out(&wc, &["merge", "-q", "main"]);
    assert!(!merged_in, "the tab's merge of main conflicts: {said}");
    st.commit(&wc, "tracked.txt", "one\nboth\nthree\n", "merge main");
    let err = st.fails(&["merge", "--rebase", &c]);
    assert!(
        err.contains("holds main's head already") && err.contains("a plain `nerdr merge "),
        "{err}"
    );
    assert!(!err.contains("\"git rebase main\""), "{err}");
    unchanged(&st, &head, &err);
    st.ok(&["merge", &c]);
    assert_eq!(st.head(), st.tip(&format!("nerdr/{c}")), "a fast-forward");

    // Rebase: the tab's branch onto main, then a fast-forward.
    let (d, wd) = st.tab_and_worktree("sh");
    st.commit(&wd, "d.txt", "d\n", "agent d");
    st.commit(&st.repo, "main2.txt", "m\n", "main moves on again");
    let before = st.head();
    let out = st.ok(&["merge", "--rebase", &d]);
    assert!(out.contains("rebased"), "{out}");
    assert_eq!(st.git(&st.repo, &["rev-parse", "HEAD^"]), before);
    assert_eq!(st.head(), st.tip(&format!("nerdr/{d}")));

    // A dirty main checkout, another branch checked out: refused, saying why.
    let (e, we) = st.tab_and_worktree("sh");
    st.commit(&we, "e.txt", "e\n", "agent e");
    std::fs::write(st.repo.join("tracked.txt"), "mine\n").unwrap();
    let head = st.head();
    let err = st.fails(&["merge", &e]);
    assert!(
        err.contains("modified: tracked.txt") && err.contains("clean checkout"),
        "{err}"
    );
    assert_eq!(st.head(), head);
    st.git(&st.repo, &["checkout", "--", "tracked.txt"]);
    st.git(&st.repo, &["switch", "-q", "-c", "other"]);
    let err = st.fails(&["merge", &e]);
    assert!(err.contains("is on branch other, not main"), "{err}");
    assert!(err.contains("--into other"), "{err}");
    let out = st.ok(&["merge", &e, "--into", "other"]);
    assert!(out.contains("into other"), "{out}");
    assert!(st.repo.join("e.txt").is_file());
}

#[test]
fn a_merge_where_a_sandboxed_agent_worked_goes_through_the_guard() {
    let Some(st) = RepoSession::on_main(&format!("{SH}{}", boxed_shell("boxed", false))) else {
        return;
    };
    // A sandboxed agent's tab gives the repository sandbox history.
    let (boxed, wb) = st.tab_and_worktree("boxed");
    st.commit(&wb, "tracked.txt", "one\nboxed\nthree\n", "boxed work");
    st.commit(&st.repo, "tracked.txt", "one\ntwo\nthree\nfour\n", "person");
    // The sandboxed agent itself: its own diff, yes; a merge or the list
    // of worktrees, no.
    let screen = st.in_tab(
        &boxed,
        &format!("\"$NERDR_BIN\" diff --stat {boxed}"),
        "diff",
        20,
    );
    assert!(screen.contains("rc-diff-0"), "{screen}");
    assert!(screen.contains("tracked.txt"), "{screen}");
    let screen = st.in_tab(
        &boxed,
        &format!("\"$NERDR_BIN\" merge {boxed}"),
        "merge",
        20,
    );
    assert!(screen.contains("rc-merge-1"), "{screen}");
    assert!(screen.contains("cannot merge"), "{screen}");
    let screen = st.in_tab(&boxed, "\"$NERDR_BIN\" worktrees", "list", 20);
    assert!(screen.contains("rc-list-1"), "{screen}");
    assert!(screen.contains("cannot list worktrees"), "{screen}");
    let screen = st.in_tab(&boxed, "\"$NERDR_BIN\" clean --dry-run", "clean", 20);
    assert!(screen.contains("rc-clean-1"), "{screen}");
    assert!(screen.contains("cannot clean up worktrees"), "{screen}");
    // Another tab's diff: an agent outside every sandbox reads as no tab.
    let other = st.tab("sh");
    let screen = st.in_tab(&boxed, &format!("\"$NERDR_BIN\" diff {other}"), "other", 20);
    assert!(screen.contains("rc-other-1"), "{screen}");
    assert!(screen.contains(&format!("no tab `{other}`")), "{screen}");
    // Closed, its worktree is reached by its id or branch: not by a
    // sandboxed agent, which may not list worktrees either.
    st.ok(&["close", &other]);
    for (i, handle) in [other.clone(), format!("nerdr/{other}")].iter().enumerate() {
        for (verb, said) in [("diff", "may see only"), ("merge", "cannot merge")] {
            let marker = format!("closed{verb}{i}");
            let screen = st.in_tab(
                &boxed,
                &format!("\"$NERDR_BIN\" {verb} {handle}"),
                &marker,
                20,
            );
            assert!(screen.contains(&format!("rc-{marker}-1")), "{screen}");
            assert!(screen.contains(said), "{verb} {handle}: {screen}");
        }
    }
    assert!(st.ok(&["diff", &other]).is_empty(), "the person reaches it");
    let head = st.head();
    // A planted merge driver that the three-way merge of tracked.txt
    // would run.
    let marker = st.env.home().join("driver.ran");
    let canary = st.env.write_user_file(
        "canary.sh",
        format!("#!/bin/sh\ntouch '{}'\nexit 0\n", marker.display()),
    );
    st.env.run(&["chmod", "755", s(&canary)]);
    st.git(
        &st.repo,
        &[
            "config",
            "merge.evil.driver",
            &format!("{} %O %A %B", s(&canary)),
        ],
    );
    std::fs::write(st.repo.join(".git/info/attributes"), "* merge=evil\n").unwrap();
    let err = st.fails(&["merge", &boxed]);
    assert!(
        err.contains("refuses") && err.contains("merge.evil.driver"),
        "{err}"
    );
    unchanged(&st, &head, &err);
    assert!(!marker.exists(), "the planted merge driver ran");

    // The canary is live: in a repository no sandboxed agent worked in,
    // the same merge runs the same driver (the person's own config).
    let plain = st.env.home().join("work/plain");
    st.env
        .write_user_file("work/plain/tracked.txt", "one\ntwo\nthree\n");
    st.git(&plain, &["init", "-q"]);
    st.git(&plain, &["add", "."]);
    st.git(&plain, &["commit", "-q", "-m", "first"]);
    let open = st
        .ok(&["agent", "sh", "--folder", s(&plain)])
        .trim()
        .to_string();
    let wo = st.worktree_of(&open);
    st.commit(&wo, "tracked.txt", "one\nopen\nthree\n", "open work");
    st.commit(&plain, "tracked.txt", "one\ntwo\nthree\nfour\n", "person");
    st.git(
        &plain,
        &[
            "config",
            "merge.evil.driver",
            &format!("{} %O %A %B", s(&canary)),
        ],
    );
    std::fs::write(plain.join(".git/info/attributes"), "* merge=evil\n").unwrap();
    st.ok(&["merge", &open]);
    assert!(
        marker.exists(),
        "the canary never runs, so its absence proves nothing"
    );
}

#[test]
fn clean_removes_only_merged_work() {
    let Some(st) = RepoSession::on_main(SH) else {
        return;
    };
    // Merged, then closed: goes, and with --merged its branch too.
    let (m, wm) = st.tab_and_worktree("sh");
    st.commit(&wm, "m.txt", "m\n", "agent m");
    st.ok(&["merge", &m]);
    st.ok(&["close", &m]);
    // Unmerged, closed: stays.
    let (u, wu) = st.tab_and_worktree("sh");
    st.commit(&wu, "u.txt", "u\n", "agent u");
    let base_u = st.head();
    st.ok(&["close", &u]);
    // Its tab is gone: the record beside the worktree keeps its base; a
    // worktree without one (made before bases were recorded) gets `git
    // merge-base`'s, and says so.
    let row = st.worktree_row(&wu);
    assert_eq!(row["tab"], serde_json::Value::Null, "{row:#}");
    assert_eq!(row["base"], base_u.as_str(), "{row:#}");
    assert_eq!(row["base_recorded"], true, "{row:#}");
    let record = wu.with_file_name(format!("{u}.base.json"));
    std::fs::remove_file(&record).unwrap();
    let row = st.worktree_row(&wu);
    assert_eq!(row["base"], base_u.as_str(), "{row:#}");
    assert_eq!(row["base_branch"], "main", "{row:#}");
    assert_eq!(row["base_recorded"], false, "{row:#}");
    assert!(row["notes"].to_string().contains("merge-base"), "{row:#}");
    let table = st.ok(&["worktrees"]);
    assert!(
        table.contains("main@") && table.contains("* a base nerdr did not record"),
        "{table}"
    );
    // No commits but uncommitted work, closed: stays.
    let (d, wd) = st.tab_and_worktree("sh");
    std::fs::write(wd.join("draft.txt"), "draft\n").unwrap();
    st.ok(&["close", &d]);
    // Running: stays.
    let (r, wr) = st.tab_and_worktree("sh");

    let out = st.ok(&["clean", "--merged", "--dry-run"]);
    assert!(
        out.contains(&format!(
            "would remove {} (closed tab {m}) and branch nerdr/{m}",
            s(&wm)
        )),
        "{out}"
    );
    assert!(wm.exists(), "a dry run removed it");

    let out = st.ok(&["clean", "--merged"]);
    assert!(
        out.contains(&format!(
            "removed {} (closed tab {m}) and branch nerdr/{m}",
            s(&wm)
        )),
        "{out}"
    );
    assert!(!wm.exists(), "{out}");
    let branches = st.git(&st.repo, &["branch", "--list", "nerdr/*"]);
    assert!(!branches.contains(&m), "{branches}");
    assert!(wu.exists() && branches.contains(&u), "{out}");
    assert!(out.contains("1 commit of"), "{out}");
    assert!(out.contains(&format!("`nerdr merge nerdr/{u}`")), "{out}");
    assert!(wd.join("draft.txt").is_file(), "{out}");
    assert!(out.contains("work no commit has"), "{out}");
    assert!(
        wr.exists() && out.contains(&format!("tab {r} is running")),
        "{out}"
    );

    // Squash-merged, closed: its content is in main, so it goes; without
    // --merged its branch stays.
    let (q, wq) = st.tab_and_worktree("sh");
    st.commit(&wq, "q.txt", "q\n", "agent q");
    st.commit(&st.repo, "main.txt", "m\n", "main moves on");
    st.ok(&["merge", "--squash", &q]);
    st.ok(&["close", &q]);
    let out = st.ok(&["clean"]);
    assert!(
        out.contains(&format!("removed {} (closed tab {q}):", s(&wq))),
        "{out}"
    );
    assert!(!wq.exists());
    assert_eq!(st.tip(&format!("nerdr/{q}")).len(), 40, "its branch went");
    assert!(wu.exists() && wd.exists() && wr.exists(), "{out}");
}

/// The name `nerdr tabs` gives tab `tab`.
fn name_of(st: &RepoSession, tab: &str) -> String {
    let tabs = st.tabs(&["--all"]);
    let t = tabs.iter().find(|t| t["id"] == tab).expect("tab listed");
    t["name"].as_str().expect("a name").to_string()
}

/// A new user's findings (issue 18): a rebase moves the tab's base, a
/// branch the target took in moves it too, notes keep their lines, a
/// squashed branch is nothing new, and an untracked file in the main
/// checkout is in the way only where the merge writes.
#[test]
fn a_rebase_moves_the_base_and_a_squashed_branch_is_nothing_new() {
    let Some(st) = RepoSession::on_main(SH) else {
        return;
    };
    let (t, wt) = st.tab_and_worktree("sh");
    st.commit(&wt, "five.txt", "5\n", "agent: five");
    st.commit(&st.repo, "main.txt", "m\n", "main moves on");
    let main_tip = st.head();
    // An untracked file in the main checkout the merge does not touch.
    std::fs::write(st.repo.join("other.txt"), "mine\n").unwrap();
    let (ok, out, err) = st.nerdr(&["merge", "--rebase", &t]);
    assert!(ok && out.contains("rebased"), "{out}{err}");
    assert_eq!(st.git(&st.repo, &["rev-parse", "HEAD~1"]), main_tip);
    assert_eq!(
        std::fs::read_to_string(st.repo.join("other.txt")).unwrap(),
        "mine\n"
    );
    // The base is the commit the branch sits on now, everywhere.
    let diff = st.ok(&["diff", "--stat", &t]);
    assert!(
        !diff.contains("main.txt"),
        "main's commit as the agent's: {diff}"
    );
    assert!(diff.contains("five.txt"), "{diff}");
    let row = st.worktree_row(&wt);
    assert_eq!(row["base"], main_tip.as_str(), "{row:#}");
    let record: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(wt.with_file_name(format!("{t}.base.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(record["commit"], main_tip.as_str(), "{record:#}");
    st.env.systemctl(&["restart", "nerdr.service"]);
    assert_eq!(
        st.worktree_row(&wt)["base"],
        main_tip.as_str(),
        "after a restart"
    );

    // The agent merges main into its branch itself: main's commits are not
    // its work either.
    st.commit(&st.repo, "main2.txt", "m2\n", "main moves on again");
    let main2 = st.head();
    st.git(&wt, &["merge", "-q", "--no-edit", "main"]);
    st.commit(&wt, "six.txt", "6\n", "agent: six");
    let patch = st.ok(&["diff", &t]);
    assert!(!patch.contains("main2.txt"), "{patch}");
    assert!(patch.contains("six.txt"), "{patch}");
    assert_eq!(st.worktree_row(&wt)["base"], main2.as_str());

    // A note's lines stay lines (stderr).
    std::fs::write(wt.join("scratch.txt"), "later\n").unwrap();
    let (ok, _, err) = st.nerdr(&["merge", &t]);
    assert!(ok, "{err}");
    assert!(
        err.contains("left out of the merge:\n  untracked: scratch.txt"),
        "{err}"
    );
    assert!(!err.contains("\\n"), "a literal \\n: {err}");

    // Squashed once: a second squash, or a plain merge, is nothing new.
    let (q, wq) = st.tab_and_worktree("sh");
    st.commit(&wq, "q.txt", "q\n", "agent q");
    st.commit(&st.repo, "main3.txt", "m3\n", "main moves on a third time");
    st.ok(&["merge", "--squash", &q]);
    let squash = st.head();
    for how in [&["--squash"][..], &[][..]] {
        let (ok, out, err) = st.nerdr(&[&["merge"], how, &[q.as_str()]].concat());
        assert!(ok, "{how:?}: {err}");
        assert!(
            out.contains("nothing new to merge")
                && out.contains(&format!("squashed in {}", &squash[..12])),
            "{how:?}: {out}"
        );
        assert_eq!(st.head(), squash, "{how:?}: {out}");
    }

    // An untracked file where the merge writes: git refuses, nerdr says
    // which, and the checkout is as it was.
    let (c, wc) = st.tab_and_worktree("sh");
    st.commit(&wc, "clash.txt", "agent\n", "agent clash");
    std::fs::write(st.repo.join("clash.txt"), "person\n").unwrap();
    st.commit(&st.repo, "main4.txt", "m4\n", "main moves on a fourth time");
    let head = st.head();
    let status = st.status();
    let tip = st.tip(&format!("nerdr/{c}"));
    for how in [&[][..], &["--squash"][..], &["--rebase"][..]] {
        let err = st.fails(&[&["merge"], how, &[c.as_str()]].concat());
        assert!(
            err.contains("would overwrite untracked files") && err.contains("clash.txt"),
            "{how:?}: {err}"
        );
        assert!(err.contains("nothing was merged"), "{how:?}: {err}");
        assert_eq!(st.head(), head, "{how:?}: {err}");
        assert_eq!(st.status(), status, "{how:?}: {err}");
        assert_eq!(st.tip(&format!("nerdr/{c}")), tip, "{how:?}: {err}");
    }
    assert_eq!(
        std::fs::read_to_string(st.repo.join("clash.txt")).unwrap(),
        "person\n"
    );
}

/// A closed tab's work stays reachable by its branch or id, `worktrees`
/// and `clean` name tabs as `nerdr tabs` does, `close` says what it
/// leaves, and `diff` marks the uncommitted paths.
#[test]
fn a_closed_tabs_work_stays_reachable() {
    let Some(st) = RepoSession::on_main(SH) else {
        return;
    };
    let t = st.tab("sh");
    let name = name_of(&st, &t);
    let wt = st.worktree_of(&t);
    st.commit(&wt, "a.txt", "a\n", "agent a");
    st.commit(&wt, "b.txt", "b\n", "agent b");
    std::fs::write(wt.join("b.txt"), "b\nmore\n").unwrap();
    std::fs::write(wt.join("c.txt"), "c\n").unwrap();
    let table = st.ok(&["worktrees"]);
    assert!(table.contains(&format!("{name} ({t}, ")), "{table}");

    // Uncommitted paths are marked; the piped stat stays git's.
    let (ok, stat, err) = st.nerdr(&["diff", "--stat", &t]);
    assert!(ok, "{err}");
    assert!(
        stat.contains("a.txt") && !stat.contains("uncommitted"),
        "{stat}"
    );
    assert!(err.contains("(uncommitted: b.txt, c.txt;"), "{err}");

    let (ok, _, err) = st.nerdr(&["close", &t]);
    assert!(ok, "{err}");
    assert!(
        err.contains("2 unmerged commits and 2 paths with uncommitted work")
            && err.contains(&format!("`nerdr diff {t}`"))
            && err.contains(&format!("`nerdr merge {t}`")),
        "{err}"
    );
    let table = st.ok(&["worktrees"]);
    assert!(table.contains(&format!("{t} (closed)")), "{table}");

    // Its id and its branch both name it.
    let by_id = st.ok(&["diff", &t]);
    let by_branch = st.ok(&["diff", &format!("nerdr/{t}")]);
    assert!(by_id.contains("+a") && by_id.contains("+more"), "{by_id}");
    assert_eq!(by_id, by_branch);
    let err = st.fails(&["diff", "nerdr/nothing"]);
    assert!(err.contains("no tab `nerdr/nothing`"), "{err}");
    st.git(&wt, &["commit", "-q", "-a", "-m", "agent more"]);
    let out = st.ok(&["merge", &format!("nerdr/{t}")]);
    assert!(
        out.contains(&format!("merged nerdr/{t} into main")),
        "{out}"
    );
    assert!(st.repo.join("b.txt").is_file());

    // A closed tab with all of its work home says nothing more.
    let u = st.tab("sh");
    let (ok, _, err) = st.nerdr(&["close", &u]);
    assert!(ok && !err.contains("stays"), "{err}");
    std::fs::remove_file(wt.join("c.txt")).unwrap();
    let out = st.ok(&["clean", "--dry-run"]);
    assert!(out.contains(&format!("(closed tab {t})")), "{out}");
}
