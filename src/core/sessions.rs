//! The requests about sessions as a whole and the core itself: the tab
//! list and the session list (as the caller may see them), which session
//! a folder a request names belongs to, a terminal's size, quitting a
//! session, the core's status and the agents that can be started. The
//! dispatcher (`api`) calls them once the privilege matrix let the request
//! through.

use std::path::{Path, PathBuf};

use super::caller::Caller;
use super::not_found::no_tab;
use super::privilege::{self, Operation, Verdict};
use super::session_list::{self, TabFacts};
use super::Core;
use crate::protocol::api::{ApiError, CoreStatus, ErrorCode, SessionInfo, TabInfo, TabState};
use crate::protocol::replies::{AgentNames, Done};

impl Core {
    /// The agents that can be started: the built-in ones, then the
    /// configured ones by other names.
    pub(super) async fn agent_names(&self) -> Result<AgentNames, ApiError> {
        let file = self.paths.config_file();
        let config = super::edge::gather("reading the config", move || crate::config::load(&file))
            .await
            .map_err(|e| ApiError::new(ErrorCode::Config, e.to_string()))?;
        let mut names: Vec<String> = crate::config::builtin_names()
            .iter()
            .map(|s| s.to_string())
            .collect();
        names.extend(
            config
                .agents
                .keys()
                .filter(|k| !names.contains(k))
                .cloned()
                .collect::<Vec<_>>(),
        );
        let programs = names
            .iter()
            .filter_map(|n| {
                let agent = config.resolve_agent(n).ok()?;
                Some((n.clone(), crate::agents::program_word(&agent)?.to_string()))
            })
            .collect();
        Ok(AgentNames {
            agents: names,
            programs,
        })
    }

    pub(super) fn status(&self) -> CoreStatus {
        let state = self.state.lock().unwrap();
        CoreStatus {
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION").into(),
            sessions: state.sessions.len(),
            running: state
                .tabs
                .values()
                .filter(|t| t.pid.is_some() && t.exit_code.is_none())
                .count(),
            tabs: state.tabs.len(),
            activated: self.activated,
            mode: self.host.mode(),
        }
    }

    pub(super) fn tabs(
        &self,
        caller: &Caller,
        folder: Option<&Path>,
        all: bool,
    ) -> Result<Vec<TabInfo>, ApiError> {
        let state = self.state.lock().unwrap();
        let rows = match (all, folder) {
            (true, _) => state.all_tabs(),
            (false, Some(f)) => state.session_tabs(f),
            (false, None) => {
                return Err(ApiError::new(
                    ErrorCode::BadRequest,
                    "tabs needs a folder or `all`",
                ))
            }
        };
        let seen = |t: &super::state::Tab| {
            privilege::decide(
                caller.kind(),
                Operation::See,
                super::request_facts::target_kind(caller, t, &state),
            ) == Verdict::Allow
        };
        Ok(rows
            .into_iter()
            .filter(|t| seen(t))
            .map(|t| {
                state
                    .review_links
                    .mark(super::spinoff::marked(&state.spinoffs, t))
            })
            .map(|t| super::switch::marked(&state.switches, t))
            .map(|t| super::handoff::marked(&state.handed, t))
            .collect())
    }

    /// `nerdr sessions`: the live sessions the caller may see, its tabs
    /// counted (`session_list` decides).
    pub(super) fn sessions(&self, caller: &Caller) -> Vec<SessionInfo> {
        let state = self.state.lock().unwrap();
        let live: Vec<(PathBuf, Vec<TabFacts>)> = state
            .live_sessions()
            .map(|folder| {
                let tabs = state
                    .session_tabs(folder)
                    .into_iter()
                    .map(|t| TabFacts {
                        target: super::request_facts::target_kind(caller, t, &state),
                        running: t.state == TabState::Running,
                        agent_state: t.agent_state(),
                    })
                    .collect();
                (folder.to_path_buf(), tabs)
            })
            .collect();
        drop(state);
        session_list::list(caller.kind(), &live)
    }

    /// The session folder `folder` (as a request names it) belongs to:
    /// canonical, off the async workers (a folder on a hung mount stalls
    /// only this request), then placed among the live sessions and the
    /// tabs' worktrees. A folder in no session is its own (a new session,
    /// canonical); one that cannot be resolved is the error, as named.
    pub(super) async fn placed(&self, folder: PathBuf) -> Result<PathBuf, PathBuf> {
        let at = folder.clone();
        let canonical = super::edge::gather_at("resolving a request's folder", &at, move || {
            std::fs::canonicalize(&folder)
                .ok()
                .filter(|f| f.is_dir())
                .ok_or(folder)
        })
        .await;
        canonical.map(|dir| self.state.lock().unwrap().session_of(&dir).unwrap_or(dir))
    }

    pub(super) fn resize(&self, tab: &str, rows: u16, cols: u16) -> Result<Done, ApiError> {
        if crate::protocol::clamp_size(rows, cols) != (rows, cols) {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                format!(
                    "terminal size {cols}x{rows} is out of range (2 to {} columns, 2 to {} rows)",
                    crate::protocol::MAX_COLS,
                    crate::protocol::MAX_ROWS
                ),
            ));
        }
        let mut state = self.state.lock().unwrap();
        let t = state.tabs.get_mut(tab).ok_or_else(|| no_tab(tab))?;
        t.screen.resize(rows, cols);
        state.snapshots.resized(tab);
        self.repaint_showing(&mut state, tab);
        drop(state);
        // An exited program has no terminal left to resize; its screen does.
        let _ = self.host.resize(tab, rows, cols);
        Ok(Done {})
    }

    /// Close every tab of the session at once and forget the session.
    /// Returns how many tabs closed, and what their worktrees hold that
    /// is not home yet (`nerdr close`'s notes).
    pub async fn quit_session(&self, folder: &Path) -> (usize, Vec<String>) {
        let ids: Vec<String> = self
            .state
            .lock()
            .unwrap()
            .sessions
            .get(folder)
            .cloned()
            .unwrap_or_default();
        let stops: Vec<_> = ids.iter().map(|id| self.host.stop(id)).collect();
        for s in stops {
            let _ = s.await;
        }
        for id in &ids {
            self.host.forget(id);
        }
        let removed: Vec<_> = {
            let mut state = self.state.lock().unwrap();
            ids.iter().filter_map(|id| state.remove(id)).collect()
        };
        // As `nerdr close` says it: each worktree left with work not home.
        // A worktree two of them shared (a handoff's) is said once, for
        // the tab that made it when it is among them.
        let mut left = Vec::new();
        let mut said = std::collections::HashSet::new();
        let mut closing: Vec<_> = removed.iter().collect();
        closing.sort_by_key(|t| {
            let w = t.worktree.as_ref();
            !w.is_some_and(|w| crate::git::listing::own_branch(&w.path, &format!("nerdr/{}", t.id)))
        });
        for t in closing {
            if let Some(w) = t.worktree.as_ref().filter(|w| said.insert(w.path.clone())) {
                left.extend(self.left_behind(&t.id, w).await);
            }
        }
        for id in &ids {
            self.forget_questions_of(id);
        }
        let mut state = self.state.lock().unwrap();
        state.sessions.remove(folder);
        drop(state);
        tracing::info!(folder = %folder.display(), tabs = ids.len(), "quit session");
        self.changed();
        (ids.len(), left)
    }
}
