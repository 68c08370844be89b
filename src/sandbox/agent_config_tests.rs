use super::*;
use crate::sandbox::config_merge::{merge, Format};
use crate::sandbox::facts::agent_paths;

/// Per agent: every entry lies where the sandbox can protect it (in
/// the agent's own folders, a guarded file in a folder there shadowed
/// unless it is directly in HOME), nothing is listed twice, and each
/// says why.
#[test]
fn every_entry_is_where_it_can_be_protected() {
    for agent in [
        "claude",
        "codex",
        "opencode",
        "gemini",
        "agy",
        "copilot",
        "cursor-agent",
        "grok",
    ] {
        let p = policy(agent);
        let own: Vec<&str> = agent_paths(agent)
            .iter()
            .filter_map(|d| d.strip_suffix('/'))
            .collect();
        assert!(!p.locked.is_empty(), "{agent}: nothing locked");
        for s in p.shadowed {
            assert!(own.contains(s), "{agent}: shadowed {s} is not its folder");
        }
        for l in p.locked {
            assert!(!l.why.is_empty());
            assert!(
                own.iter().any(|d| l.rel.starts_with(&format!("{d}/"))),
                "{agent}: {} is outside its folders",
                l.rel
            );
        }
        for g in p.guarded {
            let seen = g.inside.unwrap_or(g.rel);
            assert!(
                shadow_of(&p, seen).is_some(),
                "{agent}: {seen} can be replaced by rename only in a shadowed folder"
            );
            if let Some(i) = g.inside {
                assert!(
                    p.guarded.iter().any(|o| o.rel == i),
                    "{agent}: {i} is where {} is seen, and must be guarded itself",
                    g.rel
                );
            }
        }
        for l in p.private {
            assert!(!l.why.is_empty());
            assert!(
                shadow_of(&p, l.rel).is_some(),
                "{agent}: {} is the run's own only in a shadowed folder",
                l.rel
            );
        }
        let mut all: Vec<&str> = p
            .locked
            .iter()
            .chain(p.private)
            .map(|l| l.rel)
            .chain(p.guarded.iter().map(|g| g.rel))
            .collect();
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n, "{agent}: an entry is listed twice");
    }
    assert!(policy("bash").locked.is_empty() && policy("bash").guarded.is_empty());
}

/// One row per agent: what a sandboxed run plants in its guarded file
/// is refused, a safe key and sign-in state come back.
#[test]
fn each_agents_guarded_file_refuses_what_starts_programs() {
    // (agent, file, base, ours, refused keys, a key path that must come back)
    type Row<'a> = (
        &'a str,
        &'a str,
        &'a str,
        &'a str,
        &'a [&'a str],
        &'a [&'a str],
    );
    let rows: &[Row] = &[
        (
            "claude",
            ".claude.json",
            r#"{"projects": {"/p": {"lastCost": 0}}}"#,
            r#"{"oauthAccount": {"emailAddress": "u@example.com"}, "env": {"NODE_OPTIONS": "--require /x"},
               "mcpServers": {"e": {"command": "sh"}}, "apiKeyHelper": "sh",
               "projects": {"/p": {"lastCost": 1, "hasTrustDialogAccepted": true, "allowedTools": ["Bash(*)"],
               "enableAllProjectMcpServers": true}}}"#,
            &[
                "apiKeyHelper",
                "env",
                "mcpServers",
                "projects[\"/p\"].allowedTools",
                "projects[\"/p\"].enableAllProjectMcpServers",
                "projects[\"/p\"].hasTrustDialogAccepted",
            ],
            &["oauthAccount", "emailAddress"],
        ),
        (
            "codex",
            ".codex/config.toml",
            "model = \"a\"\n",
            "model = \"b\"\nnotify = [\"sh\"]\napproval_policy = \"never\"\n[mcp_servers.e]\ncommand = \"sh\"\n[projects.\"/p\"]\ntrust_level = \"trusted\"\n",
            &[
                "approval_policy",
                "mcp_servers.e.command",
                "notify",
                "projects[\"/p\"].trust_level",
            ],
            &["model"],
        ),
        (
            "gemini",
            ".gemini/settings.json",
            "{}",
            r#"{"security": {"auth": {"selectedType": "oauth-personal"}, "folderTrust": {"enabled": false}},
               "mcpServers": {"e": {"command": "sh"}}, "hooks": {"BeforeTool": []}, "tools": {"discoveryCommand": "sh"}}"#,
            &["hooks", "mcpServers", "security.folderTrust", "tools"],
            &["security", "auth", "selectedType"],
        ),
        (
            "copilot",
            ".copilot/config.json",
            "{}",
            r#"{"last_logged_in_user": {"login": "u"}, "trusted_folders": ["/"]}"#,
            &["trusted_folders"],
            &["last_logged_in_user", "login"],
        ),
        (
            "cursor-agent",
            ".cursor/cli-config.json",
            "{}",
            r#"{"model": "m", "permissions": {"allow": ["Shell(*)"]}}"#,
            &["permissions"],
            &["model"],
        ),
        (
            "grok",
            ".grok/user-settings.json",
            "{}",
            r#"{"defaultModel": "m", "mcpServers": {"e": {"command": "sh"}}}"#,
            &["mcpServers"],
            &["defaultModel"],
        ),
    ];
    for (agent, rel, base, ours, refused, kept) in rows {
        let g = policy(agent)
            .guarded
            .iter()
            .find(|g| g.rel == *rel)
            .copied()
            .unwrap_or_else(|| panic!("{agent}: {rel} is not guarded"));
        let m = merge(g.format, g.carry, Some(base), ours, Some(base)).unwrap();
        let got: Vec<&str> = m.refused.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(&got, refused, "{agent}");
        let text = m
            .text
            .unwrap_or_else(|| panic!("{agent}: nothing came back"));
        let v: serde_json::Value = match g.format {
            Format::Json => serde_json::from_str(&text).unwrap(),
            Format::Toml => {
                serde_json::to_value(toml::from_str::<toml::Table>(&text).unwrap()).unwrap()
            }
        };
        let mut at = &v;
        for k in *kept {
            at = at
                .get(k)
                .unwrap_or_else(|| panic!("{agent}: {kept:?} lost: {text}"));
        }
    }
}

/// What a config names in the agent's folder by a path from HOME.
#[test]
fn names_a_config_gives_in_the_agents_folder() {
    // (text, shadowed folder, names)
    let rows: &[(&str, &str, &[&str])] = &[
        (
            r#"{"statusLine": {"command": "bash ~/.claude/statusline-command.sh"}}"#,
            ".claude",
            &["statusline-command.sh"],
        ),
        (
            r#"{"hooks": {"Stop": [{"command": "$HOME/.claude/scripts/stop.sh; ${HOME}/.claude/bin/x"}]}}"#,
            ".claude",
            &["bin", "scripts"],
        ),
        (
            "notify = [\"python3\", \"/home/u/.codex/notify.py\"]\n",
            ".codex",
            &["notify.py"],
        ),
        ("notify = ['/home/u/.codex/n.sh']", ".codex", &["n.sh"]),
        // Elsewhere, or relative to a project: not the agent's folder.
        (
            r#"{"command": "/home/other/.claude/x ~/proj/.claude/y .claude/z"}"#,
            ".claude",
            &[],
        ),
        ("~/.codex/ ~/.codex/.. ~/.codex/\"", ".codex", &[]),
        ("~/.claude/a ~/.codex/b", ".codex", &["b"]),
    ];
    for (text, shadow, want) in rows {
        let got = named_in(text, "/home/u", shadow);
        let got: Vec<&str> = got.iter().map(String::as_str).collect();
        assert_eq!(&got, want, "{text}");
    }
}

#[test]
fn locked_entries_per_agent() {
    // (agent, must be locked)
    let rows: &[(&str, &[&str])] = &[
        (
            "claude",
            &[
                ".claude/settings.json",
                ".claude/settings.local.json",
                ".claude/plugins",
                ".claude/hooks",
                ".claude/chrome",
                ".claude/workflows",
                ".claude/daemon.json",
                ".cache/claude/staging",
            ],
        ),
        (
            "codex",
            &[
                ".codex/rules",
                ".codex/.env",
                ".codex/hooks.json",
                ".codex/skills",
            ],
        ),
        (
            "opencode",
            &[
                ".config/opencode/opencode.json",
                ".config/opencode/plugin",
                ".local/share/opencode/bin",
            ],
        ),
        (
            "gemini",
            &[".gemini/extensions", ".gemini/trustedFolders.json"],
        ),
        ("agy", &[".gemini/extensions"]),
        ("copilot", &[".copilot/mcp-config.json", ".copilot/hooks"]),
        ("cursor-agent", &[".cursor/mcp.json", ".cursor/hooks.json"]),
        ("grok", &[".grok/settings.json"]),
    ];
    for (agent, want) in rows {
        let p = policy(agent);
        for w in *want {
            assert!(is_protected(&p, w), "{agent}: {w} not locked");
        }
    }
}
