//! The Anthropic Messages API as Claude Code uses it (`POST /v1/messages`,
//! `"stream": true`): a request reduced to [`Asked`], an [`Answer`] turned
//! into its server-sent events or, unstreamed, its JSON message.

use serde_json::{json, Value};

use super::script::{Answer, Asked, SLOW_WORD};
use super::Event;

/// Claude Code's shell tool.
const SHELL: &str = "Bash";

pub fn asked(req: &Value) -> Asked {
    let last = req["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"));
    let blocks: Vec<Value> = match last.map(|m| &m["content"]) {
        Some(Value::String(s)) => vec![json!({"type": "text", "text": s})],
        Some(Value::Array(b)) => b.clone(),
        _ => Vec::new(),
    };
    Asked {
        after_tool: blocks.iter().any(|b| b["type"] == "tool_result"),
        user_text: blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        schema: req
            .pointer("/output_config/format/schema")
            .or_else(|| req.pointer("/output_config/format/json_schema/schema"))
            .cloned(),
        has_shell: req["tools"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["name"] == SHELL)),
    }
}

fn usage() -> Value {
    json!({"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0,
           "cache_read_input_tokens": 0})
}

/// The answer as one unstreamed message.
pub fn message(answer: &Answer, model: &str, n: u64) -> Value {
    let (content, stop) = match answer {
        Answer::Text { text, .. } => (json!([{"type": "text", "text": text}]), "end_turn"),
        Answer::Shell { command, .. } => (
            json!([{"type": "tool_use", "id": format!("toolu_fake{n}"), "name": SHELL,
                    "input": {"command": command}}]),
            "tool_use",
        ),
    };
    json!({"id": format!("msg_fake{n}"), "type": "message", "role": "assistant",
           "model": model, "content": content, "stop_reason": stop,
           "stop_sequence": null, "usage": usage()})
}

/// The answer as the stream of events Claude Code reads.
pub fn events(answer: &Answer, model: &str, n: u64) -> Vec<Event> {
    let ev = |name: &str, data: Value| Event::new(Some(name), data);
    let mut start = message(answer, model, n);
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    let mut out = vec![ev(
        "message_start",
        json!({"type": "message_start", "message": start}),
    )];
    let stop = match answer {
        Answer::Text { text, slow } => {
            out.push(ev(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0,
                       "content_block": {"type": "text", "text": ""}}),
            ));
            for piece in pieces(text, *slow) {
                let mut e = ev(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0,
                           "delta": {"type": "text_delta", "text": piece}}),
                );
                if *slow {
                    e.pause = SLOW_WORD;
                }
                out.push(e);
            }
            "end_turn"
        }
        Answer::Shell { command, .. } => {
            out.push(ev(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0,
                       "content_block": {"type": "tool_use", "id": format!("toolu_fake{n}"),
                                         "name": SHELL, "input": {}}}),
            ));
            out.push(ev(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0,
                       "delta": {"type": "input_json_delta",
                                 "partial_json": json!({"command": command}).to_string()}}),
            ));
            "tool_use"
        }
    };
    out.push(ev(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    ));
    out.push(ev(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
               "usage": {"output_tokens": 5}}),
    ));
    out.push(ev("message_stop", json!({"type": "message_stop"})));
    out
}

/// The text in the pieces it streams in: words when slow, else whole.
pub fn pieces(text: &str, slow: bool) -> Vec<String> {
    if !slow {
        return vec![text.to_string()];
    }
    text.split_inclusive(' ').map(str::to_string).collect()
}
