//! The diff view's page, row by row: a title, the list of files, then
//! each file's header and hunks, with the person's comments under the
//! lines they are on. Pure: a patch and comments in, rows out; the view
//! (`super::diff_view`) moves over them and `super::diff_draw` colours
//! them.
//!
//! Text from the repository (paths, lines) goes through
//! `protocol::printable` here, once: a line of code can hold an escape
//! sequence, and the page is written to the person's terminal.

use super::comments::{Comment, Side};
pub use super::page_row::{row, Row, RowKind};
use super::review_rows::{self, Reviews, Spot};
use crate::client::patch::{FileDiff, Kind, Patch, Status};
use crate::protocol::printable;

/// The letter a file gets in the list, as `git status --short` has it.
fn letter(f: &FileDiff) -> char {
    match f.status {
        Status::Added => 'A',
        Status::Deleted => 'D',
        Status::Modified => 'M',
        Status::Renamed => 'R',
        Status::Copied => 'C',
    }
}

fn name(f: &FileDiff) -> String {
    match (&f.old_path, &f.new_path, f.status) {
        (Some(a), Some(b), Status::Renamed | Status::Copied) if a != b => {
            format!("{} -> {}", printable(a), printable(b))
        }
        _ => printable(f.path()),
    }
}

fn counts(f: &FileDiff) -> String {
    if f.binary {
        return "binary".into();
    }
    let (a, r) = (f.added(), f.removed());
    match (a, r) {
        (0, 0) => String::new(),
        (a, 0) => format!("+{a}"),
        (0, r) => format!("-{r}"),
        (a, r) => format!("+{a} -{r}"),
    }
}

/// Said of a file whose work no commit holds yet (`nerdr merge` leaves
/// it out, as `nerdr diff` says).
const UNCOMMITTED: &str = "uncommitted";

/// What the file header says after the name.
fn what(f: &FileDiff) -> String {
    let mut parts = vec![match f.status {
        Status::Added => "added".to_string(),
        Status::Deleted => "deleted".to_string(),
        Status::Modified => "modified".to_string(),
        Status::Renamed => "renamed".to_string(),
        Status::Copied => "copied".to_string(),
    }];
    if let Some(s) = f.similarity {
        parts.push(format!("{s}% similar"));
    }
    let c = counts(f);
    if !c.is_empty() {
        parts.push(c);
    }
    if f.uncommitted {
        parts.push(UNCOMMITTED.into());
    }
    parts.join(", ")
}

/// Tabs to spaces (stops every 8 columns, as `less` shows a diff).
fn untab(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut col = 0;
    for c in text.chars() {
        if c == '\t' {
            let n = 8 - col % 8;
            out.extend(std::iter::repeat_n(' ', n));
            col += n;
        } else {
            out.push(c);
            col += 1;
        }
    }
    out
}

/// The widest line number of the patch, for the gutter (3 at least).
fn number_width(p: &Patch) -> usize {
    let most = p
        .files
        .iter()
        .flat_map(|f| &f.hunks)
        .map(|h| (h.old_start + h.old_count).max(h.new_start + h.new_count))
        .max()
        .unwrap_or(0);
    most.to_string().len().max(3)
}

/// The page without comments.
fn base(title: &[String], patch: &Patch) -> Vec<Row> {
    let mut rows: Vec<Row> = title
        .iter()
        .map(|t| row(RowKind::Title, String::new(), printable(t)))
        .collect();
    if patch.is_empty() {
        return rows;
    }
    rows.push(row(RowKind::Blank, String::new(), String::new()));
    let (added, removed) = patch
        .files
        .iter()
        .fold((0, 0), |(a, r), f| (a + f.added(), r + f.removed()));
    let n = patch.files.len();
    rows.push(row(
        RowKind::Title,
        String::new(),
        format!(
            "{n} file{} changed, +{added} -{removed}",
            if n == 1 { "" } else { "s" }
        ),
    ));
    let names: Vec<String> = patch.files.iter().map(name).collect();
    let wide = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    for (i, f) in patch.files.iter().enumerate() {
        rows.push(row(
            RowKind::Entry(i),
            String::new(),
            format!(
                "  {} {:<wide$}  {}{}",
                letter(f),
                names[i],
                counts(f),
                if f.uncommitted {
                    format!(" ({UNCOMMITTED})")
                } else {
                    String::new()
                }
            ),
        ));
    }
    let w = number_width(patch);
    for (i, f) in patch.files.iter().enumerate() {
        rows.push(row(RowKind::Blank, String::new(), String::new()));
        rows.push(row(
            RowKind::File(i),
            String::new(),
            format!("{}  ({})", names[i], what(f)),
        ));
        let note = |t: String| row(RowKind::FileNote(i), String::new(), t);
        if let (Some(a), Some(b)) = (&f.old_mode, &f.new_mode) {
            rows.push(note(format!("mode {a} -> {b}")));
        }
        if f.binary {
            rows.push(note("binary file: its contents are not shown".into()));
        } else if f.hunks.is_empty() && f.status == Status::Renamed {
            rows.push(note("renamed without changes".into()));
        }
        for (h, hunk) in f.hunks.iter().enumerate() {
            let section = if hunk.section.is_empty() {
                String::new()
            } else {
                format!(" {}", printable(&hunk.section))
            };
            rows.push(row(
                RowKind::Hunk(i, h),
                String::new(),
                format!(
                    "@@ -{},{} +{},{} @@{section}",
                    hunk.old_start, hunk.old_count, hunk.new_start, hunk.new_count
                ),
            ));
            for (k, l) in hunk.lines.iter().enumerate() {
                let num = |n: Option<u32>| n.map(|n| n.to_string()).unwrap_or_default();
                let sign = match l.kind {
                    Kind::Context => ' ',
                    Kind::Added => '+',
                    Kind::Removed => '-',
                };
                rows.push(row(
                    RowKind::Code(i, h, k),
                    format!("{:>w$} {:>w$} ", num(l.old), num(l.new)),
                    format!("{sign}{}", printable(&untab(&l.text))),
                ));
                if l.no_newline {
                    rows.push(row(
                        RowKind::NoNewline,
                        " ".repeat(2 * w + 2),
                        "\\ No newline at end of file".into(),
                    ));
                }
            }
        }
    }
    rows
}

/// The comment a row of kind `kind` would take: where `c` puts it. None
/// for rows that are not about a file.
pub fn anchor(patch: &Patch, kind: RowKind) -> Option<Comment> {
    let whole = |i: usize| {
        let f = patch.files.get(i)?;
        Some(Comment {
            path: f.path().to_string(),
            side: Side::New,
            line: None,
            text: String::new(),
            about: None,
        })
    };
    match kind {
        RowKind::Entry(i) | RowKind::File(i) | RowKind::FileNote(i) | RowKind::Hunk(i, _) => {
            whole(i)
        }
        RowKind::Code(i, h, k) => {
            let f = patch.files.get(i)?;
            let l = f.hunks.get(h)?.lines.get(k)?;
            let (path, side, line) = match l.kind {
                Kind::Removed => (f.old_path.as_deref()?, Side::Old, l.old),
                Kind::Added | Kind::Context => (f.new_path.as_deref()?, Side::New, l.new),
            };
            Some(Comment {
                path: path.to_string(),
                side,
                line,
                text: String::new(),
                about: None,
            })
        }
        _ => None,
    }
}

/// The row a comment goes under: its line when the patch shows it, else
/// its file's header, else the title (a line or file the patch no longer
/// shows: the comment still counts, and is sent with its file:line).
fn place(patch: &Patch, rows: &[Row], c: &Comment) -> usize {
    let same = |r: &Row| {
        anchor(patch, r.kind)
            .is_some_and(|a| a.path == c.path && a.side == c.side && a.line == c.line)
    };
    if let Some(i) = rows
        .iter()
        .position(|r| matches!(r.kind, RowKind::Code(..) | RowKind::File(_)) && same(r))
    {
        return i;
    }
    rows.iter()
        .position(|r| match r.kind {
            RowKind::File(i) => {
                let f = &patch.files[i];
                f.new_path.as_deref() == Some(&c.path) || f.old_path.as_deref() == Some(&c.path)
            }
            _ => false,
        })
        .unwrap_or(0)
}

/// Every row of the page: the title's lines, the reviews' summaries,
/// the files, and `comments` and the reviews' comments each under the row
/// it is on (a question on a review comment under that comment).
pub fn rows(title: &[String], patch: &Patch, comments: &[Comment], reviews: &Reviews) -> Vec<Row> {
    let base = base(title, patch);
    let mut under: Vec<Vec<usize>> = vec![Vec::new(); base.len().max(1)];
    let mut remarks_under: Vec<Vec<(usize, usize)>> = vec![Vec::new(); base.len().max(1)];
    let mut at_summary = Vec::new();
    for (r, review) in reviews.done.iter().enumerate() {
        for (c, remark) in review.comments.iter().enumerate() {
            match review_rows::spot(patch, &base, &remark.file, remark.line) {
                Spot::Under(i) => remarks_under[i].push((r, c)),
                Spot::AtSummary => at_summary.push((r, c)),
            }
        }
    }
    // A question goes under the review comment it is about, while the
    // view has that comment.
    let remark_of = |c: &Comment| {
        let a = c.about.as_ref()?;
        let r = reviews.done.iter().position(|x| x.number == a.review)?;
        (a.index < reviews.done[r].comments.len()).then_some((r, a.index))
    };
    for (k, c) in comments.iter().enumerate() {
        if remark_of(c).is_none() {
            under[place(patch, &base, c)].push(k);
        }
    }
    let w = number_width(patch);
    let gutter = " ".repeat(2 * w + 2);
    let head = review_rows::head_rows(reviews, &at_summary, &gutter);
    let n_title = title.len().min(base.len());
    let mut page = Vec::with_capacity(base.len() + head.len() + comments.len());
    let mut head = Some(head);
    for (i, r) in base.into_iter().enumerate() {
        if i == n_title {
            page.extend(head.take().into_iter().flatten());
        }
        page.push(r);
        for &(r, c) in remarks_under.get(i).into_iter().flatten() {
            let review = &reviews.done[r];
            page.push(row(
                RowKind::Remark(r, c),
                gutter.clone(),
                review_rows::remark_text(review, &review.comments[c]),
            ));
        }
        for &k in under.get(i).into_iter().flatten() {
            page.push(comment_row(&comments[k], k, &gutter));
        }
    }
    page.extend(head.take().into_iter().flatten());
    let mut out = Vec::with_capacity(page.len());
    for r in page {
        let kind = r.kind;
        out.push(r);
        if let RowKind::Remark(rr, cc) = kind {
            for (k, c) in comments.iter().enumerate() {
                if remark_of(c) == Some((rr, cc)) {
                    out.push(comment_row(c, k, &gutter));
                }
            }
        }
    }
    out
}

fn comment_row(c: &Comment, k: usize, gutter: &str) -> Row {
    let text = match &c.about {
        Some(_) => format!(">> question: {}", printable(&c.text)),
        None => format!(">> {}: {}", c.place(), printable(&c.text)),
    };
    row(RowKind::Comment(k), gutter.to_string(), text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::patch::parse;

    const PATCH: &str = "diff --git a/a.rs b/a.rs\n--- a/a.rs\n+++ b/a.rs\n\
        @@ -9,2 +9,2 @@ fn main()\n ctx\n-old\tx\n+new \x1b[2J\n\
        diff --git a/logo.png b/logo.png\nindex 1..2 100644\n\
        Binary files a/logo.png and b/logo.png differ\n\
        diff --git a/m.txt b/n.txt\nsimilarity index 100%\nrename from m.txt\nrename to n.txt\n";

    fn texts(rows: &[Row]) -> Vec<String> {
        rows.iter()
            .map(|r| format!("{}{}", r.gutter, r.text).trim_end().to_string())
            .collect()
    }

    #[test]
    fn the_page_lists_files_then_hunks_with_line_numbers() {
        let p = parse(PATCH).unwrap();
        let got = texts(&rows(
            &["diff of tab 1".into()],
            &p,
            &[],
            &Reviews::default(),
        ));
        let want = [
            "diff of tab 1",
            "",
            "3 files changed, +1 -1",
            "  M a.rs            +1 -1",
            "  M logo.png        binary",
            "  R m.txt -> n.txt",
            "",
            "a.rs  (modified, +1 -1)",
            "@@ -9,2 +9,2 @@ fn main()",
            "  9   9  ctx",
            " 10     -old     x",
            "     10 +new \\u{1b}[2J",
            "",
            "logo.png  (modified, binary)",
            "binary file: its contents are not shown",
            "",
            "m.txt -> n.txt  (renamed, 100% similar)",
            "renamed without changes",
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn files_with_uncommitted_work_say_so() {
        let mut p = parse(PATCH).unwrap();
        // By the new name of a rename too.
        p.mark_uncommitted(&["a.rs".into(), "n.txt".into()]);
        let got = texts(&rows(&[], &p, &[], &Reviews::default()));
        for want in [
            "  M a.rs            +1 -1 (uncommitted)",
            "  M logo.png        binary",
            "  R m.txt -> n.txt   (uncommitted)",
            "a.rs  (modified, +1 -1, uncommitted)",
            "logo.png  (modified, binary)",
            "m.txt -> n.txt  (renamed, 100% similar, uncommitted)",
        ] {
            assert!(got.iter().any(|g| g == want), "{want:?} in {got:#?}");
        }
    }

    #[test]
    fn an_empty_patch_is_its_title() {
        let got = texts(&rows(
            &["no changes".into()],
            &Patch::default(),
            &[],
            &Reviews::default(),
        ));
        assert_eq!(got, ["no changes"]);
    }

    /// Each row kind's anchor: where `c` on it puts a comment.
    #[test]
    fn comments_anchor_on_the_line_they_were_put_on() {
        let p = parse(PATCH).unwrap();
        let r = rows(&[], &p, &[], &Reviews::default());
        let at = |needle: &str| {
            let row = r.iter().find(|x| x.text.contains(needle)).unwrap();
            anchor(&p, row.kind).map(|c| c.place())
        };
        assert_eq!(at("ctx").as_deref(), Some("a.rs:9"));
        assert_eq!(at("-old").as_deref(), Some("a.rs:10 (a removed line)"));
        assert_eq!(at("+new").as_deref(), Some("a.rs:10"));
        assert_eq!(at("binary file:").as_deref(), Some("logo.png"));
        assert_eq!(at("@@").as_deref(), Some("a.rs"));
        assert_eq!(at("files changed"), None);
        // Kept comments show under their lines; one on a line the patch
        // no longer has goes under its file, one on a gone file on top.
        let c = |path: &str, side, line, text: &str| Comment {
            path: path.into(),
            side,
            line,
            text: text.into(),
            about: None,
        };
        let comments = [
            c("a.rs", Side::New, Some(10), "why?"),
            c("a.rs", Side::Old, Some(10), "keep it"),
            c("a.rs", Side::New, Some(99), "stale"),
            c("gone.rs", Side::New, Some(1), "lost file"),
            c("n.txt", Side::New, None, "good name"),
        ];
        let got = texts(&rows(&["t".into()], &p, &comments, &Reviews::default()));
        let after =
            |line: &str| got[got.iter().position(|g| g.ends_with(line)).unwrap() + 1].clone();
        assert!(after("t").ends_with(">> gone.rs:1: lost file"), "{got:#?}");
        assert!(after("-old     x").ends_with(">> a.rs:10 (a removed line): keep it"));
        assert!(after("+new \\u{1b}[2J").ends_with(">> a.rs:10: why?"));
        assert!(after("(modified, +1 -1)").ends_with(">> a.rs:99: stale"));
        assert!(after("(renamed, 100% similar)").ends_with(">> n.txt: good name"));
    }
}

#[cfg(test)]
#[path = "review_rows_tests.rs"]
mod review_tests;
