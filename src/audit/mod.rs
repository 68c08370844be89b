//! Audit events: refusals and verdicts a person may need to find later.
//! Each goes to the journal as its own structured entry (a fixed
//! `MESSAGE_ID` per kind, `NERDR_*` fields, a field repeated when it has
//! several values) and, always, to `core.log` as one `AUDIT {json}` line for
//! people reading the log, and to `audit.jsonl` beside it, from which
//! `nerdr log` lists them when there is no journal.
//!
//! ```ignore
//! audit::record(&paths, &Event::new(Kind::HookRefused, "refused `nerdr terminal`: ...")
//!     .field("NERDR_TAB", tab_id)
//!     .field("NERDR_OPERATION", "terminal")
//!     .field("NERDR_REASON", "a sandboxed caller cannot open terminals"));
//! ```

mod journal;
pub mod read;

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::paths::Paths;

/// What happened. The `MESSAGE_ID`s are fixed forever: people filter on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A request on the hook socket was refused (privilege model).
    HookRefused,
    /// The sandbox check reached something: the agent was not started.
    ProbeRefused,
    /// The sandbox check could not run or report: the agent was not started.
    ProbeUnchecked,
    /// The sandbox check passed: the agent was started.
    ProbePassed,
    /// Host git was refused in a repository with sandbox history.
    GitRefused,
    /// A launch was refused for another reason (settings, approval).
    LaunchRefused,
    /// A decision of `nerdr sandbox` (proxy, start, exit).
    Sandbox,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::HookRefused,
        Kind::ProbeRefused,
        Kind::ProbeUnchecked,
        Kind::ProbePassed,
        Kind::GitRefused,
        Kind::LaunchRefused,
        Kind::Sandbox,
    ];

    pub fn message_id(self) -> &'static str {
        match self {
            Kind::HookRefused => "6f3c1e2a9b7d4c58a1e0f2b3c4d5e601",
            Kind::ProbeRefused => "6f3c1e2a9b7d4c58a1e0f2b3c4d5e602",
            Kind::ProbeUnchecked => "6f3c1e2a9b7d4c58a1e0f2b3c4d5e603",
            Kind::ProbePassed => "6f3c1e2a9b7d4c58a1e0f2b3c4d5e604",
            Kind::GitRefused => "6f3c1e2a9b7d4c58a1e0f2b3c4d5e605",
            Kind::LaunchRefused => "6f3c1e2a9b7d4c58a1e0f2b3c4d5e606",
            Kind::Sandbox => "6f3c1e2a9b7d4c58a1e0f2b3c4d5e607",
        }
    }

    pub fn from_message_id(id: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.message_id() == id)
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::HookRefused => "hook-refused",
            Kind::ProbeRefused => "probe-refused",
            Kind::ProbeUnchecked => "probe-unchecked",
            Kind::ProbePassed => "probe-passed",
            Kind::GitRefused => "git-refused",
            Kind::LaunchRefused => "launch-refused",
            Kind::Sandbox => "sandbox",
        }
    }

    /// Journal priority: refusals are warnings, the rest information.
    fn priority(self) -> u8 {
        match self {
            Kind::ProbePassed | Kind::Sandbox => 6,
            _ => 4,
        }
    }
}

/// One audit entry: a kind, a sentence for people, and `NERDR_*` fields
/// (a name may repeat: one value per thing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub kind: Kind,
    pub message: String,
    pub fields: Vec<(String, String)>,
}

impl Event {
    pub fn new(kind: Kind, message: impl Into<String>) -> Self {
        Event {
            kind,
            message: message.into(),
            fields: Vec::new(),
        }
    }

    /// Add a field; `name` must be an upper-case journal field name
    /// (`NERDR_TAB`). Call again with the same name for more values.
    pub fn field(mut self, name: &str, value: impl Into<String>) -> Self {
        debug_assert!(journal::valid_field_name(name), "bad field name {name}");
        self.fields.push((name.to_string(), value.into()));
        self
    }
}

/// Write the event to the journal (when there is one), `core.log` and
/// `audit.jsonl`.
/// Failures are logged, never raised: an audit entry must not stop the
/// refusal it records.
pub fn record(paths: &Paths, event: &Event) {
    if let Err(e) = journal::send(event) {
        tracing::debug!(error = %e, "audit entry not sent to the journal");
    }
    let entry = read::Entry::from_event(event, now_us());
    append(&paths.core_log(), &entry.to_log_line());
    append(&audit_file(paths), &entry.to_json_line());
}

/// Where `nerdr log` reads entries without a journal: only audit code
/// writes it, one JSON object per line, so nothing logged elsewhere (a path
/// with a newline in it, say) can pass for an entry.
pub fn audit_file(paths: &Paths) -> std::path::PathBuf {
    paths.state_dir.join("audit.jsonl")
}

/// Append one line with one write, so lines from several processes never
/// interleave.
pub fn append(file: &Path, line: &str) {
    use std::os::unix::fs::OpenOptionsExt;
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(file)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        tracing::warn!(error = %e, file = %file.display(), "cannot append an audit entry");
    }
}

fn now_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

/// `2026-11-30T19:40:01.123456Z` from microseconds since the epoch.
pub fn format_time(us: u64) -> String {
    let secs = us / 1_000_000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:06}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        us % 1_000_000
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_ids_are_distinct_128_bit_hex() {
        let mut seen = std::collections::HashSet::new();
        for k in Kind::ALL {
            let id = k.message_id();
            assert_eq!(id.len(), 32);
            assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
            assert!(seen.insert(id));
            assert_eq!(Kind::from_message_id(id), Some(k));
        }
    }

    #[test]
    fn times_format_as_utc() {
        assert_eq!(format_time(0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(
            format_time(1_796_068_801_000_042),
            "2026-11-30T20:00:01.000042Z"
        );
        assert_eq!(
            format_time(951_782_400_000_000),
            "2000-02-29T00:00:00.000000Z"
        );
    }
}
