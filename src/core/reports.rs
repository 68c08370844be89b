//! What agents tell nerdr about themselves from inside their tabs: their
//! session id (from their hooks, `nerdr hook EVENT`) and how to resume them
//! (`nerdr pane report-agent`). Both feed resume; neither is trusted further
//! than its own tab.

use serde_json::json;

use super::caller::Caller;
use super::not_found::no_tab;
use super::Core;
use crate::protocol::api::{ApiError, ErrorCode, Reply, TabKind};

/// A session id goes on a command line: only plain words, never a flag.
pub fn valid_session_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 200
        && !id.starts_with('-')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
}

impl Core {
    pub fn report(&self, caller: &Caller, event: &str, session_id: Option<String>) -> Reply {
        let Caller::Tab { id: tab, .. } = caller else {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                "reports come from agents inside their tabs (NERDR_TAB), not from the user",
            ));
        };
        let mut state = self.state.lock().unwrap();
        let t = state.tabs.get_mut(tab).ok_or_else(|| no_tab(tab))?;
        if let Some(id) = session_id {
            if !valid_session_id(&id) {
                return Err(ApiError::new(
                    ErrorCode::BadRequest,
                    format!("session id {id:?} is not a plain word (letters, digits, - _ . :)"),
                ));
            }
            t.session_id = Some(id);
        }
        t.last_event = Some(event.to_string());
        drop(state);
        self.turns.lock().unwrap().reported(tab);
        self.changed();
        Ok(json!({}))
    }

    pub fn report_agent(&self, caller: &Caller, tab: &str, argv: Vec<String>) -> Reply {
        if let Caller::Tab { id, .. } = caller {
            if id != tab {
                return Err(self.refuse(
                    caller,
                    super::privilege::Operation::Report,
                    Some(tab),
                    "a tab may report only its own agent",
                ));
            }
        }
        if argv.is_empty() || argv.iter().any(|w| w.contains('\0')) {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                "report the agent's resume command as words after `--`, e.g. -- my-agent --resume ID",
            ));
        }
        let mut state = self.state.lock().unwrap();
        let t = state.tabs.get_mut(tab).ok_or_else(|| no_tab(tab))?;
        if t.sandboxed {
            // A sandboxed agent does not choose what nerdr runs next time.
            return Ok(json!({ "ignored": "the agent is sandboxed" }));
        }
        t.reported = Some(argv);
        drop(state);
        self.changed();
        Ok(json!({}))
    }
}

impl Core {
    /// Typed input reached tab `tab`: maybe the start of a turn to watch.
    pub fn typed(&self, tab: &str, bytes: &[u8]) {
        let watched = self
            .state
            .lock()
            .unwrap()
            .tabs
            .get(tab)
            .is_some_and(|t| t.sandboxed && t.kind == TabKind::Agent);
        if watched {
            self.turns.lock().unwrap().input(tab, bytes);
        }
    }

    /// Warn, once per tab, about sandboxed agents whose turns end without a
    /// report though their integration is installed.
    pub fn warn_silent_turns(&self) {
        let ended = self.turns.lock().unwrap().ended(std::time::Instant::now());
        if ended.is_empty() {
            return;
        }
        let agents: Vec<(String, String)> = {
            let state = self.state.lock().unwrap();
            ended
                .into_iter()
                .filter_map(|id| state.tabs.get(&id).map(|t| (id, t.agent.clone())))
                .collect()
        };
        // Whether each agent's integration is installed: read from disk
        // before the state is locked, not under it.
        let integrated: Vec<(String, String)> = agents
            .into_iter()
            .filter(|(_, agent)| {
                self.paths
                    .state_dir
                    .join("integrations")
                    .join(format!("{agent}.json"))
                    .exists()
            })
            .collect();
        let mut state = self.state.lock().unwrap();
        let mut any = false;
        for (id, agent) in integrated {
            // Closed, or restarted as another agent, meanwhile.
            let Some(t) = state.tabs.get_mut(&id).filter(|t| t.agent == agent) else {
                continue;
            };
            let text = format!(
                "agent {} in tab {id} finished a turn and no report from it reached nerdr: its \
                 sandbox probably blocks nerdr's integration. The sandbox must let the agent run \
                 {} and connect to {}",
                t.agent,
                self.bin.display(),
                self.paths.hook_socket().display()
            );
            tracing::warn!(tab = %id, agent = %t.agent, "{text}");
            t.warning = Some(text);
            any = true;
        }
        drop(state);
        if any {
            self.changed();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids() {
        let rows = [
            ("0b6f8c2e-4d1a-4b7e-9f3a-2c5d8e1f0a9b", true),
            ("thread_123.4", true),
            ("--dangerously-skip-permissions", false),
            ("-x", false),
            ("", false),
            ("a b", false),
            ("a;rm", false),
        ];
        for (id, want) in rows {
            assert_eq!(valid_session_id(id), want, "{id}");
        }
    }
}
