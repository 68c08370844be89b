//! `nerdr search`: full-text search over the agents' conversation logs
//! (claude's `~/.claude/projects/<folder>/<session>.jsonl`, codex's
//! `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) and nerdr's own
//! handoffs and reviews, ranked, each result with its agent, date,
//! folder, session id and the matching messages.
//!
//! Pure parts, unit-tested: `query` (the terms, matching, snippets),
//! `rank` (the order), `visible` (which conversations a caller may
//! search). The edge is `scan`, which lists and reads the files (blocking:
//! the core runs it off its async workers, outside the state lock).
//! Reading a log's lines as messages is the handoff parsers'
//! (`handoff::claude::line`, `handoff::codex::line`): search sees the
//! same words a handoff would, tool calls and their output left out.
//!
//! ## A scan, no index
//!
//! Every search reads the logs afresh, in parallel, and looks for the
//! terms in each file's raw bytes (ASCII case folded, `memchr::memmem`)
//! before any JSON is parsed: most files hold no term and cost one read
//! and one pass; in the rest only the lines holding a term are parsed.
//! On `bench/search.py`'s 10,000 generated logs (1.3 GB, shaped as
//! claude 2.1 and codex 0.171 write them, page cache warm, a 2-core VM)
//! the whole `nerdr search` (client, core, scan, ranking) takes 0.12 s
//! for a word in a few logs, 0.15 s for two words in 4%: within 1.2x and
//! 1.35x of `rg -il` over the same files, a fifth to a third of `grep
//! -ril`'s time. Its worst case, a word in every log, parses every
//! message line: 0.5 s (rg 0.11 s, which stops at a file's first match).
//! An index in the state folder would answer from fewer bytes, but it
//! would hold a copy of every conversation (one more store of what agents
//! said to keep private and in step with files the agents rewrite and
//! delete), and it would have to be brought up to date from those files,
//! by size and modification time, before each search: with the scan
//! already as fast as ripgrep, that would save little and could be stale.
//! So it was not built, nor measured. (bench/README.md has the figures.)

pub mod query;
pub mod rank;
pub mod scan;
mod scope;
mod stored;
pub mod visible;

use std::path::PathBuf;

pub use query::Terms;

/// Where a result comes from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    #[default]
    Claude,
    Codex,
    /// A handoff to the person (`nerdr handoff --to-me`).
    Handoff,
    /// A review posted on a tab's work.
    Review,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Claude => "claude",
            Source::Codex => "codex",
            Source::Handoff => "handoff",
            Source::Review => "review",
        }
    }
}

/// One matched message, as a result shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hit {
    /// The person's request (else the agent's answer).
    pub request: bool,
    /// The message around its first match, one line, printable.
    pub snippet: String,
    /// How many times the terms occur in it.
    pub count: usize,
}

/// One conversation (or handoff, or review) that matched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    pub source: Source,
    /// The conversation's session id; a handoff's number; a review's
    /// `TAB#N`.
    pub id: String,
    /// The agent that had the conversation (wrote the handoff, the
    /// review).
    pub agent: String,
    /// Where the conversation ran (its `cwd`); a handoff's folder; the
    /// reviewed tab's folder when it is still open.
    pub folder: Option<PathBuf>,
    /// The log file.
    pub file: Option<PathBuf>,
    /// The tab a handoff came from; the tab a review is of.
    pub tab: Option<String>,
    /// The file's modification time (a handoff's time), seconds since
    /// the epoch: the recency of the ranking when no message has a time.
    pub modified: u64,
    /// The time of its last matched message, as the log writes it.
    pub last_at: Option<String>,
    /// How many of the query's terms it holds, and how often in all.
    pub present: usize,
    pub count: usize,
    /// How many of its messages matched.
    pub messages: usize,
    pub hits: Vec<Hit>,
}
