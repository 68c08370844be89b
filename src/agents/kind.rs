//! The built-in agents that have rules of their own ([`Kind`]), and the
//! optional flags an installed version of one may support ([`Features`]):
//! plain data and pure readings of it. How the flags are found is
//! `features.rs`; what they change in the argv is `session.rs`.

use std::collections::BTreeSet;

/// The built-in agents that have session rules. Matched without a `_` arm,
/// so a new one needs a decision in every rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Claude,
    Opencode,
    Copilot,
    Codex,
    Cursor,
    Gemini,
    Agy,
    Grok,
}

/// Optional flags of the installed versions. `Default` is "none".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Features {
    /// copilot takes `--session-id <id>` (to name a new conversation and
    /// to resume one); without it, `--resume=<id>`.
    pub copilot_session_id: bool,
    /// codex takes `--no-daemon`, so it does not join a shared background
    /// server that lives outside the tab (and outside any sandbox).
    pub codex_no_daemon: bool,
    /// opencode takes `--standalone`. opencode 1.18.33 does not, and
    /// refuses to start when given it.
    pub opencode_standalone: bool,
}

impl Kind {
    /// The rules for built-in agent `name` (the config's name: `cursor`,
    /// not `cursor-agent`).
    pub fn of(name: &str) -> Option<Kind> {
        Some(match name {
            "claude" => Kind::Claude,
            "opencode" => Kind::Opencode,
            "copilot" => Kind::Copilot,
            "codex" => Kind::Codex,
            "cursor" => Kind::Cursor,
            "gemini" => Kind::Gemini,
            "agy" => Kind::Agy,
            "grok" => Kind::Grok,
            _ => return None,
        })
    }

    /// The flags worth asking `--help` about; empty means nothing to run.
    pub fn help_flags(self) -> &'static [&'static str] {
        match self {
            Kind::Copilot => &["--session-id"],
            Kind::Codex => &["--no-daemon"],
            Kind::Opencode => &["--standalone"],
            Kind::Claude | Kind::Cursor | Kind::Gemini | Kind::Agy | Kind::Grok => &[],
        }
    }
}

impl Features {
    /// The features of agent `kind` whose `--help` lists `flags`.
    pub fn of(kind: Kind, flags: &BTreeSet<String>) -> Features {
        let has = |flag: &str| flags.contains(flag);
        let mut features = Features::default();
        match kind {
            Kind::Copilot => features.copilot_session_id = has("--session-id"),
            Kind::Codex => features.codex_no_daemon = has("--no-daemon"),
            Kind::Opencode => features.opencode_standalone = has("--standalone"),
            Kind::Claude | Kind::Cursor | Kind::Gemini | Kind::Agy | Kind::Grok => {}
        }
        features
    }
}
