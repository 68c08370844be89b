//! One dispatcher for both sockets: a [`Request`] from a [`Caller`] in, a
//! [`Reply`] out. Who the caller is was settled by the connection.

use std::path::Path;
use std::sync::Arc;

use serde_json::json;

use super::Core;
use crate::protocol::api::{ApiError, CoreStatus, ErrorCode, Reply, Request, TabInfo};

/// Who sent a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// The person: their window or CLI on the client socket, key proven.
    User,
    /// A program nerdr started, on the hook socket, in tab `id`.
    Tab { id: String },
}

impl Core {
    pub async fn handle(self: &Arc<Self>, caller: &Caller, req: Request) -> Reply {
        match req {
            Request::Agent {
                folder,
                name,
                extra_args,
                env,
                worktree,
            } => {
                self.start_agent(caller, &folder, &name, extra_args, env, worktree)
                    .await
            }
            Request::Tabs { folder, all } => self.tabs(folder.as_deref(), all),
            Request::Read { tab, lines } => {
                let state = self.state.lock().unwrap();
                let t = state.tabs.get(&tab).ok_or_else(|| no_tab(&tab))?;
                Ok(json!({ "text": t.screen_text(lines) }))
            }
            Request::Send { tab, text, enter } => {
                let mut bytes = text.into_bytes();
                if enter {
                    bytes.push(b'\r');
                }
                self.write_input(&tab, bytes)
            }
            Request::Resize { tab, rows, cols } => self.resize(&tab, rows, cols),
            Request::Terminal { tab, env } => self.start_terminal(caller, &tab, env).await,
            Request::Restart { tab, env } => self.restart_tab(caller, &tab, env).await,
            Request::Approvals => self.list_approvals(),
            Request::Decide { id, approve } => self.decide(caller, &id, approve).await,
            Request::Close {
                tab,
                remove_worktree,
            } => {
                self.close_tab(&tab, remove_worktree).await?;
                Ok(json!({}))
            }
            Request::Quit { folder } => {
                let closed = self.quit_session(&folder).await;
                Ok(json!({ "closed": closed }))
            }
            Request::Agents => {
                let config = crate::config::load(&self.paths.config_file())
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
                Ok(json!({ "agents": names }))
            }
            Request::Report {
                event, session_id, ..
            } => self.report(caller, &event, session_id),
            Request::ReportAgent { tab, argv } => self.report_agent(caller, &tab, argv),
            Request::Status => {
                let state = self.state.lock().unwrap();
                let status = CoreStatus {
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
                };
                Ok(serde_json::to_value(status).expect("status serializes"))
            }
        }
    }

    fn tabs(&self, folder: Option<&Path>, all: bool) -> Reply {
        let state = self.state.lock().unwrap();
        let tabs: Vec<TabInfo> = match (all, folder) {
            (true, _) => state.all_tabs().iter().map(|t| t.info()).collect(),
            (false, Some(f)) => state.session_tabs(f).iter().map(|t| t.info()).collect(),
            (false, None) => {
                return Err(ApiError::new(
                    ErrorCode::BadRequest,
                    "tabs needs a folder or `all`",
                ))
            }
        };
        Ok(serde_json::to_value(tabs).expect("tab rows serialize"))
    }

    fn write_input(&self, tab: &str, bytes: Vec<u8>) -> Reply {
        if !self.state.lock().unwrap().tabs.contains_key(tab) {
            return Err(no_tab(tab));
        }
        self.host.write(tab, bytes).map_err(|e| {
            ApiError::new(
                ErrorCode::NotFound,
                format!("tab {tab} has no running program to type into ({e})"),
            )
        })?;
        Ok(json!({}))
    }

    fn resize(&self, tab: &str, rows: u16, cols: u16) -> Reply {
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
        super::state::resize_screen(&mut t.screen, rows, cols);
        drop(state);
        // An exited program has no terminal left to resize; its screen does.
        let _ = self.host.resize(tab, rows, cols);
        Ok(json!({}))
    }

    /// Stop the tab's program (if it still runs) and forget the tab; its
    /// worktree stays unless `remove_worktree`.
    pub async fn close_tab(&self, tab: &str, remove_worktree: bool) -> Result<(), ApiError> {
        if !self.state.lock().unwrap().tabs.contains_key(tab) {
            return Err(no_tab(tab));
        }
        let _ = self.host.stop(tab).await;
        self.host.forget(tab);
        let removed = self.state.lock().unwrap().remove(tab);
        if let Some(t) = removed {
            tracing::info!(tab = %t.id, agent = %t.agent, "closed tab");
            if let (true, Some(w)) = (remove_worktree, t.worktree) {
                let paths = self.paths.clone();
                let removed = tokio::task::spawn_blocking(move || {
                    crate::git::worktree::remove(&paths, &w.repo, &w.path)
                })
                .await;
                if let Ok(Err(e)) = removed {
                    self.changed();
                    return Err(ApiError::new(
                        ErrorCode::Internal,
                        format!("closed tab {tab}, but its worktree stays: {e}"),
                    ));
                }
            }
        }
        self.changed();
        Ok(())
    }

    /// Close every tab of the session at once and forget the session.
    pub async fn quit_session(&self, folder: &Path) -> usize {
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
        let mut state = self.state.lock().unwrap();
        for id in &ids {
            state.remove(id);
        }
        state.sessions.remove(folder);
        drop(state);
        tracing::info!(folder = %folder.display(), tabs = ids.len(), "quit session");
        self.changed();
        ids.len()
    }
}

pub fn no_tab(tab: &str) -> ApiError {
    ApiError::new(
        ErrorCode::NotFound,
        format!("no tab `{tab}` (see `nerdr tabs --all` for the tabs that exist)"),
    )
}
