//! What a reviewer posts (`nerdr post-review`): a summary and comments on
//! lines, as JSON lines or a simple text form, read strictly. Pure: text
//! in, a [`Posted`] or the first problem with its line number out. The
//! reviewer is an agent, so every message says what is wrong and how the
//! line should look, for it to try again.
//!
//! JSON lines (the first line that is not blank starts with `{`):
//!
//! ```text
//! {"summary": "Sound, one risky unwrap."}
//! {"file": "src/main.rs", "line": 12, "severity": "warning", "text": "unwrap on input"}
//! ```
//!
//! Text:
//!
//! ```text
//! summary: Sound, one risky unwrap.
//! src/main.rs:12: warning: unwrap on user input
//!   a line that starts with a space goes on with the one before
//! ```

use serde::{Deserialize, Serialize};

/// The most a review may hold: a reviewer that floods is refused, not
/// stored.
pub const MAX_BYTES: usize = 256 << 10;
pub const MAX_COMMENTS: usize = 200;
pub const MAX_TEXT: usize = 4000;

/// How much a comment matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
    Note,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }

    fn parse(word: &str) -> Option<Severity> {
        match word.trim().to_ascii_lowercase().as_str() {
            "error" => Some(Severity::Error),
            "warning" => Some(Severity::Warning),
            "note" => Some(Severity::Note),
            _ => None,
        }
    }
}

/// One comment on a line of a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Comment {
    /// Relative to the repository's top folder.
    pub file: String,
    pub line: u32,
    pub severity: Severity,
    pub text: String,
}

/// A review as posted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Posted {
    pub summary: String,
    pub comments: Vec<Comment>,
    /// The input line each comment starts on (1-based), for errors about
    /// it found after reading (`review::range`).
    #[serde(skip)]
    pub lines: Vec<usize>,
}

/// What is wrong with a posted review, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{problem}", .line.map(|l| format!("line {l}: ")).unwrap_or_default())]
pub struct FormatError {
    /// 1-based; `None` for the whole input.
    pub line: Option<usize>,
    pub problem: String,
}

fn at(line: usize, problem: impl Into<String>) -> FormatError {
    FormatError {
        line: Some(line),
        problem: problem.into(),
    }
}

const TEXT_FORM: &str = "write `FILE:LINE: SEVERITY: TEXT`, e.g. `src/main.rs:12: warning: \
                         unwrap on user input` (severity: error, warning or note)";

/// Read a posted review (see the module docs).
pub fn parse(input: &str) -> Result<Posted, FormatError> {
    if input.len() > MAX_BYTES {
        return Err(FormatError {
            line: None,
            problem: format!(
                "the review is {} bytes; at most {MAX_BYTES} are taken: keep the most important \
                 comments",
                input.len()
            ),
        });
    }
    let first = input.lines().find(|l| !l.trim().is_empty());
    let posted = match first {
        None => {
            return Err(FormatError {
                line: None,
                problem: "the review is empty: give at least `summary: ...`".into(),
            })
        }
        Some(l) if l.trim_start().starts_with('{') => json_lines(input)?,
        Some(_) => text(input)?,
    };
    if posted.summary.trim().is_empty() {
        return Err(FormatError {
            line: None,
            problem: "the review has no summary: add a line `summary: ...` (or \
                      {\"summary\": \"...\"})"
                .into(),
        });
    }
    if posted.comments.len() > MAX_COMMENTS {
        return Err(FormatError {
            line: None,
            problem: format!(
                "{} comments; at most {MAX_COMMENTS} are taken",
                posted.comments.len()
            ),
        });
    }
    Ok(posted)
}

/// One JSON object per line.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonLine {
    summary: Option<String>,
    file: Option<String>,
    line: Option<u64>,
    severity: Option<String>,
    text: Option<String>,
}

fn json_lines(input: &str) -> Result<Posted, FormatError> {
    let mut summary: Option<String> = None;
    let mut comments = Vec::new();
    let mut lines = Vec::new();
    for (i, raw) in input.lines().enumerate() {
        let n = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let line: JsonLine = serde_json::from_str(raw).map_err(|e| {
            at(
                n,
                format!(
                    "not a JSON object of the review ({e}); each line is {{\"summary\": \
                     \"...\"}} or {{\"file\": \"src/x.rs\", \"line\": 3, \"severity\": \
                     \"warning\", \"text\": \"...\"}}"
                ),
            )
        })?;
        match line {
            JsonLine {
                summary: Some(s),
                file: None,
                line: None,
                severity: None,
                text: None,
            } => {
                if summary.is_some() {
                    return Err(at(n, "a second summary: give one, on one line"));
                }
                summary = Some(checked_text(n, &s)?);
            }
            JsonLine {
                summary: Some(_), ..
            } => {
                return Err(at(
                    n,
                    "a summary and a comment on one line: put each on its own line",
                ))
            }
            JsonLine {
                file,
                line,
                severity,
                text,
                ..
            } => {
                let missing = [
                    ("file", file.is_none()),
                    ("line", line.is_none()),
                    ("severity", severity.is_none()),
                    ("text", text.is_none()),
                ];
                let missing: Vec<&str> = missing.iter().filter(|m| m.1).map(|m| m.0).collect();
                if !missing.is_empty() {
                    return Err(at(
                        n,
                        format!("the comment has no {}", missing.join(", no ")),
                    ));
                }
                let line = line.expect("checked");
                let line = u32::try_from(line).ok().filter(|l| *l > 0).ok_or_else(|| {
                    at(n, format!("line {line} is not a line number (1 or more)"))
                })?;
                comments.push(comment(
                    n,
                    &file.expect("checked"),
                    line,
                    &severity.expect("checked"),
                    &text.expect("checked"),
                )?);
                lines.push(n);
            }
        }
    }
    Ok(Posted {
        summary: summary.unwrap_or_default(),
        comments,
        lines,
    })
}

fn text(input: &str) -> Result<Posted, FormatError> {
    let mut summary: Option<String> = None;
    let mut comments: Vec<Comment> = Vec::new();
    let mut lines = Vec::new();
    // What a continuation line goes on: the summary, or the last comment.
    let mut last_is_summary = false;
    for (i, raw) in input.lines().enumerate() {
        let n = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        if raw.starts_with([' ', '\t']) {
            let more = raw.trim();
            let target = match (last_is_summary, comments.last_mut()) {
                (true, _) => summary.as_mut(),
                (false, Some(c)) => Some(&mut c.text),
                (false, None) => None,
            };
            let Some(target) = target else {
                return Err(at(
                    n,
                    "an indented line goes on with the line before, and there is none: start \
                     with `summary: ...`",
                ));
            };
            target.push(' ');
            target.push_str(more);
            if target.chars().count() > MAX_TEXT {
                return Err(at(
                    n,
                    format!("the text is longer than {MAX_TEXT} characters"),
                ));
            }
            continue;
        }
        if let Some(rest) = strip_word(raw, "summary:") {
            if summary.is_some() {
                return Err(at(n, "a second summary: give one (indent a line to go on)"));
            }
            summary = Some(checked_text(n, rest)?);
            last_is_summary = true;
            continue;
        }
        let mut parts = raw.splitn(4, ':');
        let (file, line, severity, text) =
            match (parts.next(), parts.next(), parts.next(), parts.next()) {
                (Some(f), Some(l), Some(s), Some(t)) => (f, l, s, t),
                _ => return Err(at(n, format!("not a comment: {TEXT_FORM}"))),
            };
        let line_no = line
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|l| *l > 0)
            .ok_or_else(|| {
                at(
                    n,
                    format!(
                        "{:?} is not a line number (1 or more): {TEXT_FORM}",
                        line.trim()
                    ),
                )
            })?;
        comments.push(comment(n, file.trim(), line_no, severity, text)?);
        lines.push(n);
        last_is_summary = false;
    }
    Ok(Posted {
        summary: summary.unwrap_or_default(),
        comments,
        lines,
    })
}

/// `line` after `word` (any case), if it starts with it.
fn strip_word<'a>(line: &'a str, word: &str) -> Option<&'a str> {
    let head = line.get(..word.len())?;
    head.eq_ignore_ascii_case(word).then(|| &line[word.len()..])
}

fn comment(
    n: usize,
    file: &str,
    line: u32,
    severity: &str,
    text: &str,
) -> Result<Comment, FormatError> {
    let severity = Severity::parse(severity).ok_or_else(|| {
        at(
            n,
            format!(
                "the severity is {:?}; use error, warning or note",
                severity.trim()
            ),
        )
    })?;
    Ok(Comment {
        file: checked_file(n, file)?,
        line,
        severity,
        text: checked_text(n, text)?,
    })
}

/// A path inside the repository, as a person would type it.
fn checked_file(n: usize, file: &str) -> Result<String, FormatError> {
    let file = file.trim();
    let fix = "name the file relative to the repository's top folder, e.g. src/main.rs";
    if file.is_empty() {
        return Err(at(n, format!("the comment names no file; {fix}")));
    }
    if file.starts_with('/') || file.split('/').any(|part| part == "..") {
        return Err(at(n, format!("{file:?} is outside the repository; {fix}")));
    }
    if file.chars().any(char::is_control) {
        return Err(at(n, format!("{file:?} holds control characters; {fix}")));
    }
    Ok(file.to_owned())
}

/// Text shown to people: trimmed, not empty, no control characters, not
/// too long.
fn checked_text(n: usize, text: &str) -> Result<String, FormatError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(at(n, "the text is empty: say what is wrong"));
    }
    if text.chars().count() > MAX_TEXT {
        return Err(at(
            n,
            format!("the text is longer than {MAX_TEXT} characters"),
        ));
    }
    if let Some(c) = text.chars().find(|c| c.is_control()) {
        return Err(at(
            n,
            format!(
                "the text holds the control character {:?}; write plain text (one line; \
                 indent the next line to go on)",
                c
            ),
        ));
    }
    Ok(text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(file: &str, line: u32, severity: Severity, text: &str) -> Comment {
        Comment {
            file: file.into(),
            line,
            severity,
            text: text.into(),
        }
    }

    #[test]
    fn both_forms_read_the_same_review() {
        let want = Posted {
            summary: "Sound, one risky unwrap.".into(),
            comments: vec![
                c("src/main.rs", 12, Severity::Warning, "unwrap on user input"),
                c("README.md", 3, Severity::Note, "typo: teh"),
            ],
            lines: vec![3, 5],
        };
        let text = "\nsummary: Sound, one risky unwrap.\nsrc/main.rs:12: warning: unwrap on user\n  input\nREADME.md:3: Note: typo: teh\n";
        assert_eq!(parse(text).unwrap(), want);
        let want = Posted {
            lines: vec![2, 4],
            ..want
        };
        let json = r#"{"summary": "Sound, one risky unwrap."}
{"file": "src/main.rs", "line": 12, "severity": "warning", "text": "unwrap on user input"}

{"file": "README.md", "line": 3, "severity": "note", "text": "typo: teh"}
"#;
        assert_eq!(parse(json).unwrap(), want);
        let summary_only = parse("summary: fine\n  really\n").unwrap();
        assert_eq!(summary_only.summary, "fine really");
        assert!(summary_only.comments.is_empty());
    }

    #[test]
    fn each_mistake_names_its_line_and_the_fix() {
        let rows: &[(&str, &str)] = &[
            ("", "the review is empty"),
            ("src/a.rs:1: note: x\n", "the review has no summary"),
            ("summary: a\nsummary: b\n", "line 2: a second summary"),
            ("summary: a\njust words\n", "line 2: not a comment: write `FILE:LINE: SEVERITY: TEXT`"),
            ("summary: a\nsrc/a.rs:x: note: y\n", "line 2: \"x\" is not a line number"),
            ("summary: a\nsrc/a.rs:0: note: y\n", "line 2: \"0\" is not a line number"),
            ("summary: a\n\nsrc/a.rs:4: bad: y\n", "line 3: the severity is \"bad\"; use error, warning or note"),
            ("summary: a\n/etc/passwd:4: note: y\n", "line 2: \"/etc/passwd\" is outside the repository"),
            ("summary: a\n../x:4: note: y\n", "line 2: \"../x\" is outside the repository"),
            ("summary: a\nsrc/a.rs:4: note:   \n", "line 2: the text is empty"),
            ("  first\n", "line 1: an indented line goes on with the line before"),
            ("summary: a\u{1b}[2J\n", "line 1: the text holds the control character"),
            ("{\"summary\": \"a\"}\n{\"file\": \"a\", \"line\": 1}\n", "line 2: the comment has no severity, no text"),
            ("{\"summary\": \"a\"}\n{\"summary\": \"b\"}\n", "line 2: a second summary"),
            ("{\"summary\": \"a\", \"file\": \"x\"}\n", "line 1: a summary and a comment on one line"),
            ("{\"summary\": \"a\"}\nnot json\n", "line 2: not a JSON object of the review"),
            ("{\"summary\": \"a\", \"colour\": 1}\n", "line 1: not a JSON object of the review (unknown field `colour`"),
            ("{\"summary\": \"a\"}\n{\"file\": \"a\", \"line\": 0, \"severity\": \"note\", \"text\": \"t\"}\n", "line 2: line 0 is not a line number"),
            ("{\"summary\": \"a\"}\n{\"file\": \"a\", \"line\": 1, \"severity\": \"minor\", \"text\": \"t\"}\n", "line 2: the severity is \"minor\""),
        ];
        for (input, want) in rows {
            match parse(input) {
                Ok(p) => panic!("{input:?} parsed as {p:?}; wanted {want:?}"),
                Err(e) => assert!(e.to_string().starts_with(want), "{input:?}: {e}"),
            }
        }
    }

    #[test]
    fn floods_are_refused() {
        let big = format!("summary: {}\n", "x".repeat(MAX_BYTES));
        assert!(parse(&big).unwrap_err().to_string().contains("at most"));
        let long = format!("summary: {}\n", "x".repeat(MAX_TEXT + 1));
        assert!(parse(&long)
            .unwrap_err()
            .to_string()
            .contains("longer than"));
        let mut many = String::from("summary: s\n");
        for i in 1..=MAX_COMMENTS + 1 {
            many.push_str(&format!("a.rs:{i}: note: n\n"));
        }
        assert!(parse(&many)
            .unwrap_err()
            .to_string()
            .contains("comments; at most"));
    }
}
