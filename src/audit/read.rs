//! Reading audit entries back for `nerdr log`: from the journal through
//! `journalctl -o json`, or from `audit.jsonl` without one.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::{format_time, Event, Kind};

const MARK: &str = " AUDIT ";

/// An audit entry as `nerdr log` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Microseconds since the epoch.
    pub time_us: u64,
    pub kind: Kind,
    pub message: String,
    /// `NERDR_*` fields; a repeated field keeps every value.
    pub fields: BTreeMap<String, Vec<String>>,
}

impl Entry {
    pub fn from_event(event: &Event, time_us: u64) -> Self {
        let mut fields: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (n, v) in &event.fields {
            fields.entry(n.clone()).or_default().push(v.clone());
        }
        Entry {
            time_us,
            kind: event.kind,
            message: event.message.clone(),
            fields,
        }
    }

    /// `core.log`'s form: `<time> AUDIT {json}`, one line.
    pub fn to_log_line(&self) -> String {
        format!(
            "{}{MARK}{}\n",
            format_time(self.time_us),
            serde_json::to_string(self).expect("audit entries serialize")
        )
    }

    /// `audit.jsonl`'s form: the JSON object alone.
    pub fn to_json_line(&self) -> String {
        format!(
            "{}\n",
            serde_json::to_string(self).expect("audit entries serialize")
        )
    }

    pub fn from_json_line(line: &str) -> Option<Self> {
        serde_json::from_str(line).ok()
    }

    /// One object of `journalctl -o json`.
    pub fn from_journal_json(line: &str) -> Option<Self> {
        let v: serde_json::Value = serde_json::from_str(line).ok()?;
        let obj = v.as_object()?;
        let kind = Kind::from_message_id(obj.get("MESSAGE_ID")?.as_str()?)?;
        let text = |v: &serde_json::Value| v.as_str().map(str::to_string);
        let mut fields = BTreeMap::new();
        for (name, value) in obj {
            if !name.starts_with("NERDR_") || name == "NERDR_EVENT" {
                continue;
            }
            let values: Vec<String> = match value {
                serde_json::Value::Array(items) => items.iter().filter_map(text).collect(),
                other => text(other).into_iter().collect(),
            };
            fields.insert(name.clone(), values);
        }
        Some(Entry {
            time_us: obj.get("__REALTIME_TIMESTAMP")?.as_str()?.parse().ok()?,
            kind,
            message: obj.get("MESSAGE").and_then(text).unwrap_or_default(),
            fields,
        })
    }

    /// One line for people: time, kind, the fields, the message; whatever
    /// came from elsewhere (a host name, a path) escaped, so an entry can
    /// neither pass for two nor drive the terminal.
    pub fn human(&self) -> String {
        use crate::protocol::printable;
        let mut s = format!("{} {}", format_time(self.time_us), self.kind.name());
        for (name, values) in &self.fields {
            let short = name.trim_start_matches("NERDR_").to_ascii_lowercase();
            s.push_str(&format!(
                " {}={}",
                printable(&short),
                printable(&values.join(","))
            ));
        }
        s.push_str(": ");
        s.push_str(&printable(&self.message));
        s
    }
}

/// Where entries came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Journal,
    File,
}

/// Entries of the given kinds, oldest first: from the journal when it
/// answers with any, else from nerdr's own `audit.jsonl` (which has every
/// entry too).
pub fn load(audit_file: &Path, kinds: &[Kind]) -> (Vec<Entry>, Source) {
    let from_journal = journal_entries(kinds).unwrap_or_default();
    if !from_journal.is_empty() {
        return (from_journal, Source::Journal);
    }
    (file_entries(audit_file, kinds), Source::File)
}

pub fn file_entries(audit_file: &Path, kinds: &[Kind]) -> Vec<Entry> {
    let text = std::fs::read(audit_file).unwrap_or_default();
    String::from_utf8_lossy(&text)
        .lines()
        .filter_map(Entry::from_json_line)
        .filter(|e| kinds.contains(&e.kind))
        .collect()
}

/// Entries this user's processes wrote, per `journalctl` (None when there is
/// no journal or it cannot be read).
pub fn journal_entries(kinds: &[Kind]) -> Option<Vec<Entry>> {
    if !Path::new(super::journal::SOCKET).exists() {
        return None;
    }
    let mut cmd = Command::new("journalctl");
    cmd.args(["-o", "json", "--no-pager", "-q"]);
    // Matches on one field are ORed, on different fields ANDed.
    for k in kinds {
        cmd.arg(format!("MESSAGE_ID={}", k.message_id()));
    }
    cmd.arg(format!("_UID={}", nix::unistd::getuid()));
    let out = cmd.stderr(std::process::Stdio::null()).output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(Entry::from_journal_json)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Event {
        Event::new(Kind::ProbeRefused, "the probe reached the client socket")
            .field("NERDR_TAB", "t1")
            .field("NERDR_REACHED", "client socket")
            .field("NERDR_REACHED", "core /proc")
    }

    #[test]
    fn lines_round_trip() {
        let e = Entry::from_event(&sample(), 1_796_068_801_000_000);
        let line = e.to_log_line();
        assert!(line.starts_with("2026-11-30T20:00:01.000000Z AUDIT {"));
        assert_eq!(line.matches('\n').count(), 1);
        let json = e.to_json_line();
        assert_eq!(json.matches('\n').count(), 1);
        assert_eq!(Entry::from_json_line(json.trim_end()), Some(e));
        assert_eq!(Entry::from_json_line(line.trim_end()), None);
    }

    #[test]
    fn journal_json_keeps_repeated_fields() {
        let line = serde_json::json!({
            "__REALTIME_TIMESTAMP": "1796068801000000",
            "MESSAGE_ID": Kind::ProbeRefused.message_id(),
            "MESSAGE": "the probe reached the client socket",
            "NERDR_EVENT": "probe-refused",
            "NERDR_TAB": "t1",
            "NERDR_REACHED": ["client socket", "core /proc"],
            "_PID": "42",
        })
        .to_string();
        let e = Entry::from_journal_json(&line).unwrap();
        assert_eq!(e, Entry::from_event(&sample(), 1_796_068_801_000_000));
        assert!(e
            .human()
            .contains("reached=client socket,core /proc tab=t1: the probe"));
    }

    #[test]
    fn entries_of_other_kinds_or_ids_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("audit.jsonl");
        for e in [sample(), Event::new(Kind::GitRefused, "no")] {
            super::super::append(&file, &Entry::from_event(&e, 1).to_json_line());
        }
        // A forged line elsewhere in the file is not an entry unless it
        // parses whole.
        super::super::append(&file, "x AUDIT {\"kind\":\"git-refused\"}\n");
        assert_eq!(file_entries(&file, &[Kind::GitRefused]).len(), 1);
        assert_eq!(file_entries(&file, &Kind::ALL).len(), 2);
        let unknown =
            r#"{"MESSAGE_ID":"00000000000000000000000000000000","__REALTIME_TIMESTAMP":"1"}"#;
        assert_eq!(Entry::from_journal_json(unknown), None);
    }
}
