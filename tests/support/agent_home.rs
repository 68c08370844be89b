//! What a HOME needs for the real claude and codex to do whole turns
//! against a [`FakeModel`](super::fake_model::FakeModel) with no dialog in
//! the way: the files to write (relative to HOME) and the variables to set.
//! Plain data, so a test writes them its own way (as the test user in a
//! `SystemdEnv`, or directly).
//!
//! Each key below removes one dialog (Claude Code 2.1, codex-cli 0.171):
//! claude's onboarding and text style, "use this API key?", folder trust;
//! codex's sign-in (a custom provider with an `env_key`), folder trust,
//! update check. Shell commands run without a prompt: claude allows its
//! `Bash` tool; codex runs without approval and without its own sandbox
//! (`danger-full-access`): inside `nerdr sandbox` its own sandbox could not
//! start (no nested user namespaces) and, with `.git` read-only there,
//! could not commit. nerdr's sandbox is the one under test.

use std::path::Path;

use serde_json::json;

/// The key both CLIs send the fake model (any text works; claude
/// remembers approving its last 20 characters).
pub const API_KEY: &str = "sk-fake-nerdr-test-key-0123456789abcdef";

/// Files (relative to HOME) and environment for one CLI.
#[derive(Debug, Clone, Default)]
pub struct AgentHome {
    pub files: Vec<(String, String)>,
    pub env: Vec<(String, String)>,
}

/// claude against `url`, trusting every folder under `home` (a trusted
/// parent covers the worktrees nerdr makes under it).
pub fn claude(url: &str, home: &Path) -> AgentHome {
    let key_tail = &API_KEY[API_KEY.len() - 20..];
    let mut projects = serde_json::Map::new();
    projects.insert(
        home.display().to_string(),
        json!({"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true,
               "allowedTools": []}),
    );
    let state = json!({
        "hasCompletedOnboarding": true,
        "theme": "dark",
        "customApiKeyResponses": {"approved": [key_tail], "rejected": []},
        "projects": projects,
    });
    let settings = json!({"permissions": {"allow": ["Bash"]}});
    AgentHome {
        files: vec![
            (".claude.json".into(), format!("{state:#}\n")),
            (".claude/settings.json".into(), format!("{settings:#}\n")),
        ],
        env: vec![
            ("ANTHROPIC_BASE_URL".into(), url.to_string()),
            ("ANTHROPIC_API_KEY".into(), API_KEY.into()),
            ("DISABLE_TELEMETRY".into(), "1".into()),
            (
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(),
                "1".into(),
            ),
            ("DISABLE_AUTOUPDATER".into(), "1".into()),
        ],
    }
}

/// The variable codex reads the key from (`OPENAI_*` reaches codex through
/// `nerdr sandbox`'s cleaned environment).
pub const CODEX_KEY_VAR: &str = "OPENAI_API_KEY";

/// When codex asks before running a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodexAsks {
    /// Never: every command runs at once, outside codex's own sandbox.
    Never,
    /// When the model asks for escalation (`Turn::Run { escalate: true }`):
    /// "Would you like to run the following command?", which Enter
    /// approves. Other commands go to codex's own sandbox, which cannot
    /// start inside `nerdr sandbox`.
    OnEscalation,
}

/// codex against `url`, trusting `home` and each of `trusted` (codex trusts
/// a project by its repository's root). nerdr gives codex `--no-daemon`
/// itself; a test running codex by hand must add it.
pub fn codex(url: &str, home: &Path, trusted: &[&Path], asks: CodexAsks) -> AgentHome {
    let (approval, sandbox) = match asks {
        CodexAsks::Never => ("never", "danger-full-access"),
        CodexAsks::OnEscalation => ("on-request", "workspace-write"),
    };
    let mut config = format!(
        "model = \"fake-model\"\n\
         model_provider = \"fake\"\n\
         approval_policy = \"{approval}\"\n\
         sandbox_mode = \"{sandbox}\"\n\
         check_for_update_on_startup = false\n\
         \n\
         [analytics]\n\
         enabled = false\n\
         \n\
         [model_providers.fake]\n\
         name = \"fake\"\n\
         base_url = \"{url}/v1\"\n\
         env_key = \"{CODEX_KEY_VAR}\"\n\
         wire_api = \"responses\"\n"
    );
    for dir in std::iter::once(home).chain(trusted.iter().copied()) {
        config.push_str(&format!(
            "\n[projects.{}]\ntrust_level = \"trusted\"\n",
            json!(dir.display().to_string())
        ));
    }
    AgentHome {
        files: vec![(".codex/config.toml".into(), config)],
        env: vec![(CODEX_KEY_VAR.into(), API_KEY.into())],
    }
}
