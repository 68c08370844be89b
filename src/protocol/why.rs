//! `nerdr why add` and `nerdr why`: params and replies side by side, tied
//! to their methods in `api` (the rules are `crate::why`'s).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Keep a reason for a change: of `file` (relative to `folder`, or
/// absolute) and its `lines`, or of the whole change. From a tab, the
/// change is in the tab's own worktree whatever `folder` says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AddWhy {
    /// The caller's folder.
    pub folder: PathBuf,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<(u32, u32)>,
    pub text: String,
}

/// What was kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WhyAdded {
    /// The file, relative to the top of its repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The commit it explains; `None`: the next commit of the file, which
    /// has uncommitted changes now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// That commit's subject, made printable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

/// The reasons kept for `file`'s `lines` (all of them when `None`), the
/// file relative to `folder` or absolute. From a tab, only files of the
/// tab's own worktree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AskWhy {
    pub folder: PathBuf,
    pub file: PathBuf,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<(u32, u32)>,
}

/// The answer: the file's lines grouped by the commit that last touched
/// them and the reasons that explain them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WhyAnswer {
    /// The file, relative to the top of its repository.
    pub file: String,
    pub entries: Vec<WhyEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WhyEntry {
    /// First and last line (from 1), as the file is now.
    pub lines: (u32, u32),
    /// `None`: not committed yet.
    pub commit: Option<String>,
    /// The commit's subject line, made printable.
    pub summary: String,
    pub reasons: Vec<WhyReason>,
}

/// A kept reason, its text made printable (`crate::printable`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WhyReason {
    pub text: String,
    /// The tab, its name and agent; all null for the person's own reason
    /// (always present, so `--json` readers need not guess who wrote it).
    #[serde(default)]
    pub tab: Option<String>,
    #[serde(default)]
    pub tab_name: Option<String>,
    #[serde(default)]
    pub agent: Option<String>,
    /// Written by a sandboxed agent: it can carry instructions to whoever
    /// reads it.
    pub sandboxed: bool,
    pub at: String,
}
