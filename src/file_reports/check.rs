//! One line of a reports file in, a report or the reason it is refused out.
//! Pure. The line is an agent's, perhaps a sandboxed one's: only the
//! kinds listed in `super` are known, every field is typed and bounded,
//! a field not listed is refused (a `session`, `caller` or `tab_id` of the
//! writer's invention must not pass unread), and a `tab` naming any tab
//! but the file's own is refused: the file speaks for its tab alone.

use serde::Deserialize;

/// Hook events a line may report: what `detect::reports` reads as a state,
/// and the rest of what the installed hooks send.
pub const EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "Notification",
    "PermissionRequest",
    "SubagentStop",
    "SessionEnd",
    "agent-turn-complete",
];
/// As `core::reports::valid_session_id` takes.
const MAX_SESSION_ID: usize = 200;
/// A path in the worktree, as `nerdr why add --file` takes one.
const MAX_PATH: usize = 4096;
/// The most a `tab` field may hold: an id or a tab name.
const MAX_TAB: usize = 200;

/// The tab whose worktree the file is in: what a line's `tab` may say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabNames {
    pub id: String,
    pub name: String,
}

/// An accepted line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Report {
    State {
        event: String,
        session_id: Option<String>,
    },
    Review {
        text: String,
    },
    Why {
        text: String,
        file: Option<String>,
        lines: Option<(u32, u32)>,
    },
}

/// Why a line was refused, for the journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    TooLong,
    NotJson(String),
    UnknownKind(String),
    UnknownEvent(String),
    BadField(String),
    OtherTab(String),
}

impl Refusal {
    /// What kind of refusal, in a word: what the journal is throttled by
    /// (once a second each), so lines each refused in words of their own
    /// (an unknown kind of their own) cannot journal one entry a line.
    pub fn class(&self) -> &'static str {
        match self {
            Refusal::TooLong => "too-long",
            Refusal::NotJson(_) => "not-json",
            Refusal::UnknownKind(_) => "unknown-kind",
            Refusal::UnknownEvent(_) => "unknown-event",
            Refusal::BadField(_) => "bad-field",
            Refusal::OtherTab(_) => "other-tab",
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Refusal::TooLong => write!(f, "the line is longer than {} bytes", super::MAX_LINE),
            Refusal::NotJson(e) => write!(f, "not a JSON report: {e}"),
            Refusal::UnknownKind(k) => write!(
                f,
                "unknown kind {k:?}: a line is a \"state\", \"review\" or \"why\""
            ),
            Refusal::UnknownEvent(e) => write!(f, "unknown event {e:?}"),
            Refusal::BadField(why) => f.write_str(why),
            Refusal::OtherTab(t) => write!(
                f,
                "the line names tab {t:?}, not the tab whose worktree the file is in: a file \
                 reports for its own tab only"
            ),
        }
    }
}

#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
enum Line {
    State {
        event: String,
        #[serde(default)]
        session_id: Option<String>,
        #[serde(default)]
        tab: Option<String>,
    },
    Review {
        text: String,
        #[serde(default)]
        tab: Option<String>,
    },
    Why {
        text: String,
        #[serde(default)]
        file: Option<String>,
        #[serde(default)]
        lines: Option<(u32, u32)>,
        #[serde(default)]
        tab: Option<String>,
    },
}

pub fn check(line: &[u8], own: &TabNames) -> Result<Report, Refusal> {
    if line.len() > super::MAX_LINE {
        return Err(Refusal::TooLong);
    }
    // The kind first, so an unknown one says so rather than what serde
    // makes of it.
    let value: serde_json::Value =
        serde_json::from_slice(line).map_err(|e| Refusal::NotJson(e.to_string()))?;
    let kind = match value.get("kind") {
        Some(serde_json::Value::String(k)) => k.clone(),
        Some(_) => return Err(Refusal::BadField("`kind` is not a string".into())),
        None if value.is_object() => return Err(Refusal::BadField("no `kind`".into())),
        None => return Err(Refusal::NotJson("not an object".into())),
    };
    if !["state", "review", "why"].contains(&kind.as_str()) {
        return Err(Refusal::UnknownKind(bounded(&kind)));
    }
    let parsed: Line =
        serde_json::from_value(value).map_err(|e| Refusal::BadField(e.to_string()))?;
    let tab = match &parsed {
        Line::State { tab, .. } | Line::Review { tab, .. } | Line::Why { tab, .. } => tab,
    };
    if let Some(t) = tab {
        if *t != own.id && *t != own.name {
            return Err(Refusal::OtherTab(bounded(t)));
        }
    }
    match parsed {
        Line::State {
            event, session_id, ..
        } => {
            if !EVENTS.contains(&event.as_str()) {
                return Err(Refusal::UnknownEvent(bounded(&event)));
            }
            if let Some(id) = &session_id {
                if !plain_session_id(id) {
                    return Err(Refusal::BadField(
                        "`session_id` is not a plain word of at most 200 letters, digits, - _ . :"
                            .into(),
                    ));
                }
            }
            Ok(Report::State { event, session_id })
        }
        Line::Review { text, .. } => {
            if text.trim().is_empty() || text.len() > crate::review::format::MAX_BYTES {
                return Err(Refusal::BadField(format!(
                    "`text` is empty or longer than {} bytes",
                    crate::review::format::MAX_BYTES
                )));
            }
            Ok(Report::Review { text })
        }
        Line::Why {
            text, file, lines, ..
        } => {
            crate::why::check_text(&text).map_err(Refusal::BadField)?;
            if let Some(f) = &file {
                let bad = f.is_empty()
                    || f.len() > MAX_PATH
                    || f.contains('\0')
                    || std::path::Path::new(f).is_absolute()
                    || f.split('/').any(|c| c == "..");
                if bad {
                    return Err(Refusal::BadField(
                        "`file` is not a path inside the worktree".into(),
                    ));
                }
            }
            if let Some((a, b)) = lines {
                if file.is_none() || a == 0 || b < a {
                    return Err(Refusal::BadField(
                        "`lines` is [A, B] with 1 <= A <= B, and needs a `file`".into(),
                    ));
                }
            }
            Ok(Report::Why { text, file, lines })
        }
    }
}

/// A session id as the core takes one (`core::reports::valid_session_id`).
pub fn plain_session_id(id: &str) -> bool {
    let plain = id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'));
    !id.is_empty() && id.len() <= MAX_SESSION_ID && !id.starts_with('-') && plain
}

/// What a refusal repeats of the writer's text: a bounded, printable
/// excerpt, so the journal line stays a line.
fn bounded(s: &str) -> String {
    let cut: String = s.chars().take(MAX_TAB).collect();
    crate::printable::printable(&cut)
}

#[cfg(test)]
#[path = "check_tests.rs"]
mod tests;
