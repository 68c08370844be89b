//! The review panel's part of the diff view's page: the tab's reviews by
//! agents (`nerdr reviews`), each summary at the top, each comment under
//! the line it is on. Pure: reviews and the page's rows in, where each
//! review comment goes and the rows it shows as out; `super::diff_rows`
//! puts them on the page.
//!
//! A review comment names a line of the file at the reviewed head: it goes
//! under that line when the diff shows it (an added or unchanged line),
//! else under its file's header when the diff has the file, else with its
//! review's summary at the top. Text from agents goes through
//! `protocol::printable`; a review from a sandboxed reviewer carries the
//! note `nerdr reviews` prints.

use super::diff_rows::{Row, RowKind};
use crate::client::patch::{Kind, Patch};
use crate::protocol::printable;
use crate::protocol::replies::ReviewRequested;
use crate::review::format::Comment as Remark;
use crate::review::store::Review;
use crate::review::{short, SANDBOX_NOTE};

/// The reviews of the tab the view shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reviews {
    pub done: Vec<Review>,
    /// Reviewers still at work.
    pub at_work: Vec<ReviewRequested>,
    /// Why they could not be read, when they could not.
    pub unread: Option<String>,
}

impl Reviews {
    pub fn is_empty(&self) -> bool {
        self.done.is_empty() && self.at_work.is_empty() && self.unread.is_none()
    }

    pub fn remark(&self, r: usize, c: usize) -> Option<(&Review, &Remark)> {
        let review = self.done.get(r)?;
        Some((review, review.comments.get(c)?))
    }
}

/// Where review comment `.1` of review `.0` goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spot {
    /// Under row `.0` of the page without reviews.
    Under(usize),
    /// With its review's summary at the top: its file is not in the diff.
    AtSummary,
}

/// Where a review comment on `file:line` goes on `rows` (the page of
/// `patch` without reviews).
pub fn spot(patch: &Patch, rows: &[Row], file: &str, line: u32) -> Spot {
    let on_line = rows.iter().position(|r| match r.kind {
        RowKind::Code(f, h, k) => {
            let Some(pf) = patch.files.get(f) else {
                return false;
            };
            let Some(l) = pf.hunks.get(h).and_then(|h| h.lines.get(k)) else {
                return false;
            };
            l.kind != Kind::Removed && l.new == Some(line) && pf.new_path.as_deref() == Some(file)
        }
        _ => false,
    });
    if let Some(i) = on_line {
        return Spot::Under(i);
    }
    rows.iter()
        .position(|r| match r.kind {
            RowKind::File(f) => patch.files.get(f).is_some_and(|pf| {
                pf.new_path.as_deref() == Some(file) || pf.old_path.as_deref() == Some(file)
            }),
            _ => false,
        })
        .map_or(Spot::AtSummary, Spot::Under)
}

/// The words for review `r`'s comment: where, how much it matters, who.
pub fn remark_text(review: &Review, c: &Remark) -> String {
    format!(
        "** {}:{} {} from {} (review {}{}): {}",
        printable(&c.file),
        c.line,
        c.severity.as_str(),
        printable(&review.agent),
        review.number,
        if review.written_in_sandbox {
            ", written in a sandbox"
        } else {
            ""
        },
        printable(&c.text)
    )
}

fn plain(kind: RowKind, text: String) -> Row {
    Row {
        kind,
        gutter: String::new(),
        text,
    }
}

/// The rows at the top: per review its header, the sandbox note, its
/// summary and the comments on files the diff does not have
/// (`at_summary`: (review, comment) in order); then the reviewers at
/// work.
pub fn head_rows(reviews: &Reviews, at_summary: &[(usize, usize)], gutter: &str) -> Vec<Row> {
    let mut out = Vec::new();
    if reviews.is_empty() {
        return out;
    }
    out.push(plain(RowKind::Blank, String::new()));
    if let Some(why) = &reviews.unread {
        out.push(plain(
            RowKind::ReviewNote(usize::MAX),
            format!("The reviews could not be read: {}", printable(why)),
        ));
    }
    for (r, review) in reviews.done.iter().enumerate() {
        out.push(plain(
            RowKind::ReviewHead(r),
            format!(
                "review {} by {} (tab {}) of {}..{}: {} comment{}",
                review.number,
                printable(&review.agent),
                printable(&review.reviewer_tab),
                short(&review.base),
                short(&review.head),
                review.comments.len(),
                if review.comments.len() == 1 { "" } else { "s" }
            ),
        ));
        if review.written_in_sandbox {
            out.push(plain(RowKind::ReviewNote(r), format!("  {SANDBOX_NOTE}")));
        }
        out.push(plain(
            RowKind::ReviewNote(r),
            format!("  summary: {}", printable(&review.summary)),
        ));
        for &(_, c) in at_summary.iter().filter(|(rr, _)| *rr == r) {
            out.push(Row {
                kind: RowKind::Remark(r, c),
                gutter: gutter.to_string(),
                text: remark_text(review, &review.comments[c]),
            });
        }
    }
    for p in &reviews.at_work {
        out.push(plain(
            RowKind::ReviewNote(usize::MAX),
            format!(
                "reviewing: {} (tab {}) on {}..{}{}; its review is not in yet (r asks again)",
                printable(&p.agent),
                printable(&p.reviewer_tab),
                short(&p.base),
                short(&p.head),
                if p.automatic { ", automatic" } else { "" }
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::attach::diff_rows::rows;
    use crate::client::patch::parse;
    use crate::review::format::Severity;

    const PATCH: &str = "diff --git a/a.rs b/a.rs\n--- a/a.rs\n+++ b/a.rs\n\
        @@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n\
        diff --git a/old.md b/old.md\ndeleted file mode 100644\n--- a/old.md\n+++ /dev/null\n\
        @@ -1,1 +0,0 @@\n-gone\n";

    fn review(number: u32, agent: &str, sandboxed: bool, comments: &[(&str, u32, &str)]) -> Review {
        Review {
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
            }],
            unread: None,
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
            "reviewing: claude (tab r3) on 0123456789ab..aaaaaaaaaaaa; its review is not in \
             yet (r asks again)",
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
        assert!(got.contains(
            &"** a.rs:2 note from codex (review 2, written in a sandbox): me too".into()
        ));
        assert_eq!(got.iter().filter(|t| t.starts_with("**")).count(), 6);
        // No reviews: no rows of them.
        let plain = texts(&rows(&["title".into()], &p, &[], &Reviews::default()));
        assert!(!plain.iter().any(|t| t.contains("review")));
    }
}
