//! Spinoffs (README.md, "Spinoffs"; docs/ARCHITECTURE.md, "Spinoffs"):
//! an agent, or the person, starts part of the work in a new
//! agent, in a tab and worktree of its own branched from the parent's
//! HEAD, and the new agent's results come back to the parent as messages.
//! Which agent starts ([`choice`]) and where a result goes ([`delivery`])
//! are pure rules; [`store`] keeps the records; the words typed (here) are
//! pure too. Starting the agent and carrying results are the core's
//! (`core::spinoff`, `core::spinoff_results`).

pub mod choice;
pub mod delivery;
pub mod due;
pub mod store;

/// The most of a result's own text a message carries: the parent reads
/// it as one typed message.
pub const MAX_TEXT: usize = 4000;
/// The longest result `nerdr report-result` takes, in bytes: what the
/// parent reads is cut at [`MAX_TEXT`] anyway, and a longer text is a
/// document, better committed on the spinoff's branch and named.
pub const MAX_REPORT: usize = 256 * 1024;

/// Why a result of `len` bytes is refused, if it is too long.
pub fn report_too_long(len: usize) -> Option<String> {
    (len > MAX_REPORT).then(|| {
        format!(
            "the result is {} ({len} bytes), over the {} limit of `nerdr report-result`: \
             report a summary, and put the rest in a file on this tab's branch, commit it and \
             name its path in the result",
            crate::sizes::size(len),
            crate::sizes::size(MAX_REPORT)
        )
    })
}

/// The longest task `nerdr spinoff` takes, in bytes: it is typed into the
/// new agent's prompt as one line, and a longer brief belongs in a file
/// the task names.
pub const MAX_TASK: usize = 64 * 1024;

/// Why a task is refused, if it is: nothing an agent could read once
/// control characters are dropped (they never reach its prompt), or too
/// long to type.
pub fn task_refused(task: &str) -> Option<String> {
    if task.len() > MAX_TASK {
        return Some(format!(
            "the task is {} ({} bytes), over the {} limit of `nerdr spinoff`: put the \
             details in a file in the worktree and name its path in the task",
            crate::sizes::size(task.len()),
            task.len(),
            crate::sizes::size(MAX_TASK)
        ));
    }
    crate::printable::typeable(task)
        .trim()
        .is_empty()
        .then(|| "the task is empty: give the new agent something to do".to_string())
}

/// The most commits a message lists (the count of the rest is given).
pub const MAX_COMMITS: usize = 20;
/// The most files of the diffstat a message lists.
pub const MAX_FILES: usize = 10;

/// The new agent's first prompt: the task, then how to report. One line:
/// a newline typed into an agent's prompt would send the half before it.
pub fn first_prompt(task: &str, parent: &str, branch: &str) -> String {
    let task = one_line(task);
    format!(
        "{task} (nerdr: you are spun off from tab {parent}, on branch {branch} of your own, \
         made from its last commit. Commit your work, then report to it by running \
         \"${{NERDR_BIN:-nerdr}}\" report-result 'WHAT YOU DID AND FOUND' (or --file FILE); \
         nerdr adds your branch, commits and diffstat.)"
    )
}

/// What a result message is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Result<'a> {
    /// 1, 2, ...: later ones are follow-ups.
    pub number: u32,
    /// The spun-off tab.
    pub tab: &'a str,
    pub agent: &'a str,
    pub branch: &'a str,
    pub base: &'a str,
    /// Written in a sandbox: the message says so.
    pub sandboxed: bool,
    /// The person reported it for the spun-off tab (the window's offer,
    /// `report-result --for`): the message says so.
    pub by_person: bool,
    pub text: &'a str,
    /// `git log --oneline base..branch`, newest first, at most
    /// [`MAX_COMMITS`] + 1 lines.
    pub commits: &'a [String],
    /// `git diff --stat base branch`: a line per file, then the summary.
    pub diffstat: &'a [String],
}

/// The message the parent gets: the note (from a sandbox), the text, the
/// branch, the commits since the spinoff point and a diffstat, bounded and
/// on one line (typed as a message is).
pub fn result_message(r: &Result) -> String {
    let mut out = String::new();
    if r.sandboxed {
        out.push_str(crate::review::SANDBOX_NOTE);
        out.push(' ');
    }
    let follow = if r.number > 1 { " (follow-up)" } else { "" };
    let by = if r.by_person {
        ", reported by the person"
    } else {
        ""
    };
    out.push_str(&format!(
        "Result {}{follow} from spun-off tab {} ({}, branch {}){by}: ",
        r.number, r.tab, r.agent, r.branch
    ));
    let text = one_line(r.text);
    let mut text: String = text.chars().take(MAX_TEXT).collect();
    if r.text.chars().count() > MAX_TEXT {
        text.push_str(" [cut]");
    }
    out.push_str(text.trim());
    let base = crate::review::short(r.base);
    match r.commits.len() {
        0 => out.push_str(&format!(" | No commits since {base}.")),
        n => {
            let shown: Vec<&str> = r
                .commits
                .iter()
                .take(MAX_COMMITS)
                .map(|c| c.trim())
                .collect();
            let more = if n > MAX_COMMITS {
                format!("; and more (`git log {base}..{}`)", r.branch)
            } else {
                String::new()
            };
            out.push_str(&format!(
                " | Commits since {base}: {}{more}",
                shown.join("; ")
            ));
        }
    }
    if let Some((summary, files)) = r.diffstat.split_last() {
        let listed: Vec<String> = files
            .iter()
            .take(MAX_FILES)
            .map(|f| f.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        let more = if files.len() > MAX_FILES { "; ..." } else { "" };
        out.push_str(&format!(" | Diffstat: {}", summary.trim()));
        if !listed.is_empty() {
            out.push_str(&format!(" ({}{more})", listed.join("; ")));
        }
    }
    one_line(&out)
}

/// The most screen lines a result made of a tab's screen carries.
pub const SCREEN_LINES: usize = 40;

/// What the person's report for a spun-off tab is made of, when they give
/// no text: the agent's last answer, or its screen when nerdr cannot read
/// its conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LastWords {
    /// The last answer in its conversation log.
    Answer(String),
    /// Its last screen lines, and why not its log.
    Screen { lines: String, why: String },
}

/// The result's text for [`LastWords`]: said where it comes from, so the
/// parent knows an answer from a screen may be cut or hold the agent's
/// own interface.
pub fn last_words_text(w: &LastWords) -> String {
    match w {
        LastWords::Answer(a) => format!("(its last answer, from its conversation) {}", a.trim()),
        LastWords::Screen { lines, why } => format!(
            "(its last screen lines: nerdr cannot read its conversation: {why}) {}",
            lines.trim()
        ),
    }
}

/// `text` with every line break a space (typed into an agent's prompt, a
/// newline would send what came before it), and with no escape sequence
/// or other control character (`printable::typeable`): the text is an
/// agent's, and typed as it is a ^U, ^C or an escape would be keys.
pub fn one_line(text: &str) -> String {
    crate::printable::typeable(&text.replace("\r\n", " ").replace(['\n', '\r'], " "))
        .replace(['\n', '\t'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result<'a>(commits: &'a [String], diffstat: &'a [String], text: &'a str) -> Result<'a> {
        Result {
            number: 1,
            tab: "c1",
            agent: "claude",
            branch: "nerdr/c1",
            base: "0123456789abcdef",
            sandboxed: false,
            by_person: false,
            text,
            commits,
            diffstat,
        }
    }

    #[test]
    fn a_result_carries_its_text_branch_commits_and_diffstat_on_one_line() {
        let commits = vec!["aaaa111 add x".to_string(), "bbbb222 fix\ny".to_string()];
        let stat = vec![
            " src/x.rs | 3 ++-".to_string(),
            " 1 file changed, 2 insertions(+), 1 deletion(-)".to_string(),
        ];
        let m = result_message(&result(&commits, &stat, "done:\nall good"));
        assert!(!m.contains('\n') && !m.contains('\r'), "{m}");
        for want in [
            "Result 1 from spun-off tab c1 (claude, branch nerdr/c1): done: all good",
            "Commits since 0123456789ab: aaaa111 add x; bbbb222 fix y",
            "Diffstat: 1 file changed, 2 insertions(+), 1 deletion(-) (src/x.rs | 3 ++-)",
        ] {
            assert!(m.contains(want), "{want:?} not in {m}");
        }
        assert!(!m.contains("written in a sandbox"), "{m}");
    }

    #[test]
    fn a_sandboxed_follow_up_says_both_and_long_parts_are_bounded() {
        let commits: Vec<String> = (0..MAX_COMMITS + 1).map(|i| format!("c{i} m")).collect();
        let files: Vec<String> = (0..MAX_FILES + 2)
            .map(|i| format!(" f{i} | 1 +"))
            .chain(["12 files changed".to_string()])
            .collect();
        let text = "y".repeat(MAX_TEXT + 10);
        let mut r = result(&commits, &files, &text);
        r.sandboxed = true;
        r.number = 2;
        let m = result_message(&r);
        assert!(m.starts_with(crate::review::SANDBOX_NOTE), "{m}");
        assert!(m.contains("Result 2 (follow-up)"), "{m}");
        assert!(m.contains("[cut]"), "the text is cut");
        assert!(m.contains(&format!("c{} m", MAX_COMMITS - 1)));
        assert!(
            !m.contains(&format!("c{} m", MAX_COMMITS)),
            "one commit too many"
        );
        assert!(
            m.contains("and more (`git log 0123456789ab..nerdr/c1`)"),
            "{m}"
        );
        assert!(m.contains("f9 | 1 +; ...)"), "{m}");
        assert!(!m.contains("f10 |"), "{m}");
    }

    #[test]
    fn the_persons_report_says_so_and_where_its_words_come_from() {
        let said = last_words_text(&LastWords::Answer("  fixed it\n".into()));
        assert_eq!(said, "(its last answer, from its conversation) fixed it");
        let screen = last_words_text(&LastWords::Screen {
            lines: "$ make\nok".into(),
            why: "`sh` is a custom agent".into(),
        });
        assert!(
            screen.starts_with("(its last screen lines: nerdr cannot read its conversation: `sh`"),
            "{screen}"
        );
        let mut r = result(&[], &[], &said);
        r.by_person = true;
        let m = result_message(&r);
        assert!(
            m.starts_with(
                "Result 1 from spun-off tab c1 (claude, branch nerdr/c1), reported by the \
                 person: (its last answer"
            ),
            "{m}"
        );
    }

    #[test]
    fn no_commits_is_said() {
        let m = result_message(&result(&[], &[], "nothing to change"));
        assert!(m.contains("No commits since 0123456789ab."), "{m}");
        assert!(!m.contains("Diffstat"), "{m}");
    }

    #[test]
    fn the_first_prompt_is_the_task_on_one_line_and_says_how_to_report() {
        let p = first_prompt("fix the\nparser", "ab12", "nerdr/cd34");
        assert!(p.starts_with("fix the parser (nerdr:"), "{p}");
        assert!(!p.contains('\n'));
        assert!(p.contains("report-result") && p.contains("tab ab12") && p.contains("nerdr/cd34"));
    }

    #[test]
    fn a_task_is_refused_when_nothing_of_it_would_be_typed_or_it_is_too_long() {
        let long = "x".repeat(MAX_TASK + 1);
        for (task, refused) in [
            ("fix the tests", None),
            ("", Some("the task is empty")),
            ("  \n\t ", Some("the task is empty")),
            ("\0\0\0", Some("the task is empty")),
            ("\x1b[2J\x07\x7f", Some("the task is empty")),
            ("\u{202e}\u{200b}", Some("the task is empty")),
            ("\0fix\0", None),
            (&long[..MAX_TASK], None),
            (&long, Some("over the 64 KiB limit")),
        ] {
            let got = task_refused(task);
            match refused {
                None => assert_eq!(got, None, "{task:?}"),
                Some(want) => assert!(
                    got.as_deref().is_some_and(|g| g.contains(want)),
                    "{task:?}: {got:?}"
                ),
            }
        }
    }

    #[test]
    fn a_result_over_the_limit_is_refused_saying_what_to_do() {
        assert_eq!(report_too_long(MAX_REPORT), None);
        let why = report_too_long(300_000).unwrap();
        for want in [
            "293 KiB (300000 bytes)",
            "over the 256 KiB limit",
            "commit it",
        ] {
            assert!(why.contains(want), "{want:?}: {why}");
        }
    }

    /// A task, a result's text and its commit subjects are an agent's:
    /// typed into another agent, no escape sequence or control character
    /// of theirs is a key.
    #[test]
    fn no_control_character_of_an_agents_is_typed() {
        let p = first_prompt("x\u{15}echo hi #\u{1b}[201~\u{3}", "ab12", "nerdr/cd34");
        assert!(p.starts_with("xecho hi # (nerdr:"), "{p}");
        let commits = ["abc1234 fix\u{1b}]0;t\u{7} it\u{1a}".to_string()];
        let m = result_message(&result(&commits, &[], "done\u{15}\u{1b}[2Kreally\ttab"));
        assert!(m.contains(": donereally tab"), "{m}");
        assert!(m.contains("abc1234 fix it"), "{m}");
        assert!(!m.chars().any(char::is_control), "{m}");
    }
}
