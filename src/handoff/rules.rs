//! What a handoff may do, as pure functions of plain facts. Who may ask
//! for one at all is the privilege matrix's (`Operation::Handoff`): a
//! sandboxed agent's handoff to an agent outside every sandbox waits for
//! the person's approval there; to a sandboxed agent, or to the person, it
//! goes at once.

use crate::agents::Kind;

/// How the handoff's text comes to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Build {
    /// The agent wrote it (`TEXT`, `--file`).
    Written,
    /// From claude's log, `~/.claude/projects/...`.
    ClaudeLog,
    /// From codex's log, `~/.codex/sessions/...`.
    CodexLog,
    /// From `opencode export`.
    OpencodeExport,
    /// Nerdr cannot read this agent's conversation: it must write its own.
    Refuse(&'static str),
}

/// How the handoff of an agent (`kind`: its built-in rules, `None` for a
/// custom agent or a program run as it is) is had, given whether it wrote
/// one.
pub fn build(kind: Option<Kind>, written: bool) -> Build {
    if written {
        return Build::Written;
    }
    match kind {
        Some(Kind::Claude) => Build::ClaudeLog,
        Some(Kind::Codex) => Build::CodexLog,
        Some(Kind::Opencode) => Build::OpencodeExport,
        Some(Kind::Copilot | Kind::Cursor | Kind::Gemini | Kind::Agy | Kind::Grok) => {
            Build::Refuse(
                "nerdr reads only claude's and codex's conversation logs and opencode's export; \
                 have the agent write its handoff (what was done, what is next, the open \
                 questions) and pass it",
            )
        }
        None => Build::Refuse(
            "a custom agent's conversation is its own: nerdr cannot read it; have the agent \
             write its handoff (what was done, what is next, the open questions) and pass it",
        ),
    }
}

/// What the person asked for, so that a refusal suggests the command that
/// does the same with a handoff given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked<'a> {
    /// `nerdr handoff`: `to` the agent, or `None` for `--to-me`; `from` the
    /// tab named with `--from`, if one was.
    Handoff {
        to: Option<&'a str>,
        from: Option<&'a str>,
    },
    /// `nerdr switch TAB AGENT`.
    Switch { tab: &'a str, to: &'a str },
}

/// The command lines that do what was `asked` with a handoff written, for
/// messages: `` `nerdr handoff --to-me "TEXT"` (or `--file FILE` for
/// "TEXT") ``.
pub fn give_one(asked: Asked) -> String {
    let line = match asked {
        Asked::Handoff { to, from } => {
            let to = match to {
                Some(agent) => format!("--to {}", word(agent)),
                None => "--to-me".into(),
            };
            let from = from
                .map(|t| format!(" --from {}", word(t)))
                .unwrap_or_default();
            format!("nerdr handoff {to}{from}")
        }
        Asked::Switch { tab, to } => format!("nerdr switch {} {}", word(tab), word(to)),
    };
    format!("`{line} \"TEXT\"` (or `--file FILE` for \"TEXT\")")
}

/// `w` as one shell word: as it is when it holds nothing a shell reads.
fn word(w: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_.:/@+".contains(c);
    if !w.is_empty() && w.chars().all(plain) {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

/// Who reads a handoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// An agent in a sandbox.
    SandboxedAgent,
    /// An agent outside every sandbox.
    Agent,
    /// The person (`--to-me`).
    Person,
}

/// The note a handoff carries: text written by (or built from the log of)
/// a sandboxed agent may carry that agent's instructions, which whoever
/// reads it outside a sandbox is told (the review's note). Between
/// sandboxed agents it stays as it is.
pub fn note(from_sandboxed: bool, reader: Reader) -> Option<&'static str> {
    match (from_sandboxed, reader) {
        (true, Reader::Agent | Reader::Person) => Some(crate::review::SANDBOX_NOTE),
        (true, Reader::SandboxedAgent) | (false, _) => None,
    }
}

/// Where the agents keep their logs: their folders under HOME, or where
/// `CLAUDE_CONFIG_DIR` / `CODEX_HOME` put them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Homes {
    pub claude: std::path::PathBuf,
    pub codex: std::path::PathBuf,
}

/// The log folders, from the caller's environment when the caller is the
/// person or an unsandboxed tab (the agent's own HOME, as the agent was
/// started with it), else from the core's: a sandboxed caller must not
/// choose which of the person's files the core reads for it.
pub fn homes(
    caller_sandboxed: bool,
    caller_env: &[(String, String)],
    core_env: &[(String, String)],
) -> Result<Homes, String> {
    let env = if caller_sandboxed {
        core_env
    } else {
        caller_env
    };
    let get = |k: &str| {
        env.iter()
            .chain(core_env)
            .find(|(key, v)| key == k && !v.is_empty())
            .map(|(_, v)| std::path::PathBuf::from(v))
    };
    let home = get("HOME").ok_or("HOME is not set: nerdr cannot find the agents' logs")?;
    let claude = match caller_sandboxed {
        true => None,
        false => get("CLAUDE_CONFIG_DIR"),
    };
    let codex = match caller_sandboxed {
        true => None,
        false => get("CODEX_HOME"),
    };
    Ok(Homes {
        claude: claude.unwrap_or_else(|| home.join(".claude")),
        codex: codex.unwrap_or_else(|| home.join(".codex")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn how_each_agent_s_handoff_is_had() {
        use Kind::*;
        #[rustfmt::skip]
        let rows: &[(Option<Kind>, bool, Build)] = &[
            (Some(Claude), false, Build::ClaudeLog),
            (Some(Codex), false, Build::CodexLog),
            (Some(Opencode), false, Build::OpencodeExport),
            (Some(Claude), true, Build::Written),
            (None, true, Build::Written),
            (Some(Gemini), true, Build::Written),
        ];
        for (kind, written, want) in rows {
            assert_eq!(build(*kind, *written), *want, "{kind:?} written={written}");
        }
        for kind in [
            None,
            Some(Copilot),
            Some(Cursor),
            Some(Gemini),
            Some(Agy),
            Some(Grok),
        ] {
            match build(kind, false) {
                Build::Refuse(why) => {
                    assert!(why.contains("write its handoff"), "{kind:?}: {why}");
                    assert!(!why.contains("nerdr handoff"), "{kind:?}: {why}");
                }
                other => panic!("{kind:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_sandboxed_agent_s_handoff_carries_the_note_outside_a_sandbox() {
        use Reader::*;
        #[rustfmt::skip]
        let rows: &[(bool, Reader, bool)] = &[
            (true, Agent, true),
            (true, Person, true),
            (true, SandboxedAgent, false),
            (false, Agent, false),
            (false, Person, false),
            (false, SandboxedAgent, false),
        ];
        for (sandboxed, reader, want) in rows {
            let got = note(*sandboxed, *reader);
            assert_eq!(got.is_some(), *want, "{sandboxed} {reader:?}");
            if let Some(n) = got {
                assert_eq!(n, crate::review::SANDBOX_NOTE);
            }
        }
    }

    #[test]
    fn a_sandboxed_caller_cannot_choose_where_the_logs_are_read() {
        let s = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let core = s(&[("HOME", "/home/u")]);
        let caller = s(&[
            ("HOME", "/h2"),
            ("CODEX_HOME", "/cx"),
            ("CLAUDE_CONFIG_DIR", "/cl"),
        ]);
        /// (caller sandboxed, its environment, claude's folder, codex's)
        type Row<'a> = (bool, &'a [(String, String)], &'a str, &'a str);
        #[rustfmt::skip]
        let rows: &[Row] = &[
            (false, &caller, "/cl", "/cx"),
            (true, &caller, "/home/u/.claude", "/home/u/.codex"),
            (false, &[], "/home/u/.claude", "/home/u/.codex"),
        ];
        for (sandboxed, env, claude, codex) in rows {
            let h = homes(*sandboxed, env, &core).unwrap();
            assert_eq!(h.claude, std::path::PathBuf::from(claude), "{sandboxed}");
            assert_eq!(h.codex, std::path::PathBuf::from(codex), "{sandboxed}");
        }
        let err = homes(false, &[], &[]).unwrap_err();
        assert!(err.contains("HOME is not set"), "{err}");
    }
}
