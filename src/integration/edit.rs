//! What an install is made of: insertions only. Because an install never
//! replaces or reformats a byte of the user's text, deleting the inserted
//! spans gives back exactly the file it started from. An edit made through
//! a parser's tree (the JSON settings) is turned back into insertions by
//! comparing the texts (`similar`'s diff), and refused when it is not one.
//! Pure: text in, text out; the files are read and written in `files.rs`.

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
    #[error(
        "adding nerdr's hooks here would re-lay out text of yours (a one-line \
         object with spaces inside, or blank lines at the start or end of the \
         object or array they go in), and nerdr changes none of your bytes; \
         lay that part out one member per line, then run this command again"
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
/// changes any byte of `before`.
pub fn insertions(before: &str, after: &str) -> Option<Vec<Insertion>> {
    // By character, so no insertion starts or ends inside one.
    let old: Vec<char> = before.chars().collect();
    let new: Vec<char> = after.chars().collect();
    let old_offsets: Vec<usize> = before
        .char_indices()
        .map(|(i, _)| i)
        .chain([before.len()])
        .collect();
    let mut out: Vec<Insertion> = Vec::new();
    for op in similar::capture_diff_slices(similar::Algorithm::Myers, &old, &new) {
        match op {
            similar::DiffOp::Equal { .. } => {}
            similar::DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => {
                let at = old_offsets[old_index];
                let text: String = new[new_index..new_index + new_len].iter().collect();
                match out.last_mut() {
                    Some(last) if last.at == at => last.text.push_str(&text),
                    _ => out.push(Insertion { at, text }),
                }
            }
            similar::DiffOp::Delete { .. } | similar::DiffOp::Replace { .. } => return None,
        }
    }
    Some(out)
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
        let found = insertions("{\"é\": 1}", "{\"é\": 1, \"b\": [2]}").unwrap();
        assert_eq!(found, vec![ins(8, ", \"b\": [2]")]);
        let before = "[1,\n 2]";
        let after = "[0, 1,\n 2,\n 3]";
        let found = insertions(before, after).unwrap();
        assert_eq!(apply(before, &found), after);
        assert_eq!(unapply(after, &shifted(&found)).as_deref(), Some(before));
        assert_eq!(insertions("abc", "abc"), Some(vec![]));
    }

    #[test]
    fn an_edit_that_changes_the_users_bytes_is_not_insertions() {
        assert_eq!(insertions("[\n\n  1\n]", "[\n  1,\n  2\n]"), None);
        assert_eq!(insertions("{ \"a\": 1 }", "{\"a\": 1, \"b\": 2}"), None);
        assert_eq!(
            insertions("[1]", "[2, 1]x"),
            Some(vec![ins(1, "2, "), ins(3, "x")])
        );
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
