//! The review panel's part of the diff view's page: the tab's reviews by
//! agents (`nerdr reviews`), each summary at the top, each comment under
//! the line it is on. Pure: reviews and the page's rows in, where each
//! review comment goes and the rows it shows as out; `super::diff_rows`
//! puts them on the page.
//!
//! A review comment names a line of the file at the reviewed head, of a
//! file the reviewed range changes (`post-review` takes no other:
//! `review::range`): it goes under that line when the diff shows it (an
//! added or unchanged line), else under its file's header when the diff
//! has the file, else with its review's summary at the top (the view
//! shows the tab's work as it is now, which may no longer change the
//! file). Text from agents goes through
//! `protocol::printable`; a review from a sandboxed reviewer carries the
//! note `nerdr reviews` prints.

use super::page_row::{Row, RowKind};
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
    /// The program the tab runs when it is not an agent: nothing the view
    /// sends may be typed there (`review::not_for_a_program`).
    pub program: Option<String>,
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
                "requested: {} (tab {}) on {}..{}{}: {} (r asks again)",
                printable(&p.agent),
                printable(&p.reviewer_tab),
                short(&p.base),
                short(&p.head),
                if p.automatic { ", automatic" } else { "" },
                if p.status.is_empty() {
                    "its review is not in yet".to_string()
                } else {
                    printable(&p.status).to_string()
                }
            ),
        ));
    }
    out
}
