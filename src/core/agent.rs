//! Starting and restarting agents, at the edge: gather the facts each
//! step of `planning` decides on (the folder, the config, the program on
//! PATH and what it supports, the new worktree's setup), off the async
//! workers, and carry out what it decided. A worktree made for a start is
//! held by a [`FreshWorktree`] guard until the launch keeps it.

use std::path::Path;
use std::sync::Arc;

use super::caller::Caller;
use super::fresh_worktree::FreshWorktree;
use super::launch_plan::{Deferred, Plan};
use super::planning::{self, AgentCommand, Refusal, SetupStep};
use super::programs::{canonical_folder, find_program, path_of};
use super::Core;
use crate::agents::help_gate::{help_program, Stage};
use crate::agents::{Mode, Reported};
use crate::config::ResolvedAgent;
use crate::protocol::api::{ApiError, ErrorCode, TabKind};
use crate::protocol::replies::Started;

/// What a start names: an agent, or a program to run as it is.
pub struct Named {
    /// The agent's name, or the program's word (a name on PATH, or a path).
    pub name: String,
    /// `name` is a program run as it is (`nerdr agent -- CMD`).
    pub program: bool,
    /// The tab's name (`nerdr agent --name`), checked as `nerdr rename`
    /// checks one; its default without.
    pub tab_name: Option<String>,
    /// A past conversation to resume (`nerdr search --open`), in the
    /// folder it ran in rather than a worktree of its own.
    pub resume: Option<crate::protocol::search::ResumeAt>,
}

impl Core {
    /// Start agent (or program) `named` in a new tab of `folder`'s
    /// session. Refused by its sandbox check, the tab stays (with the
    /// reason) and the reply names it, `refused`.
    pub async fn start_agent(
        self: &Arc<Self>,
        caller: &Caller,
        folder: &Path,
        named: Named,
        extra_args: Vec<String>,
        caller_env: Vec<(String, String)>,
        want_worktree: bool,
    ) -> Result<Started, ApiError> {
        let id = self.new_tab_id();
        let started = self
            .start_named(
                caller,
                folder,
                &named,
                &id,
                extra_args,
                caller_env,
                want_worktree,
            )
            .await;
        match started {
            Err(e) if self.is_refused(&id) => Ok(Started {
                tab: id,
                refused: Some(e.message),
                session: None,
            }),
            other => {
                // A name kept for a tab that never came in is let go.
                let mut state = self.state.lock().unwrap();
                if !state.tabs.contains_key(&id) {
                    state.kept_names.remove(&id);
                }
                drop(state);
                other
            }
        }
    }

    /// Whether tab `id` is there, left refused by its sandbox check.
    fn is_refused(&self, id: &str) -> bool {
        let state = self.state.lock().unwrap();
        state
            .tabs
            .get(id)
            .is_some_and(|t| t.state == crate::protocol::api::TabState::Refused)
    }

    #[allow(clippy::too_many_arguments)]
    async fn start_named(
        self: &Arc<Self>,
        caller: &Caller,
        folder: &Path,
        named: &Named,
        id: &str,
        extra_args: Vec<String>,
        caller_env: Vec<(String, String)>,
        want_worktree: bool,
    ) -> Result<Started, ApiError> {
        let caller_env = self.environment_for(caller, caller_env);
        let canonical = {
            let asked = folder.to_path_buf();
            super::edge::gather_at("resolving a new agent's folder", folder, move || {
                canonical_folder(&asked)
            })
            .await
        };
        let settings = match named.program {
            true => self.program_settings(&named.name).await?,
            false => self.settings_for(&named.name, true).await?,
        }
        .map(|(agent, config)| (agent, config.tabs.worktree));
        let admitted = planning::admit_agent(planning::Admission {
            caller: caller.kind(),
            asked: folder,
            folder: canonical,
            settings,
            want_worktree,
        })
        .map_err(|r| self.refused(caller, None, r))?;
        let (folder, agent) = (admitted.folder, admitted.agent);
        // A resumed conversation runs where it ran: claude finds its log
        // by that folder.
        let resumed_in = match &named.resume {
            Some(_) if named.program => {
                return Err(ApiError::new(
                    ErrorCode::BadRequest,
                    "a program run as it is has no conversation to resume: name its agent",
                ))
            }
            Some(r) => {
                // Two programs writing one conversation's log would mix
                // it (codex refuses; claude does not): one tab at a time.
                let holder = {
                    let state = self.state.lock().unwrap();
                    let mut open: Vec<(String, String)> = state
                        .tabs
                        .values()
                        .filter(|t| t.session_id.as_deref() == Some(r.session.as_str()))
                        .map(|t| (t.id.clone(), t.name.clone()))
                        .collect();
                    open.sort();
                    open.into_iter().next()
                };
                if let Some((tab, name)) = holder {
                    return Err(ApiError::new(
                        ErrorCode::BadRequest,
                        format!(
                            "tab {tab} ({name}) has conversation {} open: go to that tab \
                             (`nerdr read {tab}`, or the window), or close it (`nerdr close \
                             {tab}`) and resume it again",
                            r.session
                        ),
                    ));
                }
                let asked = r.cwd.clone();
                let found = super::edge::gather_at("resolving a conversation's folder", &r.cwd, {
                    move || canonical_folder(&asked)
                })
                .await;
                Some(found.ok_or_else(|| {
                    ApiError::new(
                        ErrorCode::BadRequest,
                        format!(
                            "the conversation ran in {}, which no longer exists or is not a \
                             folder: it can be resumed only there",
                            r.cwd.display()
                        ),
                    )
                })?)
            }
            None => None,
        };
        let id = id.to_string();
        if let Some(n) = &named.tab_name {
            let mut state = self.state.lock().unwrap();
            let taken: Vec<&str> = state
                .session_tabs(&folder)
                .into_iter()
                .map(|t| t.name.as_str())
                .collect();
            let by_sandboxed = caller.kind() == super::privilege::CallerKind::Sandboxed;
            super::handles::check_name(n, &taken, by_sandboxed)?;
            // Taken by `State::insert` when the tab comes in.
            state.kept_names.insert(id.clone(), n.clone());
        }
        // Decide everything that can fail before making a worktree.
        let command = self
            .command_for(
                &agent,
                extra_args,
                named
                    .resume
                    .as_ref()
                    .map_or(Mode::New, |r| Mode::Resume(r.session.clone())),
                None,
                &caller_env,
                resumed_in.as_ref().unwrap_or(&folder),
                named.program,
            )
            .await?;
        let (cwd, worktree) = if let Some(dir) = resumed_in {
            (dir, None)
        } else if admitted.worktree {
            self.make_worktree(&folder, &id).await?
        } else {
            (folder.clone(), None)
        };
        // From here every way out that does not keep the worktree removes
        // it: `settle`, once, for all of them.
        let mut fresh = FreshWorktree::new(self, &id, worktree.clone());
        let started: Result<Started, ApiError> = async {
            // A program run as it is has no settings to change.
            if !named.program {
                let now = self.settings_of(&named.name).await?.ok().map(|(a, _)| a);
                planning::settings_unchanged(&agent, now.as_ref(), &self.paths.config_file())?;
            }
            let step = match &worktree {
                Some(w) => {
                    let facts = self.setup_facts(agent.sandboxed, &w.path).await?;
                    planning::setup_step(facts)?
                }
                None => SetupStep::None,
            };
            // An agent whose setup is to run waits for it (`setup_gate`).
            let argv = match (&step, &worktree) {
                (SetupStep::RunFirst(setup) | SetupStep::Ask { setup, .. }, Some(w)) => {
                    let token = self.open_gate(&id, &w.path, setup);
                    super::setup::gated(setup, &token, &command.argv)
                }
                _ => command.argv.clone(),
            };
            let reply = self
                .launch(
                    caller,
                    Plan {
                        id: id.clone(),
                        folder,
                        cwd,
                        worktree: worktree.clone(),
                        name: agent.name.clone(),
                        command: command.display,
                        argv,
                        caller_env,
                        agent_env: command.agent_env,
                        sandboxed: agent.sandboxed,
                        program: named.program,
                        kind: TabKind::Agent,
                        parent: None,
                        // What a tab's program starts, it controls: held as
                        // that tab (F4 one hop away).
                        started_by: self.line_of(caller.tab()),
                        session_id: command.session_id,
                        reported: None,
                        probe: command.probe,
                        deferred: command.deferred,
                        detect: Some(agent.detect.clone()),
                        reports_dir: agent.worktree_data_dir.clone(),
                    },
                    &mut fresh,
                )
                .await?;
            match (step, &worktree) {
                (SetupStep::Ask { setup, once }, Some(w)) => {
                    self.ask_setup(&id, &w.path, &setup, once)
                }
                (SetupStep::RunFirst(_), Some(_)) => {
                    // Approved before: no question; it runs now, and a
                    // failure to start is the agent's warning.
                    let _ = self.run_gated_setup(caller, &id).await;
                }
                (SetupStep::Skip(setup), _) => self.warn_setup_skipped(&id, &setup),
                _ => {}
            }
            Ok(reply)
        }
        .await;
        fresh.settle(started).await
    }

    /// A sandboxed agent's tab says why its worktree's setup never ran.
    fn warn_setup_skipped(&self, tab: &str, setup: &super::setup::Setup) {
        let text = format!(
            "this repository's worktree setup (`{}` from {}) was not run: nerdr runs \
             setups outside every sandbox, and this agent is sandboxed; run it inside \
             the agent's sandbox if it needs it",
            super::setup::shown(setup),
            super::setup::FILE
        );
        if let Some(t) = self.state.lock().unwrap().tabs.get_mut(tab) {
            t.warning = Some(text);
        }
        self.changed();
    }

    /// The error a refused launch answers with; a refusal of the privilege
    /// model is journaled as one.
    pub(super) fn refused(&self, caller: &Caller, tab: Option<&str>, r: Refusal) -> ApiError {
        match r {
            Refusal::Denied { op, why } => self.refuse(caller, op, tab, why),
            Refusal::Error(e) => e,
        }
    }

    /// Agent `name`'s settings as the config has them now (read off the
    /// async workers), with the config; `Ok(Err)`: the config's error.
    pub(super) async fn settings_of(
        &self,
        name: &str,
    ) -> Result<Result<(ResolvedAgent, crate::config::Config), String>, ApiError> {
        self.settings_for(name, false).await
    }

    /// `settings_of` for `nerdr agent NAME`, whose unknown NAME may be a
    /// program to run as it is: the error says how.
    async fn settings_for(
        &self,
        name: &str,
        run_hint: bool,
    ) -> Result<Result<(ResolvedAgent, crate::config::Config), String>, ApiError> {
        use crate::config::ConfigError;
        let (file, name) = (self.paths.config_file(), name.to_string());
        blocking(move || {
            let config = crate::config::load(&file).map_err(|e| e.to_string())?;
            let agent = config.resolve_agent(&name).map_err(|e| match e {
                ConfigError::UnknownAgent {
                    name,
                    path,
                    configured,
                    ..
                } => ConfigError::UnknownAgent {
                    name,
                    path,
                    configured,
                    run_hint,
                }
                .to_string(),
                e => e.to_string(),
            })?;
            Ok((agent, config))
        })
        .await
    }

    /// A program run as it is (`nerdr agent -- CMD`), as an agent without
    /// config, with the config (for `[tabs] worktree`); `Ok(Err)`: the
    /// config's error.
    async fn program_settings(
        &self,
        word: &str,
    ) -> Result<Result<(ResolvedAgent, crate::config::Config), String>, ApiError> {
        let (file, word) = (self.paths.config_file(), word.to_string());
        blocking(move || {
            let config = crate::config::load(&file).map_err(|e| e.to_string())?;
            Ok((crate::config::program_agent(&word)?, config))
        })
        .await
    }

    /// What a new worktree's setup is to the launch: its file, whether
    /// sandboxed agents worked in the repository, and whether the person
    /// approved this content before.
    async fn setup_facts(
        &self,
        sandboxed: bool,
        worktree: &Path,
    ) -> Result<planning::SetupFacts, ApiError> {
        let (state_dir, path) = (self.paths.state_dir.clone(), worktree.to_path_buf());
        let (setup, tainted) = blocking(move || {
            (
                super::setup::read(&path),
                crate::git::guard::has_history(&state_dir, &path),
            )
        })
        .await?;
        let approved = match &setup {
            Ok(Some(s)) => self.state.lock().unwrap().approvals.is_approved(&s.hash),
            _ => false,
        };
        Ok(planning::SetupFacts {
            sandboxed,
            setup,
            tainted,
            approved,
        })
    }

    /// The agent's command line: its program (and the one whose `--help`
    /// may run) found on the caller's PATH, what that supports, then
    /// `planning::agent_command`.
    // The facts of one launch, each from the caller; a struct for them
    // would only be built here.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn command_for(
        &self,
        agent: &ResolvedAgent,
        extra_args: Vec<String>,
        mode: Mode,
        reported: Option<Reported>,
        caller_env: &[(String, String)],
        cwd: &Path,
        program_run: bool,
    ) -> Result<AgentCommand, ApiError> {
        let path_var = path_of(caller_env);
        let (program, found) = {
            let (agent, path_var, cwd) = (agent.clone(), path_var.clone(), cwd.to_path_buf());
            blocking(move || {
                let program = find_program(&agent.command[0], &path_var, &cwd);
                let found = crate::agents::program_word(&agent)
                    .and_then(|w| find_program(w, &path_var, &cwd));
                (program, found)
            })
            .await?
        };
        let features = match &program {
            Some(_) => {
                let help = help_program(agent.sandboxed, Stage::Building, found.as_deref(), None);
                self.features(agent, help, caller_env).await
            }
            // Refused below: nothing of it runs.
            None => Default::default(),
        };
        planning::agent_command(planning::CommandFacts {
            agent,
            extra_args,
            mode,
            reported,
            caller_env,
            path_var: &path_var,
            program,
            features,
            new_session_id: crate::agents::uuid::new_v4(),
            config_file: &self.paths.config_file(),
            program_run,
        })
    }

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

/// Blocking filesystem or process work, off the async workers.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ApiError> {
    super::held::assert_unlocked("gathering a launch's facts");
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))
}
