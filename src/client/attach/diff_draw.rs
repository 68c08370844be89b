//! Drawing the diff view: the rows in view, coloured as `git diff`
//! colours them (added green, removed red, hunk headers cyan, file
//! headers bold), comments in yellow, reviews by agents in magenta, the selected row in reverse video,
//! each row cut at the window's width; the view's status line last.

use super::diff_rows::RowKind;
use super::diff_view::DiffView;
use super::status::{self, Look, Span};
use crate::client::patch::Kind;

fn sgr(v: &DiffView, kind: RowKind) -> &'static str {
    match kind {
        RowKind::Title | RowKind::File(_) => "1",
        RowKind::Hunk(..) => "36",
        RowKind::Comment(_) => "33",
        RowKind::ReviewHead(_) => "1;35",
        RowKind::ReviewNote(_) | RowKind::Remark(..) => "35",
        RowKind::NoNewline | RowKind::FileNote(_) => "2",
        RowKind::Code(f, h, k) => match v.line_kind(f, h, k) {
            Some(Kind::Added) => "32",
            Some(Kind::Removed) => "31",
            _ => "",
        },
        RowKind::Entry(_) | RowKind::Blank => "",
    }
}

/// The bytes that draw `v` on a terminal of `rows` x `cols`, `prefix`
/// the window's prefix key (named in the hints).
pub fn render(v: &DiffView, prefix: &str, rows: u16, cols: u16) -> Vec<u8> {
    let width = cols as usize;
    let mut out = b"\x1b[0m\x1b[H\x1b[2J\x1b[?25l".to_vec();
    let status = v.status_lines(width, prefix);
    // A note wrapped onto more lines covers the page's last rows.
    let under = status.len().min(rows as usize / 2).max(1);
    let height = (rows as usize).saturating_sub(under);
    for (y, i) in (v.top..v.rows().len()).take(height).enumerate() {
        let r = &v.rows()[i];
        let line = format!("{}{}", r.gutter, r.text);
        let selected = i == v.sel;
        // The selected row is reversed across the whole width, so an empty
        // one shows too; others end where their text does.
        let text = if selected {
            status::fit(&line, width)
        } else {
            status::fit(&line, width).trim_end().to_string()
        };
        let mut attrs = sgr(v, r.kind).to_string();
        if selected {
            attrs = if attrs.is_empty() {
                "7".into()
            } else {
                format!("{attrs};7")
            };
        }
        out.extend(format!("\x1b[{};1H\x1b[0;{attrs}m{text}\x1b[0m", y + 1).as_bytes());
    }
    let first = rows as usize + 1 - under;
    for (k, line) in status[..under].iter().enumerate() {
        let bar = [Span {
            text: crate::protocol::printable(line),
            look: Look::Bar,
        }];
        out.extend(format!("\x1b[{};1H", first + k).as_bytes());
        out.extend(status::render(&bar, width));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::patch::parse;

    fn screen(v: &DiffView, rows: u16, cols: u16) -> vt100::Screen {
        let mut p = vt100::Parser::new(rows, cols, 0);
        p.process(&render(v, "C-b", rows, cols));
        p.screen().clone()
    }

    fn view(rows: usize) -> DiffView {
        let text = format!(
            "diff --git a/a.rs b/a.rs\n--- a/a.rs\n+++ b/a.rs\n@@ -1,2 +1,2 @@\n ctx\n-old\n+{}\n",
            "new".repeat(40)
        );
        DiffView::new(
            "t1".into(),
            vec!["diff of tab 1".into()],
            parse(&text).unwrap(),
            vec![],
            Default::default(),
            rows,
        )
    }

    #[test]
    fn lines_are_coloured_like_git_and_cut_at_the_width() {
        let v = view(20);
        let s = screen(&v, 21, 40);
        let row_of = |needle: &str| {
            (0..20u16)
                .find(|&y| s.contents_between(y, 0, y, 40).contains(needle))
                .unwrap_or_else(|| panic!("{needle} missing:\n{}", s.contents()))
        };
        let added = row_of("+new");
        let removed = row_of("-old");
        let hunk = row_of("@@ -1,2 +1,2 @@");
        let cell = |y: u16, x: u16| s.cell(y, x).unwrap().clone();
        assert_eq!(cell(added, 10).fgcolor(), vt100::Color::Idx(2));
        assert_eq!(cell(removed, 10).fgcolor(), vt100::Color::Idx(1));
        assert_eq!(cell(hunk, 0).fgcolor(), vt100::Color::Idx(6));
        // Cut at 40 columns: nothing wraps onto the next row.
        let line = s.contents_between(added, 0, added, 40);
        assert_eq!(line.chars().count(), 40, "{line:?}");
        assert!(!s
            .contents_between(added + 1, 0, added + 1, 40)
            .contains("new"));
        // The selected row (the file header) in reverse video.
        let file = row_of("a.rs  (modified");
        assert!(cell(file, 0).inverse() && cell(file, 39).inverse());
        assert!(!cell(added, 0).inverse());
        // The status line last.
        assert!(s.contents_between(20, 0, 20, 40).starts_with(" diff "));
    }

    #[test]
    fn a_smaller_window_draws_fewer_rows() {
        let mut v = view(20);
        v.resize(3);
        let s = screen(&v, 4, 30);
        let text = s.contents();
        assert_eq!(text.lines().count(), 4, "{text}");
    }
}
