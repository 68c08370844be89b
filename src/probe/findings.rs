//! What the probe reports: for each check of the plan, by its id, whether
//! it got through and what happened. Sent as one line,
//! `NERDR-PROBE <nonce> <json>`, on the probe's stdout.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub id: String,
    pub reached: bool,
    /// What happened, for the log (`EACCES`, `not the same folder`, ...).
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Findings {
    pub findings: Vec<Finding>,
    /// What of nerdr the agent needs and could not reach from inside (the
    /// hook socket, `$NERDR_BIN`), in words. Not a refusal: the agent is
    /// kept from nerdr, not nerdr from the agent, but its CLI and hooks
    /// (a reviewer's `post-review`) cannot work, and the person is told.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nerdr_missing: Vec<String>,
}

impl Findings {
    /// The report line for `nonce`.
    pub fn line(&self, nonce: &str) -> String {
        format!(
            "{} {nonce} {}",
            super::REPORT_TAG,
            serde_json::to_string(self).expect("findings serialize")
        )
    }
}
