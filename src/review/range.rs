//! Whether a review's comments are on the work reviewed: each comment's
//! file must be one the range `base..head` changes, and its line a line of
//! that file at `head` (the reviewer's worktree, and the lines the diff
//! view places comments on: an added or unchanged line of the new side).
//! A remark on anything else (another file, a line that is not there)
//! belongs in the summary. Without this, a reviewer could put a comment
//! "on" any path, which the person reads as being about the change.
//!
//! [`check`] is the rule, pure over [`Facts`]; [`parse_tree`], [`changed`]
//! and [`count_lines`] read what the core gathers with git
//! (`core::review_posts`: `ls-tree` of both ends and `cat-file` of the
//! commented files at head, queries that run nothing the repository
//! configures, off its async workers and outside its state lock).

use std::collections::{BTreeMap, BTreeSet};

use super::format::Posted;
use super::short;

/// A file at head larger than this is not read to count its lines: any
/// line number is taken for it.
pub const MAX_COUNTED: u64 = 16 << 20;

/// What the check needs to know of the range.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    pub base: String,
    pub head: String,
    /// Every path the range changes (added, modified, deleted; a rename
    /// is a deletion and an addition).
    pub changed: BTreeSet<String>,
    /// Each commented changed file that is there at head, with its number
    /// of lines (`None`: too large to count, or not a file: not checked).
    pub at_head: BTreeMap<String, Option<u32>>,
}

/// The first comment of `posted` that is not on the range, as the error
/// the reviewer is shown: its input line, the file, the range and what to
/// do.
pub fn check(posted: &Posted, f: &Facts) -> Result<(), String> {
    let range = format!("{}..{}", short(&f.base), short(&f.head));
    let instead = "comment only on lines of the files the range changes, as they are at its \
                   head; put remarks on anything else in the summary";
    for (i, c) in posted.comments.iter().enumerate() {
        let at = posted
            .lines
            .get(i)
            .map(|n| format!("line {n}: "))
            .unwrap_or_default();
        if !f.changed.contains(&c.file) {
            return Err(format!(
                "{at}{:?} is not among the files the reviewed range {range} changes ({}); \
                 {instead}",
                c.file,
                listed(&f.changed)
            ));
        }
        match f.at_head.get(&c.file) {
            None => {
                return Err(format!(
                    "{at}{:?} is deleted (or renamed) by the reviewed range {range}: it has no \
                     lines at {}; {instead}",
                    c.file,
                    short(&f.head)
                ))
            }
            Some(Some(count)) if c.line > *count => {
                return Err(format!(
                    "{at}{:?} has {count} line{} at {} (the head of the reviewed range {range}); \
                     there is no line {}: {instead}",
                    c.file,
                    if *count == 1 { "" } else { "s" },
                    short(&f.head),
                    c.line
                ))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// The changed files for a message: the first few, and how many more.
fn listed(changed: &BTreeSet<String>) -> String {
    const SHOWN: usize = 10;
    if changed.is_empty() {
        return "it changes none".into();
    }
    let mut out: Vec<String> = changed
        .iter()
        .take(SHOWN)
        .map(|f| crate::printable::printable(f))
        .collect();
    if changed.len() > SHOWN {
        out.push(format!("and {} more", changed.len() - SHOWN));
    }
    out.join(", ")
}

/// One entry of `git ls-tree -r -z -l`: its mode, type, object and size
/// (`-` for a submodule's commit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub mode: String,
    pub kind: String,
    pub object: String,
    pub size: Option<u64>,
}

/// `git ls-tree -r -z -l` output (`<mode> <type> <object> <size>\t<path>`),
/// by path.
pub fn parse_tree(bytes: &[u8]) -> BTreeMap<String, Entry> {
    let mut out = BTreeMap::new();
    for rec in bytes.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let Some(tab) = rec.iter().position(|b| *b == b'\t') else {
            continue;
        };
        let meta = String::from_utf8_lossy(&rec[..tab]);
        let path = String::from_utf8_lossy(&rec[tab + 1..]).into_owned();
        let words: Vec<&str> = meta.split_whitespace().collect();
        if let [mode, kind, object, size] = words.as_slice() {
            out.insert(
                path,
                Entry {
                    mode: mode.to_string(),
                    kind: kind.to_string(),
                    object: object.to_string(),
                    size: size.parse().ok(),
                },
            );
        }
    }
    out
}

/// The paths whose entry differs between the two trees (or is in one
/// only).
pub fn changed(base: &BTreeMap<String, Entry>, head: &BTreeMap<String, Entry>) -> BTreeSet<String> {
    let differs = |p: &String| match (base.get(p), head.get(p)) {
        (Some(a), Some(b)) => (&a.mode, &a.object) != (&b.mode, &b.object),
        _ => true,
    };
    base.keys()
        .chain(head.keys())
        .filter(|p| differs(p))
        .cloned()
        .collect()
}

/// A file's lines as an editor numbers them: a last line without a
/// newline counts.
pub fn count_lines(bytes: &[u8]) -> u32 {
    let newlines = bytes.iter().filter(|b| **b == b'\n').count();
    let unterminated = !bytes.is_empty() && !bytes.ends_with(b"\n");
    u32::try_from(newlines + usize::from(unterminated)).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::super::format::{parse, Comment, Severity};
    use super::*;

    fn facts_of(changed: &[&str], at_head: &[(&str, Option<u32>)]) -> Facts {
        Facts {
            base: "b0b0b0b0b0b0b0b0".into(),
            head: "h1h1h1h1h1h1h1h1".into(),
            changed: changed.iter().map(|s| s.to_string()).collect(),
            at_head: at_head.iter().map(|(f, n)| (f.to_string(), *n)).collect(),
        }
    }

    #[test]
    fn a_comment_must_be_on_a_line_of_a_changed_file_at_head() {
        let f = facts_of(
            &["src/a.rs", "gone.rs", "big.bin", "old.rs", "new.rs"],
            &[
                ("src/a.rs", Some(10)),
                ("big.bin", None),
                ("new.rs", Some(1)),
            ],
        );
        // (review, None when taken, else what the error starts with and
        // holds)
        #[rustfmt::skip]
        let rows: &[(&str, Option<(&str, &str)>)] = &[
            ("summary: s\n", None),
            ("summary: s\nsrc/a.rs:1: note: first\nsrc/a.rs:10: note: last\n", None),
            ("summary: s\nnew.rs:1: note: only line\n", None),
            ("summary: s\nbig.bin:99999: note: not counted\n", None),
            ("summary: s\nsrc/a.rs:11: note: past\n",
             Some(("line 2: \"src/a.rs\" has 10 lines at h1h1h1h1h1h1", "there is no line 11"))),
            ("summary: s\nnew.rs:2: note: past\n",
             Some(("line 2: \"new.rs\" has 1 line at", "there is no line 2"))),
            ("summary: s\nsrc/a.rs:1: note: ok\n\nREADME.md:1: note: elsewhere\n",
             Some(("line 4: \"README.md\" is not among the files the reviewed range \
                    b0b0b0b0b0b0..h1h1h1h1h1h1 changes (big.bin, gone.rs",
                   "put remarks on anything else in the summary"))),
            ("summary: s\ngone.rs:3: warning: was here\n",
             Some(("line 2: \"gone.rs\" is deleted (or renamed) by the reviewed range", "summary"))),
            ("{\"summary\": \"s\"}\n{\"file\": \"src/b.rs\", \"line\": 1, \"severity\": \"note\", \"text\": \"t\"}\n",
             Some(("line 2: \"src/b.rs\" is not among", "summary"))),
        ];
        for (input, want) in rows {
            let posted = parse(input).unwrap();
            match (check(&posted, &f), want) {
                (Ok(()), None) => {}
                (Err(e), Some((starts, holds))) => {
                    assert!(e.starts_with(starts) && e.contains(holds), "{input:?}: {e}")
                }
                (got, want) => panic!("{input:?}: got {got:?}, wanted {want:?}"),
            }
        }
        // A line 0 never gets this far (`format` refuses it); a comment
        // made by hand says which.
        let posted = Posted {
            summary: "s".into(),
            comments: vec![Comment {
                file: "x".into(),
                line: 1,
                severity: Severity::Note,
                text: "t".into(),
            }],
            lines: vec![],
        };
        assert!(check(&posted, &f)
            .unwrap_err()
            .starts_with("\"x\" is not among"));
        let none = facts_of(&[], &[]);
        assert!(check(&parse("summary: s\na:1: note: t\n").unwrap(), &none)
            .unwrap_err()
            .contains("(it changes none)"));
    }

    #[test]
    fn the_changed_files_are_those_whose_entry_differs() {
        let tree = |entries: &[(&str, &str, &str)]| {
            let mut out = Vec::new();
            for (path, mode, object) in entries {
                out.extend(format!("{mode} blob {object}      12\t{path}\0").into_bytes());
            }
            parse_tree(&out)
        };
        let base = tree(&[
            ("same", "100644", "aa"),
            ("edited", "100644", "bb"),
            ("chmod", "100644", "cc"),
            ("gone", "100644", "dd"),
            ("with\ttab and space", "100644", "ee"),
        ]);
        let head = tree(&[
            ("same", "100644", "aa"),
            ("edited", "100644", "b2"),
            ("chmod", "100755", "cc"),
            ("new", "100644", "ff"),
            ("with\ttab and space", "100644", "e2"),
        ]);
        let got: Vec<String> = changed(&base, &head).into_iter().collect();
        assert_eq!(
            got,
            ["chmod", "edited", "gone", "new", "with\ttab and space"]
        );
        assert_eq!(head["new"].size, Some(12));
        let submodule = parse_tree(b"160000 commit 0123abcd       -\tlib\0");
        assert_eq!(submodule["lib"].size, None);
        assert_eq!(submodule["lib"].kind, "commit");
    }

    #[test]
    fn lines_are_counted_as_an_editor_numbers_them() {
        let rows: &[(&[u8], u32)] = &[
            (b"", 0),
            (b"a", 1),
            (b"a\n", 1),
            (b"a\nb", 2),
            (b"a\nb\n", 2),
            (b"\n\n", 2),
            (b"a\r\nb\r\n", 2),
        ];
        for (bytes, want) in rows {
            assert_eq!(count_lines(bytes), *want, "{bytes:?}");
        }
    }
}
