//! An agent held until its worktree's setup ended (the decisions are
//! `setup`'s): the gates the core keeps open, the setup's own tab, and
//! what happens when the setup exits, is refused or cannot start. A gate
//! is opened with the agent's tab; the setup's tab is known before its
//! program starts, so an exit that comes at once is not missed.
//!
//! Gates live in the core's memory only: an agent still waiting when the
//! core restarts waits on (its tab says for what) until `nerdr restart`
//! or `nerdr close`; its setup runs no second time behind the person's
//! back.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::caller::Caller;
use super::fresh_worktree::FreshWorktree;
use super::launch_plan::{Plan, TerminalTab};
use super::not_found::no_tab;
use super::programs::{find_program, path_of};
use super::setup::{after, Ended, Setup};
use super::Core;
use crate::protocol::api::{ApiError, ErrorCode};
use crate::protocol::handshake::random_hex;
use crate::protocol::replies::Started;

/// The open gates, by agent tab, and the setup tabs they wait on.
#[derive(Default)]
pub struct Gates {
    by_agent: HashMap<String, Gate>,
    /// Setup tab -> the agent tab it holds.
    by_setup: HashMap<String, String>,
}

struct Gate {
    /// The line that lets the agent start (`setup::gated`).
    token: String,
    setup: Setup,
    worktree: PathBuf,
}

impl Core {
    /// A gate for agent tab `tab`, whose worktree `worktree` has `setup`:
    /// the token its `setup::gated` command line waits for.
    pub(super) fn open_gate(&self, tab: &str, worktree: &Path, setup: &Setup) -> String {
        let token = random_hex(16);
        let gate = Gate {
            token: token.clone(),
            setup: setup.clone(),
            worktree: worktree.to_path_buf(),
        };
        let mut state = self.state.lock().unwrap();
        state.setup_gates.by_agent.insert(tab.to_string(), gate);
        token
    }

    /// Run the setup agent tab `tab` waits on, now (approved): in a tab
    /// of its own next to the agent's, so its output can be read and its
    /// exit seen. A setup that cannot start lets the agent go, warned.
    pub(super) async fn run_gated_setup(
        self: &Arc<Self>,
        caller: &Caller,
        tab: &str,
    ) -> Result<Started, ApiError> {
        let id = self.new_tab_id();
        let gate = {
            let mut state = self.state.lock().unwrap();
            let g = state.setup_gates.by_agent.get(tab);
            let g = g.map(|g| (g.setup.clone(), g.worktree.clone()));
            if g.is_some() {
                state
                    .setup_gates
                    .by_setup
                    .insert(id.clone(), tab.to_string());
            }
            g
        };
        let Some((setup, worktree)) = gate else {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!("tab {tab} waits for no worktree setup"),
            ));
        };
        let started = self
            .start_setup_tab(caller, &id, tab, &worktree, &setup)
            .await;
        if let Err(e) = &started {
            self.state.lock().unwrap().setup_gates.by_setup.remove(&id);
            self.release(tab, Ended::NotStarted(e.message.clone()))
                .await;
        }
        started
    }

    async fn start_setup_tab(
        self: &Arc<Self>,
        caller: &Caller,
        id: &str,
        agent: &str,
        worktree: &Path,
        setup: &Setup,
    ) -> Result<Started, ApiError> {
        let folder = {
            let state = self.state.lock().unwrap();
            let t = state.tabs.get(agent).ok_or_else(|| no_tab(agent))?;
            t.folder.clone()
        };
        let env = self.environment_for(caller, Vec::new());
        let found = {
            let (word, path_var, cwd) = (setup.argv[0].clone(), path_of(&env), worktree.to_owned());
            tokio::task::spawn_blocking(move || find_program(&word, &path_var, &cwd))
                .await
                .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?
        };
        let program = found.ok_or_else(|| {
            ApiError::new(
                ErrorCode::LaunchFailed,
                format!("`{}` is not on PATH", setup.argv[0]),
            )
        })?;
        let mut argv = setup.argv.clone();
        argv[0] = program.to_string_lossy().into_owned();
        self.launch(
            caller,
            Plan::terminal(TerminalTab {
                id: id.to_string(),
                folder,
                cwd: worktree.to_path_buf(),
                name: "setup",
                command: setup.argv.clone(),
                argv,
                caller_env: env,
                sandboxed: false,
                parent: agent.to_string(),
                // The repository's setup, which nerdr runs for the person.
                started_by: Vec::new(),
            }),
            &mut FreshWorktree::none(),
        )
        .await
    }

    /// Tab `tab`'s program exited with `code`: if it was a setup an agent
    /// waits on, let the agent go, and take the setup's tab away if it
    /// succeeded.
    pub(super) fn setup_exited(self: &Arc<Self>, tab: &str, code: i32) {
        let agent = self.state.lock().unwrap().setup_gates.by_setup.remove(tab);
        let Some(agent) = agent else { return };
        let (core, tab) = (self.clone(), tab.to_string());
        tokio::spawn(async move {
            let ended = Ended::Ran {
                tab: tab.clone(),
                code,
            };
            if core.release(&agent, ended).await {
                if let Err(e) = core.close_tab(&tab, false, false).await {
                    tracing::warn!(tab = %tab, error = %e.message, "the setup's tab stays");
                }
            }
        });
    }

    /// Tab `tab` is closed: nothing waits at its gate any more (a setup
    /// it was waiting on runs to its end, and its tab stays).
    pub(super) fn forget_gate(&self, tab: &str) {
        let mut state = self.state.lock().unwrap();
        state.setup_gates.by_agent.remove(tab);
        state.setup_gates.by_setup.retain(|_, agent| agent != tab);
    }

    /// The person refused the setup agent tab `tab` waits on.
    pub(super) async fn setup_denied(&self, tab: &str) {
        self.release(tab, Ended::Denied).await;
    }

    /// Let the agent of tab `tab` start, warned of how its setup `ended`
    /// where that went wrong; `true` when the setup's tab goes (it
    /// succeeded). Once per gate: a gate already released does nothing.
    async fn release(&self, tab: &str, ended: Ended) -> bool {
        let gate = self.state.lock().unwrap().setup_gates.by_agent.remove(tab);
        let Some(gate) = gate else { return false };
        let (closes, warning) = after(&gate.setup, &ended);
        if let Some(w) = &warning {
            tracing::warn!(tab = %tab, "{w}");
            if let Some(t) = self.state.lock().unwrap().tabs.get_mut(tab) {
                t.warning = Some(w.clone());
            }
            self.changed();
        }
        tracing::info!(tab = %tab, ended = ?ended, "the agent's worktree setup ended; the agent starts");
        if let Err(e) = self.type_text(tab, gate.token.into_bytes(), true).await {
            tracing::warn!(tab = %tab, error = %e.message, "the agent's gate could not be opened");
        }
        closes
    }
}
