//! Everything that can be wrong with a config file, one variant per kind.
//! Each message is one line: `FILE:LINE:COL: what is wrong; what would be
//! valid or what to do`. Owns location arithmetic (byte offset to line and
//! column) and key spelling; not the rules themselves (`schema.rs`).

use std::fmt;
use std::path::{Path, PathBuf};

use super::builtin_names;

/// A place in a config file. Line and column are 1-based; columns count
/// characters, as editors do, not bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub path: PathBuf,
    pub line: usize,
    pub column: usize,
}

impl Location {
    /// The location of byte `offset` in `text` (clamped into the text).
    pub fn of(path: &Path, text: &str, offset: usize) -> Self {
        let mut offset = offset.min(text.len());
        // An error at the very end of a file (an unclosed bracket) is shown
        // at the end of the last line, not on the empty line after it.
        if offset == text.len() {
            offset = text.trim_end_matches(['\n', '\r']).len();
        }
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &text[..offset];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Location {
            path: path.to_owned(),
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}:{}:{}", self.path.display(), self.line, self.column)
    }
}

/// The TOML type a key wants, with an example of it for the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    String,
    Strings,
    Boolean,
    Seconds,
    StringTable,
    Table,
    NotifyWhen,
}

impl Expected {
    fn describe(self) -> &'static str {
        match self {
            Expected::String => "a string",
            Expected::Strings => "an array of strings",
            Expected::Boolean => "true or false",
            Expected::Seconds => "a whole number of seconds (1 to 86400)",
            Expected::StringTable => "a table of strings",
            Expected::Table => "a table",
            Expected::NotifyWhen => "\"on\", \"off\" or a command (an array of strings)",
        }
    }

    /// How `key` (dotted) would be written correctly.
    fn example(self, key: &str) -> String {
        let leaf = key.rsplit('.').next().unwrap_or(key);
        match self {
            Expected::String => format!("{leaf} = \"text\""),
            Expected::Strings => format!("{leaf} = [\"--flag\", \"value\"]"),
            Expected::Boolean => format!("{leaf} = true"),
            Expected::Seconds => format!("{leaf} = 120"),
            Expected::StringTable => format!("{leaf} = {{ NAME = \"value\" }}"),
            Expected::Table => format!("[{key}]"),
            Expected::NotifyWhen => format!("{leaf} = \"on\""),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but could not be read (permissions, a directory,
    /// not UTF-8). A missing file is not an error: it means the defaults.
    #[error(
        "cannot read config file {}: {error}; make it a readable UTF-8 file, \
         or move it away to run with the built-in defaults",
        path.display()
    )]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },

    #[error("{at}: not valid TOML: {message}; fix the syntax (see https://toml.io)")]
    Syntax { at: Location, message: String },

    /// `section` is how the table is shown: `[agents.x]`, or
    /// `the top-level table`.
    #[error("{at}: unknown key `{key}` in {section}; valid keys: {}", valid.join(", "))]
    UnknownKey {
        at: Location,
        key: String,
        section: String,
        valid: &'static [&'static str],
    },

    #[error(
        "{at}: `{key}` must be {}, found {found}; for example: {}",
        expected.describe(),
        expected.example(key)
    )]
    WrongType {
        at: Location,
        key: String,
        expected: Expected,
        found: String,
    },

    /// The type is right but the value is not (empty command, bad prefix,
    /// review agent that does not exist, ...).
    #[error("{at}: `{key}` {problem}; {fix}")]
    InvalidValue {
        at: Location,
        key: String,
        problem: String,
        fix: String,
    },

    /// `at` is `None` only for a [`super::Config`] built in code rather
    /// than parsed (parsing rejects a custom agent without `command`).
    #[error(
        "{}[agents.{agent}] is not a built-in agent ({}), so it needs a `command`; \
         add one, e.g. command = [\"{agent}\"]",
        at.as_ref().map(|at| format!("{at}: ")).unwrap_or_default(),
        builtin_names().join(", ")
    )]
    MissingCommand { at: Option<Location>, agent: String },

    /// `resume_args` or `detect` on a built-in agent: nerdr already knows
    /// how to do that for it, so a value here would silently fight it.
    #[error(
        "{at}: `{key}` is only for custom agents: nerdr already {knows} the built-in `{agent}`; \
         remove it, or define a custom agent under another name with its own `command`"
    )]
    CustomOnly {
        at: Location,
        key: String,
        agent: String,
        knows: &'static str,
    },

    #[error(
        "{at}: `{key}` is only valid for opencode (it is merged into OPENCODE_CONFIG_CONTENT); \
         remove it, or pass the model to `{agent}` in `args`"
    )]
    OpencodeOnly {
        at: Location,
        key: String,
        agent: String,
    },

    #[error(
        "{at}: `{key}` sets `{var}`, but NERDR_* and HERDR_* variables are reserved: \
         nerdr sets them for every agent; remove it or use another name"
    )]
    ReservedEnv {
        at: Location,
        key: String,
        var: String,
    },

    #[error(
        "{at}: agent name {} may only contain letters, digits, `-` and `_` \
         (it becomes part of unit names and command lines); rename it, e.g. [agents.{}]",
        quote_key(name),
        suggest_name(name)
    )]
    BadAgentName { at: Location, name: String },

    /// One line. For `nerdr agent NAME` the name may well be a program the
    /// person meant to run as it is, which `nerdr agent -- NAME` does; a
    /// spinoff's, handoff's, switch's or reviewer's agent must be an agent.
    #[error(
        "unknown agent \"{name}\"{}{} \
         (agents: {}; or add [agents.{name}] with a `command` to {})",
        crate::did_you_mean::hint(name, builtin_names().iter().copied().chain(configured.iter().map(String::as_str))),
        if *run_hint { format!("; to run a program that is not an agent: nerdr agent -- {name}") } else { String::new() },
        builtin_names().iter().map(|s| s.to_string()).chain(configured.iter().cloned()).collect::<Vec<_>>().join(", "),
        path.as_ref().map_or("the config file".into(), |p| p.display().to_string())
    )]
    UnknownAgent {
        name: String,
        path: Option<PathBuf>,
        /// The config's own agents, listed after the built-in ones.
        configured: Vec<String>,
        /// Whether to say how to run NAME as a program (`nerdr agent`).
        run_hint: bool,
    },
}

/// Whether `name` may name an agent: `[A-Za-z0-9_-]+`. The same characters
/// make a TOML bare key, so such a name never needs quoting.
pub fn is_agent_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A key as it would be written in TOML: bare if it can be, else quoted.
pub fn quote_key(key: &str) -> String {
    if is_agent_name(key) {
        key.to_owned()
    } else {
        format!("{key:?}")
    }
}

/// `parts` joined the way TOML writes a dotted key.
pub fn dotted(parts: &[&str]) -> String {
    parts
        .iter()
        .map(|p| quote_key(p))
        .collect::<Vec<_>>()
        .join(".")
}

/// `name` with every character an agent name may not hold replaced by `-`.
fn suggest_name(name: &str) -> String {
    let fixed: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if fixed.trim_matches('-').is_empty() {
        "my-agent".to_owned()
    } else {
        fixed
    }
}
