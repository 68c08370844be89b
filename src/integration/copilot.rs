//! GitHub Copilot CLI: hook files, `*.json` in `$COPILOT_HOME/hooks/`
//! (default `~/.copilot/hooks/`), each `{"version": 1, "hooks": {EVENT:
//! [{"type": "command", "bash": "..."}]}}`, loaded beside the user's own
//! and combined. nerdr keeps its hooks in a file of its own there,
//! `nerdr.json`, so the user's files are never touched. The camelCase event
//! names get camelCase payloads on stdin, with `sessionId`.

use std::path::PathBuf;

use jsonc_parser::cst::CstInputValue as V;

use super::jsonhooks::{obj, Target};
use super::AgentEnv;

pub const TARGET: Target = Target {
    single: None,
    preamble: &[("version", 1)],
    events: &[
        ("sessionStart", "SessionStart"),
        ("userPromptSubmitted", "UserPromptSubmit"),
        ("agentStop", "Stop"),
        // A tool ran: the agent works on (a permission was answered).
        ("postToolUse", "PostToolUse"),
    ],
    group: None,
    command_key: "bash",
    entry,
};

fn entry(command: &str) -> V {
    obj([
        ("type", V::String("command".into())),
        ("bash", V::String(command.into())),
    ])
}

pub fn settings_file(env: &AgentEnv) -> Option<PathBuf> {
    let dir = env
        .copilot_home
        .clone()
        .or_else(|| Some(env.home.as_ref()?.join(".copilot")))?;
    Some(dir.join("hooks").join("nerdr.json"))
}
