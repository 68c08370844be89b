//! Claude Code: command hooks in `settings.json` under `$CLAUDE_CONFIG_DIR`
//! (default `~/.claude`). Each event in `hooks` holds matcher groups,
//! `{"matcher": "", "hooks": [{"type": "command", "command": "..."}]}`; the
//! empty matcher matches every session source. Claude sends the hook a JSON
//! payload on stdin with `session_id`, `hook_event_name` and
//! `transcript_path`, and reads its stdout (so `nerdr hook` prints nothing).
//!
//! With `--status-line` it also sets `statusLine` to `{"type": "command", "command": "\"${NERDR_BIN:-nerdr}\"
//! hook claude-statusline"}` when the file has none: claude gives that
//! command the plan's limits on stdin, which nerdr keeps for `nerdr usage`.
//! A `statusLine` of the user's is left as it is (claude runs only one, and
//! running the user's command from nerdr's would make nerdr answer for
//! whatever it does); install says so, and claude's usage stays unknown.
//! Not by default: claude shows a status line in place of its footer
//! hints, which the screen rules read (`integration::install_status_line`).

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
    single: None,
};

/// What install puts in: the hooks, and the status line. Claude hands its
/// status-line command the plan's limits; nerdr keeps them for `nerdr
/// usage` (crate::usage) and prints a short line.
pub const WITH_STATUS_LINE: Target = Target {
    single: Some(("statusLine", super::STATUSLINE_EVENT)),
    ..TARGET
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
