//! codex's conversation log (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-
//! <session id>.jsonl`, codex-cli 0.171): one JSON object a line, each with
//! a `type` and a `payload`. The first is `session_meta` (the session's
//! `id` and `cwd`); the conversation is in `response_item` lines whose
//! payload is a `message`: role `user` (`input_text` blocks) a request,
//! role `assistant` (`output_text` blocks) an answer. Noise: the
//! `developer` role, user messages codex writes itself (its
//! `<environment_context>`, AGENTS.md instructions: they start with a
//! tag or `# AGENTS.md`), `function_call`s and their output, reasoning,
//! and the `event_msg` lines that repeat the conversation as events.

use serde_json::Value;

use super::Said;

/// The messages of a log, in order.
pub fn parse(log: &str) -> Vec<Said> {
    log.lines().filter_map(line).collect()
}

/// One line's message, if it is a request or an answer in words.
pub fn line(line: &str) -> Option<Said> {
    let v: Value = serde_json::from_str(line).ok()?;
    if v["type"] != "response_item" || v["payload"]["type"] != "message" {
        return None;
    }
    let p = &v["payload"];
    let (block, request) = match p["role"].as_str()? {
        "user" => ("input_text", true),
        "assistant" => ("output_text", false),
        _ => return None,
    };
    let parts: Vec<&str> = p["content"]
        .as_array()?
        .iter()
        .filter(|b| b["type"] == block)
        .filter_map(|b| b["text"].as_str())
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    let text = parts.join("\n");
    match (request, text.is_empty()) {
        (_, true) => None,
        (true, false) if is_codex_own(&text) => None,
        (true, false) => Some(Said::Request(text)),
        (false, false) => Some(Said::Answer(text)),
    }
}

/// A user message codex wrote itself, not the person.
fn is_codex_own(text: &str) -> bool {
    text.starts_with('<') && text.contains('>') || text.starts_with("# AGENTS.md")
}

/// The session id and working folder a log's first line names
/// (`session_meta`), to tell which log is a tab's.
pub fn meta(first_line: &str) -> Option<(String, std::path::PathBuf)> {
    let v: Value = serde_json::from_str(first_line).ok()?;
    if v["type"] != "session_meta" {
        return None;
    }
    let p = &v["payload"];
    Some((p["id"].as_str()?.to_string(), p["cwd"].as_str()?.into()))
}
