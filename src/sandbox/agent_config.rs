//! Which parts of each agent's own config start programs, and so must not
//! change from inside `nerdr sandbox`: the same CLI runs them later outside
//! any sandbox (run by hand, or as an unsandboxed nerdr agent). Pure data
//! and its checks; `config_guard` applies it.
//!
//! Three kinds of protection, per entry (paths relative to HOME):
//! - [`Locked`]: read-only inside. Folders and files that hold only
//!   program-starting things (plugins, hooks, MCP lists, allow rules).
//! - [`Guarded`]: files that mix sign-in and bookkeeping the agent must
//!   keep writing with program-starting keys. The sandbox writes a private
//!   copy; after the run only what [`Carry`] allows goes back into the real
//!   file (`config_merge`), the rest is refused and reported.
//! - `shadowed` folders: the sandbox sees a private folder whose entries
//!   are the real ones bound in, so a guarded file there can be replaced by
//!   rename (codex writes its config that way; a file bound over it could
//!   not be), and a locked entry that does not exist cannot be created on
//!   the host: what the agent adds at the top level is carried over after
//!   the run, unless it is locked or guarded.
//!
//! Claude and codex were read from the installed CLIs (Claude Code 2.1.197,
//! codex-cli 0.171.0: their config readers and defaults); the others from
//! their documentation, which moves: SECURITY.md says which.

use super::config_merge::{Carry, Format, Rule};

/// Read-only inside the sandbox.
#[derive(Debug, Clone, Copy)]
pub struct Locked {
    pub rel: &'static str,
    pub dir: bool,
    pub why: &'static str,
}

/// A mixed file: a private copy inside, safe keys carried back.
#[derive(Debug, Clone, Copy)]
pub struct Guarded {
    pub rel: &'static str,
    /// Where the sandbox sees the copy, when not at `rel` (in a shadowed
    /// folder); unused when something real is there already.
    pub inside: Option<&'static str>,
    pub format: Format,
    pub carry: Carry,
}

/// One agent's protections.
#[derive(Debug, Clone, Copy, Default)]
pub struct Policy {
    /// Agent folders whose top level is a private folder for the run.
    pub shadowed: &'static [&'static str],
    pub locked: &'static [Locked],
    pub guarded: &'static [Guarded],
    /// Folders in a shadowed folder that are the run's own: the sandbox
    /// sees an empty one, and nothing in it comes back (what the CLI runs
    /// from there in a session of the host's).
    pub private: &'static [Locked],
}

const fn dir(rel: &'static str, why: &'static str) -> Locked {
    Locked {
        rel,
        dir: true,
        why,
    }
}

const fn file(rel: &'static str, why: &'static str) -> Locked {
    Locked {
        rel,
        dir: false,
        why,
    }
}

const fn rule(key: &'static [&'static str], why: &'static str) -> Rule {
    Rule { key, why }
}

const MCP: &str = "lists MCP servers, programs the agent starts";
const HOOKS: &str = "hooks: programs the agent runs on its events";
const TRUST: &str = "trusts a folder, so the agent runs that folder's own hooks and MCP servers";
const ALLOW: &str = "allow rules: commands the agent then runs without asking";
const ENV: &str = "environment for the agent and its tools (NODE_OPTIONS, PATH, LD_PRELOAD)";
const PLUGINS: &str = "plugins: code the agent loads, with their own hooks and MCP servers";

/// What of claude's global config comes back.
const CLAUDE_CARRY: Carry = Carry::AllBut(&[
    rule(&["mcpServers"], MCP),
    rule(&["env"], ENV),
    rule(&["apiKeyHelper"], "a program claude runs for its API key"),
    rule(&["projects", "*", "mcpServers"], MCP),
    rule(
        &["projects", "*", "enabledMcpjsonServers"],
        "approves a project's .mcp.json servers",
    ),
    rule(
        &["projects", "*", "disabledMcpjsonServers"],
        "decides which of a project's .mcp.json servers start",
    ),
    rule(
        &["projects", "*", "enableAllProjectMcpServers"],
        "approves every server of a project's .mcp.json",
    ),
    rule(&["projects", "*", "hasTrustDialogAccepted"], TRUST),
    rule(&["projects", "*", "allowedTools"], ALLOW),
    rule(
        &["bypassPermissionsModeAccepted"],
        "accepts running every command without asking",
    ),
    rule(
        &["remoteControlAtStartup"],
        "lets a remote session drive claude, and so run commands",
    ),
    rule(
        &["autoAddRemoteControlDaemonWorker"],
        "lets a remote session drive claude, and so run commands",
    ),
]);

/// Claude reads its global config from `~/.claude/.config.json` when that
/// exists, else from `~/.claude.json`, writing either by a temporary file
/// renamed over it (its folder must be writable: home is not). So the
/// sandbox sees the copy of `~/.claude.json` as `~/.claude/.config.json`,
/// in the shadowed `~/.claude`; and the agent cannot leave a
/// `.config.json` there that the host's claude would read instead.
const CLAUDE: Policy = Policy {
    shadowed: &[".claude"],
    locked: &[
        file(
            ".claude/settings.json",
            "hooks, statusLine, apiKeyHelper, env, permission rules, enabled plugins, and the \
             sandbox settings nerdr trusts",
        ),
        file(
            ".claude/settings.local.json",
            "claude's local settings when it runs in HOME (HOME's `.claude` is then its \
             project folder): hooks, statusLine, env, permission rules",
        ),
        dir(".claude/plugins", PLUGINS),
        dir(
            ".claude/hooks",
            "the usual home of the scripts the user's hooks run",
        ),
        dir(
            ".claude/commands",
            "slash commands: their `!` lines run shell commands with the tools their front \
             matter allows",
        ),
        dir(
            ".claude/agents",
            "subagents: their front matter sets tools and hooks",
        ),
        dir(
            ".claude/skills",
            "skills: scripts and front matter with tools and hooks",
        ),
        dir(".claude/local", "a local install of claude itself"),
        dir(
            ".claude/chrome",
            "the Chrome native host script claude writes there, which Chrome runs outside any \
             sandbox when the Claude extension connects",
        ),
        dir(
            ".claude/workflows",
            "workflows: scripts claude runs, as it runs commands and agents",
        ),
        file(
            ".claude/daemon.json",
            "claude's background daemon: folders it keeps remote sessions driving claude in \
             (remoteControl) and what it runs on a schedule",
        ),
        dir(
            ".cache/claude/staging",
            "where claude's native updater downloads the claude it then installs and runs",
        ),
    ],
    guarded: &[
        Guarded {
            rel: ".claude/.config.json",
            inside: None,
            format: Format::Json,
            carry: CLAUDE_CARRY,
        },
        Guarded {
            rel: ".claude.json",
            inside: Some(".claude/.config.json"),
            format: Format::Json,
            carry: CLAUDE_CARRY,
        },
    ],
    private: &[
        dir(
            ".claude/session-env",
            "claude sources every `<session>/*-hook-N.sh` there into each Bash command of \
             that session, hooks configured or not; a session resumed outside keeps its id",
        ),
        dir(
            ".claude/shell-snapshots",
            "a claude running outside at the same time sources its snapshot there into each \
             Bash command",
        ),
        dir(
            ".claude/jobs",
            "background jobs: their saved state (command-line flags such as \
             --dangerously-skip-permissions, --mcp-config, --plugin-dir, and environment) \
             starts claude again outside",
        ),
    ],
};

const CODEX: Policy = Policy {
    shadowed: &[".codex"],
    locked: &[
        dir(
            ".codex/rules",
            "exec-policy rules: commands codex runs without asking",
        ),
        file(".codex/.env", ENV),
        file(".codex/hooks.json", HOOKS),
        dir(".codex/hooks", HOOKS),
        dir(".codex/plugins", PLUGINS),
        dir(
            ".codex/skills",
            "skills: scripts the agent runs (codex's own in `.system`, such as \
             imagegen/scripts/image_gen.py, reinstalled only when its marker changes) and MCP \
             servers they depend on",
        ),
        dir(
            ".codex/agents",
            "agent roles: config layers of their own (MCP servers, notify)",
        ),
        file(
            ".codex/managed_config.toml",
            "a config layer above config.toml: the same keys",
        ),
    ],
    guarded: &[Guarded {
        rel: ".codex/config.toml",
        inside: None,
        format: Format::Toml,
        // The file is the user's settings; codex itself writes only these.
        // Everything else (notify, mcp_servers, profiles, approval_policy,
        // sandbox_mode, shell_environment_policy, model_providers, hooks,
        // plugins, projects' trust_level, js_repl_node_path, ...) stays as
        // the user wrote it.
        carry: Carry::Only(&[
            rule(&["notice"], "notices codex has shown"),
            rule(&["model"], "the model chosen with /model"),
            rule(&["model_reasoning_effort"], "the effort chosen with /model"),
            rule(
                &["tui"],
                "what the terminal UI has shown (model notices, the screen-reader check)",
            ),
        ]),
    }],
    private: &[dir(
        ".codex/shell_snapshots",
        "a codex running outside at the same time sources its snapshot there before each \
         command",
    )],
};

const OPENCODE: Policy = Policy {
    shadowed: &[".config/opencode"],
    locked: &[
        file(
            ".config/opencode/opencode.json",
            "MCP servers, LSP and formatter commands, plugins, permission rules",
        ),
        file(
            ".config/opencode/opencode.jsonc",
            "MCP servers, LSP and formatter commands, plugins, permission rules",
        ),
        file(
            ".config/opencode/config.json",
            "MCP servers, LSP and formatter commands, plugins, permission rules",
        ),
        dir(".config/opencode/plugin", PLUGINS),
        dir(".config/opencode/plugins", PLUGINS),
        dir(".config/opencode/tool", "custom tools: code opencode loads"),
        dir(
            ".config/opencode/tools",
            "custom tools: code opencode loads",
        ),
        file(
            ".config/opencode/package.json",
            "packages opencode installs and loads",
        ),
        dir(".config/opencode/node_modules", "packages opencode loads"),
        dir(
            ".local/share/opencode/bin",
            "language servers opencode downloads and runs",
        ),
        dir(
            ".cache/opencode/node_modules",
            "plugin and provider packages opencode loads",
        ),
    ],
    guarded: &[],
    private: &[],
};

const GEMINI: Policy = Policy {
    shadowed: &[".gemini"],
    locked: &[
        dir(".gemini/extensions", PLUGINS),
        dir(
            ".gemini/commands",
            "custom commands: `!{...}` runs shell commands",
        ),
        dir(".gemini/policies", ALLOW),
        file(".gemini/.env", ENV),
        file(".gemini/trustedFolders.json", TRUST),
    ],
    guarded: &[Guarded {
        rel: ".gemini/settings.json",
        inside: None,
        format: Format::Json,
        carry: Carry::AllBut(&[
            rule(&["mcpServers"], MCP),
            rule(
                &["mcp"],
                "which MCP servers may start, and a command for them",
            ),
            rule(&["hooks"], HOOKS),
            rule(&["hooksConfig"], HOOKS),
            rule(
                &["tools"],
                "tool discovery and call commands, the sandbox, allowed tools",
            ),
            rule(&["security", "folderTrust"], TRUST),
            rule(&["advanced"], "environment variables passed to tools"),
            rule(&["extensions"], PLUGINS),
        ]),
    }],
    private: &[],
};

const COPILOT: Policy = Policy {
    shadowed: &[".copilot"],
    locked: &[
        file(".copilot/mcp-config.json", MCP),
        dir(".copilot/hooks", HOOKS),
        dir(
            ".copilot/agents",
            "custom agents: their tools and MCP servers",
        ),
        dir(".copilot/skills", "skills: scripts the agent runs"),
    ],
    guarded: &[Guarded {
        rel: ".copilot/config.json",
        inside: None,
        format: Format::Json,
        carry: Carry::AllBut(&[
            rule(&["trusted_folders"], TRUST),
            rule(&["allowed_tools"], ALLOW),
            rule(&["mcpServers"], MCP),
            rule(&["hooks"], HOOKS),
        ]),
    }],
    private: &[],
};

const CURSOR: Policy = Policy {
    shadowed: &[".cursor"],
    locked: &[
        file(".cursor/mcp.json", MCP),
        file(".cursor/hooks.json", HOOKS),
        dir(".cursor/hooks", HOOKS),
        dir(
            ".cursor/extensions",
            "the Cursor editor's extensions: code it runs",
        ),
    ],
    guarded: &[Guarded {
        rel: ".cursor/cli-config.json",
        inside: None,
        format: Format::Json,
        carry: Carry::AllBut(&[
            rule(&["permissions"], ALLOW),
            rule(&["approvalMode"], ALLOW),
            rule(&["sandbox"], "turns cursor-agent's own sandbox off"),
            rule(&["mcpServers"], MCP),
        ]),
    }],
    private: &[],
};

const GROK: Policy = Policy {
    shadowed: &[".grok"],
    locked: &[file(".grok/settings.json", MCP)],
    guarded: &[Guarded {
        rel: ".grok/user-settings.json",
        inside: None,
        format: Format::Json,
        carry: Carry::AllBut(&[rule(&["mcpServers"], MCP), rule(&["hooks"], HOOKS)]),
    }],
    private: &[],
};

/// The protections for the agent named `agent` (the program's name);
/// none for a program nerdr does not know.
pub fn policy(agent: &str) -> Policy {
    match agent {
        "claude" => CLAUDE,
        "codex" => CODEX,
        "opencode" => OPENCODE,
        "gemini" | "agy" => GEMINI,
        "copilot" => COPILOT,
        "cursor-agent" => CURSOR,
        "grok" => GROK,
        _ => Policy::default(),
    }
}

/// The shadowed folder `rel` lies directly in, if any.
pub fn shadow_of(p: &Policy, rel: &str) -> Option<&'static str> {
    let parent = std::path::Path::new(rel).parent()?.to_str()?;
    p.shadowed.iter().copied().find(|s| *s == parent)
}

/// The top-level names in the shadowed folder `shadow` that the config
/// text `text` names by a path from HOME (`~/`, `$HOME/`, `${HOME}/` or
/// `home` itself): a script the user's own settings run (claude's
/// `/statusline` writes `~/.claude/statusline-command.sh`, codex's
/// documentation puts `notify` in `~/.codex/notify.py`). They are locked
/// as well: what the config runs stays as the user left it. Over-reading
/// only locks more.
pub fn named_in(text: &str, home: &str, shadow: &str) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    let starts = ["~/", "$HOME/", "${HOME}/", &format!("{home}/")];
    for start in starts {
        let needle = format!("{start}{shadow}/");
        for (i, _) in text.match_indices(&needle) {
            let rest = &text[i + needle.len()..];
            let end = rest
                .find(|c: char| {
                    c.is_whitespace() || c.is_control() || "/\\\"'`;:,()[]{}<>|&$*?=#".contains(c)
                })
                .unwrap_or(rest.len());
            let name = &rest[..end];
            if !name.is_empty() && name != "." && name != ".." {
                out.insert(name.to_string());
            }
        }
    }
    out
}

/// Whether `rel` is locked or guarded.
pub fn is_protected(p: &Policy, rel: &str) -> bool {
    p.locked.iter().any(|l| l.rel == rel) || p.guarded.iter().any(|g| g.rel == rel)
}

/// Whether `rel` is the run's own (`Policy::private`).
pub fn is_private(p: &Policy, rel: &str) -> bool {
    p.private.iter().any(|l| l.rel == rel)
}

#[cfg(test)]
#[path = "agent_config_tests.rs"]
mod tests;
