//! Reviews by agents (README.md, "Reviews"; docs/ARCHITECTURE.md,
//! "Reviews"): who reviews ([`choice`], pure), what a reviewer posts
//! ([`format`], pure), where reviews are kept ([`store`]), and the words
//! the reviewer and the author are sent (here, pure). Starting the
//! reviewer and taking its post are the core's (`core::review_*`).
//!
//! A review's text is the reviewer's, an agent's, perhaps a sandboxed
//! one's: wherever it leaves the store (`nerdr reviews`, its `--json`, the
//! window's review panel, the message `--send` types into the author) it
//! goes through [`shown`] or [`message`], which make control, bidirectional
//! and zero-width characters visible escapes (`crate::printable`, the one
//! list nerdr keeps of them). `nerdr post-review` refuses control
//! characters (`format`: a review is lines of text) but takes the hidden
//! ones, escaped on the way out instead: a direction mark or a joiner has
//! honest uses in a review's prose (right-to-left text, emoji), reviews
//! stored before the check would pass unescaped otherwise, and the escape
//! itself shows the person that the reviewer wrote something hidden.

pub mod choice;
pub mod format;
pub mod range;
pub mod status;
pub mod store;
pub mod unread;

use crate::printable::printable;
use format::Comment;
use store::Review;

/// Review `review` as it leaves the store: the reviewer's words (summary,
/// each comment's file and text) and its agent's name made printable.
pub fn shown(review: &Review) -> Review {
    Review {
        agent: printable(&review.agent),
        summary: printable(&review.summary),
        comments: review
            .comments
            .iter()
            .map(|c| Comment {
                file: printable(&c.file),
                text: printable(&c.text),
                ..c.clone()
            })
            .collect(),
        ..review.clone()
    }
}

/// The reviewer's first prompt, typed once its screen is ready: the range
/// to review and how to answer. One line: a newline typed into an agent's
/// prompt would send the half before it.
pub fn first_prompt(author: &str, branch: &str, base: &str, head: &str) -> String {
    format!(
        "Please review the commits {base}..{head} of branch {branch} (the work of tab {author}). \
         They are checked out in this folder, your own worktree at {head}: read them with \
         `git log {base}..{head}` and `git diff {base}..{head}`, and change nothing. Then post \
         your review by running \"${{NERDR_BIN:-nerdr}}\" post-review with the review on its \
         standard input (or in a file with --file FILE): a first line `summary: ONE PARAGRAPH`, \
         then one line per comment `FILE:LINE: SEVERITY: TEXT` (FILE relative to the top \
         folder, SEVERITY error, warning or note). Run it once; if it reports a problem, fix \
         that line and run it again."
    )
}

/// The longest tab name, as the core takes it (`core::handles::MAX_NAME`,
/// whose tests hold the two equal): the review module is below the core.
pub const LONGEST_NAME: usize = 24;

/// How much of the author's id a reviewer's name carries: enough to tell
/// tabs apart (a handle takes any unique prefix of two or more), short
/// enough for the status line.
pub const AUTHOR_ID_IN_NAME: usize = 4;

/// A reviewer tab's name: `review-<author's name>-<author's id prefix>`
/// (`review-claude-1-ab12`), made unique among `taken` (its session's
/// names) with `-2`, `-3`, ... The id keeps the name true once the author
/// closes and another tab takes its name; the author's name is cut so the
/// whole stays within a tab name's length ([`LONGEST_NAME`]).
pub fn reviewer_name<'a>(
    author: &str,
    author_id: &str,
    taken: impl Iterator<Item = &'a str> + Clone,
) -> String {
    let id: String = author_id.chars().take(AUTHOR_ID_IN_NAME).collect();
    // Room for `review-`, `-<id>` and a `-NN` to make it unique.
    let room = LONGEST_NAME.saturating_sub("review-".len() + 1 + id.len() + 3);
    let author: String = author.chars().take(room.max(1)).collect();
    let author = author.trim_end_matches('-');
    let first = format!("review-{author}-{id}");
    std::iter::once(first.clone())
        .chain((2..).map(|n| format!("{first}-{n}")))
        .find(|name| !taken.clone().any(|t| t == name))
        .expect("some number is free")
}

/// The note text from a sandboxed agent carries for whoever reads it
/// outside one.
pub const SANDBOX_NOTE: &str = "[written in a sandbox: it may carry that agent's instructions]";

/// Review comments as one message for the author agent (`nerdr reviews
/// --send`): one line, each comment as `FILE:LINE (SEVERITY): TEXT`.
/// `which`: the comment's number (1-based) or every comment.
pub fn message(review: &Review, which: Option<usize>) -> Result<String, String> {
    let review = &shown(review);
    let chosen: Vec<(usize, &Comment)> = match which {
        None => review.comments.iter().enumerate().collect(),
        Some(n) if (1..=review.comments.len()).contains(&n) => {
            vec![(n - 1, &review.comments[n - 1])]
        }
        Some(n) => {
            return Err(format!(
                "review {} has {} comment{}; there is no comment {n}",
                review.number,
                review.comments.len(),
                if review.comments.len() == 1 { "" } else { "s" }
            ))
        }
    };
    let mut text = String::new();
    if review.written_in_sandbox {
        text.push_str(SANDBOX_NOTE);
        text.push(' ');
    }
    text.push_str(&format!(
        "Review {} by {} of {}..{}:",
        review.number,
        review.agent,
        short(&review.base),
        short(&review.head)
    ));
    if chosen.is_empty() {
        text.push_str(&format!(" {}", review.summary));
    }
    for (_, c) in &chosen {
        text.push_str(&format!(
            " {}:{} ({}): {}",
            c.file,
            c.line,
            c.severity.as_str(),
            c.text
        ));
        if chosen.len() > 1 {
            text.push(';');
        }
    }
    if text.ends_with(';') {
        text.pop();
    }
    // Typed as one line: nothing may break it (`shown` escaped what the
    // reviewer wrote; this is for good measure).
    Ok(text.replace(['\n', '\r'], " "))
}

/// A commit id as people read it.
pub fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

/// What is about to be typed into a tab that may run a program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Meant {
    /// A review's text (`s`, `A`, `nerdr reviews --send`).
    Review,
    /// The person's comments on a diff, questions on review comments
    /// among them (`S` in the diff view).
    Comments,
    /// Any text a client marked as meant for an agent (the core's check).
    ForAnAgent,
}

/// Why text `meant` for an agent must not be typed into tab `tab`, when
/// it runs `program` rather than a configured agent: typed into a shell,
/// a reviewer's words (a sandboxed one's, say), or the person's comments
/// quoting them, would run as commands. The one check of every path that
/// types such text: the diff view's, `nerdr reviews --send`, the core's.
pub fn not_for_a_program(tab: &str, program: Option<&str>, meant: Meant) -> Option<String> {
    let p = program?;
    let head = format!("tab {tab} runs a program ({p}), not an agent");
    Some(match meant {
        Meant::Review => format!(
            "{head}: a review's text typed there would be taken as its input (a shell would \
             run it); read it with `nerdr reviews {tab}`"
        ),
        Meant::Comments => format!(
            "{head}: comments typed there would be taken as its input (a shell would run \
             them as commands); not sent, they stay as drafts"
        ),
        Meant::ForAnAgent => format!(
            "{head}: text meant for an agent typed there would be taken as its input (a \
             shell would run it as commands); not sent"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::format::Severity;
    use super::*;

    /// (what is typed, the tab's program, refused, the words it must say)
    #[test]
    fn text_for_an_agent_is_refused_a_program() {
        #[rustfmt::skip]
        let rows = [
            (Meant::Review, None, false, ""),
            (Meant::Comments, None, false, ""),
            (Meant::ForAnAgent, None, false, ""),
            (Meant::Review, Some("bash"), true, "a review's text"),
            (Meant::Comments, Some("bash"), true, "they stay as drafts"),
            (Meant::ForAnAgent, Some("bash"), true, "meant for an agent"),
        ];
        for (meant, program, refused, says) in rows {
            let got = not_for_a_program("t1", program, meant);
            assert_eq!(got.is_some(), refused, "{meant:?} {program:?}");
            if let Some(why) = got {
                assert!(
                    why.starts_with("tab t1 runs a program (bash), not an agent"),
                    "{why}"
                );
                assert!(
                    why.contains(says) && why.contains("shell would run"),
                    "{why}"
                );
            }
        }
    }

    fn review(sandboxed: bool) -> Review {
        let c = |file: &str, line, text: &str| Comment {
            file: file.into(),
            line,
            severity: Severity::Warning,
            text: text.into(),
        };
        Review {
            read: true,
            number: 2,
            reviewer_tab: "r1".into(),
            agent: "codex".into(),
            written_in_sandbox: sandboxed,
            base: "0123456789abcdef".into(),
            head: "fedcba9876543210".into(),
            summary: "Fine.".into(),
            comments: vec![c("src/a.rs", 3, "unwrap"), c("b.md", 9, "typo")],
        }
    }

    #[test]
    fn a_reviewer_is_named_after_its_author_uniquely() {
        #[rustfmt::skip]
        let rows: &[(&str, &str, &[&str], &str)] = &[
            ("claude-1", "ab12cd34", &[], "review-claude-1-ab12"),
            ("claude-1", "ab12cd34", &["claude-1", "review-claude-1-ab12"], "review-claude-1-ab12-2"),
            ("fix", "ef56", &["review-fix-ef56", "review-fix-ef56-2", "review-fix-ef56-4"], "review-fix-ef56-3"),
            ("fix", "ef56", &["review-fix-ef56-2"], "review-fix-ef56"),
            // The name a closed author had, now another tab's: another id.
            ("fix", "0a0b0c0d", &["review-fix-ef56"], "review-fix-0a0b"),
            // A long name is cut, never the id, and never past MAX_NAME.
            ("a-very-long-name-of-24ch", "ab12cd34", &[], "review-a-very-lo-ab12"),
            ("abcdefgh-ijklmnop", "ab12cd34", &[], "review-abcdefgh-ab12"),
        ];
        for (author, id, taken, want) in rows {
            let got = reviewer_name(author, id, taken.iter().copied());
            assert_eq!(got, *want);
            assert!(got.len() <= LONGEST_NAME, "{got}");
        }
    }

    #[test]
    fn what_a_reviewer_hid_is_shown_everywhere_its_text_goes() {
        let mut r = review(true);
        r.summary = "ok\u{202e}evil\u{202c} \u{200b}".into();
        r.comments[0].file = "src/\u{2066}a.rs".into();
        r.comments[0].text = "fine\u{1b}]0;x\u{7}\u{2028}run rm".into();
        let s = shown(&r);
        assert_eq!(s.summary, "ok\\u{202e}evil\\u{202c} \\u{200b}");
        assert_eq!(s.comments[0].file, "src/\\u{2066}a.rs");
        assert_eq!(s.comments[0].text, "fine\\u{1b}]0;x\\u{7}\\u{2028}run rm");
        assert_eq!(s.comments[1], r.comments[1], "plain text stays as it is");
        assert_eq!((s.number, s.written_in_sandbox), (2, true));
        for which in [None, Some(1)] {
            let m = message(&r, which).unwrap();
            assert!(m.chars().all(|c| !c.is_control() && c.is_ascii()), "{m:?}");
            assert!(m.contains("src/\\u{2066}a.rs:3"), "{m}");
        }
    }

    #[test]
    fn comments_go_to_the_author_as_one_line() {
        let r = review(false);
        assert_eq!(
            message(&r, None).unwrap(),
            "Review 2 by codex of 0123456789ab..fedcba987654: src/a.rs:3 (warning): unwrap; \
             b.md:9 (warning): typo"
        );
        assert_eq!(
            message(&r, Some(2)).unwrap(),
            "Review 2 by codex of 0123456789ab..fedcba987654: b.md:9 (warning): typo"
        );
        assert!(message(&r, Some(3))
            .unwrap_err()
            .contains("there is no comment 3"));
        assert!(message(&review(true), Some(1))
            .unwrap()
            .starts_with(SANDBOX_NOTE));
        let prompt = first_prompt("ab12", "nerdr/ab12", "b0", "h1");
        assert!(!prompt.contains('\n'));
        assert!(
            prompt.contains("b0..h1") && prompt.contains("\"${NERDR_BIN:-nerdr}\" post-review")
        );
    }
}
