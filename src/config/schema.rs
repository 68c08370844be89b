//! The config schema: which keys each section takes, their types and the
//! rules between them. Turns the located tree from `tree.rs` into a
//! [`Config`] or the first error in document order. Pure: it reads no files
//! (it gets the text and path only to say where a problem is).

use std::collections::BTreeMap;
use std::path::Path;

use super::builtin;
use super::error::{dotted, is_agent_name};
use super::source::Source;
use super::tree::{Entry, Node};
use super::{builtin_names, ConfigError, Expected};
use super::{
    AgentConfig, ClientConfig, Config, Install, NotifySettings, NotifyWhen, PluginsConfig,
    ReviewConfig, SandboxConfig, TabsConfig,
};

const TOP_KEYS: &[&str] = &[
    "agents", "client", "hosts", "notify", "plugins", "review", "sandbox", "tabs",
];
const SANDBOX_KEYS: &[&str] = &["ask_timeout_secs"];
/// The longest a network question may hold a connection (the proxy's own
/// bound is a little longer).
const MAX_ASK_SECS: u64 = 600;
const PLUGINS_KEYS: &[&str] = &["approval_timeout_secs"];
const AGENT_KEYS: &[&str] = &[
    "command",
    "args",
    "env",
    "sandboxed",
    "resume_args",
    "detect",
    "config_model",
    "notify",
    "program",
    "install",
    "data_dir",
];
const CLIENT_KEYS: &[&str] = &["prefix"];
const TABS_KEYS: &[&str] = &["worktree"];
const REVIEW_KEYS: &[&str] = &["agent", "args", "automatic"];
const NOTIFY_KEYS: &[&str] = &["blocked", "done", "desktop", "terminal"];

/// Environment prefixes nerdr owns (docs/ARCHITECTURE.md, "What the agent
/// sees").
const RESERVED_ENV: &[&str] = &["NERDR_", "HERDR_"];

/// Check the root table's entries and build the config.
pub fn config(src: &Source, root: &[Entry]) -> Result<Config, ConfigError> {
    let mut config = Config {
        source: Some(src.path.to_owned()),
        ..Config::default()
    };
    let mut review = None;
    for entry in root {
        match entry.key.as_str() {
            "agents" => {
                for agent_entry in src.table(entry, "agents", Expected::Table)? {
                    let agent = agent(src, agent_entry)?;
                    config.agents.insert(agent_entry.key.clone(), agent);
                }
            }
            "client" => config.client = client(src, entry)?,
            "hosts" => {
                for host in src.table(entry, "hosts", Expected::Table)? {
                    let parsed = super::hosts::host(src, host)?;
                    config.hosts.insert(host.key.clone(), parsed);
                }
            }
            "tabs" => config.tabs = tabs(src, entry)?,
            "plugins" => config.plugins = plugins(src, entry)?,
            "sandbox" => config.sandbox = sandbox(src, entry)?,
            "review" => review = Some(self::review(src, entry)?),
            "notify" => config.notify = notify(src, entry, "notify")?,
            _ => return Err(src.unknown(entry, "the top-level table".into(), TOP_KEYS)),
        }
    }
    // Checked once every agent is known: [review] may come before [agents.x].
    if let Some(review) = review {
        config.review = checked_review(src, &config, review)?;
    }
    Ok(config)
}

fn agent(src: &Source, entry: &Entry) -> Result<AgentConfig, ConfigError> {
    let name = entry.key.as_str();
    if !is_agent_name(name) {
        return Err(ConfigError::BadAgentName {
            at: src.at(entry),
            name: name.to_owned(),
        });
    }
    let fields = src.table(entry, &dotted(&["agents", name]), Expected::Table)?;
    let builtin = builtin::find(name);
    let mut agent = AgentConfig::default();
    let mut program_field = None;
    let mut data_dir_field = None;
    for field in fields {
        let key = dotted(&["agents", name, &field.key]);
        let custom_only = |knows| ConfigError::CustomOnly {
            at: src.at(field),
            key: key.clone(),
            agent: name.to_owned(),
            knows,
        };
        match field.key.as_str() {
            "command" => {
                let command = src.strings(field, &key)?;
                if command.first().is_none_or(String::is_empty) {
                    let problem = "must start with the program to run".to_owned();
                    let fix = format!("e.g. command = [\"{name}\"], or a wrapper such as [\"nerdr\", \"sandbox\", \"--\", \"{name}\"]");
                    return Err(src.invalid(field, &key, problem, &fix));
                }
                agent.command = Some(command);
            }
            "args" => agent.args = src.strings(field, &key)?,
            "env" => agent.env = env(src, field, &key)?,
            "sandboxed" => agent.sandboxed = src.boolean(field, &key)?,
            "resume_args" if builtin.is_some() => return Err(custom_only("knows how to resume")),
            "resume_args" => agent.resume_args = Some(src.strings(field, &key)?),
            "detect" if builtin.is_some() => return Err(custom_only("recognises")),
            "detect" => agent.detect = Some(src.nonempty_string(field, &key)?),
            "config_model" => {
                if !builtin.is_some_and(|b| b.config_model) {
                    return Err(ConfigError::OpencodeOnly {
                        at: src.at(field),
                        key,
                        agent: name.to_owned(),
                    });
                }
                agent.config_model = Some(src.nonempty_string(field, &key)?);
            }
            "notify" => agent.notify = notify(src, field, &key)?,
            "program" if builtin.is_some() => return Err(custom_only("knows the program of")),
            "program" => {
                let program = src.nonempty_string(field, &key)?;
                program_field = Some((program, field, key));
            }
            "install" => agent.install = install(src, field, &key)?,
            "data_dir" => {
                let dir = src.string(field, &key)?;
                if let Some((problem, fix)) = data_dir_problem(&dir) {
                    return Err(src.invalid(field, &key, problem, fix));
                }
                agent.data_dir = Some(dir);
                data_dir_field = Some((field, key));
            }
            _ => return Err(src.unknown(field, format!("[agents.{name}]"), AGENT_KEYS)),
        }
    }
    // Checked once `install` is known: it may come after `data_dir`.
    if let Some((field, key)) = data_dir_field.filter(|_| agent.install != Install::Worktree) {
        let problem = "is set, but only a worktree install has a data folder".to_owned();
        let fix = "add install = \"worktree\", or remove data_dir";
        return Err(src.invalid(field, &key, problem, fix));
    }
    if builtin.is_none() && agent.command.is_none() {
        return Err(ConfigError::MissingCommand {
            at: Some(src.at(entry)),
            agent: name.to_owned(),
        });
    }
    // Checked once the command is known: `program` may come before it.
    if let Some((program, field, key)) = program_field {
        let words = agent.command.as_deref().unwrap_or_default();
        if let Some((problem, fix)) = program_problem(&program, words) {
            return Err(src.invalid(field, &key, problem, &fix));
        }
        agent.program = Some(program);
    }
    Ok(agent)
}

/// What is wrong with `program = "..."` for a custom agent whose command is
/// `words`, with its fix: it must be the file name of one of the words,
/// since that is the word the sandbox check runs in place of (and the name
/// `nerdr sandbox` knows the agent by).
fn program_problem(program: &str, words: &[String]) -> Option<(String, String)> {
    let file_name = |w: &str| w.rsplit('/').next().unwrap_or(w).to_owned();
    if program.contains('/') {
        let fix = format!(
            "write the file name alone: program = \"{}\"",
            file_name(program)
        );
        return Some(("is a path".into(), fix));
    }
    if words.iter().any(|w| file_name(w) == program) {
        return None;
    }
    // The last word that is no option: `--norc` is an argument, not the
    // program, and its place is `args`.
    let at = words.iter().rposition(|w| !w.starts_with('-'));
    let last = at.map(|i| file_name(&words[i])).unwrap_or_default();
    let options = at.map_or(words, |i| &words[i + 1..]);
    let fix = match options.is_empty() {
        true => format!("set it to the program the command runs, e.g. program = \"{last}\""),
        false => format!(
            "set it to the program the command runs, e.g. program = \"{last}\" ({options:?} \
             are its arguments: move them from `command` to `args`, e.g. args = {options:?})"
        ),
    };
    Some((
        format!("is \"{program}\", but no word of `command` {words:?} runs a program of that name"),
        fix,
    ))
}

fn install(src: &Source, field: &Entry, key: &str) -> Result<Install, ConfigError> {
    match src.string(field, key)?.as_str() {
        "home" => Ok(Install::Home),
        "worktree" => Ok(Install::Worktree),
        other => Err(src.invalid(
            field,
            key,
            format!("is {other:?}, which is neither \"home\" nor \"worktree\""),
            "write install = \"home\" (the agent's settings in your home, the default) or \
             install = \"worktree\" (each tab's worktree)",
        )),
    }
}

/// What is wrong with `data_dir = "..."`, with its fix: it is a folder
/// inside the tab's worktree, where a sandboxed agent appends its reports,
/// so it must stay inside it and away from git's own folder.
pub(super) fn data_dir_problem(dir: &str) -> Option<(String, &'static str)> {
    use std::path::Component;
    const FIX: &str = "name a folder inside the worktree, e.g. data_dir = \".nerdr\"";
    let path = Path::new(dir);
    if dir.is_empty() || dir.chars().all(|c| c == '.' || c == '/') {
        return Some((format!("is {dir:?}, which is the worktree itself"), FIX));
    }
    if path.is_absolute() {
        return Some((format!("is {dir:?}, an absolute path"), FIX));
    }
    if dir.contains(['\0', '\n']) {
        return Some(("holds a NUL or newline character".into(), FIX));
    }
    for c in path.components() {
        match c {
            Component::ParentDir => {
                return Some((format!("is {dir:?}, which leaves the worktree (`..`)"), FIX))
            }
            Component::Normal(n) if n == ".git" => {
                return Some((format!("is {dir:?}, inside git's own folder"), FIX))
            }
            _ => {}
        }
    }
    None
}

fn env(src: &Source, entry: &Entry, key: &str) -> Result<BTreeMap<String, String>, ConfigError> {
    let mut env = BTreeMap::new();
    for var in src.table(entry, key, Expected::StringTable)? {
        let var_key = format!("{key}.{}", dotted(&[&var.key]));
        let name = var.key.as_str();
        if RESERVED_ENV.iter().any(|prefix| name.starts_with(prefix)) {
            return Err(ConfigError::ReservedEnv {
                at: src.at(var),
                key: var_key,
                var: name.to_owned(),
            });
        }
        if name.is_empty() || name.contains(['=', '\0']) {
            let problem = "is not a usable environment variable name".to_owned();
            return Err(src.invalid(
                var,
                &var_key,
                problem,
                "use letters, digits and `_`, without `=`",
            ));
        }
        env.insert(name.to_owned(), src.string(var, &var_key)?);
    }
    Ok(env)
}

fn client(src: &Source, entry: &Entry) -> Result<ClientConfig, ConfigError> {
    let mut client = ClientConfig::default();
    for field in src.table(entry, "client", Expected::Table)? {
        match field.key.as_str() {
            "prefix" => {
                let prefix = src.string(field, "client.prefix")?;
                client.prefix = parse_prefix(&prefix).ok_or_else(|| {
                    let problem = format!("is {prefix:?}, which is not a control key");
                    src.invalid(
                        field,
                        "client.prefix",
                        problem,
                        "write C-<letter>, e.g. prefix = \"C-a\"",
                    )
                })?;
            }
            _ => return Err(src.unknown(field, "[client]".into(), CLIENT_KEYS)),
        }
    }
    Ok(client)
}

fn tabs(src: &Source, entry: &Entry) -> Result<TabsConfig, ConfigError> {
    let mut tabs = TabsConfig::default();
    for field in src.table(entry, "tabs", Expected::Table)? {
        match field.key.as_str() {
            "worktree" => tabs.worktree = src.boolean(field, "tabs.worktree")?,
            _ => return Err(src.unknown(field, "[tabs]".into(), TABS_KEYS)),
        }
    }
    Ok(tabs)
}

fn plugins(src: &Source, entry: &Entry) -> Result<PluginsConfig, ConfigError> {
    let mut plugins = PluginsConfig::default();
    for field in src.table(entry, "plugins", Expected::Table)? {
        match field.key.as_str() {
            "approval_timeout_secs" => {
                plugins.approval_timeout_secs =
                    src.seconds(field, "plugins.approval_timeout_secs")?
            }
            _ => return Err(src.unknown(field, "[plugins]".into(), PLUGINS_KEYS)),
        }
    }
    Ok(plugins)
}

fn sandbox(src: &Source, entry: &Entry) -> Result<SandboxConfig, ConfigError> {
    let mut sandbox = SandboxConfig::default();
    for field in src.table(entry, "sandbox", Expected::Table)? {
        match field.key.as_str() {
            "ask_timeout_secs" => {
                let key = "sandbox.ask_timeout_secs";
                let secs = src.seconds(field, key)?;
                if secs > MAX_ASK_SECS {
                    return Err(src.invalid(
                        field,
                        key,
                        format!("is {secs} s, longer than a connection may wait"),
                        "use at most 600",
                    ));
                }
                sandbox.ask_timeout_secs = secs
            }
            _ => return Err(src.unknown(field, "[sandbox]".into(), SANDBOX_KEYS)),
        }
    }
    Ok(sandbox)
}

/// `C-<letter>`, either case; returned with the letter lowercased, since
/// Ctrl+B and Ctrl+b send the same byte.
fn parse_prefix(s: &str) -> Option<String> {
    match s.strip_prefix("C-")?.as_bytes() {
        [letter] if letter.is_ascii_alphabetic() => {
            Some(format!("C-{}", letter.to_ascii_lowercase() as char))
        }
        _ => None,
    }
}

/// `[review]` as written, with the entries of the agent names it uses
/// (for the later check that each agent exists).
struct WrittenReview<'e> {
    config: ReviewConfig,
    /// `agent`'s entry, and each `[review.args]` key's, with its dotted key.
    names: Vec<(String, &'e Entry, String)>,
}

fn review<'e>(src: &Source, entry: &'e Entry) -> Result<WrittenReview<'e>, ConfigError> {
    let mut written = WrittenReview {
        config: ReviewConfig::default(),
        names: Vec::new(),
    };
    for field in src.table(entry, "review", Expected::Table)? {
        match field.key.as_str() {
            "agent" => {
                let agent = src.nonempty_string(field, "review.agent")?;
                written
                    .names
                    .push((agent.clone(), field, "review.agent".to_owned()));
                written.config.agent = Some(agent);
            }
            "automatic" => written.config.automatic = src.boolean(field, "review.automatic")?,
            "args" => {
                let Node::Table(per_agent) = &field.value else {
                    let problem = format!(
                        "is {}, but it takes the words per reviewing agent",
                        field.value.describe()
                    );
                    let fix = "write a table with one key per agent, e.g. [review.args] then \
                               codex = [\"--full-auto\"]";
                    return Err(src.invalid(field, "review.args", problem, fix));
                };
                for agent in per_agent {
                    let key = format!("review.args.{}", dotted(&[&agent.key]));
                    let words = src.strings(agent, &key)?;
                    written.names.push((agent.key.clone(), agent, key));
                    written.config.args.insert(agent.key.clone(), words);
                }
            }
            _ => return Err(src.unknown(field, "[review]".into(), REVIEW_KEYS)),
        }
    }
    Ok(written)
}

/// `[review]` once every agent is known: each agent it names exists.
fn checked_review(
    src: &Source,
    config: &Config,
    written: WrittenReview,
) -> Result<ReviewConfig, ConfigError> {
    for (name, entry, key) in &written.names {
        if builtin::find(name).is_some() || config.agents.contains_key(name) {
            continue;
        }
        let problem = format!("names `{name}`, which is neither built in nor under [agents]");
        let fix = format!(
            "use a built-in ({}) or add [agents.{name}] with a `command`",
            builtin_names().join(", "),
        );
        return Err(src.invalid(entry, key, problem, &fix));
    }
    Ok(written.config)
}

/// Check a `[notify]`-shaped table; `key` is its dotted name (`notify`,
/// `agents.claude.notify`).
fn notify(src: &Source, entry: &Entry, key: &str) -> Result<NotifySettings, ConfigError> {
    let mut settings = NotifySettings::default();
    for field in src.table(entry, key, Expected::Table)? {
        let field_key = format!("{key}.{}", dotted(&[&field.key]));
        match field.key.as_str() {
            "blocked" => settings.blocked = Some(notify_when(src, field, &field_key)?),
            "done" => settings.done = Some(notify_when(src, field, &field_key)?),
            "desktop" => settings.desktop = Some(src.boolean(field, &field_key)?),
            "terminal" => settings.terminal = Some(src.boolean(field, &field_key)?),
            _ => return Err(src.unknown(field, format!("[{key}]"), NOTIFY_KEYS)),
        }
    }
    Ok(settings)
}

fn notify_when(src: &Source, field: &Entry, key: &str) -> Result<NotifyWhen, ConfigError> {
    match &field.value {
        Node::String(s) if s == "on" => Ok(NotifyWhen::On),
        Node::String(s) if s == "off" => Ok(NotifyWhen::Off),
        Node::String(s) => {
            let problem = format!("is {s:?}, which is neither \"on\" nor \"off\"");
            let fix = format!(
                "write \"on\", \"off\", or a command as an array of words, e.g. {} = [\"notify-send\", \"nerdr\"]",
                field.key
            );
            Err(src.invalid(field, key, problem, &fix))
        }
        Node::Array(_) => {
            let command = src.strings(field, key)?;
            if command.first().is_none_or(String::is_empty) {
                let problem = "must start with the program to run".to_owned();
                let fix = format!(
                    "e.g. {} = [\"paplay\", \"/usr/share/sounds/freedesktop/stereo/complete.oga\"]",
                    field.key
                );
                return Err(src.invalid(field, key, problem, &fix));
            }
            Ok(NotifyWhen::Command(command))
        }
        other => Err(src.wrong_type(field, key, Expected::NotifyWhen, other.describe())),
    }
}
