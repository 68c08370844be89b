//! `nerdr search`: params and replies side by side, tied to their method
//! in `api` (the rules are `crate::search`'s).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Search past conversations for `query` (`crate::search::query`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchLogs {
    pub query: String,
    /// Only this agent's conversations, handoffs and reviews.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The most results.
    pub limit: usize,
    /// Where the caller's agents keep their logs (`HOME`,
    /// `CLAUDE_CONFIG_DIR`, `CODEX_HOME`); a sandboxed caller's is
    /// ignored (`handoff::rules::homes`).
    #[serde(default)]
    pub env: Vec<(String, String)>,
}

/// The results, best first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResults {
    pub results: Vec<SearchResult>,
    /// How many results there were before `limit`.
    pub total: usize,
    /// How many conversation logs were read.
    pub files: usize,
    /// Only the caller's own tab's conversation was searched (a sandboxed
    /// caller).
    pub own_tab_only: bool,
    /// Stores that could not be read, in words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

/// One conversation (or handoff, or review) that matched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResult {
    /// 1, 2, ...: what `nerdr search --open N` takes.
    pub number: usize,
    /// `claude`, `codex`, `handoff` or `review`.
    pub source: String,
    /// The agent that had the conversation (wrote the handoff, review).
    pub agent: String,
    /// The session id (`claude --resume ID`, `codex resume ID`); a
    /// handoff's number (`nerdr handoffs`); a review's `TAB#N`.
    pub id: String,
    /// Its last matched message's time, else its file's (UTC,
    /// `YYYY-MM-DD HH:MM`); empty when unknown.
    pub date: String,
    /// Where the conversation ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// A handoff's tab; the tab a review is of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    /// How many of the query's terms it holds, of how many.
    pub terms: usize,
    pub of: usize,
    /// How often they occur, and in how many messages.
    pub count: usize,
    pub messages: usize,
    pub lines: Vec<SearchLine>,
}

/// A past conversation to resume in a new tab: its session id and the
/// folder it ran in (claude files its logs by folder, so it resumes only
/// there).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResumeAt {
    pub session: String,
    pub cwd: PathBuf,
}

/// A matched message, around its first match, printable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchLine {
    /// The person's request (else the agent's words).
    pub request: bool,
    pub text: String,
}
