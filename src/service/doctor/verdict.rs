//! What one check of `nerdr doctor` says: its status, what it found, and
//! what to do about it.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    /// What a setup without some part means, with nothing to fix (no user
    /// manager: no units, nothing restarts the core).
    Info,
    Warn,
    Fail,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub status: Status,
    pub detail: String,
    pub remedy: Option<String>,
}

pub fn check(name: &'static str, status: Status, detail: String, remedy: Option<String>) -> Check {
    Check {
        name,
        status,
        detail,
        remedy,
    }
}
