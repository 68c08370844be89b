//! The diff view's status line fitted to the window's width: where the
//! selection is, the note answering the last key, then as many key hints
//! as fit, the most needed first, each in a shorter form when its long
//! one does not fit. A note wider than the line (a refusal naming why)
//! is wrapped at words onto the lines above the status line rather than
//! cut mid-word. Pure.

use unicode_width::UnicodeWidthStr;

/// The most rows a note takes: the view stays in sight under it.
const NOTE_ROWS: usize = 4;

/// One key hint: its long form and its short one.
pub type Hint = (String, String);

/// The view's key hints, the most needed first: `comments` unsent,
/// `reviews` shown, `prefix` the window's prefix key's name.
pub fn hints(comments: usize, reviews: bool, prefix: &str) -> Vec<Hint> {
    let h = |long: &str, short: &str| (long.to_string(), short.to_string());
    let mut out = vec![h("q close", "q")];
    if comments > 0 {
        out.push((format!("S sends {comments}"), format!("S:{comments}")));
    }
    out.push(h("c comment", "c"));
    if reviews {
        out.push(h(">/< review s send A send all", ">/< s A"));
    }
    out.extend([
        h("j/k", "j/k"),
        h("]/[ hunk", "]/["),
        h("}/{ file", "}/{"),
        h("/ search", "/"),
        h("r reload", "r"),
        (format!("{prefix} ? all keys"), format!("{prefix} ?")),
    ]);
    out
}

/// The status line's lines at `width`: `at` (where the selection is),
/// `note` and what of `hints` fits.
pub fn lines(at: &str, note: &str, hints: &[Hint], width: usize) -> Vec<String> {
    let head = if note.is_empty() {
        at.to_string()
    } else {
        format!("{at} | {note}")
    };
    if head.width() > width {
        return wrapped(&head, width);
    }
    let mut line = head;
    let mut sep = " | ";
    for (long, short) in hints {
        for form in [long, short] {
            if line.width() + sep.len() + form.width() <= width {
                line.push_str(sep);
                line.push_str(form);
                sep = " ";
                break;
            }
        }
    }
    vec![line]
}

/// `text` in lines of at most `width` columns, broken at spaces (a word
/// longer than a line is broken where it must), at most `NOTE_ROWS`, the
/// last ending in `...` when more was left.
fn wrapped(text: &str, width: usize) -> Vec<String> {
    let width = width.max(8);
    let mut out: Vec<String> = Vec::new();
    // Each line starts with a space, as the status line does.
    let mut line = String::new();
    for word in text.split_whitespace() {
        let mut word = word.to_string();
        loop {
            if line.width() + 1 + word.width() <= width {
                line.push(' ');
                line.push_str(&word);
                break;
            }
            if !line.is_empty() {
                out.push(std::mem::take(&mut line));
                continue;
            }
            // A word longer than a line: broken where it must be.
            let head = super::status::fit(&word, width - 1).trim_end().to_string();
            word = word[head.len()..].to_string();
            out.push(format!(" {head}"));
        }
    }
    out.push(line);
    if out.len() > NOTE_ROWS {
        out.truncate(NOTE_ROWS);
        let last = &mut out[NOTE_ROWS - 1];
        *last = super::status::elide_words(&format!("{last} ..."), width);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (width, note, the lines wanted)
    #[test]
    fn hints_fit_the_width_most_needed_first() {
        let h = hints(2, true, "C-b");
        #[rustfmt::skip]
        let rows: &[(usize, &str, &[&str])] = &[
            (200, "", &[" diff 3/9 | q close S sends 2 c comment >/< review s send A send all j/k ]/[ hunk }/{ file / search r reload C-b ? all keys"]),
            (60, "", &[" diff 3/9 | q close S sends 2 c comment >/< s A j/k ]/[ hunk"]),
            (30, "", &[" diff 3/9 | q close S sends 2"]),
            (20, "", &[" diff 3/9 | q close"]),
            (40, "found `x`", &[" diff 3/9 | found `x` | q close S:2 c /"]),
            (9, "", &[" diff 3/9"]),
        ];
        for (width, note, want) in rows {
            let got = lines(" diff 3/9", note, &h, *width);
            assert_eq!(&got, want, "{width} {note:?}");
            for l in &got {
                assert!(l.width() <= *width, "{l:?} is wider than {width}");
            }
        }
    }

    #[test]
    fn a_long_note_wraps_at_words_and_is_never_cut_mid_word() {
        let note = "tab 5 runs a program (bash), not an agent: what is typed there \
                    would be taken as its input (a shell runs it); they stay as drafts";
        let got = lines(" diff 3/9", note, &hints(1, false, "C-b"), 40);
        assert!(got.len() > 1 && got.len() <= NOTE_ROWS, "{got:?}");
        let joined = got.iter().map(|l| l.trim()).collect::<Vec<_>>().join(" ");
        assert_eq!(joined, format!("diff 3/9 | {note}"));
        assert!(got.iter().all(|l| l.width() <= 40), "{got:?}");
        // Longer than four lines: the last says more was left.
        let long = "word ".repeat(60);
        let got = lines(" diff 3/9", &long, &[], 30);
        assert_eq!(got.len(), NOTE_ROWS);
        assert!(got[NOTE_ROWS - 1].ends_with("..."), "{got:?}");
    }
}
