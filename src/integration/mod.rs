//! `nerdr integration install|uninstall AGENT`: puts hooks into an agent's
//! own settings that run `"${NERDR_BIN:-nerdr}" hook EVENT`, so the agent
//! tells nerdr its session id and when its turns start and end. Owns the
//! edits to those files and the record that lets uninstall give the file
//! back byte for byte (see `state.rs`); not what the core does with the
//! reports (`nerdr hook`, `cli/hook.rs`, sends them).
//!
//! Every edit is an insertion into the user's text, never a rewrite of it:
//! comments, key order and whitespace stay as they were. Layout:
//! `claude`, `codex` and `copilot` say where each agent keeps its hooks and
//! what an entry looks like; `jsonhooks` (through `jsonc-parser`'s CST, read
//! as `jsonc` says) and `codex` (through `toml_edit`) plan the insertions
//! and removals as pure text functions; `edit` and `state` apply and undo
//! them; `files` does the I/O.

pub(crate) mod claude;
mod codex;
pub(crate) mod copilot;
mod edit;
mod files;
pub(crate) mod jsonc;
mod jsonhooks;
mod skills;
mod state;
pub mod worktree;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context};

use crate::paths::Paths;
use edit::{EditError, Planned};
use state::{Layer, Record, Undo};

/// How every hook nerdr installs starts; what identifies one as nerdr's.
pub const COMMAND_PREFIX: &str = "\"${NERDR_BIN:-nerdr}\" hook ";

/// The event of claude's status-line command (`nerdr hook claude-statusline`).
pub const STATUSLINE_EVENT: &str = "claude-statusline";

/// The shell command a hook for nerdr event `event` runs. Inside a tab
/// `NERDR_BIN` names the nerdr that started it; elsewhere the one on PATH.
pub fn command(event: &str) -> String {
    format!("{COMMAND_PREFIX}{event}")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Agent {
    Claude,
    Codex,
    Copilot,
}

/// The environment variables that say where the agents keep their settings.
#[derive(Debug, Clone, Default)]
pub struct AgentEnv {
    pub home: Option<PathBuf>,
    pub claude_config_dir: Option<PathBuf>,
    pub codex_home: Option<PathBuf>,
    pub copilot_home: Option<PathBuf>,
}

impl AgentEnv {
    pub fn from_process() -> Self {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v: &OsString| !v.is_empty())
                .map(PathBuf::from)
        };
        AgentEnv {
            home: var("HOME"),
            claude_config_dir: var("CLAUDE_CONFIG_DIR"),
            codex_home: var("CODEX_HOME"),
            copilot_home: var("COPILOT_HOME"),
        }
    }
}

impl Agent {
    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Copilot => "copilot",
        }
    }

    /// The file nerdr edits, or `None` when neither the agent's variable nor
    /// HOME is set.
    pub fn settings_file(self, env: &AgentEnv) -> Option<PathBuf> {
        match self {
            Agent::Claude => claude::settings_file(env),
            Agent::Codex => codex::settings_file(env),
            Agent::Copilot => copilot::settings_file(env),
        }
    }

    fn variable(self) -> &'static str {
        match self {
            Agent::Claude => "CLAUDE_CONFIG_DIR",
            Agent::Codex => "CODEX_HOME",
            Agent::Copilot => "COPILOT_HOME",
        }
    }

    fn plan_install(self, before: Option<&str>, file: &Path) -> Result<Planned, EditError> {
        match self {
            Agent::Claude => claude::TARGET.plan_install(before),
            Agent::Codex => codex::plan_install(before, file),
            Agent::Copilot => copilot::TARGET.plan_install(before),
        }
    }

    fn remove(self, text: &str, created: &[Vec<String>]) -> Result<String, EditError> {
        match self {
            Agent::Claude => claude::WITH_STATUS_LINE.remove(text, created),
            Agent::Codex => codex::remove(text),
            Agent::Copilot => copilot::TARGET.remove(text, created),
        }
    }

    fn contains_nerdrs(self, text: &str) -> Result<bool, EditError> {
        match self {
            Agent::Claude => claude::WITH_STATUS_LINE.contains_nerdrs(text),
            Agent::Codex => codex::contains_nerdrs(text),
            Agent::Copilot => copilot::TARGET.contains_nerdrs(text),
        }
    }

    /// The command of a single member nerdr set (`created` names it) that
    /// is no longer what nerdr wrote: the person's edit, which uninstall
    /// keeps and names.
    fn kept_single(self, text: &str, created: &[Vec<String>]) -> Option<String> {
        let target = match self {
            Agent::Claude => claude::WITH_STATUS_LINE,
            Agent::Codex | Agent::Copilot => return None,
        };
        let (key, _) = target.single?;
        if !created.iter().any(|p| p.len() == 1 && p[0] == key) {
            return None;
        }
        target
            .single_of_others(text)
            .map(|c| format!("{key} ({c})"))
    }

    /// Whether a file nerdr created holds nothing else, so it can go.
    fn is_bare(self, text: &str) -> bool {
        match self {
            Agent::Claude => claude::WITH_STATUS_LINE.is_bare(text),
            Agent::Codex => text.trim().is_empty(),
            Agent::Copilot => copilot::TARGET.is_bare(text),
        }
    }
}

/// Where the file is and where its install record is kept.
struct Where {
    file: PathBuf,
    record: PathBuf,
}

/// `found`, or the error for an agent whose folder nothing names; and
/// where the install record `name` is kept.
fn placed(
    agent: Agent,
    found: Option<PathBuf>,
    what: &str,
    name: &str,
) -> anyhow::Result<(PathBuf, PathBuf)> {
    let file = found.ok_or_else(|| {
        anyhow!(
            "neither {} nor HOME is set, so there is no {} {what}; set HOME",
            agent.variable(),
            agent.name()
        )
    })?;
    let record = Paths::from_process()?
        .state_dir
        .join("integrations")
        .join(name);
    Ok((file, record))
}

fn locate(agent: Agent) -> anyhow::Result<Where> {
    let (file, record) = placed(
        agent,
        agent.settings_file(&AgentEnv::from_process()),
        "settings file to edit",
        &format!("{}.json", agent.name()),
    )?;
    Ok(Where {
        file: files::resolve(&file)?,
        record,
    })
}

/// One settings file an install record names, for `nerdr doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub agent: &'static str,
    pub file: PathBuf,
    /// Whether nerdr's hooks are still in the file (`Ok(false)` when the
    /// file is gone too), or why that cannot be told.
    pub hooks: Result<bool, String>,
}

/// Every settings file the install records in `state_dir` name, and whether
/// nerdr's hooks are still in each. Reads only.
pub fn recorded(state_dir: &Path) -> Vec<Recorded> {
    let mut all = Vec::new();
    for agent in [Agent::Claude, Agent::Codex, Agent::Copilot] {
        let path = state_dir
            .join("integrations")
            .join(format!("{}.json", agent.name()));
        let record = match Record::load(&path) {
            Ok(r) => r,
            Err(e) => {
                all.push(Recorded {
                    agent: agent.name(),
                    file: path,
                    hooks: Err(format!("{e:#}")),
                });
                continue;
            }
        };
        for f in record.files.iter().filter(|f| !f.layers.is_empty()) {
            let hooks = match files::read(&f.path) {
                Ok(None) => Ok(false),
                Ok(Some(text)) => agent
                    .contains_nerdrs(&text)
                    .map_err(|e| format!("{}: {e}", f.path.display())),
                Err(e) => Err(format!("{e:#}")),
            };
            all.push(Recorded {
                agent: agent.name(),
                file: f.path.clone(),
                hooks,
            });
        }
    }
    all
}

fn save(record: &Record, path: &Path) -> anyhow::Result<()> {
    if record.files.is_empty() {
        return files::remove(path);
    }
    let dir = path.parent().expect("the record lives in a folder");
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let text = serde_json::to_string_pretty(record).expect("records serialize") + "\n";
    files::write(path, &text)
}

/// `nerdr integration install AGENT`: the hooks, then the skill. Running
/// it again changes nothing. A hook slot the person's own program holds
/// (codex's `notify`) is left alone and said so; the skill, which needs
/// no hook, is installed all the same.
pub fn install(agent: Agent) -> anyhow::Result<()> {
    install_hooks(agent, |b, f| agent.plan_install(b, f))?;
    let (file, record) = skill_where(agent)?;
    println!("{}", skills::install(agent, &file, &record)?);
    Ok(())
}

/// `nerdr integration uninstall AGENT`: the skill, then the hooks (in the
/// reverse order of install, so the folders the hooks' install made are
/// empty again when their turn comes).
pub fn uninstall(agent: Agent) -> anyhow::Result<()> {
    let (file, record) = skill_where(agent)?;
    if let Some(said) = skills::uninstall(agent, &file, &record)? {
        println!("{said}");
    }
    uninstall_hooks(agent)
}

/// `nerdr integration install claude --status-line`: sets claude's
/// `statusLine` to nerdr's (`claude::WITH_STATUS_LINE`), as a layer of its
/// own that uninstall takes off with the hooks. Not by default: claude
/// shows a status line in place of its footer hints, `esc to interrupt`
/// and `? for shortcuts`, which nerdr's screen rules read to tell a
/// working claude from an idle one (checked with 2.1.197).
pub fn install_status_line() -> anyhow::Result<()> {
    install_hooks(Agent::Claude, |b, _| {
        claude::WITH_STATUS_LINE.plan_install(b)
    })?;
    status_line_note()
}

/// Says when claude's `statusLine` is the user's own, which install left
/// alone: then `nerdr usage` cannot know claude's limits.
fn status_line_note() -> anyhow::Result<()> {
    let w = locate(Agent::Claude)?;
    if let Some(theirs) = files::read(&w.file)?
        .as_deref()
        .and_then(|t| claude::WITH_STATUS_LINE.single_of_others(t))
    {
        println!(
            "left your statusLine in {} as it is ({theirs}); claude gives the plan's limits only \
             to its status-line command, so `nerdr usage` shows claude's as unknown. To have \
             them, set it to {} (your command's line is then nerdr's short one)",
            w.file.display(),
            command(STATUSLINE_EVENT)
        );
    }
    Ok(())
}

/// The agent's skill file, and the record of the skills nerdr wrote.
fn skill_where(agent: Agent) -> anyhow::Result<(PathBuf, PathBuf)> {
    let (file, record) = placed(
        agent,
        skills::skill_file(agent, &AgentEnv::from_process()),
        "skills folder",
        "skills.json",
    )?;
    Ok((std::path::absolute(&file)?, record))
}

fn install_hooks(
    agent: Agent,
    plan_install: impl Fn(Option<&str>, &Path) -> Result<Planned, EditError>,
) -> anyhow::Result<()> {
    let w = locate(agent)?;
    let file = &w.file;
    let before = files::read(file)?;
    let planned = match plan_install(before.as_deref(), file) {
        // The agent's one slot holds the person's program (codex's
        // `notify`): left alone, and the rest of the install still goes on.
        Err(EditError::Taken {
            key,
            at,
            found,
            why,
        }) => {
            println!(
                "left `{key}` in {}{at} as it is ({found}): {why}",
                file.display()
            );
            return Ok(());
        }
        r => r.map_err(|e| anyhow!("{}: {e}", file.display()))?,
    };
    let plan = match planned {
        Planned::Already => {
            println!("nerdr's hooks are already in {}", file.display());
            return Ok(());
        }
        Planned::Plan(p) => p,
    };
    let after = edit::apply(before.as_deref().unwrap_or(""), &plan.inserts);
    let dirs = files::missing_dirs(file);

    // The record is written first: if writing the settings then fails, the
    // layer is taken back; if nerdr dies in between, uninstall sees a file
    // still at its "before" hash and skips that layer.
    let mut record = Record::load(&w.record)?;
    let entry = record.file_mut(file);
    if before.is_none() {
        // Whatever was recorded was for a file that is gone.
        entry.layers.clear();
        entry.created_dirs = dirs.clone();
    }
    entry.layers.push(Layer {
        before_sha256: before.as_deref().map(state::sha256),
        after_sha256: state::sha256(&after),
        inserts: edit::shifted(&plan.inserts),
        created: plan.created.clone(),
    });
    save(&record, &w.record)?;
    let written = files::make_dirs(&dirs).and_then(|()| files::write(file, &after));
    if let Err(e) = written {
        let mut record = Record::load(&w.record)?;
        if let Some(entry) = record.files.iter_mut().find(|f| &f.path == file) {
            entry.layers.pop();
            if entry.layers.is_empty() {
                record.forget(file);
            }
        }
        save(&record, &w.record)?;
        files::remove_empty_dirs(&dirs);
        return Err(e);
    }
    println!(
        "added nerdr's hooks to {} ({}); `nerdr integration uninstall {}` takes them out again",
        file.display(),
        plan.events.join(", "),
        agent.name()
    );
    Ok(())
}

/// Removes exactly the hooks install added.
fn uninstall_hooks(agent: Agent) -> anyhow::Result<()> {
    let w = locate(agent)?;
    let file = &w.file;
    let mut record = Record::load(&w.record)?;
    let entry = record.file(file).cloned();
    let Some(current) = files::read(file)? else {
        println!("{} does not exist; nothing to remove", file.display());
        if let Some(e) = &entry {
            files::remove_empty_dirs(&e.created_dirs);
            record.forget(file);
            save(&record, &w.record)?;
        }
        return Ok(());
    };
    let layers = entry.as_ref().map(|e| e.layers.as_slice()).unwrap_or(&[]);
    let created: Vec<Vec<String>> = layers.iter().flat_map(|l| l.created.clone()).collect();
    let made_file = layers.first().is_some_and(|l| l.before_sha256.is_none());
    let in_file = |e: EditError| anyhow!("{}: {e}", file.display());

    let (text, how) = match state::undo(&current, layers) {
        Undo::Exact(text) if !layers.is_empty() => (text, "as it was before the install"),
        Undo::Spans(text) if sound(agent, &text) => (
            Some(text),
            "the file changed since the install; only nerdr's lines were cut",
        ),
        _ => (
            Some(agent.remove(&current, &created).map_err(in_file)?),
            "the file changed since the install; only nerdr's entries were removed",
        ),
    };
    // A file install created goes once nothing but nerdr's skeleton is left.
    let result = text.filter(|t| !(made_file && agent.is_bare(t)));
    match &result {
        None => files::remove(file)?,
        Some(text) if *text != current => files::write(file, text)?,
        Some(_) => {}
    }
    if let Some(e) = &entry {
        files::remove_empty_dirs(&e.created_dirs);
    }
    record.forget(file);
    save(&record, &w.record)?;

    if result.as_deref() == Some(current.as_str()) {
        println!("no nerdr hooks in {}; nothing to remove", file.display());
    } else if result.is_none() {
        println!("removed {} (install had created it)", file.display());
    } else {
        println!("removed nerdr's hooks from {} ({how})", file.display());
    }
    if let Some(kept) = result
        .as_deref()
        .and_then(|t| agent.kept_single(t, &created))
    {
        println!(
            "kept the {kept} in {}: it changed since nerdr set it (your edit); remove it \
             yourself if you no longer want it",
            file.display()
        );
    }
    if let Some(text) = &result {
        if agent.contains_nerdrs(text).unwrap_or(false) {
            eprintln!(
                "nerdr: {} still has hooks running `{COMMAND_PREFIX}...` that could not be \
                 taken out safely (edited by hand?); remove them yourself",
                file.display()
            );
        }
    }
    Ok(())
}

/// Whether text with the recorded spans cut is a sound settings file with
/// none of nerdr's hooks left.
fn sound(agent: Agent, text: &str) -> bool {
    matches!(agent.contains_nerdrs(text), Ok(false))
}

#[cfg(test)]
mod status_line_tests;
#[cfg(test)]
mod tests;
