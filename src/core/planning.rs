//! Deciding a launch: plain facts in, what to run or the refusal the
//! person reads out. No I/O here: `agent` and `launch` gather the facts
//! (the folder as the filesystem has it, the config, the program on PATH,
//! what it supports, the worktree's setup file) off the async workers,
//! call these functions, and carry out what they decide.
//!
//! A launch is decided in steps, because some facts must not be gathered
//! before an earlier step allowed it (a sandboxed caller refused a start
//! gets no `--help` of the agent run on the host) and the worktree, an
//! effect, is made only once everything that can fail before it has been
//! decided: [`admit_agent`] / [`admit_restart`], then [`agent_command`],
//! then (with a fresh worktree) [`settings_unchanged`] and [`setup_step`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::launch_plan::{Deferred, Plan};
use super::privilege::{self, CallerKind, Operation, Verdict};
use super::sandbox_check::ProbeSite;
use super::setup::Setup;
use crate::agents::{Features, Mode, Reported};
use crate::config::ResolvedAgent;
use crate::protocol::api::{ApiError, ErrorCode, TabKind};

/// Why a launch does not happen.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Refusal {
    /// The privilege model's refusal: journaled as one (`Core::refuse`).
    Denied { op: Operation, why: &'static str },
    /// Anything else, as the caller reads it.
    Error(ApiError),
}

impl From<ApiError> for Refusal {
    fn from(e: ApiError) -> Self {
        Refusal::Error(e)
    }
}

/// An agent's settings as the config gave them, or the config's error.
pub(super) type Settings = Result<ResolvedAgent, String>;

/// What a new agent's start is admitted on.
pub(super) struct Admission<'a> {
    pub(super) caller: CallerKind,
    /// The folder as the request names it.
    pub(super) asked: &'a Path,
    /// The same folder as the filesystem has it (canonical), if it is one.
    pub(super) folder: Option<PathBuf>,
    /// The agent's settings, and `[tabs] worktree`.
    pub(super) settings: Result<(ResolvedAgent, bool), String>,
    /// Not `--no-worktree`.
    pub(super) want_worktree: bool,
}

/// A start that may go on.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Admitted {
    pub(super) folder: PathBuf,
    pub(super) agent: ResolvedAgent,
    /// The agent gets a worktree of its own (when the folder is in a
    /// repository).
    pub(super) worktree: bool,
}

/// Whether a new agent may start, and where.
pub(super) fn admit_agent(a: Admission) -> Result<Admitted, Refusal> {
    let folder = a.folder.ok_or_else(|| {
        ApiError::new(
            ErrorCode::BadRequest,
            format!(
                "folder {} does not exist or is not a folder",
                a.asked.display()
            ),
        )
    })?;
    let (agent, tabs_worktree) = a.settings.map_err(config_error)?;
    stays_sandboxed(a.caller, Operation::StartAgent, &agent)?;
    Ok(Admitted {
        folder,
        worktree: a.want_worktree && tabs_worktree,
        agent,
    })
}

/// Whether tab `tab` is one whose program can be started again.
pub(super) fn restartable(tab: &str, kind: TabKind) -> Result<(), ApiError> {
    match kind {
        TabKind::Agent => Ok(()),
        TabKind::Terminal => Err(ApiError::new(
            ErrorCode::BadRequest,
            format!("tab {tab} is a terminal; open a new one with `nerdr terminal`"),
        )),
    }
}

/// Whether a restartable tab's agent may start again, with `settings` as
/// the config now has them.
pub(super) fn admit_restart(
    caller: CallerKind,
    settings: Settings,
) -> Result<ResolvedAgent, Refusal> {
    let agent = settings.map_err(config_error)?;
    stays_sandboxed(caller, Operation::Restart, &agent)?;
    Ok(agent)
}

/// Whether a tab's agent may be replaced by the agent of `settings` (as
/// the config now has them): by a sandboxed caller, only with a
/// sandboxed one.
pub(super) fn admit_switch(
    caller: CallerKind,
    settings: Settings,
) -> Result<ResolvedAgent, Refusal> {
    let agent = settings.map_err(config_error)?;
    stays_sandboxed(caller, Operation::Switch, &agent)?;
    Ok(agent)
}

/// A sandboxed caller's launch is of a sandboxed agent: checked again with
/// the settings the launch will use, since the config may have changed
/// since the request was classified.
fn stays_sandboxed(
    caller: CallerKind,
    op: Operation,
    agent: &ResolvedAgent,
) -> Result<(), Refusal> {
    let extras = privilege::Extras {
        unsandboxed_launch: !agent.sandboxed,
        ..Default::default()
    };
    match privilege::decide_extras(caller, extras) {
        Verdict::Refuse(why) => Err(Refusal::Denied { op, why }),
        Verdict::Allow | Verdict::Queue(_) => Ok(()),
    }
}

fn config_error(e: String) -> Refusal {
    Refusal::Error(ApiError::new(ErrorCode::Config, e))
}

/// What an agent's command line is built from.
pub(super) struct CommandFacts<'a> {
    pub(super) agent: &'a ResolvedAgent,
    pub(super) extra_args: Vec<String>,
    pub(super) mode: Mode,
    pub(super) reported: Option<Reported>,
    pub(super) caller_env: &'a [(String, String)],
    /// The caller's PATH, as searched.
    pub(super) path_var: &'a str,
    /// `agent.command[0]` as found on it.
    pub(super) program: Option<PathBuf>,
    /// What the installed program supports (nothing for a sandboxed agent
    /// before its check: see `agents::help_gate`).
    pub(super) features: Features,
    /// The id a new conversation gets, if the agent takes one.
    pub(super) new_session_id: String,
    pub(super) config_file: &'a Path,
    /// A program run as it is (`nerdr agent -- CMD`): no config names it.
    pub(super) program_run: bool,
}

/// An agent's command, decided.
#[derive(Debug, Clone)]
pub(super) struct AgentCommand {
    /// As shown in `nerdr tabs` (the configured words).
    pub(super) display: Vec<String>,
    /// As run: `argv[0]` resolved.
    pub(super) argv: Vec<String>,
    pub(super) session_id: Option<String>,
    /// The agent's own variables.
    pub(super) agent_env: BTreeMap<String, String>,
    /// For a sandboxed agent: where its sandbox check goes, and the
    /// command to build again once it passed.
    pub(super) probe: Option<ProbeSite>,
    pub(super) deferred: Option<Deferred>,
}

impl AgentCommand {
    /// The launch of new agent tab `id` running `agent` with this command
    /// in `cwd` of session `folder`: a reviewer, a spinoff and a handoff's
    /// agent start alike (an agent, not a program run as it is, with no
    /// parent terminal and nothing reported yet).
    pub(super) fn new_tab(
        self,
        id: &str,
        folder: PathBuf,
        cwd: PathBuf,
        worktree: Option<super::state::Worktree>,
        agent: &ResolvedAgent,
        caller_env: Vec<(String, String)>,
    ) -> Plan {
        Plan {
            id: id.to_string(),
            folder,
            cwd,
            worktree,
            name: agent.name.clone(),
            command: self.display,
            argv: self.argv,
            caller_env,
            agent_env: self.agent_env,
            sandboxed: agent.sandboxed,
            program: false,
            kind: TabKind::Agent,
            parent: None,
            // A reviewer's stays so: it answers to the person, whoever
            // asked for it (`privilege::line_of`).
            started_by: Vec::new(),
            session_id: self.session_id,
            reported: None,
            probe: self.probe,
            deferred: self.deferred,
            detect: Some(agent.detect.clone()),
            reports_dir: agent.worktree_data_dir.clone(),
        }
    }
}

/// The agent's full command line: its command and args, the extra
/// arguments, then its session arguments last (so a wrapper passes them
/// through), with the program resolved; and its environment.
pub(super) fn agent_command(f: CommandFacts) -> Result<AgentCommand, ApiError> {
    let agent = f.agent;
    let name = &agent.name;
    let program = f.program.ok_or_else(|| {
        let message = if f.program_run {
            format!(
                "`{}` is not an executable on PATH ({}); install it, or give its path \
                 (`nerdr agent -- /path/to/{name}`)",
                agent.command[0], f.path_var,
            )
        } else {
            format!(
                "agent `{name}`: `{}` is not an executable on PATH ({}); \
                 install it, or set `command` in [agents.{name}] of {}",
                agent.command[0],
                f.path_var,
                f.config_file.display()
            )
        };
        ApiError::new(ErrorCode::LaunchFailed, message)
    })?;
    let mut with_extra = agent.clone();
    with_extra.command.extend(f.extra_args);
    let new_id = f.new_session_id;
    let launch = crate::agents::build(
        &with_extra,
        &f.mode,
        &f.features,
        f.reported.as_ref(),
        || new_id,
    )
    .map_err(|e| ApiError::new(ErrorCode::LaunchFailed, format!("agent `{name}`: {e}")))?;
    let agent_env = agent_env(agent, f.caller_env)?;
    let mut argv = launch.argv.clone();
    argv[0] = program.to_string_lossy().into_owned();
    let probe = agent
        .sandboxed
        .then(|| ProbeSite::of(agent, &argv, f.config_file));
    let deferred = agent.sandboxed.then(|| Deferred {
        agent: with_extra,
        mode: f.mode.clone(),
        session_id: launch.session_id.clone(),
        program: argv[0].clone(),
    });
    Ok(AgentCommand {
        display: launch.argv,
        argv,
        session_id: launch.session_id,
        agent_env,
        probe,
        deferred,
    })
}

/// The agent's own variables, with opencode's `config_model` merged into
/// the `OPENCODE_CONFIG_CONTENT` the user already has.
fn agent_env(
    agent: &ResolvedAgent,
    caller_env: &[(String, String)],
) -> Result<BTreeMap<String, String>, ApiError> {
    let mut env = agent.env.clone();
    if let Some(model) = &agent.config_model {
        const KEY: &str = "OPENCODE_CONFIG_CONTENT";
        let existing = env.get(KEY).cloned().or_else(|| {
            caller_env
                .iter()
                .find(|(k, _)| k == KEY)
                .map(|(_, v)| v.clone())
        });
        let merged =
            crate::agents::opencode::config_content(existing.as_deref(), model).map_err(|e| {
                ApiError::new(ErrorCode::Config, format!("agent `{}`: {e}", agent.name))
            })?;
        env.insert(KEY.into(), merged);
    }
    Ok(env)
}

/// Refuse a launch whose agent's settings changed while it was being
/// prepared (feature detection and worktree creation take a moment): it
/// would run with settings that are no longer the config's.
pub(super) fn settings_unchanged(
    before: &ResolvedAgent,
    now: Option<&ResolvedAgent>,
    config_file: &Path,
) -> Result<(), ApiError> {
    if now == Some(before) {
        return Ok(());
    }
    Err(ApiError::new(
        ErrorCode::Config,
        format!(
            "the settings of agent `{}` in {} changed while its launch was being prepared; \
             restart the agent to use the new settings",
            before.name,
            config_file.display()
        ),
    ))
}

/// What a fresh worktree's setup file means for the launch.
pub(super) struct SetupFacts {
    pub(super) sandboxed: bool,
    /// The worktree's setup file, if it has one, or why it cannot be read.
    pub(super) setup: Result<Option<Setup>, String>,
    /// Sandboxed agents have worked in this repository.
    pub(super) tainted: bool,
    /// The person approved this setup's content before.
    pub(super) approved: bool,
}

/// What the launch does about a worktree's setup.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum SetupStep {
    /// No setup.
    None,
    /// Run it first, then the agent.
    RunFirst(Setup),
    /// Ask the person, the agent waiting for the answer (and then for the
    /// setup); `once`: a yes is for this run only.
    Ask { setup: Setup, once: bool },
    /// Start the agent without it, and tell the person why it never runs.
    Skip(Setup),
}

/// What happens to the setup of a new worktree.
pub(super) fn setup_step(f: SetupFacts) -> Result<SetupStep, ApiError> {
    let setup = f.setup.map_err(|e| {
        ApiError::new(
            ErrorCode::Config,
            format!("{e}; fix it, or start with --no-worktree"),
        )
    })?;
    Ok(match setup {
        None => SetupStep::None,
        // nerdr runs setups outside every sandbox, in a worktree a
        // sandboxed agent is already working in: never for one.
        Some(setup) if f.sandboxed => SetupStep::Skip(setup),
        // What sandboxed agents worked in may be their work: a setup
        // approved before is asked about again, each time.
        Some(setup) if f.approved && !f.tainted => SetupStep::RunFirst(setup),
        Some(setup) => SetupStep::Ask {
            setup,
            once: f.tainted,
        },
    })
}

/// The shell a terminal tab runs: the caller's `SHELL` when it is an
/// absolute path, else `/bin/sh`.
pub(super) fn terminal_shell(caller_env: &[(String, String)]) -> String {
    caller_env
        .iter()
        .find(|(k, _)| k == "SHELL")
        .map(|(_, v)| v.clone())
        .filter(|s| Path::new(s).is_absolute())
        .unwrap_or_else(|| "/bin/sh".into())
}

/// The terminal's program: `shell` as found (`found`), or the refusal.
pub(super) fn terminal_program(shell: &str, found: Option<PathBuf>) -> Result<PathBuf, ApiError> {
    found.ok_or_else(|| {
        ApiError::new(
            ErrorCode::LaunchFailed,
            format!("terminal: the shell {shell} is not an executable; set SHELL"),
        )
    })
}

#[cfg(test)]
#[path = "planning_tests.rs"]
mod tests;
