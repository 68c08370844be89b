//! What waits for the person's answer, and the answer: plain data shared
//! by the queue (`approvals`), the rule of what an answer does
//! (`answers`) and those who ask (`plugins`, `net_questions`, `api`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Approval {
    pub id: String,
    /// What is asked, for people.
    pub question: String,
    /// The tab that asks (for a setup: the agent's tab it is for).
    pub tab: String,
    #[serde(flatten)]
    pub asked: Asked,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Asked {
    Setup {
        worktree: PathBuf,
        hash: String,
        argv: Vec<String>,
        /// In a repository sandboxed agents worked in: its content may be
        /// their work, so a yes is for this run only, never remembered.
        #[serde(default)]
        once: bool,
    },
    /// Input for tab `to`, typed as is once approved.
    Message { to: String, text: String },
    /// A plugin run; whoever waits for it holds the other end.
    Plugin { name: String, args: Vec<String> },
    /// A connection a sandbox's proxy holds until the person answers.
    Network { host: String, port: u16 },
}

/// The person's answer, as the one waiting for it gets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Said {
    No,
    Yes,
    /// Yes for the rest of the asking sandbox's run (network questions).
    Session,
}
