//! What the real claude and codex (`$NERDR_AGENT_CLIS`) show in each agent
//! state, against the project's fake model:
//! - `capture` (ignored; run by hand) records their screens in a tmux pane
//!   (`pane`) as the corpus `tests/fixtures/screens/{claude,codex}/`.
//!
//! The dialogs a test wants to see are chosen here ([`ClaudeDialogs`],
//! [`CodexDialogs`]) on top of `support::agent_home`, which removes them
//! all.

mod capture;
mod pane;

use std::path::Path;

use serde_json::{json, Value};

use crate::support::agent_home::{self, AgentHome, CodexAsks};

pub use crate::suites::agent_turns::clis;

/// A slow answer (one word every `script::SLOW_WORD`, about 18 s): long
/// enough to look at the CLI while it streams. Its last words tell the
/// answer is all there.
pub const SLOW_ANSWER: &str = "This answer streams slowly, one word at a time, so that \
    the terminal shows the agent at work for a good while: first a few words, then a \
    few more, while the spinner turns and the clock runs, and nobody has to wait for \
    anything else to happen before the end of the slow answer.";

/// Which of claude's questions stay in the way.
#[derive(Debug, Clone, Copy)]
pub struct ClaudeDialogs {
    /// The HOME (and so every folder under it) is trusted: no folder-trust
    /// dialog.
    pub trusted: bool,
    /// `Bash` is allowed: no "Do you want to proceed?" before a command.
    pub bash_allowed: bool,
    /// The key's last 20 characters are approved: no "use this API key?".
    pub key_approved: bool,
}

impl ClaudeDialogs {
    /// No question in the way.
    pub fn none() -> Self {
        ClaudeDialogs {
            trusted: true,
            bash_allowed: true,
            key_approved: true,
        }
    }
}

/// claude's HOME against `url`, with the dialogs `dialogs` keeps.
pub fn claude_home(url: &str, home: &Path, dialogs: ClaudeDialogs) -> AgentHome {
    let mut prepared = agent_home::claude(url, home);
    for (rel, content) in &mut prepared.files {
        let mut doc: Value = serde_json::from_str(content).unwrap();
        match rel.as_str() {
            ".claude.json" if !dialogs.trusted || !dialogs.key_approved => {
                if !dialogs.trusted {
                    for p in doc["projects"].as_object_mut().unwrap().values_mut() {
                        p.as_object_mut().unwrap().remove("hasTrustDialogAccepted");
                    }
                }
                if !dialogs.key_approved {
                    doc["customApiKeyResponses"]["approved"] = json!([]);
                }
            }
            ".claude/settings.json" if !dialogs.bash_allowed => doc = json!({}),
            _ => continue,
        }
        *content = format!("{doc:#}\n");
    }
    prepared
}

/// Which of codex's questions stay in the way (it always asks before an
/// escalated command: `CodexAsks::OnEscalation`).
#[derive(Debug, Clone, Copy)]
pub struct CodexDialogs {
    /// A custom provider with a key: no sign-in choice.
    pub signed_in: bool,
}

/// codex's HOME against `url`, trusting `home` and `proj`, with the
/// dialogs `dialogs` keeps.
pub fn codex_home(url: &str, home: &Path, proj: &Path, dialogs: CodexDialogs) -> AgentHome {
    let prepared = agent_home::codex(url, home, &[proj], CodexAsks::OnEscalation);
    if dialogs.signed_in {
        return prepared;
    }
    // The same settings without the provider (and its key): codex falls
    // back to OpenAI's, which needs a sign-in.
    let mut config =
        String::from("check_for_update_on_startup = false\n\n[analytics]\nenabled = false\n");
    for dir in [home, proj] {
        config.push_str(&format!(
            "\n[projects.{}]\ntrust_level = \"trusted\"\n",
            json!(dir.display().to_string())
        ));
    }
    AgentHome {
        files: vec![(".codex/config.toml".into(), config)],
        env: Vec::new(),
    }
}
