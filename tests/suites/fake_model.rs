//! The fake model server itself, over real HTTP (curl as the client): each
//! API's stream carries the answer the script decides, the probes answer,
//! slow answers are slow, and every request is in the log.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::fake_model::script::{AFTER_TOOL_TEXT, DEFAULT_TEXT, SLOW_WORD};
use crate::support::fake_model::{Answer, FakeModel, Turn};

/// `curl` with `body` (or none) to `path`; (status, body).
fn curl(model: &FakeModel, method: &str, path: &str, body: Option<&Value>) -> (u16, String) {
    let mut c = Command::new("curl");
    c.args(["-sS", "--noproxy", "*", "-m", "20", "-X", method])
        .args(["-o", "-", "-w", "\n%{http_code}"]);
    if method == "HEAD" {
        c.arg("-I");
    }
    if let Some(b) = body {
        c.args(["-H", "content-type: application/json", "--data-binary"])
            .arg(b.to_string());
    }
    let out = c.arg(format!("{}{path}", model.url())).output().unwrap();
    assert!(out.status.success(), "curl: {out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let (body, code) = text.rsplit_once('\n').unwrap();
    (code.trim().parse().unwrap(), body.to_string())
}

/// The `data:` payloads of a server-sent event stream.
fn data(stream: &str) -> Vec<Value> {
    stream
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

fn anthropic(text: &str, tool_result: bool) -> Value {
    let mut content = vec![json!({"type": "text", "text": text})];
    if tool_result {
        content = vec![json!({"type": "tool_result", "tool_use_id": "t1", "content": "ok"})];
    }
    json!({"model": "m", "stream": true, "tools": [{"name": "Bash", "input_schema": {}}],
           "messages": [{"role": "user", "content": content}], "some_new_field": 1})
}

#[test]
fn claude_gets_its_shell_call_then_the_closing_text() {
    let model = FakeModel::start();
    model.when_user_says("DO-IT", Turn::run("git commit -qm x"));
    let (code, body) = curl(
        &model,
        "POST",
        "/v1/messages?beta=true",
        Some(&anthropic("now DO-IT", false)),
    );
    assert_eq!(code, 200, "{body}");
    let events = data(&body);
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    assert_eq!(events[1]["content_block"]["name"], "Bash");
    let input: Value =
        serde_json::from_str(events[2]["delta"]["partial_json"].as_str().unwrap()).unwrap();
    assert_eq!(input, json!({"command": "git commit -qm x"}));
    assert_eq!(events[4]["delta"]["stop_reason"], "tool_use");

    let (_, body) = curl(&model, "POST", "/v1/messages", Some(&anthropic("", true)));
    assert_eq!(data(&body)[2]["delta"]["text"], AFTER_TOOL_TEXT);
    let log = model.log();
    assert_eq!(log.len(), 2);
    assert_eq!(log[0].path, "/v1/messages?beta=true");
    assert_eq!(log[0].json.as_ref().unwrap()["some_new_field"], 1);
    assert!(log[1].after_tool() && !log[0].after_tool());
    assert!(
        matches!(&log[0].answer, Some(Answer::Shell { command, .. }) if command == "git commit -qm x")
    );
}

#[test]
fn codex_gets_its_function_call_with_the_declared_parameters() {
    let model = FakeModel::start();
    model.when_user_says("DO-IT", Turn::run("ls"));
    let req = json!({"model": "fake-model", "stream": true,
        "tools": [{"type": "function", "name": "exec_command",
                   "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}],
        "input": [{"type": "message", "role": "user",
                   "content": [{"type": "input_text", "text": "DO-IT please"}]}]});
    let (code, body) = curl(&model, "POST", "/v1/responses", Some(&req));
    assert_eq!(code, 200, "{body}");
    let events = data(&body);
    let call = &events[1]["item"];
    assert_eq!(
        (call["type"].as_str(), call["name"].as_str()),
        (Some("function_call"), Some("exec_command"))
    );
    let args: Value = serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({"cmd": "ls"}));
    assert_eq!(events.last().unwrap()["type"], "response.completed");

    let mut after = req.clone();
    after["input"].as_array_mut().unwrap().extend([
        json!({"type": "function_call", "call_id": "c", "name": "exec_command", "arguments": "{}"}),
        json!({"type": "function_call_output", "call_id": "c", "output": "ok"}),
    ]);
    let (_, body) = curl(&model, "POST", "/v1/responses", Some(&after));
    let done = data(&body);
    let text = done
        .iter()
        .find(|e| e["type"] == "response.output_item.done")
        .unwrap();
    assert_eq!(text["item"]["content"][0]["text"], AFTER_TOOL_TEXT);
}

#[test]
fn probes_titles_unknown_paths_and_slow_answers() {
    let model = FakeModel::start();
    model.when_user_says("SLOWLY", Turn::Slow("one two three".into()));
    model.when_user_says("GREET", Turn::Say("hi there".into()));
    assert_eq!(curl(&model, "HEAD", "/", None).0, 200);
    assert_eq!(curl(&model, "GET", "/", None).0, 200);
    let (code, body) = curl(&model, "GET", "/v1/nothing", None);
    assert_eq!(code, 404);
    assert!(body.contains("/v1/nothing"), "{body}");

    let mut title = anthropic("SLOWLY", false);
    title["stream"] = json!(false);
    title["output_config"] = json!({"format": {"type": "json_schema",
        "schema": {"type": "object", "properties": {"title": {"type": "string"}}}}});
    let (_, body) = curl(&model, "POST", "/v1/messages", Some(&title));
    let msg: Value = serde_json::from_str(&body).unwrap();
    let answer: Value = serde_json::from_str(msg["content"][0]["text"].as_str().unwrap()).unwrap();
    assert!(answer["title"].is_string(), "{msg}");

    let started = Instant::now();
    let (_, body) = curl(
        &model,
        "POST",
        "/v1/messages",
        Some(&anthropic("SLOWLY", false)),
    );
    let words: String = data(&body)
        .iter()
        .filter_map(|e| e["delta"]["text"].as_str())
        .collect();
    assert_eq!(words, "one two three");
    assert!(
        started.elapsed() >= SLOW_WORD * 3,
        "{:?}",
        started.elapsed()
    );
    let (_, body) = curl(
        &model,
        "POST",
        "/v1/messages",
        Some(&anthropic("hi", false)),
    );
    assert_eq!(data(&body)[2]["delta"]["text"], DEFAULT_TEXT);
    let (_, body) = curl(
        &model,
        "POST",
        "/v1/messages",
        Some(&anthropic("GREET", false)),
    );
    assert_eq!(data(&body)[2]["delta"]["text"], "hi there");
    model.wait_for("the HEAD probe", Duration::from_secs(1), |r| {
        r.method == "HEAD"
    });
    assert_eq!(model.log().len(), 7, "{}", model.dump());
}
