//! `nerdr why add` and `nerdr why` (issue: what agents and people look
//! up): the real binary, a hand-started core, real git, and a bash tab
//! as the agent that says why.

use crate::support::git::git;
use crate::support::local::Local;
use crate::support::tab_ops::{op, repo, BASH};

fn why(l: &Local, folder: &std::path::Path, target: &str) -> String {
    l.ok(&["why", "--folder", &folder.display().to_string(), target])
}

#[test]
fn a_reason_explains_its_lines_once_committed_and_after_later_commits() {
    let l = Local::started();
    repo(&l);
    l.write_config(&format!("[agents.sh]\n{BASH}"));
    let tab = l.ok(&["agent", "sh"]).trim().to_string();
    l.wait_screen(&tab, "bash");
    let wt = l.worktree_of(&tab);
    std::fs::write(wt.join("file.txt"), "hello\nalpha\nbeta\ngamma\n").unwrap();

    // The agent says why before it commits.
    let (rc, out) = op(
        &l,
        &tab,
        "add",
        "\"$NERDR_BIN\" why add --file file.txt --lines 2-3 'alpha and beta: the parser needs both'",
    );
    assert_eq!(rc, 0, "{out}");
    assert!(out.contains("for the next commit of file.txt"), "{out}");
    // Not committed yet: shown on the uncommitted lines.
    let shown = why(&l, &wt, "file.txt:2");
    assert!(shown.contains("not committed yet"), "{shown}");
    assert!(shown.contains("the parser needs both"), "{shown}");

    git(&wt, &["commit", "-q", "-am", "parse alpha and beta"]);
    let shown = why(&l, &wt, "file.txt:2");
    assert!(shown.contains("file.txt:2  "), "{shown}");
    assert!(
        shown.contains("parse alpha and beta"),
        "the commit's subject: {shown}"
    );
    assert!(shown.contains("the parser needs both"), "{shown}");
    assert!(shown.contains("sh-1 (sh)"), "the tab and agent: {shown}");
    // The whole file: lines 2-3 explained, the other two not.
    let shown = why(&l, &wt, "file.txt");
    assert!(shown.contains("file.txt:2-3  "), "{shown}");
    assert!(
        shown.contains("2 more lines have no reason kept"),
        "{shown}"
    );
    for bare in ["file.txt:1", "file.txt:4"] {
        let shown = why(&l, &wt, bare);
        assert!(
            shown.starts_with("no reason kept for file.txt"),
            "{bare}: {shown}"
        );
    }

    // Unrelated later commits: a line above, another file. The reason
    // follows its lines.
    std::fs::write(wt.join("file.txt"), "header\nhello\nalpha\nbeta\ngamma\n").unwrap();
    std::fs::write(wt.join("other.txt"), "other\n").unwrap();
    git(&wt, &["add", "."]);
    git(&wt, &["commit", "-q", "-m", "a header and another file"]);
    let shown = why(&l, &wt, "file.txt:3-4");
    assert!(shown.contains("file.txt:3-4  "), "{shown}");
    assert!(shown.contains("the parser needs both"), "{shown}");
    assert!(why(&l, &wt, "file.txt:2").starts_with("no reason kept"));

    let json: serde_json::Value = serde_json::from_str(&l.ok(&[
        "why",
        "--folder",
        &wt.display().to_string(),
        "--json",
        "file.txt",
    ]))
    .unwrap();
    let with: Vec<&serde_json::Value> = json["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| !e["reasons"].as_array().unwrap().is_empty())
        .collect();
    assert_eq!(with.len(), 1, "{json}");
    assert_eq!(with[0]["lines"], serde_json::json!([3, 4]));
    let r = &with[0]["reasons"][0];
    assert_eq!(r["tab"], tab.as_str());
    assert_eq!(r["agent"], "sh");
    assert_eq!(r["sandboxed"], false);
}

#[test]
fn the_person_says_why_of_a_commit_and_a_tab_only_of_its_own_work() {
    let l = Local::started();
    let main = repo(&l);
    l.write_config(&format!("[agents.sh]\n{BASH}"));
    // The person, in the main checkout, of a clean file: HEAD's commit.
    let kept = l.ok(&["why", "add", "--file", "file.txt", "greets the reader"]);
    assert!(kept.contains("for commit "), "{kept}");
    let shown = why(&l, &main, "file.txt:1");
    assert!(shown.contains("first"), "{shown}");
    assert!(shown.contains("you, "), "{shown}");
    assert!(shown.contains("greets the reader"), "{shown}");
    // --json says who wrote it: no tab, the person.
    let json: serde_json::Value = serde_json::from_str(&l.ok(&[
        "why",
        "--folder",
        &main.display().to_string(),
        "file.txt:1",
        "--json",
    ]))
    .unwrap();
    let r = &json["entries"][0]["reasons"][0];
    assert!(r["tab"].is_null() && r.get("tab").is_some(), "{json}");

    let tab = l.ok(&["agent", "sh"]).trim().to_string();
    l.wait_screen(&tab, "bash");
    let outside = main.join("file.txt").display().to_string();
    for (what, command) in [
        (
            "add-outside",
            format!("\"$NERDR_BIN\" why add --file {outside} 'mine now'"),
        ),
        ("read-outside", format!("\"$NERDR_BIN\" why {outside}")),
    ] {
        let (rc, out) = op(&l, &tab, what, &command);
        assert_ne!(rc, 0, "{what}: {out}");
        assert!(out.contains("outside this tab's worktree"), "{what}: {out}");
    }
    // Bad input names what is wrong.
    let err = l.fails(&["why", "add", "--file", "file.txt", "--lines", "3-1", "x"]);
    assert!(err.contains("1-3"), "{err}");
    let err = l.fails(&["why", "add", "--file", "file.txt", ""]);
    assert!(err.contains("give the reason"), "{err}");
    let err = l.fails(&["why", "file.txt:0"]);
    assert!(err.contains("from line 1"), "{err}");
    let err = l.fails(&["why", "nosuch.txt"]);
    assert!(err.contains("nosuch.txt"), "{err}");
    let err = l.fails(&["why", "add", "--file", "file.txt", "--lines", "5-9", "x"]);
    assert!(
        err.contains("file.txt has 1 line, so it has no lines 5-9"),
        "{err}"
    );
    let err = l.fails(&["why", "add", "--file", "nope.txt", "x"]);
    assert!(err.contains("nope.txt is not in"), "{err}");
    // Nothing the person said was lost to the refusals.
    assert!(why(&l, &main, "file.txt:1").contains("greets the reader"));

    // A reason given on a tab's uncommitted change is that tab's branch's:
    // the person's commit of the same lines in the main checkout is not
    // explained by it, though it comes after the same HEAD.
    let wt = l.worktree_of(&tab);
    std::fs::write(wt.join("file.txt"), "hello\ntab's line\n").unwrap();
    let (rc, out) = op(
        &l,
        &tab,
        "pending",
        "\"$NERDR_BIN\" why add --file file.txt --lines 2 'TAB-REASON'",
    );
    assert_eq!(rc, 0, "{out}");
    std::fs::write(main.join("file.txt"), "hello\nthe person's line\n").unwrap();
    git(&main, &["commit", "-q", "-am", "the person's line"]);
    let shown = why(&l, &main, "file.txt:2");
    assert!(
        !shown.contains("TAB-REASON"),
        "another worktree's reason: {shown}"
    );
    git(&wt, &["commit", "-q", "-am", "the tab's line"]);
    assert!(why(&l, &wt, "file.txt:2").contains("TAB-REASON"));

    // A reason of several lines reads as several lines.
    let kept = l.ok(&[
        "why",
        "add",
        "--file",
        "file.txt",
        "--lines",
        "2",
        "First.\n\nSecond,\twith a tab.",
    ]);
    assert!(kept.contains("for commit"), "{kept}");
    let shown = why(&l, &main, "file.txt:2");
    assert!(shown.contains("    First.\n"), "{shown}");
    assert!(shown.ends_with("    Second,\\twith a tab."), "{shown:?}");
}

/// A newcomer's findings: a reason for lines the coming commit does not
/// change, or for a file HEAD did not touch, was kept for a commit that
/// never showed it; a file git has not got, or lines a file has not, got
/// git's own words.
#[test]
fn a_reason_goes_to_the_change_its_lines_show_and_lookups_say_plainly_what_is_missing() {
    let l = Local::started();
    let main = repo(&l);
    let m = main.display().to_string();
    std::fs::write(main.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    git(&main, &["add", "a.txt"]);
    git(&main, &["commit", "-q", "-m", "add a"]);
    std::fs::write(main.join("b.txt"), "b\n").unwrap();
    git(&main, &["add", "b.txt"]);
    git(&main, &["commit", "-q", "-m", "add b"]);

    // Clean tree, HEAD ("add b") never touched a.txt: the commit that did.
    let kept = l.ok(&[
        "why", "add", "--folder", &m, "--file", "a.txt", "--lines", "1-2", "A-REASON",
    ]);
    assert!(
        kept.contains("\"add a\" (the last change of those lines)"),
        "{kept}"
    );
    let shown = why(&l, &main, "a.txt:1-2");
    assert!(shown.contains("A-REASON"), "{shown}");

    // A change at line 3; the reason names line 1, which it does not
    // change: the commit that last changed line 1, shown there after the
    // change is committed too.
    std::fs::write(main.join("a.txt"), "one\ntwo\nTHREE\n").unwrap();
    let kept = l.ok(&[
        "why", "add", "--folder", &m, "--file", "a.txt", "--lines", "1", "LINE-ONE",
    ]);
    assert!(kept.contains("\"add a\""), "{kept}");
    git(&main, &["commit", "-q", "-am", "three"]);
    let shown = why(&l, &main, "a.txt:1");
    assert!(shown.contains("LINE-ONE"), "{shown}");

    // Lines of two commits: refused, naming both.
    let err = l.fails(&[
        "why", "add", "--folder", &m, "--file", "a.txt", "--lines", "2-3", "X",
    ]);
    assert!(err.contains("last changed by 2 commits"), "{err}");
    assert!(
        err.contains("\"add a\"") && err.contains("\"three\""),
        "{err}"
    );

    // A file git has not got: its lines are not committed yet, with the
    // reason kept for them.
    std::fs::write(main.join("u.txt"), "new\n").unwrap();
    l.ok(&["why", "add", "--folder", &m, "--file", "u.txt", "NEW-FILE"]);
    let shown = why(&l, &main, "u.txt");
    assert!(
        shown.contains("not committed yet") && shown.contains("NEW-FILE"),
        "{shown}"
    );

    // Plain words, not git's.
    for (target, said) in [
        ("nope.txt", "nope.txt is not in"),
        ("a.txt:99", "a.txt has 3 lines, so it has no lines 99-99"),
    ] {
        let err = l.fails(&["why", "--folder", &m, target]);
        assert!(
            err.contains(said) && !err.contains("fatal:"),
            "{target}: {err}"
        );
    }
}

/// A reason given for an uncommitted change that is then thrown away does
/// not explain the next, unrelated commit of the file; made again and
/// committed, the change gets it.
#[test]
fn a_discarded_changes_reason_waits_for_a_commit_that_carries_it() {
    let l = Local::started();
    let main = repo(&l);
    let m = main.display().to_string();
    std::fs::write(main.join("a.txt"), "one\ntwo\n").unwrap();
    git(&main, &["add", "a.txt"]);
    git(&main, &["commit", "-q", "-m", "add a"]);

    std::fs::write(main.join("a.txt"), "one\ntwo\nretry the upload\n").unwrap();
    let kept = l.ok(&[
        "why",
        "add",
        "--folder",
        &m,
        "--file",
        "a.txt",
        "RETRY-REASON",
    ]);
    assert!(kept.contains("for the next commit of a.txt"), "{kept}");
    git(&main, &["checkout", "--", "a.txt"]);
    std::fs::write(main.join("a.txt"), "one\ntwo\nlog the size\n").unwrap();
    git(&main, &["commit", "-q", "-am", "log the size"]);
    let shown = why(&l, &main, "a.txt:3");
    assert!(
        shown.starts_with("no reason kept for a.txt"),
        "an unrelated commit took a thrown-away change's reason: {shown}"
    );

    std::fs::write(
        main.join("a.txt"),
        "one\ntwo\nlog the size\nretry the upload\n",
    )
    .unwrap();
    git(&main, &["commit", "-q", "-am", "retry"]);
    let shown = why(&l, &main, "a.txt:4");
    assert!(
        shown.contains("RETRY-REASON") && shown.contains("retry"),
        "{shown}"
    );
}
