//! Claude Code: command hooks in `settings.json` under `$CLAUDE_CONFIG_DIR`
//! (default `~/.claude`). Each event in `hooks` holds matcher groups,
//! `{"matcher": "", "hooks": [{"type": "command", "command": "..."}]}`; the
//! empty matcher matches every session source. Claude sends the hook a JSON
//! payload on stdin with `session_id`, `hook_event_name` and
//! `transcript_path`, and reads its stdout (so `nerdr hook` prints nothing).

use std::path::PathBuf;

use jsonc_parser::cst::CstInputValue as V;

use super::jsonhooks::{obj, Target};
use super::AgentEnv;

pub const TARGET: Target = Target {
    preamble: &[],
    events: &[
        ("SessionStart", "SessionStart"),
        ("UserPromptSubmit", "UserPromptSubmit"),
        ("Stop", "Stop"),
        // What agent states need beyond a turn's start and end: a
        // permission or question waiting (late, at times: the screen wins
        // over it), and a tool that ran (so a permission was answered).
        ("Notification", "Notification"),
        ("PostToolUse", "PostToolUse"),
    ],
    group: Some("hooks"),
    command_key: "command",
    entry,
};

fn entry(command: &str) -> V {
    obj([
        ("matcher", V::String(String::new())),
        (
            "hooks",
            V::Array(vec![obj([
                ("type", V::String("command".into())),
                ("command", V::String(command.into())),
            ])]),
        ),
    ])
}

pub fn settings_file(env: &AgentEnv) -> Option<PathBuf> {
    let dir = env
        .claude_config_dir
        .clone()
        .or_else(|| Some(env.home.as_ref()?.join(".claude")))?;
    Some(dir.join("settings.json"))
}
