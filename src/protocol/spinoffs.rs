//! The spinoff family of requests and replies (`nerdr spinoff`, `nerdr
//! report-result`, `nerdr spinoffs`): params and replies side by side, tied
//! to their methods in `api`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Start `task` in a new agent tab spun off from tab `from` (the caller's
/// own tab when `None`): `agent`, else the parent's own agent, as
/// `spinoff::choice` allows; named `name` when given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpinOff {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub task: String,
    /// The caller's environment, the base of the new agent's.
    #[serde(default)]
    pub env: Vec<(String, String)>,
    /// The caller's folder: tab numbers and names count in its session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<PathBuf>,
}

/// A spun-off tab's result, for the tab it was spun off from (never
/// another: the request names no parent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportResult {
    /// What was done and found; empty with `tab`: the spun-off agent's
    /// last answer (from its conversation log, else its screen).
    pub text: String,
    /// The spun-off tab reported for: the person names one (the window's
    /// offer, `--for`); a tab's program only its own (the privilege
    /// matrix). `None`: the caller's own tab.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    /// The caller's environment: where the agents' logs are, for the last
    /// answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<(String, String)>,
    /// The caller's folder: `tab`'s number or name counts in its session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<PathBuf>,
}

/// The spinoffs of `folder`'s session (every session's without one); a
/// sandboxed caller sees only its own tab's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListSpinoffs {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<PathBuf>,
}

/// A spinoff was started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpunOff {
    pub tab: String,
    pub agent: String,
    pub parent: String,
    pub branch: String,
    /// The parent's HEAD the branch was made from.
    pub base: String,
    /// Paths with changes in the parent's worktree no commit holds: they
    /// are not in the new worktree.
    pub uncommitted: usize,
    /// Why the agent is not the parent's own, when it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instead: Option<String>,
    /// The tab is there but its sandbox check refused it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// A result was taken: result `number` for tab `parent`, and what became
/// of it (`delivered`, `waiting`, or `approval` with its id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultTaken {
    pub parent: String,
    pub number: u32,
    pub held: crate::spinoff::store::Held,
    /// Why it was not typed now, when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// One row of `nerdr spinoffs --json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpinoffInfo {
    pub tab: String,
    pub parent: String,
    pub agent: String,
    pub sandboxed: bool,
    pub branch: String,
    pub base: String,
    pub task: String,
    /// The spun-off tab is still there.
    pub open: bool,
    /// Its parent tab is still there (absent from an older core: said
    /// open, as it listed it).
    #[serde(default = "still_open")]
    pub parent_open: bool,
    pub results: Vec<crate::spinoff::store::Reported>,
}

fn still_open() -> bool {
    true
}
