//! The OpenAI Responses API as codex uses it (`POST /v1/responses`,
//! streamed): a request reduced to [`Asked`], an [`Answer`] turned into its
//! server-sent events. The shell call's arguments follow the parameter
//! names the request's own tool declares, so a renamed field still works.

use serde_json::{json, Value};

use super::anthropic::pieces;
use super::script::{Answer, Asked, SLOW_WORD};
use super::Event;

/// codex's shell tools, preferred first.
const SHELLS: &[&str] = &["exec_command", "shell_command", "shell"];

/// The shell tool the request offers, as (name, its parameters' schema).
fn shell_tool(req: &Value) -> Option<(String, Value)> {
    let tools = req["tools"].as_array()?;
    SHELLS.iter().find_map(|want| {
        tools.iter().find_map(|t| {
            let name = t["name"]
                .as_str()
                .or_else(|| t["function"]["name"].as_str())?;
            (name == *want).then(|| {
                let params = t.get("parameters").unwrap_or(&t["function"]["parameters"]);
                (name.to_string(), params.clone())
            })
        })
    })
}

pub fn asked(req: &Value) -> Asked {
    let items = req["input"].as_array().cloned().unwrap_or_default();
    let after_tool = items.last().is_some_and(|i| {
        i["type"]
            .as_str()
            .is_some_and(|t| t.ends_with("_call_output"))
    });
    let user_text = items
        .iter()
        .rev()
        .find(|i| i["role"] == "user")
        .map(|i| match &i["content"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        })
        .unwrap_or_default();
    Asked {
        after_tool,
        user_text,
        schema: None,
        has_shell: shell_tool(req).is_some(),
    }
}

/// The call's arguments for the tool's declared parameters.
fn arguments(params: &Value, command: &str, escalate: bool) -> Value {
    let props = params["properties"].as_object();
    let has = |k: &str| props.is_some_and(|p| p.contains_key(k));
    let mut args = serde_json::Map::new();
    if has("cmd") {
        args.insert("cmd".into(), json!(command));
    } else if params["properties"]["command"]["type"] == "array" {
        args.insert("command".into(), json!(["bash", "-lc", command]));
    } else {
        args.insert("command".into(), json!(command));
    }
    if escalate {
        args.insert("sandbox_permissions".into(), json!("require_escalated"));
        args.insert(
            "justification".into(),
            json!("The test asks to run this outside the sandbox."),
        );
    }
    Value::Object(args)
}

/// The answer as the stream of events codex reads.
pub fn events(req: &Value, answer: &Answer, n: u64) -> Vec<Event> {
    let ev = |data: Value| {
        let name = data["type"].as_str().map(str::to_string);
        Event::new(name.as_deref(), data)
    };
    let resp = format!("resp_fake{n}");
    let mut out = vec![ev(json!({"type": "response.created",
                                 "response": {"id": resp, "status": "in_progress"}}))];
    match answer {
        Answer::Text { text, slow } => {
            let id = format!("msg_fake{n}");
            out.push(ev(
                json!({"type": "response.output_item.added", "output_index": 0,
                "item": {"type": "message", "id": id, "role": "assistant", "status": "in_progress",
                         "content": []}}),
            ));
            for piece in pieces(text, *slow) {
                let mut e = ev(json!({"type": "response.output_text.delta", "item_id": id,
                                      "output_index": 0, "content_index": 0, "delta": piece}));
                if *slow {
                    e.pause = SLOW_WORD;
                }
                out.push(e);
            }
            out.push(ev(
                json!({"type": "response.output_item.done", "output_index": 0,
                "item": {"type": "message", "id": id, "role": "assistant", "status": "completed",
                         "content": [{"type": "output_text", "text": text, "annotations": []}]}}),
            ));
        }
        Answer::Shell { command, escalate } => {
            let (name, params) = shell_tool(req).expect("decide offers a shell only when declared");
            out.push(ev(
                json!({"type": "response.output_item.done", "output_index": 0,
                "item": {"type": "function_call", "id": format!("fc_fake{n}"),
                         "call_id": format!("call_fake{n}"), "name": name, "status": "completed",
                         "arguments": arguments(&params, command, *escalate).to_string()}}),
            ));
        }
    }
    out.push(ev(
        json!({"type": "response.completed", "response": {"id": resp, "status": "completed",
        "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": 15}}}),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_arguments_follow_the_declared_parameters() {
        let rows = [
            (
                json!({"properties": {"cmd": {"type": "string"}}}),
                false,
                json!({"cmd": "ls"}),
            ),
            (
                json!({"properties": {"cmd": {}}}),
                true,
                json!({"cmd": "ls", "sandbox_permissions": "require_escalated",
                       "justification": "The test asks to run this outside the sandbox."}),
            ),
            (
                json!({"properties": {"command": {"type": "array"}}}),
                false,
                json!({"command": ["bash", "-lc", "ls"]}),
            ),
            (
                json!({"properties": {"command": {"type": "string"}}}),
                false,
                json!({"command": "ls"}),
            ),
        ];
        for (params, escalate, want) in rows {
            assert_eq!(arguments(&params, "ls", escalate), want, "{params}");
        }
    }
}
