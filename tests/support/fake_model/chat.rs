//! The OpenAI Chat Completions API (`POST /v1/chat/completions`, streamed
//! or not) as the agents with a custom OpenAI-compatible base URL use it
//! (opencode, qwen, kilo, pi, grok, ...): a request reduced to [`Asked`],
//! an [`Answer`] turned into `chat.completion.chunk` events ending in
//! `data: [DONE]`. Each agent names its shell tool differently (`bash`,
//! `run_shell_command`, cline's `run_commands`, ...); the call fills the
//! parameters that tool declares, so the agent's own validation accepts it.

use serde_json::{json, Value};

use super::anthropic::pieces;
use super::script::{example_of, Answer, Asked, SLOW_WORD};
use super::Event;

/// Shell tool names across the agents, preferred first.
const SHELLS: &[&str] = &[
    "bash",
    "Bash",
    "run_shell_command",
    "run_commands",
    "shell",
    "execute_command",
    "exec_command",
    "run_command",
    "shell_command",
    "terminal",
];

/// The shell tool the request offers, as (name, its parameters' schema).
fn shell_tool(req: &Value) -> Option<(String, Value)> {
    let tools = req["tools"].as_array()?;
    SHELLS.iter().find_map(|want| {
        tools.iter().find_map(|t| {
            let f = &t["function"];
            (f["name"].as_str() == Some(*want)).then(|| (want.to_string(), f["parameters"].clone()))
        })
    })
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

pub fn asked(req: &Value) -> Asked {
    let msgs = req["messages"].as_array().cloned().unwrap_or_default();
    let after_tool = msgs.last().is_some_and(|m| m["role"] == "tool");
    // The user's turn may come as several user messages (kimi adds its own
    // reminders after the person's text): all of them since the model last
    // spoke count.
    let turn: Vec<String> = msgs
        .iter()
        .rev()
        .take_while(|m| m["role"] != "assistant" && m["role"] != "tool")
        .filter(|m| m["role"] == "user")
        .map(|m| text_of(&m["content"]))
        .collect();
    let user_text = if turn.is_empty() {
        msgs.iter()
            .rev()
            .find(|m| m["role"] == "user")
            .map(|m| text_of(&m["content"]))
            .unwrap_or_default()
    } else {
        turn.into_iter().rev().collect::<Vec<_>>().join("\n")
    };
    Asked {
        after_tool,
        user_text,
        schema: None,
        has_shell: shell_tool(req).is_some(),
    }
}

/// The call's arguments: the command in the field the tool declares for
/// it, and every other required field an example of its schema (opencode's
/// `bash` requires a `description`).
fn arguments(params: &Value, command: &str) -> Value {
    let props = params["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let field = ["command", "cmd", "commands"]
        .into_iter()
        .find(|k| props.contains_key(*k))
        .unwrap_or("command");
    let mut args = serde_json::Map::new();
    let array = props.get(field).is_some_and(|p| p["type"] == "array");
    if field == "commands" && array {
        // cline's run_commands: a list of whole command lines.
        args.insert(field.into(), json!([command]));
    } else if array {
        args.insert(field.into(), json!(["bash", "-lc", command]));
    } else {
        args.insert(field.into(), json!(command));
    }
    for req in params["required"].as_array().into_iter().flatten() {
        let Some(name) = req.as_str() else { continue };
        if !args.contains_key(name) {
            let sub = props
                .get(name)
                .cloned()
                .unwrap_or(json!({"type": "string"}));
            args.insert(name.into(), example_of(&sub));
        }
    }
    Value::Object(args)
}

fn chunk(n: u64, model: &str, delta: Value, finish: Option<&str>) -> Value {
    json!({"id": format!("chatcmpl-fake{n}"), "object": "chat.completion.chunk",
           "created": 1_700_000_000u64, "model": model,
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

fn usage() -> Value {
    json!({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})
}

/// The answer as the stream of chunks the agent reads.
pub fn events(req: &Value, answer: &Answer, n: u64) -> Vec<Event> {
    let model = req["model"].as_str().unwrap_or("fake-model");
    let ev = |data: Value| Event::new(None, data);
    let mut out = vec![ev(chunk(
        n,
        model,
        json!({"role": "assistant", "content": ""}),
        None,
    ))];
    let finish = match answer {
        Answer::Text { text, slow } => {
            for piece in pieces(text, *slow) {
                let mut e = ev(chunk(n, model, json!({"content": piece}), None));
                if *slow {
                    e.pause = SLOW_WORD;
                }
                out.push(e);
            }
            "stop"
        }
        Answer::Shell { command, .. } => {
            let (name, params) = shell_tool(req).expect("decide offers a shell only when declared");
            out.push(ev(chunk(
                n,
                model,
                json!({"tool_calls": [{"index": 0, "id": format!("call_fake{n}"), "type": "function",
                        "function": {"name": name,
                                     "arguments": arguments(&params, command).to_string()}}]}),
                None,
            )));
            "tool_calls"
        }
    };
    let mut last = chunk(n, model, json!({}), Some(finish));
    last["usage"] = usage();
    out.push(ev(last));
    out
}

/// The answer as one `chat.completion` object (a request without
/// `"stream": true`).
pub fn message(req: &Value, answer: &Answer, n: u64) -> Value {
    let model = req["model"].as_str().unwrap_or("fake-model");
    let (msg, finish) = match answer {
        Answer::Text { text, .. } => (json!({"role": "assistant", "content": text}), "stop"),
        Answer::Shell { command, .. } => {
            let (name, params) = shell_tool(req).expect("decide offers a shell only when declared");
            (
                json!({"role": "assistant", "content": null, "tool_calls": [{
                    "id": format!("call_fake{n}"), "type": "function",
                    "function": {"name": name, "arguments": arguments(&params, command).to_string()}}]}),
                "tool_calls",
            )
        }
    };
    json!({"id": format!("chatcmpl-fake{n}"), "object": "chat.completion",
           "created": 1_700_000_000u64, "model": model,
           "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
           "usage": usage()})
}

/// `GET /v1/models`: the one model the server pretends to be.
pub fn models() -> Value {
    json!({"object": "list", "data": [{"id": "fake-model", "object": "model",
                                        "created": 1_700_000_000u64, "owned_by": "fake"}]})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_reduced_to_what_the_answer_depends_on() {
        let tools = json!([{"type": "function", "function": {"name": "run_shell_command",
                            "parameters": {"properties": {"command": {"type": "string"}}}}}]);
        let rows = [
            (
                json!({"messages": [{"role": "user", "content": "GO-SLOW"}], "tools": tools}),
                (false, "GO-SLOW", true),
            ),
            (
                json!({"messages": [{"role": "user", "content": "RUN-IT"},
                                    {"role": "user", "content": "<system-reminder>x</system-reminder>"}]}),
                (false, "RUN-IT\n<system-reminder>x</system-reminder>", false),
            ),
            (
                json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]},
                                    {"role": "assistant", "tool_calls": []},
                                    {"role": "tool", "content": "ok"}]}),
                (true, "hi", false),
            ),
        ];
        for (req, (after_tool, user, shell)) in rows {
            let a = asked(&req);
            assert_eq!(
                (a.after_tool, a.user_text.as_str(), a.has_shell),
                (after_tool, user, shell),
                "{req}"
            );
        }
    }

    #[test]
    fn shell_arguments_fill_the_declared_required_fields() {
        let rows = [
            (
                json!({"properties": {"command": {"type": "string"},
                                      "description": {"type": "string"}},
                       "required": ["command", "description"]}),
                json!({"command": "ls", "description": "Fake session"}),
            ),
            (
                json!({"properties": {"cmd": {"type": "string"}}}),
                json!({"cmd": "ls"}),
            ),
            (
                json!({"properties": {"commands": {"type": "array", "items": {"type": "string"}}},
                       "required": ["commands"]}),
                json!({"commands": ["ls"]}),
            ),
            (
                json!({"properties": {"command": {"type": "array"}}}),
                json!({"command": ["bash", "-lc", "ls"]}),
            ),
        ];
        for (params, want) in rows {
            assert_eq!(arguments(&params, "ls"), want, "{params}");
        }
    }
}
