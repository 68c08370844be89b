//! `nerdr switch TAB AGENT`, the core's side (the rules are
//! `crate::switch`). In this order, so a refusal stops nothing:
//! 1. the tab and the new agent's settings are read, and
//!    `switch::rules` decides (a sandboxed tab only to a sandboxed agent;
//!    a conversation nerdr cannot read needs a handoff given);
//! 2. the handoff is had: the one given, else built from the old agent's
//!    conversation (`handoff::find`, off the async workers) while that
//!    agent still runs;
//! 3. the new agent's command is built with its `[agents.<name>]`
//!    settings, as a new tab's is (`AgentCommand::new_tab`);
//! 4. only then is the old agent stopped (its scope, all its processes),
//!    and the new one launched in the same tab, worktree and branch, as
//!    `nerdr restart` does; the handoff is typed once it is idle
//!    (`first_prompt`), and the switch goes in `switches.json`.
//!
//! Steps 4 on run in a task of their own: a sandboxed agent switching its
//! own tab is among the processes stopped, and its connection's end must
//! not leave the tab half switched.

use std::sync::Arc;

use super::caller::Caller;
use super::fresh_worktree::FreshWorktree;
use super::privilege::Operation;
use super::Core;
use crate::agents::Mode;
use crate::handoff::rules::{self as handoff_rules, Build, Reader};
use crate::protocol::api::{ApiError, ErrorCode, SwitchInfo, SwitchTab, Switched, TabKind};
use crate::switch::rules::{self, Handoff};
use crate::switch::store;

impl Core {
    /// `nerdr switch`, allowed by the matrix.
    pub(super) async fn switch_tab(
        self: &Arc<Self>,
        caller: &Caller,
        s: SwitchTab,
    ) -> Result<Switched, ApiError> {
        let tab = s.tab.clone();
        let (terminal, sandboxed, from, line) = {
            let state = self.state.lock().unwrap();
            let t = state
                .tabs
                .get(&tab)
                .ok_or_else(|| super::not_found::no_tab(&tab))?;
            (
                t.kind == TabKind::Terminal,
                t.sandboxed,
                t.agent.clone(),
                t.started_by.clone(),
            )
        };
        let agent = match self.settings_of(&s.agent).await? {
            Ok((a, _)) => a,
            Err(e) => return Err(ApiError::new(ErrorCode::Config, e)),
        };
        // A terminal has no conversation: the rules refuse it below.
        let src = match terminal {
            true => None,
            false => Some(self.handoff_source(caller, Some(&tab))?),
        };
        let given = s.text.as_ref().is_some_and(|t| !t.trim().is_empty());
        let handoff = match (&src, s.no_handoff, given) {
            (None, _, _) | (_, true, _) => Handoff::None,
            (_, false, true) => Handoff::Given,
            (Some(src), false, false) => match self.conversation_reader(src).await? {
                (kind, _) if matches!(handoff_rules::build(kind, false), Build::Refuse(_)) => {
                    Handoff::Unreadable
                }
                _ => Handoff::FromConversation,
            },
        };
        let facts = rules::Facts {
            tab: &tab,
            terminal,
            sandboxed,
            from: &from,
            to: &agent.name,
            to_sandboxed: agent.sandboxed,
            handoff,
        };
        if let Some(why) = rules::refusal(&facts) {
            return Err(match sandboxed && !agent.sandboxed && !terminal {
                // A sandbox rule: journaled as the matrix's refusals are.
                true => self.refuse(
                    caller,
                    Operation::Switch,
                    Some(&tab),
                    rules::SANDBOXED_STAYS,
                ),
                false => ApiError::new(ErrorCode::BadRequest, why),
            });
        }
        let src = src.expect("a terminal is refused above");
        // The settings the launch uses, checked again for a sandboxed
        // caller (the config may have changed since the matrix decided).
        super::planning::admit_switch(caller.kind(), Ok(agent.clone()))
            .map_err(|r| self.refused(caller, Some(&tab), r))?;
        let how = handoff_rules::give_one(handoff_rules::Asked::Switch {
            tab: &tab,
            to: &agent.name,
        });
        let text = match handoff {
            Handoff::None => None,
            _ => Some(
                self.handoff_text(caller, &src, s.text, &s.env, &how)
                    .await
                    .map_err(|e| {
                        ApiError::new(
                            e.code,
                            format!("{}; or switch without one (`--no-handoff`)", e.message),
                        )
                    })?,
            ),
        };
        let by = text
            .as_ref()
            .and_then(|(_, built)| self.handed_by(caller, &src, *built));
        let caller_env = self.environment_for(caller, s.env);
        // From the session folder, as any launch's program is found (never
        // from the worktree, whose files may be a sandboxed agent's).
        let command = self
            .command_for(
                &agent,
                Vec::new(),
                Mode::New,
                None,
                &caller_env,
                &src.folder,
                false,
            )
            .await?;
        let now = self.settings_of(&agent.name).await?.ok().map(|(a, _)| a);
        super::planning::settings_unchanged(&agent, now.as_ref(), &self.paths.config_file())?;
        // Its own line of starters, whoever switches it, as a restart
        // keeps it: a tab a sandboxed author started stays held as that
        // author (F4) under any agent.
        let plan = command
            .new_tab(
                &tab,
                src.folder.clone(),
                src.cwd.clone(),
                src.worktree.clone(),
                &agent,
                caller_env,
            )
            .started_by(line);
        let (core, caller) = (self.clone(), caller.clone());
        tokio::spawn(async move {
            let from = src.agent.clone();
            let folder = src.folder.clone();
            let tab = src.id.clone();
            let _ = core.host.stop(&tab).await;
            core.host.forget(&tab);
            // No gate of the old agent's first start may type into the new.
            core.forget_gate(&tab);
            {
                let mut state = core.state.lock().unwrap();
                // Its place and name: the tab keeps its number.
                state.remove_keeping_place(&tab);
                state.turns.forget(&tab);
            }
            tracing::info!(tab = %tab, from = %from, to = %agent.name, "switching agent");
            // The tab's own worktree, with its work: never removed by a
            // launch that fails.
            let started = core.launch(&caller, plan, &mut FreshWorktree::none()).await;
            core.state.lock().unwrap().forget_place(&folder, &tab);
            let started = started?;
            core.record_switch(&tab, &from, &agent.name).await;
            let handoff = text.map(|(text, built)| {
                let reader = match agent.sandboxed {
                    true => Reader::SandboxedAgent,
                    false => Reader::Agent,
                };
                let note = handoff_rules::note(src.sandboxed, reader);
                let prompt = crate::handoff::as_prompt_from(&text, note, by.as_deref());
                (prompt, text, built)
            });
            // The handoff first, then the spinoffs' results kept for the
            // tab (its old program may have ended with some waiting): each
            // is a turn of the new agent's.
            let runs = started.refused.is_none();
            let first = handoff.as_ref().filter(|_| runs).map(|(p, _, _)| p.clone());
            if runs {
                let (core, tab) = (core.clone(), tab.clone());
                tokio::spawn(async move {
                    if let Some(prompt) = first {
                        core.type_first_prompt(
                            &tab,
                            prompt,
                            "the handoff",
                            "the `handoff` of what `nerdr switch --json` printed",
                        )
                        .await;
                    }
                    core.deliver_waiting_if_any(&tab).await;
                });
            }
            let (typed, built) = match handoff {
                Some((_, text, built)) => (Some(text), built),
                None => (None, false),
            };
            Ok(Switched {
                tab,
                from,
                to: agent.name.clone(),
                handoff: typed,
                built,
                refused: started.refused,
            })
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?
    }

    /// Tab `tab` switched from agent `from` to `to`: in `switches.json`
    /// and in the tab list. A store nerdr cannot write is logged: the
    /// switch itself is done.
    async fn record_switch(&self, tab: &str, from: &str, to: &str) {
        let at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let switch = store::Switch {
            from: from.to_string(),
            to: to.to_string(),
            at,
        };
        let open: Vec<String> = self.state.lock().unwrap().tabs.keys().cloned().collect();
        let path = store::file(&self.paths.state_dir);
        let tab2 = tab.to_string();
        let saved = super::edge::gather("updating switches.json", move || {
            store::update(&path, |st| {
                st.add(&tab2, switch, &open);
                st.tabs.clone()
            })
        })
        .await;
        match saved {
            Ok(all) => self.state.lock().unwrap().switches = all,
            Err(e) => tracing::warn!(tab = %tab, error = %e, "switch not recorded"),
        }
        self.changed();
    }
}

/// A row of `nerdr tabs` (and of a window's list) with its switches, each
/// one's time in RFC 3339 as the row's other times (the file keeps
/// seconds).
pub(super) fn marked(
    switches: &std::collections::BTreeMap<String, Vec<store::Switch>>,
    mut info: crate::protocol::api::TabInfo,
) -> crate::protocol::api::TabInfo {
    info.switches = switches
        .get(&info.id)
        .into_iter()
        .flatten()
        .map(|s| SwitchInfo {
            from: s.from.clone(),
            to: s.to.clone(),
            at: super::clock::rfc3339_seconds(s.at),
        })
        .collect();
    info
}
