//! Table tests of which commit a reason explains and which lines it
//! explains, and of what a person types.

use super::*;

fn reason(file: Option<&str>, lines: Option<(u32, u32)>, head: &str, dirty: bool) -> Reason {
    Reason {
        repo: "/r/.git".into(),
        file: file.map(Into::into),
        lines,
        text: "because".into(),
        head: head.into(),
        worktree: String::new(),
        branch: None,
        secs: 0,
        dirty,
        change: Vec::new(),
        tab: None,
        tab_name: None,
        agent: None,
        sandboxed: false,
        at: "2026-12-03T10:00:00Z".into(),
    }
}

#[test]
fn a_reason_explains_head_or_the_next_commit_of_its_branch() {
    let c = |s: &str| Binding::Commit(s.into());
    let here = |head: &str, wt: &str| Here {
        head: head.into(),
        worktree: wt.into(),
    };
    // Given at second 100, in worktree /w, at h1.
    #[rustfmt::skip]
    type Row<'a> = (&'a str, bool, Here, &'a [(&'a str, u64)], Binding);
    let rows: &[Row] = &[
        (
            "given on a clean file: the commit it was at",
            false,
            here("h1", "/w"),
            &[],
            c("h1"),
        ),
        (
            "clean, later commits do not move it",
            false,
            here("h3", "/w"),
            &[("h2", 200)],
            c("h1"),
        ),
        (
            "given before committing: the next commit of its branch",
            true,
            here("h3", "/w"),
            &[("h2", 200), ("h3", 300)],
            c("h2"),
        ),
        (
            "a commit made before it was given is not its",
            true,
            here("h3", "/x"),
            &[("h2", 90), ("h3", 300)],
            c("h3"),
        ),
        (
            "the same second counts",
            true,
            here("h2", "/w"),
            &[("h2", 100)],
            c("h2"),
        ),
        (
            "not committed yet, asked in its worktree",
            true,
            here("h1", "/w"),
            &[],
            Binding::Uncommitted,
        ),
        (
            "not committed yet, asked in another worktree at the same HEAD",
            true,
            here("h1", "/x"),
            &[],
            Binding::Elsewhere,
        ),
        (
            "not committed on its branch, asked elsewhere",
            true,
            here("h9", "/w"),
            &[],
            Binding::Elsewhere,
        ),
        (
            "only commits from before it",
            true,
            here("h2", "/x"),
            &[("h2", 50)],
            Binding::Elsewhere,
        ),
    ];
    for (what, dirty, at, after, want) in rows {
        let after: Vec<Later> = after
            .iter()
            .map(|(c, t)| Later {
                commit: c.to_string(),
                secs: *t,
                adds: Vec::new(),
            })
            .collect();
        let mut r = reason(Some("a.rs"), None, "h1", *dirty);
        r.worktree = "/w".into();
        r.secs = 100;
        assert_eq!(&bind(&r, at, &after), want, "{what}");
    }
}

/// A reason given on an uncommitted change explains the first later commit
/// that carries a line of that change: a change thrown away is not taken
/// for the next unrelated commit of the file.
#[test]
fn an_uncommitted_reason_explains_the_commit_that_carries_its_change() {
    let f = |lines: &[&str]| fingerprint(lines.iter().copied());
    // (what, the change's lines, later commits: (commit, time, lines added), binding)
    #[rustfmt::skip]
    type Row<'a> = (&'a str, &'a [&'a str], &'a [(&'a str, u64, &'a [&'a str])], Binding);
    let c = |s: &str| Binding::Commit(s.into());
    let rows: &[Row] = &[
        (
            "the next commit carries it",
            &["let a = 1;"],
            &[("h2", 200, &["let a = 1;"])],
            c("h2"),
        ),
        (
            "discarded, an unrelated commit next: not that one",
            &["let a = 1;"],
            &[("h2", 200, &["let b = 2;"])],
            Binding::Elsewhere,
        ),
        (
            "discarded, then made again and committed later",
            &["let a = 1;"],
            &[
                ("h2", 200, &["let b = 2;"]),
                ("h3", 300, &["x", "let a = 1;"]),
            ],
            c("h3"),
        ),
        (
            "re-indented before the commit still matches",
            &["let a = 1;"],
            &[("h2", 200, &["        let a = 1;"])],
            c("h2"),
        ),
        (
            "one line of several is enough",
            &["one line", "two line"],
            &[("h2", 200, &["two line", "changed"])],
            c("h2"),
        ),
        (
            "a change of deletions only: the next commit",
            &[],
            &[("h2", 200, &["other"])],
            c("h2"),
        ),
        (
            "a brace alone is no match",
            &["}", "fn a() {"],
            &[("h2", 200, &["}"])],
            Binding::Elsewhere,
        ),
    ];
    for (what, change, after, want) in rows {
        let mut r = reason(Some("a.rs"), None, "h1", true);
        r.worktree = "/w".into();
        r.secs = 100;
        r.change = f(change);
        let after: Vec<Later> = after
            .iter()
            .map(|(c, t, adds)| Later {
                commit: c.to_string(),
                secs: *t,
                adds: f(adds),
            })
            .collect();
        let here = Here {
            head: "h9".into(),
            worktree: "/w".into(),
        };
        assert_eq!(&bind(&r, &here, &after), want, "{what}");
    }
}

#[test]
fn a_change_keeps_its_added_lines_fingerprinted_once_and_bounded() {
    let diff = "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1,2 @@\n-old\n+new one\n+  new one  \n+\n+}\n";
    let added: Vec<&str> = added_lines(diff).collect();
    assert_eq!(added, ["new one", "  new one  ", "", "}"]);
    assert_eq!(
        fingerprint(added).len(),
        1,
        "trimmed, each once, short lines left out"
    );
    let many: Vec<String> = (0..1000).map(|i| format!("line {i}")).collect();
    assert_eq!(
        fingerprint(many.iter().map(String::as_str)).len(),
        MAX_CHANGE
    );
}

#[test]
fn lines_beyond_the_file_are_refused() {
    assert!(check_lines("a.rs", (1, 21), 21).is_ok());
    let err = check_lines("a.rs", (990, 999), 21).unwrap_err();
    assert!(err.contains("a.rs has 21 lines"), "{err}");
}

fn blamed(line: u32, commit: Option<&str>, path: &str, orig: u32) -> Blamed {
    Blamed {
        line,
        commit: commit.map(Into::into),
        path: path.into(),
        orig_line: orig,
        summary: format!("{commit:?}"),
    }
}

#[test]
fn each_line_gets_the_reasons_of_its_commit_file_and_lines() {
    let c = |s: &str| Binding::Commit(s.into());
    let reasons = vec![
        (reason(Some("a.rs"), Some((2, 3)), "x", true), c("c1")), // 0: lines 2-3 of a.rs at c1
        (reason(Some("a.rs"), None, "x", true), c("c2")),         // 1: all of a.rs at c2
        (reason(None, None, "x", true), c("c1")),                 // 2: the whole of c1
        (reason(Some("b.rs"), None, "x", true), c("c1")),         // 3: another file
        (
            reason(Some("a.rs"), Some((5, 5)), "x", true),
            Binding::Uncommitted,
        ), // 4
        (reason(Some("old.rs"), Some((2, 2)), "x", true), c("c1")), // 5: before a rename
    ];
    let lines = vec![
        // Line 1 of c1: only the whole-commit reason.
        blamed(1, Some("c1"), "a.rs", 1),
        // Lines 4-5 now were 2-3 at c1 (two lines added above since).
        blamed(4, Some("c1"), "a.rs", 2),
        blamed(5, Some("c1"), "a.rs", 3),
        // From c2.
        blamed(6, Some("c2"), "a.rs", 6),
        blamed(7, Some("c2"), "a.rs", 7),
        // Back to c1, line 4 there: not in 2-3.
        blamed(8, Some("c1"), "a.rs", 4),
        // A file renamed since c1: its reasons name the old path.
        blamed(9, Some("c1"), "old.rs", 2),
        // Not committed: explained by its number now.
        blamed(10, None, "a.rs", 10),
    ];
    let got = explain(&lines, &reasons);
    let want = vec![
        Explained {
            lines: (1, 1),
            commit: Some("c1".into()),
            summary: format!("{:?}", Some("c1")),
            reasons: vec![2],
        },
        Explained {
            lines: (4, 5),
            commit: Some("c1".into()),
            summary: format!("{:?}", Some("c1")),
            reasons: vec![0, 2],
        },
        Explained {
            lines: (6, 7),
            commit: Some("c2".into()),
            summary: format!("{:?}", Some("c2")),
            reasons: vec![1],
        },
        Explained {
            lines: (8, 8),
            commit: Some("c1".into()),
            summary: format!("{:?}", Some("c1")),
            reasons: vec![2],
        },
        Explained {
            lines: (9, 9),
            commit: Some("c1".into()),
            summary: format!("{:?}", Some("c1")),
            reasons: vec![2, 5],
        },
        Explained {
            lines: (10, 10),
            commit: None,
            summary: "None".into(),
            reasons: vec![],
        },
    ];
    assert_eq!(got, want);
    // An uncommitted line within an uncommitted reason's lines.
    let got = explain(&[blamed(5, None, "a.rs", 5)], &reasons);
    assert_eq!(got[0].reasons, vec![4]);
}

#[test]
fn lines_and_targets_as_typed() {
    #[rustfmt::skip]
    type Target = Result<(String, Option<(u32, u32)>), ()>;
    let rows: &[(&str, Target)] = &[
        ("src/a.rs", Ok(("src/a.rs".into(), None))),
        ("src/a.rs:12", Ok(("src/a.rs".into(), Some((12, 12))))),
        ("src/a.rs:10-14", Ok(("src/a.rs".into(), Some((10, 14))))),
        ("a:b.txt", Ok(("a:b.txt".into(), None))),
        ("a:b.txt:3", Ok(("a:b.txt".into(), Some((3, 3))))),
        ("src/a.rs:0", Err(())),
        ("src/a.rs:14-10", Err(())),
        ("src/a.rs:-", Err(())),
        ("", Err(())),
        (":3", Ok((":3".into(), None))),
    ];
    for (typed, want) in rows {
        let got = parse_target(typed).map_err(|_| ());
        assert_eq!(&got, want, "{typed:?}");
    }
    assert!(parse_lines("3-2").unwrap_err().contains("2-3"));
}

#[test]
fn a_reasons_text_is_something_and_not_too_much() {
    assert!(check_text("").is_err());
    assert!(check_text(" \n").is_err());
    assert!(check_text("why").is_ok());
    assert!(check_text(&"x".repeat(MAX_TEXT)).is_ok());
    let err = check_text(&"x".repeat(MAX_TEXT + 1)).unwrap_err();
    assert!(err.contains(&format!("{}", MAX_TEXT + 1)), "{err}");
}

#[test]
fn a_reason_aims_at_the_change_its_lines_show() {
    let b = |line, commit: Option<&str>, orig| Blamed {
        summary: commit
            .map_or(
                "Not Committed Yet",
                |c| if c == "c1" { "one" } else { "two" },
            )
            .into(),
        ..blamed(line, commit, "a.txt", orig)
    };
    let at = |commit: &str, lines, summary: &str| {
        Ok(Aim::Commit {
            commit: commit.into(),
            lines,
            summary: summary.into(),
        })
    };
    let last = Some(("c9", "nine"));
    let c1 = "c1";
    let c2 = "c2";
    /// (what, --lines, blamed, dirty, the file's last commit, aim)
    type Row<'a> = (
        &'a str,
        Option<(u32, u32)>,
        Vec<Blamed>,
        bool,
        Option<(&'a str, &'a str)>,
        Result<Aim, &'a str>,
    );
    #[rustfmt::skip]
    let rows: Vec<Row> = vec![
        ("whole dirty file: the coming commit", None, vec![], true, last, Ok(Aim::NextCommit)),
        ("whole clean file: its last commit", None, vec![], false, last, at("c9", None, "nine").map_err(|_: String| "")),
        ("whole file never committed", None, vec![], false, None, Err("has no commit yet")),
        ("a named line not committed", Some((2, 3)), vec![b(2, Some(c1), 2), b(3, None, 3)], true, last, Ok(Aim::NextCommit)),
        ("named lines of one commit, numbered as it left them",
            Some((5, 6)), vec![b(5, Some(c1), 3), b(6, Some(c1), 4)], true, last, at("c1", Some((3, 4)), "one").map_err(|_: String| "")),
        ("named lines of one commit, clean file", Some((1, 1)), vec![b(1, Some(c2), 1)], false, last, at("c2", Some((1, 1)), "two").map_err(|_: String| "")),
        ("named lines of two commits", Some((1, 2)), vec![b(1, Some(c1), 1), b(2, Some(c2), 2)], false, last, Err("last changed by 2 commits (c1 \"one\", c2 \"two\")")),
    ];
    for (what, lines, blamed, dirty, last, want) in rows {
        let got = aim("a.txt", lines, &blamed, dirty, last);
        match (&got, want) {
            (Ok(g), Ok(w)) => assert_eq!(*g, w, "{what}"),
            (Err(g), Err(w)) => assert!(g.contains(w), "{what}: {g}"),
            _ => panic!("{what}: {got:?}"),
        }
    }
}
