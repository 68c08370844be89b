use super::*;

/// What `git diff -M` printed for a commit that adds, deletes, modifies,
/// renames (with and without changes), changes a mode, and touches binary
/// files and a quoted name (git 2.x).
const GIT: &str = r#"diff --git a/added.bin b/added.bin
new file mode 100644
index 0000000..f76dd23
Binary files /dev/null and b/added.bin differ
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
index 286c5f5..0000000
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-gone
diff --git a/keep.txt b/keep.txt
index 2019eda..f893115 100644
--- a/keep.txt
+++ b/keep.txt
@@ -1,6 +1,6 @@
 one
 two
-three
+THREE
 four
 five
 six
diff --git a/logo.png b/logo.png
index 88768ef..3e3315e 100644
Binary files a/logo.png and b/logo.png differ
diff --git a/old.txt b/new.txt
similarity index 83%
rename from old.txt
rename to new.txt
index 0fdf397..72ce94f 100644
--- a/old.txt
+++ b/new.txt
@@ -1,6 +1,6 @@
 a
 b
-c
+C
 d
 e
 f
diff --git a/nonl.txt b/nonl.txt
index c1b0730..e25f181 100644
--- a/nonl.txt
+++ b/nonl.txt
@@ -1 +1 @@
-x
\ No newline at end of file
+y
\ No newline at end of file
diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755
diff --git "a/sp ace \303\251.txt" "b/sp ace \303\251.txt"
new file mode 100644
index 0000000..45b983b
--- /dev/null
+++ "b/sp ace \303\251.txt"	
@@ -0,0 +1 @@
+hi
diff --git a/moved.txt b/there.txt
similarity index 100%
rename from moved.txt
rename to there.txt
"#;

/// (old path, new path, status, binary, hunks, added, removed)
type FileRow<'a> = (
    Option<&'a str>,
    Option<&'a str>,
    Status,
    bool,
    usize,
    usize,
    usize,
);

#[test]
fn every_kind_of_file_git_prints() {
    use Status::*;
    #[rustfmt::skip]
    let want: &[FileRow] = &[
        (None, Some("added.bin"), Added, true, 0, 0, 0),
        (Some("gone.txt"), None, Deleted, false, 1, 0, 1),
        (Some("keep.txt"), Some("keep.txt"), Modified, false, 1, 1, 1),
        (Some("logo.png"), Some("logo.png"), Modified, true, 0, 0, 0),
        (Some("old.txt"), Some("new.txt"), Renamed, false, 1, 1, 1),
        (Some("nonl.txt"), Some("nonl.txt"), Modified, false, 1, 1, 1),
        (Some("run.sh"), Some("run.sh"), Modified, false, 0, 0, 0),
        (None, Some("sp ace é.txt"), Added, false, 1, 1, 0),
        (Some("moved.txt"), Some("there.txt"), Renamed, false, 0, 0, 0),
    ];
    let p = parse(GIT).unwrap();
    let got: Vec<FileRow> = p
        .files
        .iter()
        .map(|f| {
            (
                f.old_path.as_deref(),
                f.new_path.as_deref(),
                f.status,
                f.binary,
                f.hunks.len(),
                f.added(),
                f.removed(),
            )
        })
        .collect();
    assert_eq!(got, want);
    let run = &p.files[6];
    assert_eq!(
        (run.old_mode.as_deref(), run.new_mode.as_deref()),
        (Some("100644"), Some("100755"))
    );
    assert_eq!(p.files[4].similarity, Some(83));
    assert_eq!(p.files[8].similarity, Some(100));
    assert_eq!(p.files[0].path(), "added.bin");
    assert_eq!(p.files[1].path(), "gone.txt");
}

/// (kind, text, old number, new number, no newline)
type LineRow<'a> = (Kind, &'a str, Option<u32>, Option<u32>, bool);

fn lines(h: &Hunk) -> Vec<LineRow<'_>> {
    h.lines
        .iter()
        .map(|l| (l.kind, l.text.as_str(), l.old, l.new, l.no_newline))
        .collect()
}

#[test]
fn lines_carry_their_old_and_new_numbers() {
    use Kind::*;
    let p = parse(GIT).unwrap();
    #[rustfmt::skip]
    let keep: &[LineRow] = &[
        (Context, "one", Some(1), Some(1), false),
        (Context, "two", Some(2), Some(2), false),
        (Removed, "three", Some(3), None, false),
        (Added, "THREE", None, Some(3), false),
        (Context, "four", Some(4), Some(4), false),
        (Context, "five", Some(5), Some(5), false),
        (Context, "six", Some(6), Some(6), false),
    ];
    assert_eq!(lines(&p.files[2].hunks[0]), keep);
    // Both sides end without a newline.
    #[rustfmt::skip]
    let nonl: &[LineRow] = &[
        (Removed, "x", Some(1), None, true),
        (Added, "y", None, Some(1), true),
    ];
    assert_eq!(lines(&p.files[5].hunks[0]), nonl);
    // A deleted file's lines count from 1 on the old side only.
    assert_eq!(
        lines(&p.files[1].hunks[0]),
        [(Removed, "gone", Some(1), None, false)]
    );
    assert_eq!(
        lines(&p.files[7].hunks[0]),
        [(Added, "hi", None, Some(1), false)]
    );
    let h = &p.files[2].hunks[0];
    assert_eq!(
        (h.old_start, h.old_count, h.new_start, h.new_count),
        (1, 6, 1, 6)
    );
}

/// A removed line that reads like a header (`--- sql`, `+++ x`) is still
/// a line of its hunk: the counts say where the hunk ends.
#[test]
fn header_lookalike_lines_stay_in_their_hunk() {
    use Kind::*;
    let text = "diff --git a/q.sql b/q.sql\n--- a/q.sql\n+++ b/q.sql\n\
                @@ -1,3 +1,2 @@ fn x()\n--- sql\n++++ b\n keep\n-diff --git a/z b/z\n\
                diff --git a/r b/r\n--- a/r\n+++ b/r\n@@ -1 +1 @@\n-1\n+2\n";
    let p = parse(text).unwrap();
    assert_eq!(p.files.len(), 2, "{p:#?}");
    let h = &p.files[0].hunks[0];
    assert_eq!(h.section, "fn x()");
    #[rustfmt::skip]
    let want: &[LineRow] = &[
        (Removed, "-- sql", Some(1), None, false),
        (Added, "+++ b", None, Some(1), false),
        (Context, "keep", Some(2), Some(2), false),
        (Removed, "diff --git a/z b/z", Some(3), None, false),
    ];
    assert_eq!(lines(h), want);
    assert_eq!(p.files[1].path(), "r");
}

#[test]
fn an_empty_patch_has_no_files() {
    for text in ["", "\n", "commit message only\n\nmore\n"] {
        let p = parse(text).unwrap();
        assert!(p.is_empty(), "{text:?}");
    }
}

#[test]
fn several_hunks_and_a_plain_diff_u() {
    let text = "--- a.txt\t2024-01-01 10:00:00 +0000\n+++ b.txt\t2024-01-01 11:00:00 +0000\n\
                @@ -1,2 +1,2 @@\n-a\n+A\n b\n@@ -10 +10,2 @@\n x\n+y\n";
    let p = parse(text).unwrap();
    let f = &p.files[0];
    assert_eq!(
        (f.old_path.as_deref(), f.new_path.as_deref()),
        (Some("a.txt"), Some("b.txt"))
    );
    assert_eq!(f.hunks.len(), 2);
    let h = &f.hunks[1];
    assert_eq!(
        lines(h),
        [
            (Kind::Context, "x", Some(10), Some(10), false),
            (Kind::Added, "y", None, Some(11), false)
        ]
    );
}

/// (patch, the line named, words of the message)
#[test]
fn bad_patches_name_their_line() {
    #[rustfmt::skip]
    let rows: &[(&str, usize, &str)] = &[
        ("@@ -1 +1 @@\n-a\n+b\n", 1, "before any file header"),
        ("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n-a\n+b\n", 6, "ends early"),
        ("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\nzzz\n", 6, "not `+`, `-` or context"),
        ("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n-b\n+c\n", 6, "more lines than"),
        ("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -x +1 @@\n", 4, "not a hunk header"),
        ("diff --git a/x b/x\nindex 1..2\n@@ -1 +1 @@\n", 3, "before the file's `---`"),
    ];
    for (text, line, words) in rows {
        let e = parse(text).unwrap_err();
        assert_eq!(e.line, *line, "{text:?}: {e}");
        assert!(e.to_string().contains(words), "{text:?}: {e}");
        assert!(
            e.to_string().starts_with(&format!("patch line {line}: ")),
            "{e}"
        );
    }
}

#[test]
fn quoted_names_unquote() {
    #[rustfmt::skip]
    let rows = [
        (r#""a/t\303\251st""#, "a/tést"),
        (r#""tab\there""#, "tab\there"),
        (r#""q\"uote\\""#, "q\"uote\\"),
        ("plain name", "plain name"),
    ];
    for (raw, want) in rows {
        assert_eq!(unquote(raw), want, "{raw}");
    }
    assert_eq!(
        git_names("a/x y b/x y"),
        Some(("x y".to_string(), "x y".to_string()))
    );
    assert_eq!(
        git_names(r#""a/\303\251" "b/\303\251""#),
        Some(("é".to_string(), "é".to_string()))
    );
}

/// `git diff --binary`: the base85 data is skipped, the next file read.
#[test]
fn a_binary_patch_body_is_skipped() {
    let text = "diff --git a/b.bin b/b.bin\nnew file mode 100644\nindex 0000000..1\n\
                GIT binary patch\nliteral 3\nKcmZQzWB>pF\n\nliteral 0\nHcmV?d00001\n\n\
                diff --git a/c b/c\n--- a/c\n+++ b/c\n@@ -1 +1 @@\n-1\n+2\n";
    let p = parse(text).unwrap();
    assert_eq!(p.files.len(), 2);
    assert!(p.files[0].binary);
    assert_eq!(p.files[0].status, Status::Added);
    assert_eq!(p.files[1].added(), 1);
}
