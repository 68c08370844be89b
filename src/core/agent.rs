//! Starting and restarting agents: their settings from config, their
//! command line with session arguments last, what the installed program
//! supports, and the checks a launch makes before it runs (settings
//! unchanged, a worktree made only once everything else is decided).

use std::path::Path;
use std::sync::Arc;

use super::caller::Caller;
use super::launch_plan::{Deferred, Plan};
use super::not_found::no_tab;
use super::programs::{existing_folder, find_program, path_of};
use super::Core;
use crate::agents::help_gate::{help_program, Stage};
use crate::agents::{Mode, Reported};
use crate::config::ResolvedAgent;
use crate::protocol::api::{ApiError, ErrorCode, Reply, TabKind};

struct AgentCommand {
    /// As shown in `nerdr tabs` (the configured words).
    display: Vec<String>,
    /// As run: `argv[0]` resolved.
    argv: Vec<String>,
    session_id: Option<String>,
    /// For a sandboxed agent: the command to build again once the launch's
    /// sandbox check passed and its program's features are known.
    deferred: Option<Deferred>,
}

impl Core {
    pub async fn start_agent(
        self: &Arc<Self>,
        caller: &Caller,
        folder: &Path,
        name: &str,
        extra_args: Vec<String>,
        caller_env: Vec<(String, String)>,
        want_worktree: bool,
    ) -> Reply {
        let caller_env = self.environment_for(caller, caller_env);
        let folder = existing_folder(folder)?;
        let (agent, config) = self.resolve(name)?;
        self.sandboxed_stays_sandboxed(caller, &agent, None)?;
        let id = self.new_tab_id();
        // Decide everything that can fail before making a worktree.
        let command = self
            .agent_command(&agent, extra_args, &Mode::New, None, &caller_env, &folder)
            .await?;
        let (cwd, worktree) = if want_worktree && config.tabs.worktree {
            self.make_worktree(&folder, &id).await?
        } else {
            (folder.clone(), None)
        };
        if let Err(e) = self.settings_unchanged(&agent) {
            self.drop_worktree(&id, worktree).await;
            return Err(e);
        }
        let agent_env = match agent_env(&agent, &caller_env) {
            Ok(env) => env,
            Err(e) => {
                self.drop_worktree(&id, worktree).await;
                return Err(e);
            }
        };
        // A new worktree's setup runs first if its content was approved;
        // otherwise it is asked about, and the agent starts without it.
        let probe = agent
            .sandboxed
            .then(|| super::sandbox_check::ProbeSite::of(&agent, &command.argv));
        let mut argv = command.argv;
        let mut ask = None;
        let mut skipped = None;
        if let Some(w) = &worktree {
            // What sandboxed agents worked in may be their work: a setup
            // approved before is asked about again, each time.
            let tainted = {
                let (state_dir, path) = (self.paths.state_dir.clone(), w.path.clone());
                tokio::task::spawn_blocking(move || {
                    crate::git::guard::has_history(&state_dir, &path)
                })
                .await
                .unwrap_or(true)
            };
            match super::setup::read(&w.path) {
                Err(e) => {
                    self.drop_worktree(&id, worktree).await;
                    return Err(ApiError::new(
                        ErrorCode::Config,
                        format!("{e}; fix it, or start with --no-worktree"),
                    ));
                }
                // nerdr runs setups outside every sandbox, in a worktree
                // a sandboxed agent is already working in: never for one.
                Ok(Some(setup)) if agent.sandboxed => skipped = Some(setup),
                Ok(Some(setup))
                    if !tainted && self.approvals.lock().unwrap().is_approved(&setup.hash) =>
                {
                    argv = super::setup::prefixed(&setup, &argv);
                }
                Ok(Some(setup)) => ask = Some((w.path.clone(), setup, tainted)),
                Ok(None) => {}
            }
        }
        let tab = id.clone();
        let reply = self
            .launch(
                caller,
                Plan {
                    id,
                    folder,
                    cwd,
                    worktree,
                    fresh_worktree: true,
                    name: name.to_string(),
                    command: command.display,
                    argv,
                    caller_env,
                    agent_env,
                    sandboxed: agent.sandboxed,
                    kind: TabKind::Agent,
                    parent: None,
                    session_id: command.session_id,
                    reported: None,
                    probe,
                    deferred: command.deferred,
                },
            )
            .await;
        if let (Ok(_), Some((path, setup, once))) = (&reply, ask) {
            self.ask_setup(&tab, &path, &setup, once);
        }
        if let (Ok(_), Some(setup)) = (&reply, skipped) {
            let text = format!(
                "this repository's worktree setup (`{}` from {}) was not run: nerdr runs \
                 setups outside every sandbox, and this agent is sandboxed; run it inside \
                 the agent's sandbox if it needs it",
                crate::protocol::printable(&setup.argv.join(" ")),
                super::setup::FILE
            );
            if let Some(t) = self.state.lock().unwrap().tabs.get_mut(&tab) {
                t.warning = Some(text);
            }
            self.changed();
        }
        reply
    }

    /// Start tab `tab`'s agent again, in the same tab and worktree, resuming
    /// its conversation: by the id nerdr recorded, else the agent's own
    /// report of how to resume it, else its "continue" mode. With the
    /// current settings, as after a change of config.
    pub async fn restart_tab(
        self: &Arc<Self>,
        caller: &Caller,
        tab: &str,
        caller_env: Vec<(String, String)>,
    ) -> Reply {
        let old = {
            let state = self.state.lock().unwrap();
            let t = state.tabs.get(tab).ok_or_else(|| no_tab(tab))?;
            if t.kind != TabKind::Agent {
                return Err(ApiError::new(
                    ErrorCode::BadRequest,
                    format!("tab {tab} is a terminal; open a new one with `nerdr terminal`"),
                ));
            }
            t.saved(true)
        };
        let caller_env = self.environment_for(caller, caller_env);
        let (agent, _) = self.resolve(&old.agent)?;
        self.sandboxed_stays_sandboxed(caller, &agent, Some(tab))?;
        let mode = match &old.session_id {
            Some(id) => Mode::Resume(id.clone()),
            None => Mode::Continue,
        };
        let reported = old.reported.clone().map(|argv| Reported { argv });
        let cwd = old.cwd.clone().unwrap_or_else(|| old.folder.clone());
        let command = self
            .agent_command(
                &agent,
                Vec::new(),
                &mode,
                reported.as_ref(),
                &caller_env,
                &cwd,
            )
            .await?;
        self.settings_unchanged(&agent)?;
        let agent_env = agent_env(&agent, &caller_env)?;
        let _ = self.host.stop(tab).await;
        self.host.forget(tab);
        self.state.lock().unwrap().remove(tab);
        // A restart (after fixing the sandbox, say) is watched afresh.
        self.turns.lock().unwrap().forget(tab);
        tracing::info!(tab = %tab, agent = %old.agent, mode = ?mode, "restarting agent");
        let probe = agent
            .sandboxed
            .then(|| super::sandbox_check::ProbeSite::of(&agent, &command.argv));
        self.launch(
            caller,
            Plan {
                id: old.id,
                folder: old.folder,
                cwd,
                worktree: old.worktree,
                // The tab's own worktree, with its work: never dropped.
                fresh_worktree: false,
                name: old.agent,
                command: command.display,
                argv: command.argv,
                caller_env,
                agent_env,
                sandboxed: agent.sandboxed,
                kind: TabKind::Agent,
                parent: None,
                session_id: command.session_id.or(old.session_id),
                reported: old.reported,
                probe,
                deferred: command.deferred,
            },
        )
        .await
    }

    /// A sandboxed caller's launch is of a sandboxed agent: checked again
    /// here, with the settings the launch will use, since the config may
    /// have changed since the request was classified.
    fn sandboxed_stays_sandboxed(
        &self,
        caller: &Caller,
        agent: &ResolvedAgent,
        tab: Option<&str>,
    ) -> Result<(), ApiError> {
        let op = match tab {
            Some(_) => super::privilege::Operation::Restart,
            None => super::privilege::Operation::StartAgent,
        };
        let extras = super::privilege::Extras {
            unsandboxed_launch: !agent.sandboxed,
            ..Default::default()
        };
        match super::privilege::decide_extras(caller.kind(), extras) {
            super::privilege::Verdict::Refuse(why) => Err(self.refuse(caller, op, tab, why)),
            _ => Ok(()),
        }
    }

    /// Refuse a launch whose agent's settings changed while it was being
    /// prepared (feature detection and worktree creation take a moment):
    /// it would run with settings that are no longer the config's.
    fn settings_unchanged(&self, agent: &ResolvedAgent) -> Result<(), ApiError> {
        let now = self.resolve(&agent.name).map(|(a, _)| a);
        if now.as_ref().ok() == Some(agent) {
            return Ok(());
        }
        Err(ApiError::new(
            ErrorCode::Config,
            format!(
                "the settings of agent `{}` in {} changed while its launch was being prepared; \
                 restart the agent to use the new settings",
                agent.name,
                self.paths.config_file().display()
            ),
        ))
    }

    pub(super) fn resolve(
        &self,
        name: &str,
    ) -> Result<(ResolvedAgent, crate::config::Config), ApiError> {
        let config = crate::config::load(&self.paths.config_file())
            .map_err(|e| ApiError::new(ErrorCode::Config, e.to_string()))?;
        let agent = config
            .resolve_agent(name)
            .map_err(|e| ApiError::new(ErrorCode::Config, e.to_string()))?;
        Ok((agent, config))
    }

    /// The agent's full command line: its command and args, the extra
    /// arguments, then its session arguments last (so a wrapper passes
    /// them through), with the program resolved on the caller's PATH.
    async fn agent_command(
        &self,
        agent: &ResolvedAgent,
        extra_args: Vec<String>,
        mode: &Mode,
        reported: Option<&Reported>,
        caller_env: &[(String, String)],
        cwd: &Path,
    ) -> Result<AgentCommand, ApiError> {
        let name = &agent.name;
        let path_var = path_of(caller_env);
        let program = find_program(&agent.command[0], &path_var, cwd).ok_or_else(|| {
            ApiError::new(
                ErrorCode::LaunchFailed,
                format!(
                    "agent `{name}`: `{}` is not an executable on PATH ({path_var}); \
                     install it, or set `command` in [agents.{name}] of {}",
                    agent.command[0],
                    self.paths.config_file().display()
                ),
            )
        })?;
        let found =
            crate::agents::program_word(agent).and_then(|w| find_program(w, &path_var, cwd));
        let help = help_program(agent.sandboxed, Stage::Building, found.as_deref(), None);
        let features = self.features(agent, help, caller_env).await;
        let mut with_extra = agent.clone();
        with_extra.command.extend(extra_args);
        let launch = crate::agents::build(
            &with_extra,
            mode,
            &features,
            reported,
            crate::agents::uuid::new_v4,
        )
        .map_err(|e| ApiError::new(ErrorCode::LaunchFailed, format!("agent `{name}`: {e}")))?;
        let mut argv = launch.argv.clone();
        argv[0] = program.to_string_lossy().into_owned();
        let deferred = agent.sandboxed.then(|| Deferred {
            agent: with_extra,
            mode: mode.clone(),
            session_id: launch.session_id.clone(),
            program: argv[0].clone(),
        });
        Ok(AgentCommand {
            display: launch.argv,
            argv,
            session_id: launch.session_id,
            deferred,
        })
    }

    /// After a sandboxed launch's check passed: the agent's features, from
    /// the program file the check proved (`proven`), and its command line
    /// built again with them when they add anything; the tab's record
    /// follows. `None`: the command stays as built.
    pub(super) async fn with_features(
        &self,
        id: &str,
        d: &Deferred,
        proven: Option<&Path>,
        caller_env: &[(String, String)],
    ) -> Result<Option<Vec<String>>, ApiError> {
        let help = help_program(true, Stage::Checked, None, proven);
        let features = self.features(&d.agent, help, caller_env).await;
        if features == crate::agents::Features::default() {
            return Ok(None);
        }
        let name = &d.agent.name;
        let launch = crate::agents::build(&d.agent, &d.mode, &features, None, || {
            d.session_id
                .clone()
                .unwrap_or_else(crate::agents::uuid::new_v4)
        })
        .map_err(|e| ApiError::new(ErrorCode::LaunchFailed, format!("agent `{name}`: {e}")))?;
        let mut argv = launch.argv.clone();
        argv[0] = d.program.clone();
        if let Some(t) = self.state.lock().unwrap().tabs.get_mut(id) {
            t.command = launch.argv;
            if launch.session_id.is_some() {
                t.session_id = launch.session_id;
            }
        }
        Ok(Some(argv))
    }

    /// What the installed agent supports, from `program`'s `--help` (cached
    /// by binary and mtime); nothing without one (see `agents::help_gate`).
    /// Only built-in agents' own programs are asked.
    async fn features(
        &self,
        agent: &ResolvedAgent,
        program: Option<std::path::PathBuf>,
        caller_env: &[(String, String)],
    ) -> crate::agents::Features {
        let Some(kind) = crate::agents::Kind::of(&agent.name).filter(|_| agent.builtin) else {
            return Default::default();
        };
        let Some(program) = program else {
            return Default::default();
        };
        let detector = self.detector.clone();
        let env = crate::agents::HelpEnv::from_pairs(caller_env);
        tokio::task::spawn_blocking(move || detector.features(kind, &program, &env))
            .await
            .unwrap_or_default()
    }
}

/// The agent's own variables, with opencode's `config_model` merged into
/// the `OPENCODE_CONFIG_CONTENT` the user already has.
fn agent_env(
    agent: &ResolvedAgent,
    caller_env: &[(String, String)],
) -> Result<std::collections::BTreeMap<String, String>, ApiError> {
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
