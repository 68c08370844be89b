//! opencode's conversations (opencode 1.18): `<command> session list
//! --format json` lists them (`id`, `directory`, `updated` in ms), and
//! `<command> export <id>` prints one as JSON: `info`, then `messages`,
//! each an `info` with its `role` and `parts`. A `text` part of a `user`
//! message is a request, of an `assistant` message an answer; `synthetic`
//! text (what opencode adds itself, a file's content), `tool` parts,
//! `step-start`/`step-finish` and `reasoning` are noise.
//!
//! Older descriptions of opencode name the export `session export`; opencode
//! 1.18.33 has it as the top-level `export` (its `session` command has
//! only `list` and `delete`).

use serde_json::Value;

use super::Said;

/// The arguments that list conversations, newest first.
pub const LIST_ARGS: &[&str] = &["session", "list", "--format", "json"];

/// The arguments that print conversation `id`.
pub fn export_args(id: &str) -> Vec<String> {
    vec!["export".into(), id.into()]
}

/// The id of the newest conversation held in folder `cwd`, from `session
/// list --format json`.
pub fn newest_in(list: &str, cwd: &std::path::Path) -> Result<Option<String>, String> {
    let v: Value = serde_json::from_str(list.trim())
        .map_err(|e| format!("`opencode session list --format json` printed no JSON list ({e})"))?;
    let rows = v
        .as_array()
        .ok_or("`opencode session list --format json` printed no JSON list")?;
    Ok(rows
        .iter()
        .filter(|r| r["directory"].as_str().map(std::path::Path::new) == Some(cwd))
        .max_by_key(|r| r["updated"].as_u64().unwrap_or(0))
        .and_then(|r| r["id"].as_str())
        .map(str::to_string))
}

/// The messages of an export, in order.
pub fn parse(export: &str) -> Result<Vec<Said>, String> {
    // opencode may print a line about what it does before the JSON.
    let start = export
        .find('{')
        .ok_or("`opencode export` printed no JSON")?;
    let v: Value = serde_json::from_str(&export[start..])
        .map_err(|e| format!("`opencode export` printed no session JSON ({e})"))?;
    let messages = v["messages"]
        .as_array()
        .ok_or("`opencode export` printed no `messages`")?;
    Ok(messages.iter().filter_map(message).collect())
}

fn message(m: &Value) -> Option<Said> {
    let parts: Vec<&str> = m["parts"]
        .as_array()?
        .iter()
        .filter(|p| p["type"] == "text" && p["synthetic"] != Value::Bool(true))
        .filter_map(|p| p["text"].as_str())
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    if parts.is_empty() {
        return None;
    }
    let text = parts.join("\n");
    match m["info"]["role"].as_str()? {
        "user" => Some(Said::Request(text)),
        "assistant" => Some(Said::Answer(text)),
        _ => None,
    }
}
