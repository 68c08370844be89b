//! Handoffs (`nerdr handoff`): a conversation passed to another agent or
//! to the person, as a document saying what was done, what is next and
//! what is still open. An agent writes its own (`TEXT`, `--file`); when it
//! wrote none, nerdr builds one from the agent's conversation log.
//!
//! Everything here is pure but [`find`], the edge that locates and reads
//! the logs (blocking: call it off the async workers):
//! - `claude`, `codex`, `opencode`: each agent's log as plain
//!   [`Exchange`]s (its last requests and answers, tool noise dropped);
//! - [`document`]: the exchanges, bounded, as the handoff's text;
//! - `rules`: what a handoff may do around sandboxes;
//! - [`find::from_conversation`]: the whole "build a handoff from an
//!   agent's conversation" step, for `nerdr handoff` and for `switch`.
//!
//! The core's side (starting the receiving agent, storing `--to-me`
//! handoffs) is `core::handoff`.

pub mod claude;
pub mod codex;
pub mod find;
pub mod opencode;
pub mod rules;
pub mod store;

/// One turn of a conversation: what the person asked and what the agent
/// answered in words (tool calls and their output left out).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Exchange {
    pub request: String,
    pub answer: String,
}

/// How many of the last exchanges a built handoff carries.
pub const MAX_EXCHANGES: usize = 5;
/// The most a built handoff's exchanges take, in bytes: enough to carry
/// the thread, small enough to type as a prompt.
pub const MAX_BYTES: usize = 8 * 1024;
/// The longest handoff an agent may write: typed as a prompt, it must fit.
pub const MAX_WRITTEN: usize = 16 * 1024;
/// The most one request or answer takes before it is cut.
const MAX_PART: usize = 2 * 1024;

/// Where a handoff comes from, for its heading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct From {
    pub tab: String,
    pub agent: String,
    /// The worktree and branch the work is in, when the tab has one.
    pub worktree: Option<(std::path::PathBuf, String)>,
}

/// Turn a log's messages, in order, into exchanges: each request opens
/// one, the answers after it (until the next request) are its answer.
/// Answers before any request (a resumed log's tail) start one with no
/// request.
pub fn pair(messages: impl IntoIterator<Item = Said>) -> Vec<Exchange> {
    let mut out: Vec<Exchange> = Vec::new();
    for m in messages {
        match m {
            Said::Request(text) => out.push(Exchange {
                request: text,
                answer: String::new(),
            }),
            Said::Answer(text) => {
                if out.is_empty() {
                    out.push(Exchange::default());
                }
                let last = out.last_mut().expect("pushed");
                if !last.answer.is_empty() {
                    last.answer.push('\n');
                }
                last.answer.push_str(&text);
            }
        }
    }
    out
}

/// One message of a log, as the parsers give it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Said {
    /// The person's words (or another program's prompt typed as them).
    Request(String),
    /// The agent's words to the person.
    Answer(String),
}

/// The last [`MAX_EXCHANGES`] exchanges, each part cut at [`MAX_PART`],
/// the oldest dropped until all fit in [`MAX_BYTES`]; and how many were
/// left out.
pub fn bound(exchanges: &[Exchange]) -> (Vec<Exchange>, usize) {
    let start = exchanges.len().saturating_sub(MAX_EXCHANGES);
    let mut kept: Vec<Exchange> = exchanges[start..]
        .iter()
        .map(|e| Exchange {
            request: cut(e.request.trim(), MAX_PART),
            answer: cut(e.answer.trim(), MAX_PART),
        })
        .collect();
    let size = |k: &[Exchange]| {
        k.iter()
            .map(|e| e.request.len() + e.answer.len())
            .sum::<usize>()
    };
    while kept.len() > 1 && size(&kept) > MAX_BYTES {
        kept.remove(0);
    }
    let left_out = exchanges.len() - kept.len();
    (kept, left_out)
}

/// `text` cut to at most `max` bytes at a character boundary, marked.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{} [...]", &text[..end])
}

/// The handoff nerdr builds from a conversation: its last exchanges
/// (bounded), what the last answer leaves open, and where the work is.
/// `None` when the log holds no words at all.
pub fn document(from: &From, exchanges: &[Exchange]) -> Option<String> {
    let (kept, left_out) = bound(exchanges);
    if kept
        .iter()
        .all(|e| e.request.is_empty() && e.answer.is_empty())
    {
        return None;
    }
    let mut out = heading(from);
    out.push_str(
        "(Built by nerdr from the agent's conversation log: the agent wrote no handoff of its \
         own.)\n\n## What was done\n",
    );
    if left_out > 0 {
        out.push_str(&format!("({left_out} earlier exchange(s) left out.)\n"));
    }
    for (i, e) in kept.iter().enumerate() {
        if !e.request.is_empty() {
            out.push_str(&format!("Request {}: {}\n", i + 1, e.request));
        }
        if !e.answer.is_empty() {
            out.push_str(&format!("Answer {}: {}\n", i + 1, e.answer));
        }
    }
    let last = kept.last().expect("not all empty");
    out.push_str("\n## What is next\n");
    if last.answer.is_empty() {
        out.push_str(&format!(
            "The last request got no answer yet: {}\n",
            last.request
        ));
    } else {
        out.push_str(
            "Go on from the last request and answer above: check the worktree's state \
             (`git status`, `git log`) before changing anything.\n",
        );
    }
    out.push_str("\n## Open questions\n");
    let open = questions(&last.answer);
    if open.is_empty() {
        out.push_str("None asked in the last answer.\n");
    } else {
        for q in open {
            out.push_str(&format!("- {q}\n"));
        }
    }
    Some(out)
}

/// The heading every handoff starts with, built or written.
pub fn heading(from: &From) -> String {
    let place = match &from.worktree {
        Some((path, branch)) => format!(", worktree {} on branch {branch}", path.display()),
        None => String::new(),
    };
    // `tab` reads `name (id)`: the agent joins its brackets, as `nerdr
    // handoffs` prints it, never a second pair.
    let tab = match from.tab.strip_suffix(')') {
        Some(open) => format!("{open}, {})", from.agent),
        None => format!("{} ({})", from.tab, from.agent),
    };
    format!("# Handoff from tab {tab}{place}\n\n")
}

/// An agent's own handoff, under the heading.
pub fn written(from: &From, text: &str) -> String {
    format!("{}{}\n", heading(from), text.trim())
}

/// The sentences of `answer` that ask something.
fn questions(answer: &str) -> Vec<String> {
    answer
        .split_inclusive(['?', '.', '!', '\n'])
        .map(str::trim)
        .filter(|s| s.ends_with('?') && s.len() > 3)
        .map(str::to_string)
        .collect()
}

/// The document as one line to type as a prompt: a new line would send
/// the prompt half-typed in some agents, a control character would be a
/// key. Lines are joined with ` | `; escape sequences, whole, and control
/// characters dropped (`printable::typeable`).
pub fn as_prompt(document: &str, note: Option<&str>) -> String {
    let mut out = String::new();
    if let Some(n) = note {
        out.push_str(n);
        out.push(' ');
    }
    out.push_str(
        "Another agent hands this work over to you; continue it in this folder. The handoff: ",
    );
    let document = crate::printable::typeable(document);
    let lines: Vec<&str> = document
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let joined = lines.join(" | ");
    out.extend(joined.chars().filter(|c| !c.is_control()));
    out
}

/// [`as_prompt`], saying who handed the work over: `from_agent`, the
/// agent whose conversation or words it is, or the person (`None`) who
/// wrote it; the receiving agent otherwise reads "another agent".
pub fn as_prompt_from(document: &str, note: Option<&str>, from_agent: Option<&str>) -> String {
    const ANOTHER: &str = "Another agent hands this work over to you";
    let by = match from_agent {
        Some(agent) => format!("The agent {} hands this work over to you", agent.trim()),
        None => "The person hands this work over to you, in words of their own".to_string(),
    };
    let prompt = as_prompt(document, note);
    match prompt.find(ANOTHER) {
        Some(at) => format!("{}{by}{}", &prompt[..at], &prompt[at + ANOTHER.len()..]),
        None => format!("{by}. {prompt}"),
    }
    .chars()
    .filter(|c| !c.is_control())
    .collect()
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod from_tests {
    use super::as_prompt_from;

    #[test]
    fn the_prompt_names_who_handed_the_work_over() {
        let note = Some(crate::review::SANDBOX_NOTE);
        #[rustfmt::skip]
        let rows = [
            (Some("claude"), None, "The agent claude hands this work over to you; continue"),
            (None, None, "The person hands this work over to you, in words of their own; continue"),
            (Some("codex"), note, "The agent codex hands this work over to you; continue"),
        ];
        for (from, note, want) in rows {
            let p = as_prompt_from("# Handoff\nline\x07 two", note, from);
            assert!(p.contains(want), "{from:?}: {p}");
            assert!(!p.contains("Another agent"), "{p}");
            assert!(p.ends_with("# Handoff | line two"), "{p}");
            assert!(!p.chars().any(char::is_control), "{p}");
            if let Some(n) = note {
                assert!(p.starts_with(n), "{p}");
            }
        }
    }
}
