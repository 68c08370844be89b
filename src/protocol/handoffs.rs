//! The handoff family of requests and replies (`nerdr handoff`, `nerdr
//! handoffs`): params and replies side by side, tied to their methods in
//! `api`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Hand tab `tab`'s conversation (the caller's own when `None`) to `to`;
/// `text` is the agent's own handoff, else nerdr builds one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Handoff {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    pub to: HandoffTo,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The caller's environment: the new agent's, and where the logs are.
    #[serde(default)]
    pub env: Vec<(String, String)>,
    /// The caller's folder: tab numbers and names count in its session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<PathBuf>,
}

/// Who a handoff goes to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HandoffTo {
    /// Agent `name`, started in a new tab in the same worktree.
    Agent { name: String },
    /// The person: kept for `nerdr handoffs`, marked in the window.
    Me,
}

/// The handoffs to the person, of `folder`'s session (every session's
/// with `all`); `clear` forgets those listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListHandoffs {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<PathBuf>,
    #[serde(default)]
    pub all: bool,
    #[serde(default)]
    pub clear: bool,
}

/// Where a handoff went (`handoff`): the new tab its agent started in, or
/// the number it is kept under for the person, or the approval it waits
/// for; and the text it carries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandedOff {
    /// The tab handing off.
    pub from: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Its number in `nerdr handoffs` (`--to-me`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<u64>,
    /// The approval it waits for, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queued: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// nerdr built it from the agent's conversation (the agent wrote none).
    #[serde(default)]
    pub built: bool,
    pub text: String,
    /// The new tab is there but its sandbox check refused it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// A handoff to the person (`handoffs`), as kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandoffInfo {
    pub number: u64,
    pub tab: String,
    /// The tab's name then.
    pub name: String,
    pub agent: String,
    pub folder: PathBuf,
    /// Seconds since the epoch.
    pub at: u64,
    pub text: String,
    /// The sandbox note, when a sandboxed agent wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}
