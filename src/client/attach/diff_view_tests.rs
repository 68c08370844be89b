use super::*;
use crate::client::attach::comments::Side;
use crate::client::attach::review_rows::Reviews;
use crate::client::patch::parse;

/// Two files, the first with two hunks.
const PATCH: &str = "diff --git a/a.rs b/a.rs\n--- a/a.rs\n+++ b/a.rs\n\
    @@ -1,2 +1,2 @@\n one\n-two\n+TWO\n\
    @@ -20,2 +20,3 @@ fn later()\n twenty\n+inserted\n twentyone\n\
    diff --git a/b.md b/b.md\nnew file mode 100644\n--- /dev/null\n+++ b/b.md\n\
    @@ -0,0 +1,3 @@\n+# Title\n+needle here\n+end\n";

fn view(height: usize) -> DiffView {
    DiffView::new(
        "t1".into(),
        vec!["diff of tab 1".into()],
        parse(PATCH).unwrap(),
        vec![],
        Default::default(),
        height,
    )
}

/// The selected row's text.
fn at(v: &DiffView) -> String {
    let r = &v.rows()[v.sel];
    format!("{}{}", r.gutter, r.text).trim().to_string()
}

/// (keys typed into a fresh view of 6 rows, the selected row's text)
#[test]
fn keys_move_through_rows_hunks_and_files() {
    #[rustfmt::skip]
    let rows: &[(&[u8], &str)] = &[
        (b"", "a.rs  (modified, +2 -1)"),
        (b"j", "@@ -1,2 +1,2 @@"),
        (b"jj", "1   1  one"),
        (b"\x1b[B\x1b[B\x1b[A", "@@ -1,2 +1,2 @@"),
        (b"\x1bOB", "@@ -1,2 +1,2 @@"),
        (b"]", "@@ -1,2 +1,2 @@"),
        (b"]]", "@@ -20,2 +20,3 @@ fn later()"),
        (b"]]]", "@@ -0,0 +1,3 @@"),
        (b"]]][", "@@ -20,2 +20,3 @@ fn later()"),
        (b"}", "b.md  (added, +3)"),
        (b"}{", "a.rs  (modified, +2 -1)"),
        (b"g", "diff of tab 1"),
        (b"G", "3 +end"),
        (b"Gk", "2 +needle here"),
        (b"\x1b[F", "3 +end"),
        (b"G\x1b[H", "diff of tab 1"),
        // Enter on the file list's entry goes to that file.
        (b"gjjjj\r", "b.md  (added, +3)"),
        (b"gjjj\r", "a.rs  (modified, +2 -1)"),
        // A page is the height less one row; the ends stop it.
        (b"g\x1b[6~j", "a.rs  (modified, +2 -1)"),
        (b"g  ", "2 +TWO"),
        (b"G\x1b[5~\x1b[5~", "2 +TWO"),
        (b"gk", "diff of tab 1"),
        (b"Gj", "3 +end"),
    ];
    for (keys, want) in rows {
        let mut v = view(6);
        assert_eq!(v.feed(keys), (Outcome::Stay, keys.len()), "{keys:?}");
        assert_eq!(at(&v), *want, "{keys:?}");
        assert!(
            v.sel >= v.top && v.sel < v.top + v.height,
            "{keys:?}: out of view"
        );
    }
}

/// (keys, the selected row's text, the note)
#[test]
fn search_goes_both_ways_and_wraps() {
    #[rustfmt::skip]
    let rows: &[(&[u8], &str, &str)] = &[
        (b"/needle\r", "2 +needle here", "found `needle`"),
        (b"/needle\rn", "2 +needle here", "found `needle`"),
        (b"/t\r", "2     -two", "found `t`"),
        (b"/t\rn", "@@ -20,2 +20,3 @@ fn later()", "found `t`"),
        (b"/t\rnN", "2     -two", "found `t`"),
        (b"G?one\r", "21  22  twentyone", "found `one`"),
        (b"G?one\rn", "1   1  one", "found `one`"),
        (b"/zzz\r", "a.rs  (modified, +2 -1)", "`zzz` not found"),
        (b"n", "a.rs  (modified, +2 -1)", "no search yet: / searches"),
        // Escape leaves the search; Backspace edits it.
        (b"/needle\x1bj", "@@ -1,2 +1,2 @@", ""),
        (b"/neex\x7fdle\r", "2 +needle here", "found `needle`"),
        // The line numbers are not searched.
        (b"/21\r", "a.rs  (modified, +2 -1)", "`21` not found"),
    ];
    for (keys, want, note) in rows {
        let mut v = view(6);
        v.feed(keys);
        assert_eq!(
            (at(&v).as_str(), v.note.as_str()),
            (*want, *note),
            "{keys:?}"
        );
    }
}

#[test]
fn comments_are_kept_under_their_lines_and_sent_as_one_message() {
    let mut v = view(30);
    // On `+TWO`, then on the removed `two`.
    assert_eq!(v.feed(b"/TWO\rcrename it\r").0, Outcome::Stay);
    assert_eq!(at(&v), ">> a.rs:2: rename it");
    assert_eq!(v.note, "1 comment kept: S sends it to the agent");
    v.feed(b"/two\rcwhy\x7f\x7f\x7fkeep it\r");
    let texts: Vec<String> = v.rows().iter().map(|r| r.text.clone()).collect();
    let two = texts.iter().position(|t| t == "-two").unwrap();
    assert_eq!(texts[two + 1], ">> a.rs:2 (a removed line): keep it");
    assert_eq!(texts[two + 2], "+TWO");
    assert_eq!(texts[two + 3], ">> a.rs:2: rename it");
    // Escape drops a comment being typed; an empty one keeps nothing.
    v.feed(b"/TWO\rcnot this\x1bc\r");
    assert_eq!(v.comments.len(), 2);
    v.feed(b"gc");
    assert!(
        v.status().contains("no comment on this row"),
        "{}",
        v.status()
    );
    v.feed(b"\x1b");
    assert!(v.note.starts_with("nothing kept"), "{}", v.note);
    // On a file header: the file as a whole.
    v.feed(b"}}cnew file\r");
    assert_eq!(
        v.comments[2],
        Comment {
            path: "b.md".into(),
            side: Side::New,
            line: None,
            text: "new file".into(),
            about: None,
        }
    );
    let (out, used) = v.feed(b"Syq");
    assert_eq!(used, 2, "the key after S y is the window's again");
    assert_eq!(
        out,
        Outcome::Send(
            "3 comments on your changes (file:line: comment):\n\
             a.rs:2: rename it\n\
             a.rs:2 (a removed line): keep it\n\
             b.md: new file"
                .into()
        )
    );
    // Sent: gone from the page; one typed meanwhile stays.
    let sent = v.comments.clone();
    v.feed(b"gGcmeanwhile\r");
    v.sent(&sent);
    assert_eq!(v.comments.len(), 1);
    assert!(!v.rows().iter().any(|r| r.text.contains("rename it")));
    assert!(v.rows().iter().any(|r| r.text.contains("meanwhile")));
}

#[test]
fn x_drops_the_selected_comment_and_s_needs_one() {
    let mut v = view(30);
    assert_eq!(v.feed(b"S").0, Outcome::Stay);
    assert_eq!(v.note, "no comments to send: c on a line writes one");
    v.feed(b"/TWO\rcone\r");
    v.feed(b"x");
    assert!(v.comments.is_empty());
    assert_eq!(v.note, "comment dropped");
    v.feed(b"x");
    assert_eq!(v.note, "x drops a comment: select one first");
}

#[test]
fn the_status_line_says_what_is_typed() {
    let mut v = view(30);
    assert!(v.status().starts_with(" diff 7/"), "{}", v.status());
    v.feed(b"/nee");
    assert_eq!(v.status(), " /nee_");
    v.feed(b"\x1b/TWO\rcgood");
    assert_eq!(
        v.status(),
        " comment on a.rs:2: good_   (Enter keeps it, Esc cancels)"
    );
    v.feed(b"\r");
    assert!(v.status().contains("S sends 1"), "{}", v.status());
    // The note before the keys: a narrow window cuts the end.
    assert!(
        v.status()
            .contains("/22 | 1 comment kept: S sends it to the agent | q close S sends 1"),
        "{}",
        v.status()
    );
}

/// Closing: q, Escape, Ctrl-C; the keys after are not the view's.
#[test]
fn q_escape_and_ctrl_c_close() {
    for keys in [&b"q"[..], b"\x1b", b"\x03", b"jjqls"] {
        let mut v = view(6);
        let (out, used) = v.feed(keys);
        assert_eq!(out, Outcome::Close, "{keys:?}");
        assert_eq!(&keys[used..], if keys.len() > 3 { &b"ls"[..] } else { b"" });
    }
}

#[test]
fn a_resize_keeps_the_selection_in_view() {
    let mut v = view(30);
    v.feed(b"G");
    v.resize(3);
    assert!(v.sel >= v.top && v.sel < v.top + 3);
    assert_eq!(v.top, v.rows().len() - 3);
}

/// The review panel's keys: `>`/`<` go from review comment to review
/// comment, `s` sends the selected one and `A` its review's, each in
/// `review::message`'s words; elsewhere they say what to select.
#[test]
fn review_keys_jump_and_send() {
    use crate::review::format::{Comment as Remark, Severity};
    use crate::review::store::Review;
    let remark = |file: &str, line, text: &str| Remark {
        file: file.into(),
        line,
        severity: Severity::Error,
        text: text.into(),
    };
    let review = |number, comments| Review {
        read: true,
        number,
        reviewer_tab: "r".into(),
        agent: "codex".into(),
        written_in_sandbox: false,
        base: "b".into(),
        head: "h".into(),
        summary: "ok".into(),
        comments,
    };
    let reviews = Reviews {
        done: vec![
            review(
                1,
                vec![remark("b.md", 2, "typo"), remark("a.rs", 2, "caps?")],
            ),
            review(2, vec![remark("a.rs", 21, "why here?")]),
        ],
        ..Reviews::default()
    };
    let mut v = DiffView::new(
        "t1".into(),
        vec!["diff of tab 1".into()],
        parse(PATCH).unwrap(),
        vec![],
        reviews,
        40,
    );
    let sel = |v: &DiffView| v.rows()[v.sel].kind;
    // Off a review comment, s and A say what to select.
    assert_eq!(v.feed(b"s").0, Outcome::Stay);
    assert!(v.note.starts_with("s sends a review comment"), "{}", v.note);
    assert_eq!(v.feed(b"A").0, Outcome::Stay);
    assert!(
        v.note.starts_with("A sends a review's comments"),
        "{}",
        v.note
    );
    // In page order: a.rs:2 (review 1), a.rs:21 (review 2), b.md:2.
    v.feed(b">");
    assert_eq!(sel(&v), RowKind::Remark(0, 1));
    v.feed(b">");
    assert_eq!(sel(&v), RowKind::Remark(1, 0));
    v.feed(b">");
    assert_eq!(sel(&v), RowKind::Remark(0, 0));
    v.feed(b">");
    assert_eq!(v.note, "no next review comment");
    v.feed(b"<");
    assert_eq!(sel(&v), RowKind::Remark(1, 0));
    assert_eq!(
        v.feed(b"sy").0,
        Outcome::SendReview {
            text: "Review 2 by codex of b..h: a.rs:21 (error): why here?".into(),
            what: "review 2's comment 1".into(),
        }
    );
    v.feed(b"<");
    assert_eq!(
        v.feed(b"Ay").0,
        Outcome::SendReview {
            text: "Review 1 by codex of b..h: b.md:2 (error): typo; a.rs:2 (error): caps?".into(),
            what: "review 1's 2 comments".into(),
        }
    );
    // Into a tab that runs a program, review text is never typed.
    v.reviews.program = Some("bash".into());
    assert_eq!(v.feed(b"s").0, Outcome::Stay);
    assert_eq!(v.feed(b"A").0, Outcome::Stay);
    assert!(v.note.contains("runs a program"), "{}", v.note);
    v.reviews.program = None;
    // c on a review comment is a question on it, shown under it.
    v.feed(b"c");
    assert!(
        v.status()
            .starts_with(" question on the review comment at a.rs:2: _"),
        "{}",
        v.status()
    );
    v.feed(b"and?\r");
    assert_eq!(
        v.comments[0].about.as_ref().map(|a| (a.review, a.index)),
        Some((1, 1))
    );
    assert_eq!(sel(&v), RowKind::Comment(0));
    assert_eq!(v.rows()[v.sel - 1].kind, RowKind::Remark(0, 1));
    assert!(v.rows()[v.sel].text.ends_with(">> question: and?"));
    // The question quotes the reviewer: into a program's tab, S refuses
    // it too, and it stays.
    v.reviews.program = Some("bash".into());
    assert_eq!(v.feed(b"S").0, Outcome::Stay);
    assert!(v.note.contains("stay as drafts"), "{}", v.note);
    assert_eq!(v.comments.len(), 1);
    v.reviews.program = None;
    assert!(matches!(v.feed(b"Sy").0, Outcome::Send(t) if t.contains("a question on review 1")));
    // g on the title: no review there.
    v.feed(b"g");
    assert_eq!(v.feed(b"A").0, Outcome::Stay);
}

/// A newcomer's trial: `c` on a blank line was refused and the words
/// typed after it ran as the view's keys, `S`, `s` and `A` among them,
/// which sent. Every send asks `y` first; any other key answers no.
#[test]
fn stray_typing_after_a_refused_c_never_sends() {
    let mut v = view(30);
    v.feed(b"/TWO\rcrename it\r");
    assert_eq!(v.comments.len(), 1);
    v.feed(b"g");
    // A word that starts `Sy` would be a send and its `y`.
    for k in b"cSydney Sent As is, say\r" {
        assert_eq!(v.key(&[*k]), Outcome::Stay, "{:?} sent", char::from(*k));
    }
    assert_eq!(v.comments.len(), 1, "nothing sent, nothing dropped");
    assert!(v.note.starts_with("nothing kept"), "{}", v.note);
    v.feed(b"S");
    assert!(
        v.status()
            .contains("send 1 comment to the tab's agent? y/n"),
        "{}",
        v.status()
    );
    assert_eq!(v.key(b"n"), Outcome::Stay);
    assert_eq!(v.note, "not sent");
    v.feed(b"S");
    assert!(matches!(v.key(b"y"), Outcome::Send(_)));
}
