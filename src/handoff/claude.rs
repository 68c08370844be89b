//! claude's conversation log (`~/.claude/projects/<folder>/<session>.jsonl`,
//! Claude Code 2.1): one JSON object a line. A `user` line whose
//! `message.content` is text (a string, or `text` blocks) is a request; an
//! `assistant` line's `text` blocks are its answer. Tool calls
//! (`tool_use`), their results (`tool_result` in a `user` line), claude's
//! own notes to itself (`isMeta`), a sub-agent's lines (`isSidechain`),
//! slash commands' echoes (`<command-...>`, `<local-command-...>`) and
//! every other line type (`attachment`, `queue-operation`, ...) are noise.
//! A line that is no JSON (one cut short while claude wrote it) is skipped.

use serde_json::Value;

use super::Said;

/// The folder claude keeps a working folder's logs in: the folder's path
/// with every character but ASCII letters and digits made `-`
/// (`/tmp/a.b` is `-tmp-a-b`).
pub fn project_folder(cwd: &std::path::Path) -> String {
    // As the path is, without a trailing `/` (nerdr's record of a tab's
    // folder may have one; claude's never does).
    let cwd: std::path::PathBuf = cwd.components().collect();
    cwd.to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The messages of a log, in order.
pub fn parse(log: &str) -> Vec<Said> {
    log.lines().filter_map(line).collect()
}

/// One line's message, if it is a request or an answer in words.
pub fn line(line: &str) -> Option<Said> {
    let v: Value = serde_json::from_str(line).ok()?;
    if v["isMeta"] == Value::Bool(true) || v["isSidechain"] == Value::Bool(true) {
        return None;
    }
    let content = &v["message"]["content"];
    match v["type"].as_str()? {
        "user" => {
            let text = match content {
                Value::String(s) => s.clone(),
                Value::Array(_) => texts(content)?,
                _ => return None,
            };
            let text = text.trim();
            (!text.is_empty() && !is_command_echo(text)).then(|| Said::Request(text.to_string()))
        }
        "assistant" => texts(content).map(Said::Answer),
        _ => None,
    }
}

/// The `text` blocks of `content`, joined; `None` when it has none (a
/// tool call, a tool's result).
fn texts(content: &Value) -> Option<String> {
    let parts: Vec<&str> = content
        .as_array()?
        .iter()
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str())
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n"))
}

/// What claude writes as a user line but nobody asked in words.
fn is_command_echo(text: &str) -> bool {
    [
        "<command-",
        "<local-command-",
        "<system-reminder>",
        "Caveat: ",
    ]
    .iter()
    .any(|p| text.starts_with(p))
}
