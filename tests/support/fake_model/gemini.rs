//! The Gemini API as the Gemini CLI uses it with `GOOGLE_GEMINI_BASE_URL`
//! (`POST /v1beta/models/MODEL:streamGenerateContent?alt=sse`, and
//! `:generateContent` for its side questions, which carry a JSON schema):
//! a request reduced to [`Asked`], an [`Answer`] turned into
//! `GenerateContentResponse` chunks. The shell call is a `functionCall` part
//! for the declared `run_shell_command`, its arguments filled the way
//! `chat.rs` fills them.

use serde_json::{json, Value};

use super::anthropic::pieces;
use super::chat::arguments;
use super::script::{Answer, Asked, SLOW_WORD};
use super::Event;

const SHELLS: &[&str] = &["run_shell_command", "shell", "bash"];

/// Which Gemini API call a path is, if it is one: `(streamed, model)`.
pub fn route(path: &str) -> Option<(bool, &str)> {
    let rest = path.strip_prefix("/v1beta/models/")?;
    let (model, verb) = rest.split_once(':')?;
    match verb {
        "streamGenerateContent" => Some((true, model)),
        "generateContent" => Some((false, model)),
        _ => None,
    }
}

fn shell_tool(req: &Value) -> Option<(String, Value)> {
    let decls: Vec<&Value> = req["tools"]
        .as_array()?
        .iter()
        .filter_map(|t| t["functionDeclarations"].as_array())
        .flatten()
        .collect();
    SHELLS.iter().find_map(|want| {
        decls.iter().find_map(|d| {
            (d["name"].as_str() == Some(*want)).then(|| {
                let params = d
                    .get("parametersJsonSchema")
                    .unwrap_or(&d["parameters"])
                    .clone();
                (want.to_string(), params)
            })
        })
    })
}

pub fn asked(req: &Value) -> Asked {
    let contents = req["contents"].as_array().cloned().unwrap_or_default();
    let parts = |c: &Value| c["parts"].as_array().cloned().unwrap_or_default();
    let after_tool = contents
        .last()
        .is_some_and(|c| parts(c).iter().any(|p| p.get("functionResponse").is_some()));
    // The person's turn: the user contents since the model last spoke.
    let turn: Vec<String> = contents
        .iter()
        .rev()
        .take_while(|c| c["role"] != "model")
        .flat_map(|c| {
            parts(c)
                .iter()
                .filter_map(|p| p["text"].as_str().map(str::to_string))
                .collect::<Vec<_>>()
        })
        .collect();
    let config = &req["generationConfig"];
    let schema = ["responseJsonSchema", "responseSchema"]
        .iter()
        .find_map(|k| config.get(*k).filter(|s| s.is_object()).cloned());
    Asked {
        after_tool,
        user_text: turn.into_iter().rev().collect::<Vec<_>>().join("\n"),
        schema,
        has_shell: shell_tool(req).is_some(),
    }
}

fn response(parts: Value, finish: Option<&str>) -> Value {
    let mut cand = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    if let Some(f) = finish {
        cand["finishReason"] = json!(f);
    }
    json!({"candidates": [cand], "modelVersion": "fake-model",
           "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                             "totalTokenCount": 15}})
}

fn call_part(req: &Value, command: &str) -> Value {
    let (name, params) = shell_tool(req).expect("decide offers a shell only when declared");
    json!({"functionCall": {"name": name, "args": arguments(&params, command)}})
}

/// The answer as the chunks of `streamGenerateContent?alt=sse`.
pub fn events(req: &Value, answer: &Answer) -> Vec<Event> {
    let ev = |data: Value| Event::new(None, data);
    match answer {
        Answer::Text { text, slow } => {
            let words = pieces(text, *slow);
            let last = words.len() - 1;
            words
                .into_iter()
                .enumerate()
                .map(|(i, w)| {
                    let finish = (i == last).then_some("STOP");
                    let mut e = ev(response(json!([{"text": w}]), finish));
                    if *slow {
                        e.pause = SLOW_WORD;
                    }
                    e
                })
                .collect()
        }
        Answer::Shell { command, .. } => {
            vec![ev(response(json!([call_part(req, command)]), Some("STOP")))]
        }
    }
}

/// The answer as one `generateContent` response.
pub fn message(req: &Value, answer: &Answer) -> Value {
    match answer {
        Answer::Text { text, .. } => response(json!([{"text": text}]), Some("STOP")),
        Answer::Shell { command, .. } => response(json!([call_part(req, command)]), Some("STOP")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_the_call_and_the_model() {
        let rows = [
            (
                "/v1beta/models/fake-model:streamGenerateContent",
                Some((true, "fake-model")),
            ),
            (
                "/v1beta/models/gemini-2.5-flash:generateContent",
                Some((false, "gemini-2.5-flash")),
            ),
            ("/v1beta/models/fake-model:countTokens", None),
            ("/v1/chat/completions", None),
        ];
        for (path, want) in rows {
            assert_eq!(route(path), want, "{path}");
        }
    }

    #[test]
    fn a_request_is_reduced_to_what_the_answer_depends_on() {
        let tools = json!([{"functionDeclarations": [{"name": "run_shell_command",
            "parametersJsonSchema": {"type": "object",
                "properties": {"command": {"type": "string"}}, "required": ["command"]}}]}]);
        let first = json!({"contents": [{"role": "user", "parts": [{"text": "<context>"}]},
                                        {"role": "user", "parts": [{"text": "RUN-IT"}]}],
                           "tools": tools});
        let a = asked(&first);
        assert_eq!(
            (a.after_tool, a.user_text.as_str(), a.has_shell),
            (false, "<context>\nRUN-IT", true)
        );
        let after = json!({"contents": [
            {"role": "user", "parts": [{"text": "RUN-IT"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "run_shell_command"}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command",
                                                              "response": {"output": "ok"}}}]}]});
        assert!(asked(&after).after_tool);
        let side = json!({"contents": [], "generationConfig": {"responseJsonSchema":
            {"type": "object", "properties": {"next_speaker": {"enum": ["user", "model"]}}}}});
        assert!(asked(&side).schema.is_some());
        let call = call_part(&first, "ls");
        assert_eq!(
            call,
            json!({"functionCall": {"name": "run_shell_command", "args": {"command": "ls"}}})
        );
    }
}
