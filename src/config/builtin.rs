//! The agents nerdr knows by name: their default command and which
//! agent-specific keys they take. Policy as data: a new agent is one row.
//! Knows nothing about config files; `mod.rs` merges a row with `[agents.NAME]`.

/// One built-in agent.
#[derive(Debug, PartialEq, Eq)]
pub struct Builtin {
    pub name: &'static str,
    /// argv used when `[agents.NAME]` gives no `command`.
    pub command: &'static [&'static str],
    /// Whether `config_model` applies (opencode reads it from
    /// `OPENCODE_CONFIG_CONTENT`; the others have no such channel).
    pub config_model: bool,
}

impl Builtin {
    pub fn default_command(&self) -> Vec<String> {
        self.command.iter().map(|w| w.to_string()).collect()
    }
}

pub const BUILTINS: &[Builtin] = &[
    row("claude", &["claude"], false),
    row("opencode", &["opencode"], true),
    row("copilot", &["copilot"], false),
    row("codex", &["codex"], false),
    row("cursor", &["cursor-agent"], false),
    row("gemini", &["gemini"], false),
    row("agy", &["agy"], false),
    row("grok", &["grok"], false),
];

const fn row(name: &'static str, command: &'static [&'static str], config_model: bool) -> Builtin {
    Builtin {
        name,
        command,
        config_model,
    }
}

/// The names column of [`BUILTINS`], built at compile time so the two can
/// never disagree.
static NAMES: [&str; BUILTINS.len()] = {
    let mut names = [""; BUILTINS.len()];
    let mut i = 0;
    while i < BUILTINS.len() {
        names[i] = BUILTINS[i].name;
        i += 1;
    }
    names
};

/// Built-in agent names, in the order error messages list them.
pub fn builtin_names() -> &'static [&'static str] {
    &NAMES
}

/// The program a built-in agent runs by default (`cursor-agent` for
/// `cursor`); `None` for a name that is not built in.
pub fn builtin_program(name: &str) -> Option<&'static str> {
    find(name).and_then(|b| b.command.first().copied())
}

pub fn find(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_table_in_order() {
        assert_eq!(
            builtin_names(),
            ["claude", "opencode", "copilot", "codex", "cursor", "gemini", "agy", "grok"]
        );
    }

    #[test]
    fn cursor_runs_cursor_agent_and_only_opencode_takes_config_model() {
        assert_eq!(find("cursor").unwrap().command, ["cursor-agent"]);
        let with_model: Vec<_> = BUILTINS
            .iter()
            .filter(|b| b.config_model)
            .map(|b| b.name)
            .collect();
        assert_eq!(with_model, ["opencode"]);
        assert_eq!(find("cursor-agent"), None);
    }

    #[test]
    fn every_builtin_names_its_program() {
        for b in BUILTINS {
            assert_eq!(builtin_program(b.name), Some(b.command[0]), "{}", b.name);
        }
        assert_eq!(builtin_program("cursor"), Some("cursor-agent"));
        assert_eq!(builtin_program("my-agent"), None);
    }
}
