//! What an install is made of: insertions only. Because an install never
//! replaces or reformats a byte of the user's text, deleting the inserted
//! spans gives back exactly the file it started from. An edit made through
//! a parser's tree (the JSON settings) is turned back into insertions by
//! comparing the texts (`similar`'s diff), token by token and then the
//! whitespace between tokens by character: where the tree dropped bytes of
//! the user's layout (blank lines), those bytes are kept and only what it
//! added is inserted; a changed token refuses the edit. Pure: text in,
//! text out; the files are read and written in `files.rs`.

use std::ops::Range;

use serde::{Deserialize, Serialize};

/// `text` inserted at byte offset `at`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Insertion {
    pub at: usize,
    pub text: String,
}

/// What installing would change in one settings file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Insertions at offsets of the text before, ascending and distinct.
    pub inserts: Vec<Insertion>,
    /// Key paths of the objects and arrays the plan creates (for example
    /// `["hooks", "Stop"]`), so an uninstall can drop them once empty even
    /// after the user edited the file.
    pub created: Vec<Vec<String>>,
    /// The agent's events that get a hook.
    pub events: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Planned {
    /// Every hook is already there: nothing to write.
    Already,
    Plan(Plan),
}

/// Why a settings file cannot be edited. The caller adds the file's path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    #[error("{what}; fix the file (or move it aside), then run this command again")]
    Syntax { what: String },
    #[error("`{key}` is {found}, but the agent expects {expected}; fix it by hand, then run this command again")]
    Shape {
        key: String,
        found: String,
        expected: &'static str,
    },
    /// The edit would change a token of the user's, or their layout kept
    /// would not mean what the edit does. Blank space the edit drops is
    /// kept and is no reason.
    #[error(
        "adding nerdr's hooks here would change text of yours, not only the \
         blank space around it, and nerdr changes none of your bytes; add the \
         hooks by hand, or lay out the object or array they go in one member \
         per line, then run this command again"
    )]
    Reformat,
    #[error("`{key}` is already set{at} to {found}; {why}")]
    Taken {
        key: String,
        at: String,
        found: String,
        why: String,
    },
}

/// The text after the insertions (given at offsets of `before`).
pub fn apply(before: &str, inserts: &[Insertion]) -> String {
    let mut out =
        String::with_capacity(before.len() + inserts.iter().map(|i| i.text.len()).sum::<usize>());
    let mut from = 0;
    for ins in inserts {
        out.push_str(&before[from..ins.at]);
        out.push_str(&ins.text);
        from = ins.at;
    }
    out.push_str(&before[from..]);
    out
}

/// The insertions that turn `before` into `after` (at offsets of
/// `before`, ascending and distinct), or `None` when `after` deletes or
/// changes a token of `before`. The tokens are each text's, as byte
/// ranges, ascending; what lies between them is layout.
///
/// Layout of the user's that `after` deleted or replaced stays: the
/// insertions then give `after` with the user's layout, not `after`
/// itself, and the caller checks that this text still means what `after`
/// does.
pub fn insertions(
    (before, old_tokens): (&str, &[Range<usize>]),
    (after, new_tokens): (&str, &[Range<usize>]),
) -> Option<Vec<Insertion>> {
    let old: Vec<&str> = old_tokens.iter().map(|r| &before[r.clone()]).collect();
    let new: Vec<&str> = new_tokens.iter().map(|r| &after[r.clone()]).collect();
    // First every token of the user's must be in `after`, in order. Apart
    // from the layout, because in one diff dropping a blank line can cost
    // as much as dropping a `1`, and the diff might drop the `1`.
    let mut anchors: Vec<(Range<usize>, Range<usize>)> = Vec::new();
    for op in similar::capture_diff_slices(similar::Algorithm::Myers, &old, &new) {
        match op {
            similar::DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => anchors.extend((0..len).map(|k| {
                (
                    old_tokens[old_index + k].clone(),
                    new_tokens[new_index + k].clone(),
                )
            })),
            similar::DiffOp::Insert { .. } => {}
            similar::DiffOp::Delete { .. } | similar::DiffOp::Replace { .. } => return None,
        }
    }
    // Then, between two of those tokens, the user's layout against what
    // `after` has there, character by character.
    let mut out: Vec<Insertion> = Vec::new();
    let (mut o, mut n) = (0, 0);
    let ends = (before.len()..before.len(), after.len()..after.len());
    for (old_token, new_token) in anchors.into_iter().chain([ends]) {
        for ins in gap_insertions(&before[o..old_token.start], &after[n..new_token.start]) {
            let at = o + ins.at;
            match out.last_mut() {
                Some(last) if last.at == at => last.text.push_str(&ins.text),
                _ => out.push(Insertion { at, ..ins }),
            }
        }
        (o, n) = (old_token.end, new_token.end);
    }
    Some(out)
}

/// What `after` adds to the layout `before` between two tokens. What only
/// `before` has stays, with what replaced it inserted behind it, so a line
/// break that ends a line comment stays right after the comment.
fn gap_insertions(before: &str, after: &str) -> Vec<Insertion> {
    // By character, so no insertion starts or ends inside one.
    let old: Vec<char> = before.chars().collect();
    let new: Vec<char> = after.chars().collect();
    let old_offsets: Vec<usize> = before
        .char_indices()
        .map(|(i, _)| i)
        .chain([before.len()])
        .collect();
    let mut out = Vec::new();
    for op in similar::capture_diff_slices(similar::Algorithm::Myers, &old, &new) {
        let (kept_end, added) = match op {
            similar::DiffOp::Equal { .. } | similar::DiffOp::Delete { .. } => continue,
            similar::DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => (old_index, new_index..new_index + new_len),
            similar::DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => (old_index + old_len, new_index..new_index + new_len),
        };
        out.push(Insertion {
            at: old_offsets[kept_end],
            text: new[added].iter().collect(),
        });
    }
    out
}

/// The insertions' offsets in the text after them, which is where an
/// uninstall finds them.
pub fn shifted(inserts: &[Insertion]) -> Vec<Insertion> {
    let mut shift = 0;
    inserts
        .iter()
        .map(|i| {
            let moved = Insertion {
                at: i.at + shift,
                text: i.text.clone(),
            };
            shift += i.text.len();
            moved
        })
        .collect()
}

/// The text before the insertions, given at offsets of `after` (as
/// [`shifted`] gives them); `None` when `after` does not hold them there.
pub fn unapply(after: &str, inserts_after: &[Insertion]) -> Option<String> {
    let mut out = after.to_string();
    for ins in inserts_after.iter().rev() {
        let end = ins.at.checked_add(ins.text.len())?;
        if out.get(ins.at..end)? != ins.text {
            return None;
        }
        out.replace_range(ins.at..end, "");
    }
    Some(out)
}

/// Delete each inserted text where it now stands, found by its exact bytes:
/// it must occur exactly once. For a file the user edited elsewhere since the
/// install; `None` when a span was changed, moved apart or duplicated.
pub fn cut_spans(text: &str, inserts: &[Insertion]) -> Option<String> {
    let mut out = text.to_string();
    for ins in inserts.iter().rev() {
        let mut found = out.match_indices(ins.text.as_str());
        let (at, _) = found.next()?;
        if found.next().is_some() {
            return None;
        }
        out.replace_range(at..at + ins.text.len(), "");
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `insertions` with each text's tokens as `tokens` finds them.
    fn insertions(
        before: &str,
        after: &str,
        tokens: fn(&str) -> Vec<Range<usize>>,
    ) -> Option<Vec<Insertion>> {
        super::insertions((before, &tokens(before)), (after, &tokens(after)))
    }

    /// Every character a token: no layout, so nothing may go.
    fn strict(text: &str) -> Vec<Range<usize>> {
        text.char_indices()
            .map(|(i, c)| i..i + c.len_utf8())
            .collect()
    }

    /// Every character but whitespace a token.
    fn blank(text: &str) -> Vec<Range<usize>> {
        text.char_indices()
            .filter(|(_, c)| !c.is_ascii_whitespace())
            .map(|(i, c)| i..i + c.len_utf8())
            .collect()
    }

    fn ins(at: usize, text: &str) -> Insertion {
        Insertion {
            at,
            text: text.into(),
        }
    }

    #[test]
    fn unapply_undoes_apply_exactly() {
        let before = "abc def";
        let inserts = vec![ins(0, "<"), ins(3, "[x]"), ins(7, ">")];
        let after = apply(before, &inserts);
        assert_eq!(after, "<abc[x] def>");
        assert_eq!(unapply(&after, &shifted(&inserts)).as_deref(), Some(before));
    }

    #[test]
    fn insertions_are_what_the_edit_added() {
        // Offsets are in bytes: `é` takes two, so `}`, char 7, is at byte 8.
        let found = insertions("{\"é\": 1}", "{\"é\": 1, \"b\": [2]}", strict).unwrap();
        assert_eq!(found, vec![ins(8, ", \"b\": [2]")]);
        let before = "[1,\n 2]";
        let after = "[0, 1,\n 2,\n 3]";
        let found = insertions(before, after, strict).unwrap();
        assert_eq!(apply(before, &found), after);
        assert_eq!(unapply(after, &shifted(&found)).as_deref(), Some(before));
        assert_eq!(insertions("abc", "abc", strict), Some(vec![]));
    }

    #[test]
    fn an_edit_that_changes_the_users_bytes_is_not_insertions() {
        assert_eq!(insertions("[\n\n  1\n]", "[\n  1,\n  2\n]", strict), None);
        assert_eq!(
            insertions("{ \"a\": 1 }", "{\"a\": 1, \"b\": 2}", strict),
            None
        );
        // Even where layout may stay, a byte that is not layout may not go.
        assert_eq!(insertions("[1, 2]", "[1, 3]", blank), None);
        assert_eq!(insertions("[1 /* c */]", "[1, 2]", blank), None);
        assert_eq!(
            insertions("[1]", "[2, 1]x", strict),
            Some(vec![ins(1, "2, "), ins(3, "x")])
        );
    }

    #[test]
    fn layout_the_edit_dropped_is_kept_and_only_its_additions_inserted() {
        // A blank line deleted at the top of the array stays.
        let before = "[\n\n  1\n]";
        let found = insertions(before, "[\n  1,\n  2\n]", blank).unwrap();
        let after = apply(before, &found);
        assert_eq!(after, "[\n\n  1,\n  2\n]");
        assert_eq!(unapply(&after, &shifted(&found)).as_deref(), Some(before));
        // Layout replaced: the new text goes after the kept bytes.
        assert_eq!(
            insertions("[1\t]", "[1, 2]", blank),
            Some(vec![ins(3, ", 2")])
        );
        assert_eq!(insertions("[\n\n  1\n]", "[\n  1\n]", blank), Some(vec![]));
    }

    #[test]
    fn unapply_refuses_text_that_moved() {
        let inserts = vec![ins(3, "[x]")];
        assert_eq!(unapply("ab[x]c def", &shifted(&inserts)), None);
        assert_eq!(unapply("ab", &shifted(&inserts)), None);
    }

    #[test]
    fn cut_spans_finds_unique_spans_anywhere() {
        let inserts = vec![ins(3, "[x]")];
        assert_eq!(
            cut_spans("new abc[x] def", &inserts).as_deref(),
            Some("new abc def")
        );
        assert_eq!(cut_spans("[x] abc[x]", &inserts), None);
        assert_eq!(cut_spans("abc [y]", &inserts), None);
    }
}
