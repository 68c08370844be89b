//! `nerdr switch TAB AGENT`'s request and reply, tied to their method in
//! `api`. The history a tab's row shows is `listing::SwitchInfo`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Stop tab `tab`'s agent and start `agent` in the same tab, worktree and
/// branch, with a handoff as its first prompt: `text` when given, else
/// one built from the old agent's conversation; none with `no_handoff`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwitchTab {
    pub tab: String,
    pub agent: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_handoff: bool,
    /// The caller's environment: the new agent's, and where the logs are.
    #[serde(default)]
    pub env: Vec<(String, String)>,
    /// The caller's folder: tab numbers and names count in its session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<PathBuf>,
}

/// A switch done.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Switched {
    /// The same tab, now running `to`.
    pub tab: String,
    pub from: String,
    pub to: String,
    /// The handoff typed (or to be typed) once the new agent is idle;
    /// `None` with `--no-handoff`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handoff: Option<String>,
    /// nerdr built the handoff from the old agent's conversation.
    #[serde(default)]
    pub built: bool,
    /// The new agent's sandbox check refused it: the tab stays, with why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}
