//! nerdr's config file (`config.toml`; docs/ARCHITECTURE.md, "Config", and
//! its keys in README.md, "Config"): the plain data it holds and how an
//! agent name turns into the program to start. Reading the file is
//! [`load`]; everything after is pure ([`parse`] takes text), so tests
//! feed strings. The schema lives in `schema.rs`, the built-in agents
//! in `builtin.rs`, the located TOML tree in `tree.rs`, the error kinds in
//! `error.rs`. Launching is not here.

mod builtin;
mod error;
mod hosts;
mod notify;
mod schema;
mod source;
mod tree;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

pub use builtin::{builtin_names, builtin_program};
pub use error::{ConfigError, Expected, Location};
pub use hosts::{destination_problem, nerdr_program_problem, HostConfig, LOCAL_HOST};
pub use notify::{NotifyConfig, NotifySettings, NotifyWhen};

/// The whole config. `Config::default()` is what a missing file means.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    /// `[agents.NAME]` sections as written (built-in defaults not merged in;
    /// see [`Config::resolve_agent`]).
    pub agents: BTreeMap<String, AgentConfig>,
    pub client: ClientConfig,
    /// `[hosts.NAME]`: other machines `--host NAME` reaches over SSH.
    pub hosts: BTreeMap<String, HostConfig>,
    pub review: ReviewConfig,
    pub tabs: TabsConfig,
    pub plugins: PluginsConfig,
    pub sandbox: SandboxConfig,
    /// `[notify]`; an agent's own `[agents.NAME.notify]` overrides it key
    /// by key ([`Config::notify_for`]).
    pub notify: NotifySettings,
    /// The file this came from, for messages; `None` when built in code.
    pub source: Option<PathBuf>,
}

/// `[plugins]`: programs in `plugins/` beside config.toml.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginsConfig {
    /// How long a sandboxed agent's plugin run waits for the person's yes.
    pub approval_timeout_secs: u64,
}

impl Default for PluginsConfig {
    fn default() -> Self {
        PluginsConfig {
            approval_timeout_secs: 120,
        }
    }
}

/// `[sandbox]`: `nerdr sandbox` as the core sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxConfig {
    /// How long a sandbox's connection to a host on neither network list
    /// waits for the person's answer before it is refused (at most 600).
    pub ask_timeout_secs: u64,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            ask_timeout_secs: 120,
        }
    }
}

/// `[tabs]`: how new tabs are made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabsConfig {
    /// Give each agent tab in a git repository its own worktree.
    pub worktree: bool,
}

impl Default for TabsConfig {
    fn default() -> Self {
        TabsConfig { worktree: true }
    }
}

/// One `[agents.NAME]` section.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentConfig {
    /// Replaces the built-in command (e.g. a wrapper); required for custom agents.
    pub command: Option<Vec<String>>,
    /// Appended to the command.
    pub args: Vec<String>,
    /// Added to the agent's environment; never `NERDR_*` or `HERDR_*`.
    pub env: BTreeMap<String, String>,
    pub sandboxed: bool,
    /// Custom agents only: arguments that resume the last conversation.
    pub resume_args: Option<Vec<String>>,
    /// Custom agents only: which known agent's screen this one looks like.
    pub detect: Option<String>,
    /// opencode only: merged into `OPENCODE_CONFIG_CONTENT`.
    pub config_model: Option<String>,
    /// `[agents.NAME.notify]`: overrides `[notify]` for this agent's tabs.
    pub notify: NotifySettings,
    /// Custom agents only: the file name of the program the command runs
    /// (`bash` for `["nerdr", "sandbox", "--", "bash"]`); the section's
    /// name when unset.
    pub program: Option<String>,
    /// `install = "worktree"`: the integration goes into each tab's
    /// worktree, and reports come back through files in `data_dir` there
    /// (`crate::file_reports`), for a sandbox that reaches nothing else.
    pub install: Install,
    /// `data_dir`: that folder, relative to the worktree (checked by the
    /// schema: no `..`, not absolute, not `.git`); `.nerdr` when unset.
    pub data_dir: Option<String>,
}

/// Where `[agents.NAME]`'s integration goes (`install`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Install {
    /// The agent's own settings in the person's home
    /// (`nerdr integration install`).
    #[default]
    Home,
    /// Each tab's worktree, installed by nerdr when the tab starts.
    Worktree,
}

/// `data_dir`'s default.
pub const DEFAULT_DATA_DIR: &str = ".nerdr";

/// `[client]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientConfig {
    /// Prefix key, `C-<letter>` with the letter lowercased.
    pub prefix: String,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            prefix: "C-b".to_owned(),
        }
    }
}

/// `[review]`: who reviews an agent's work, and when (`crate::review`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReviewConfig {
    /// `agent`: a built-in or configured agent (checked when parsing);
    /// `None`: the author's own agent.
    pub agent: Option<String>,
    /// `automatic`: an author's turn that ends with new commits on its
    /// branch asks for a review by itself.
    pub automatic: bool,
    /// `[review.args]`: per agent name, words added after that agent's own
    /// `args` when it reviews.
    pub args: BTreeMap<String, Vec<String>>,
}

impl ReviewConfig {
    /// The words `[review.args]` adds for reviewer `agent`.
    pub fn args_for(&self, agent: &str) -> &[String] {
        self.args.get(agent).map_or(&[], Vec::as_slice)
    }
}

/// What it takes to start an agent, built-in defaults and config merged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedAgent {
    pub name: String,
    /// Full argv: the command (configured, else the built-in default)
    /// followed by `args`. The launcher appends session arguments.
    pub command: Vec<String>,
    /// How many leading words of `command` are the command itself (a
    /// wrapper and the program); the words after them are `args`.
    pub command_words: usize,
    pub env: BTreeMap<String, String>,
    pub sandboxed: bool,
    pub builtin: bool,
    /// The agent whose screen this one is read as; its own name by default.
    pub detect: String,
    pub resume_args: Option<Vec<String>>,
    pub config_model: Option<String>,
    /// A custom agent's `program`, as configured.
    pub program: Option<String>,
    /// With `install = "worktree"`: the reports folder, relative to the
    /// tab's worktree (`data_dir`, `.nerdr` by default); `None` for a
    /// home install.
    pub worktree_data_dir: Option<String>,
}

/// Read and parse the config at `path`. A missing file is the default
/// config (remembering `path`, so messages can say where to add things);
/// any other read failure is an error naming the path.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse(&text, path),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(Config {
            source: Some(path.to_owned()),
            ..Config::default()
        }),
        Err(error) => Err(ConfigError::Read {
            path: path.to_owned(),
            error,
        }),
    }
}

/// Parse config text. Pure: `path` is only named in messages.
pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
    let root = tree::parse(text).map_err(|e| ConfigError::Syntax {
        at: Location::of(path, text, e.span().map_or(0, |span| span.start)),
        // toml's messages span lines ("invalid array\nexpected `]`").
        message: e.message().trim().replace('\n', "; "),
    })?;
    schema::config(&source::Source { path, text }, &root)
}

/// A program run as it is (`nerdr agent -- CMD`): an agent no config
/// names, outside every sandbox, called after the program's file name
/// (`bash` for `/bin/bash`, so its tabs are `bash-1`, ...) and read as
/// that program's screen (an unknown program's, for most). Its arguments
/// are the launch's extra arguments.
pub fn program_agent(word: &str) -> Result<ResolvedAgent, String> {
    let name = word.rsplit('/').next().unwrap_or(word);
    if name.is_empty() || word.contains('\0') {
        return Err(format!(
            "{word:?} is not a program: name one on PATH, or its path"
        ));
    }
    Ok(ResolvedAgent {
        name: name.to_owned(),
        command: vec![word.to_owned()],
        command_words: 1,
        env: BTreeMap::new(),
        sandboxed: false,
        builtin: false,
        // A rules name is letters, digits, `-` and `_` (`python3.12`'s
        // rules are `python3-12.toml`).
        detect: name
            .chars()
            .map(|c| match c.is_ascii_alphanumeric() || c == '_' {
                true => c,
                false => '-',
            })
            .collect(),
        resume_args: None,
        config_model: None,
        program: None,
        worktree_data_dir: None,
    })
}

impl Config {
    /// What `[notify]` says for the tabs of agent `name`, its own section's
    /// keys first.
    pub fn notify_for(&self, name: &str) -> NotifyConfig {
        let own = self.agents.get(name).map(|a| (name, &a.notify));
        NotifyConfig::resolve(&self.notify, own)
    }

    /// The agent called `name`: a built-in (with any `[agents.NAME]`
    /// overrides) or a custom agent from the config.
    pub fn resolve_agent(&self, name: &str) -> Result<ResolvedAgent, ConfigError> {
        let builtin = builtin::find(name);
        let configured = self.agents.get(name);
        let unset = AgentConfig::default();
        let agent = match (builtin, configured) {
            (None, None) => {
                return Err(ConfigError::UnknownAgent {
                    name: name.to_owned(),
                    path: self.source.clone(),
                    configured: self
                        .agents
                        .keys()
                        .filter(|k| builtin::find(k).is_none())
                        .cloned()
                        .collect(),
                    run_hint: false,
                })
            }
            (_, Some(agent)) => agent,
            (Some(_), None) => &unset,
        };
        let mut command = match (&agent.command, builtin) {
            (Some(command), _) => command.clone(),
            (None, Some(builtin)) => builtin.default_command(),
            (None, None) => Vec::new(),
        };
        // Parsing rejects both; a Config built in code might not.
        if command.first().is_none_or(String::is_empty) {
            return Err(ConfigError::MissingCommand {
                at: None,
                agent: name.to_owned(),
            });
        }
        let command_words = command.len();
        command.extend(agent.args.iter().cloned());
        Ok(ResolvedAgent {
            name: name.to_owned(),
            command,
            command_words,
            env: agent.env.clone(),
            sandboxed: agent.sandboxed,
            builtin: builtin.is_some(),
            // The program's screen, when the config says which it is.
            detect: agent
                .detect
                .clone()
                .or_else(|| agent.program.clone())
                .unwrap_or_else(|| name.to_owned()),
            resume_args: agent.resume_args.clone(),
            config_model: agent.config_model.clone(),
            program: agent.program.clone(),
            worktree_data_dir: (agent.install == Install::Worktree).then(|| {
                agent
                    .data_dir
                    .clone()
                    .unwrap_or_else(|| DEFAULT_DATA_DIR.to_owned())
            }),
        })
    }
}
