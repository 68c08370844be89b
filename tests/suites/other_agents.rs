//! The agents besides claude and codex: the fake model's Chat Completions
//! endpoint over real HTTP (what opencode, qwen, pi, grok, kilo, ... speak
//! to a custom OpenAI-compatible base URL), and the server behind the
//! screen captures of `tests/capture/others.sh` (an `#[ignore]`d test run
//! by that script, not by the suite).

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::fake_model::script::{AFTER_TOOL_TEXT, DEFAULT_TEXT, SLOW_WORD};
use crate::support::fake_model::{FakeModel, Turn};

fn post(model: &FakeModel, body: &Value) -> String {
    let out = Command::new("curl")
        .args(["-sS", "--noproxy", "*", "-m", "30", "-H"])
        .arg("content-type: application/json")
        .arg("--data-binary")
        .arg(body.to_string())
        .arg(format!("{}/v1/chat/completions", model.url()))
        .output()
        .unwrap();
    assert!(out.status.success(), "curl: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The chunks of a stream, which must end with `data: [DONE]`.
fn chunks(stream: &str) -> Vec<Value> {
    let data: Vec<&str> = stream
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .collect();
    assert_eq!(data.last(), Some(&"[DONE]"), "{stream}");
    data[..data.len() - 1]
        .iter()
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

fn content(chunks: &[Value]) -> String {
    chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect()
}

fn bash_tool() -> Value {
    json!([{"type": "function", "function": {"name": "bash", "parameters": {
        "type": "object",
        "properties": {"command": {"type": "string"}, "description": {"type": "string"}},
        "required": ["command", "description"]}}}])
}

#[test]
fn chat_completions_stream_a_shell_call_then_the_closing_text() {
    let model = FakeModel::start();
    model.when_user_says("DO-IT", Turn::run("echo hi"));
    let ask = json!({"model": "fake-model", "stream": true, "tools": bash_tool(),
                     "messages": [{"role": "system", "content": "be brief"},
                                  {"role": "user", "content": "please DO-IT"}]});
    let call = chunks(&post(&model, &ask));
    let tc = call
        .iter()
        .find_map(|c| {
            c["choices"][0]["delta"]["tool_calls"][0]
                .as_object()
                .cloned()
        })
        .unwrap_or_else(|| panic!("no tool call in {call:?}"));
    assert_eq!(tc["function"]["name"], "bash");
    let args: Value = serde_json::from_str(tc["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args["command"], "echo hi");
    assert!(args["description"].is_string(), "{args}");
    assert_eq!(
        call.last().unwrap()["choices"][0]["finish_reason"],
        "tool_calls"
    );

    let after = json!({"model": "fake-model", "stream": true, "tools": bash_tool(),
                       "messages": [{"role": "user", "content": "please DO-IT"},
                                    {"role": "assistant", "tool_calls": [tc]},
                                    {"role": "tool", "tool_call_id": tc["id"], "content": "hi"}]});
    let done = chunks(&post(&model, &after));
    assert_eq!(content(&done), AFTER_TOOL_TEXT);
    assert_eq!(done.last().unwrap()["choices"][0]["finish_reason"], "stop");
    assert_eq!(model.log().iter().filter(|r| r.after_tool()).count(), 1);
}

#[test]
fn chat_completions_answer_slowly_or_at_once_streamed_or_not() {
    let model = FakeModel::start();
    model.when_user_says("GO-SLOW", Turn::Slow("one two three".into()));
    let slow = json!({"model": "m", "stream": true,
                      "messages": [{"role": "user", "content": [{"type": "text", "text": "GO-SLOW"}]}]});
    let t = Instant::now();
    let got = chunks(&post(&model, &slow));
    assert_eq!(content(&got), "one two three");
    assert!(t.elapsed() >= SLOW_WORD * 2, "{:?}", t.elapsed());

    let plain = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
    let whole: Value = serde_json::from_str(&post(&model, &plain)).unwrap();
    assert_eq!(whole["choices"][0]["message"]["content"], DEFAULT_TEXT);
    assert_eq!(whole["object"], "chat.completion");
}

/// The server for `tests/capture/others.sh`: writes its URL to
/// `$NERDR_CAPTURE_DIR/model.url`, answers `GO-SLOW` slowly, `RUN-TOOL`,
/// `RUN-WRITE` and `RUN-DANGER` with a shell call (an `echo`; a file
/// write; an `rm -rf`), appends its log to `model.log`, and stops when
/// `model.url` is removed.
#[test]
#[ignore = "run by tests/capture/others.sh"]
fn serve_the_fake_model_for_captures() {
    let dir = std::path::PathBuf::from(
        std::env::var("NERDR_CAPTURE_DIR").expect("NERDR_CAPTURE_DIR names the capture folder"),
    );
    let model = FakeModel::start();
    let slow: Vec<String> = (1..=60).map(|i| format!("word{i}")).collect();
    model.when_user_says("GO-SLOW", Turn::Slow(slow.join(" ")));
    model.when_user_says("RUN-TOOL", Turn::run("echo nerdr-tool-ran"));
    // Some agents run a read-only `echo` without asking; a write asks.
    model.when_user_says(
        "RUN-WRITE",
        Turn::run("touch nerdr-tool-ran.txt && echo nerdr-tool-ran"),
    );
    // hermes asks only before a command it calls dangerous.
    model.when_user_says(
        "RUN-DANGER",
        Turn::run("rm -rf nerdr-scratch && echo nerdr-tool-ran"),
    );
    let url = dir.join("model.url");
    std::fs::write(&url, model.url()).unwrap();
    while url.exists() {
        std::fs::write(dir.join("model.log"), model.dump()).unwrap();
        let last = model.log().into_iter().last();
        let body = last.map(|r| r.body).unwrap_or_default();
        std::fs::write(dir.join("model.last"), body).unwrap();
        std::thread::sleep(Duration::from_millis(500));
    }
}
