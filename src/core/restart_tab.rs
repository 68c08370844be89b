//! Restarting a tab's agent in place (`nerdr restart`): the same tab and
//! worktree, its conversation resumed, with the current settings.

use std::sync::Arc;

use super::caller::Caller;
use super::fresh_worktree::FreshWorktree;
use super::launch_plan::Plan;
use super::not_found::no_tab;
use super::planning;
use super::Core;
use crate::agents::{Mode, Reported};
use crate::protocol::api::{ApiError, TabKind};
use crate::protocol::replies::Started;

impl Core {
    /// Start tab `tab`'s agent again, in the same tab and worktree, resuming
    /// its conversation: by the id nerdr recorded, else the agent's own
    /// report of how to resume it, else its "continue" mode. With the
    /// current settings, as after a change of config.
    pub async fn restart_tab(
        self: &Arc<Self>,
        caller: &Caller,
        tab: &str,
        caller_env: Vec<(String, String)>,
    ) -> Result<Started, ApiError> {
        let old = {
            let state = self.state.lock().unwrap();
            let t = state.tabs.get(tab).ok_or_else(|| no_tab(tab))?;
            t.saved(true)
        };
        planning::restartable(tab, old.kind)?;
        let caller_env = self.environment_for(caller, caller_env);
        let settings = match old.program {
            // Its command as it ran (the program's word, then its
            // arguments): no config names it.
            true => {
                crate::config::program_agent(old.command.first().map_or("", |w| w)).map(|mut a| {
                    a.command = old.command.clone();
                    a
                })
            }
            false => self.settings_of(&old.agent).await?.map(|(a, _)| a),
        };
        let agent = planning::admit_restart(caller.kind(), settings)
            .map_err(|r| self.refused(caller, Some(tab), r))?;
        let mode = match &old.session_id {
            Some(id) => Mode::Resume(id.clone()),
            None => Mode::Continue,
        };
        let reported = old.reported.clone().map(|argv| Reported { argv });
        let cwd = old.cwd.clone().unwrap_or_else(|| old.folder.clone());
        let command = self
            .command_for(
                &agent,
                Vec::new(),
                mode.clone(),
                reported,
                &caller_env,
                &cwd,
                old.program,
            )
            .await?;
        if !old.program {
            let now = self.settings_of(&agent.name).await?.ok().map(|(a, _)| a);
            planning::settings_unchanged(&agent, now.as_ref(), &self.paths.config_file())?;
        }
        let _ = self.host.stop(tab).await;
        self.host.forget(tab);
        // Started again as it is: no gate of its first start may type into
        // the agent now.
        self.forget_gate(tab);
        {
            let mut state = self.state.lock().unwrap();
            // Its place too: the tab keeps its number in the windows.
            state.remove_keeping_place(tab);
            // A restart (after fixing the sandbox, say) is watched afresh.
            state.turns.forget(tab);
        }
        tracing::info!(tab = %tab, agent = %old.agent, mode = ?mode, "restarting agent");
        let folder = old.folder.clone();
        let started = self
            .launch(
                caller,
                Plan {
                    id: old.id,
                    folder: old.folder,
                    cwd,
                    // The tab's own worktree, with its work: never removed by
                    // a restart that fails.
                    worktree: old.worktree,
                    name: old.agent,
                    command: command.display,
                    argv: command.argv,
                    caller_env,
                    agent_env: command.agent_env,
                    sandboxed: agent.sandboxed,
                    program: old.program,
                    kind: TabKind::Agent,
                    parent: None,
                    // Its own, whoever restarts it.
                    started_by: old.started_by,
                    session_id: command.session_id.or(old.session_id),
                    reported: old.reported,
                    probe: command.probe,
                    deferred: command.deferred,
                    detect: Some(agent.detect.clone()),
                    reports_dir: agent.worktree_data_dir.clone(),
                },
                &mut FreshWorktree::none(),
            )
            .await;
        // A launch that failed before it recorded the tab leaves its place.
        self.state.lock().unwrap().forget_place(&folder, tab);
        if started.as_ref().is_ok_and(|s| s.refused.is_none()) {
            self.review_restarted(tab);
            self.spinoff_restarted(tab);
        }
        started
    }
}
