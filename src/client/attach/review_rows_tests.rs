//! Where reviews by agents go on the diff view's page (`super::rows` with
//! `review_rows`'s reviews).

use super::rows;
use crate::client::attach::page_row::Row;
use crate::client::attach::review_rows::Reviews;
use crate::client::patch::parse;
use crate::client::patch::Patch;
use crate::protocol::replies::ReviewRequested;
use crate::review::format::Comment as Remark;
use crate::review::format::Severity;
use crate::review::store::Review;
use crate::review::SANDBOX_NOTE;

const PATCH: &str = "diff --git a/a.rs b/a.rs\n--- a/a.rs\n+++ b/a.rs\n\
    @@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n\
    diff --git a/old.md b/old.md\ndeleted file mode 100644\n--- a/old.md\n+++ /dev/null\n\
    @@ -1,1 +0,0 @@\n-gone\n";

fn review(number: u32, agent: &str, sandboxed: bool, comments: &[(&str, u32, &str)]) -> Review {
    Review {
        read: true,
        number,
        reviewer_tab: format!("r{number}"),
        agent: agent.into(),
        written_in_sandbox: sandboxed,
        base: "0123456789abcdef".into(),
        head: "fedcba9876543210".into(),
        summary: format!("summary {number}"),
        comments: comments
            .iter()
            .map(|(file, line, text)| Remark {
                file: file.to_string(),
                line: *line,
                severity: Severity::Note,
                text: text.to_string(),
            })
            .collect(),
    }
}

fn texts(rows: &[Row]) -> Vec<String> {
    rows.iter()
        .map(|r| format!("{}{}", r.gutter, r.text).trim().to_string())
        .collect()
}

/// Each review comment under its line, else its file's header, else
/// its review's summary; two reviews on the same line both show, in
/// order; a reviewer at work says so.
#[test]
fn review_comments_go_under_their_lines_files_or_summary() {
    let p = parse(PATCH).unwrap();
    let reviews = Reviews {
        done: vec![
            review(
                1,
                "claude",
                false,
                &[
                    ("a.rs", 2, "on the added line"),
                    ("a.rs", 3, "on a context line"),
                    ("a.rs", 40, "a line not in the diff"),
                    ("old.md", 1, "a deleted file"),
                    ("elsewhere.rs", 5, "a file not in the diff"),
                ],
            ),
            review(2, "codex", true, &[("a.rs", 2, "me too")]),
        ],
        at_work: vec![ReviewRequested {
            reviewer_tab: "r3".into(),
            agent: "claude".into(),
            base: "0123456789abcdef".into(),
            head: "aaaaaaaaaaaaaaaa".into(),
            automatic: false,
            state: crate::review::status::State::CannotReachNerdr,
            status: "cannot post: its sandbox hides the hook socket".into(),
        }],
        unread: None,
        program: None,
    };
    let got = texts(&rows(&["title".into()], &p, &[], &reviews));
    let want = [
        "title",
        "",
        "review 1 by claude (tab r1) of 0123456789ab..fedcba987654: 5 comments",
        "summary: summary 1",
        "** elsewhere.rs:5 note from claude (review 1): a file not in the diff",
        "review 2 by codex (tab r2) of 0123456789ab..fedcba987654: 1 comment",
        SANDBOX_NOTE,
        "summary: summary 2",
        "requested: claude (tab r3) on 0123456789ab..aaaaaaaaaaaa: cannot post: its sandbox \
         hides the hook socket (r asks again)",
        "",
        "2 files changed, +1 -2",
        "M a.rs    +1 -1",
        "D old.md  -1",
        "",
        "a.rs  (modified, +1 -1)",
        "** a.rs:40 note from claude (review 1): a line not in the diff",
        "@@ -1,3 +1,3 @@",
        "1   1  one",
        "2     -two",
        "2 +TWO",
        "** a.rs:2 note from claude (review 1): on the added line",
        "** a.rs:2 note from codex (review 2, written in a sandbox): me too",
        "3   3  three",
        "** a.rs:3 note from claude (review 1): on a context line",
        "",
        "old.md  (deleted, -1)",
        "** old.md:1 note from claude (review 1): a deleted file",
        "@@ -1,1 +0,0 @@",
        "1     -gone",
    ];
    assert_eq!(got, want);
    // With no diff at all (merged, clean) the reviews still show, every
    // comment with its summary.
    let got = texts(&rows(
        &["no changes".into()],
        &Patch::default(),
        &[],
        &reviews,
    ));
    assert_eq!(got[0], "no changes");
    assert!(got.contains(&"** a.rs:2 note from claude (review 1): on the added line".into()));
    assert!(
        got.contains(&"** a.rs:2 note from codex (review 2, written in a sandbox): me too".into())
    );
    assert_eq!(got.iter().filter(|t| t.starts_with("**")).count(), 6);
    // No reviews: no rows of them.
    let plain = texts(&rows(&["title".into()], &p, &[], &Reviews::default()));
    assert!(!plain.iter().any(|t| t.contains("review")));
}
