//! What the fake model answers, decided from plain data: the request as
//! each API parser reduced it ([`Asked`]) and the test's rules ([`Turn`]).
//! Pure, so the wire formats in `anthropic.rs` and `openai.rs` only
//! translate.

use serde_json::{json, Value};

/// What the model does when the user's latest message contains a marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Turn {
    /// Call the CLI's shell tool with this command, then (once the tool's
    /// result comes back) end the turn with a short text.
    Run {
        command: String,
        /// codex: ask to run outside its own sandbox, which brings its
        /// approval prompt (`sandbox_permissions = "require_escalated"`).
        escalate: bool,
    },
    /// Answer this text slowly, one word every [`SLOW_WORD`].
    Slow(String),
    /// Answer this text at once.
    Say(String),
}

/// How long each word of a [`Turn::Slow`] answer takes.
pub const SLOW_WORD: std::time::Duration = std::time::Duration::from_millis(400);

/// The answer to anything no rule matches.
pub const DEFAULT_TEXT: &str = "Hello from the fake model.";
/// The answer once a tool's result came back.
pub const AFTER_TOOL_TEXT: &str = "The command ran; done.";

/// One request, reduced to what the answer depends on.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Asked {
    /// The latest message carries a tool's result (and no new user text).
    pub after_tool: bool,
    /// The text of the latest user message.
    pub user_text: String,
    /// A JSON schema the answer must match (claude's title request).
    pub schema: Option<Value>,
    /// Whether the request offers the CLI's shell tool.
    pub has_shell: bool,
}

/// What the model says back.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Text { text: String, slow: bool },
    Shell { command: String, escalate: bool },
}

/// The answer: a schema gets matching JSON, a tool result the closing
/// text, a marker its turn (a shell command only when the request offers
/// the shell tool: side requests never run anything), anything else
/// [`DEFAULT_TEXT`].
pub fn decide(asked: &Asked, rules: &[(String, Turn)]) -> Answer {
    if let Some(schema) = &asked.schema {
        return Answer::Text {
            text: example_of(schema).to_string(),
            slow: false,
        };
    }
    if asked.after_tool {
        return text(AFTER_TOOL_TEXT);
    }
    let turn = rules
        .iter()
        .find(|(marker, _)| asked.user_text.contains(marker.as_str()))
        .map(|(_, t)| t);
    match turn {
        Some(Turn::Run { command, escalate }) if asked.has_shell => Answer::Shell {
            command: command.clone(),
            escalate: *escalate,
        },
        Some(Turn::Slow(t)) => Answer::Text {
            text: t.clone(),
            slow: true,
        },
        Some(Turn::Say(t)) => text(t),
        Some(Turn::Run { .. }) | None => text(DEFAULT_TEXT),
    }
}

fn text(t: &str) -> Answer {
    Answer::Text {
        text: t.to_string(),
        slow: false,
    }
}

/// A value matching a JSON schema (the subset the CLIs use: objects,
/// strings, numbers, booleans, arrays, enums, `const`).
pub fn example_of(schema: &Value) -> Value {
    if let Some(c) = schema.get("const") {
        return c.clone();
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    if let Some(first) = ["anyOf", "oneOf"]
        .iter()
        .find_map(|k| schema.get(*k)?.as_array()?.first())
    {
        return example_of(first);
    }
    let kind = match schema.get("type") {
        Some(Value::Array(kinds)) => kinds.first().and_then(Value::as_str).unwrap_or("string"),
        Some(Value::String(k)) => k.as_str(),
        _ if schema.get("properties").is_some() => "object",
        _ => "string",
    };
    match kind {
        "object" => {
            let mut out = serde_json::Map::new();
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (name, sub) in props {
                    out.insert(name.clone(), example_of(sub));
                }
            }
            Value::Object(out)
        }
        "array" => json!([]),
        "integer" | "number" => json!(1),
        "boolean" => json!(true),
        "null" => Value::Null,
        _ => json!("Fake session"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> Vec<(String, Turn)> {
        vec![
            (
                "DO-COMMIT".into(),
                Turn::Run {
                    command: "git commit".into(),
                    escalate: false,
                },
            ),
            ("GO-SLOW".into(), Turn::Slow("one two".into())),
        ]
    }

    #[test]
    fn each_kind_of_request_gets_its_answer() {
        let shell = |command: &str| Answer::Shell {
            command: command.into(),
            escalate: false,
        };
        let said = |t: &str| Answer::Text {
            text: t.into(),
            slow: false,
        };
        let asked = |user: &str, has_shell: bool, after_tool: bool| Asked {
            user_text: user.into(),
            has_shell,
            after_tool,
            schema: None,
        };
        let rows: Vec<(&str, Asked, Answer)> = vec![
            (
                "a marker runs its command",
                asked("please DO-COMMIT", true, false),
                shell("git commit"),
            ),
            (
                "no shell tool offered: only text",
                asked("DO-COMMIT", false, false),
                said(DEFAULT_TEXT),
            ),
            (
                "after the tool: the closing text",
                asked("DO-COMMIT", true, true),
                said(AFTER_TOOL_TEXT),
            ),
            (
                "slow",
                asked("GO-SLOW", true, false),
                Answer::Text {
                    text: "one two".into(),
                    slow: true,
                },
            ),
            (
                "anything else",
                asked("hello", true, false),
                said(DEFAULT_TEXT),
            ),
            (
                "a schema wins over a marker",
                Asked {
                    schema: Some(
                        json!({"type": "object", "properties": {"title": {"type": "string"}}}),
                    ),
                    ..asked("DO-COMMIT", true, false)
                },
                said("{\"title\":\"Fake session\"}"),
            ),
        ];
        for (name, asked, want) in rows {
            assert_eq!(decide(&asked, &rules()), want, "{name}");
        }
    }

    #[test]
    fn examples_match_their_schema() {
        let rows = [
            (json!({"type": "string"}), json!("Fake session")),
            (json!({"type": ["integer", "null"]}), json!(1)),
            (json!({"enum": ["a", "b"]}), json!("a")),
            (json!({"const": 3}), json!(3)),
            (json!({"anyOf": [{"type": "boolean"}]}), json!(true)),
            (
                json!({"properties": {"t": {"type": "string"}, "n": {"type": "array"}}}),
                json!({"t": "Fake session", "n": []}),
            ),
        ];
        for (schema, want) in rows {
            assert_eq!(example_of(&schema), want, "{schema}");
        }
    }
}
