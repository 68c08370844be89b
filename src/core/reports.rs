//! What agents tell nerdr about themselves from inside their tabs: their
//! session id (from their hooks, `nerdr hook EVENT`) and how to resume them
//! (`nerdr pane report-agent`). Both feed resume; neither is trusted further
//! than its own tab.

use super::caller::Caller;
use super::not_found::no_tab;
use super::Core;
use crate::protocol::api::{ApiError, ErrorCode, TabKind};
use crate::protocol::replies::{Done, ReportTaken};

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
    pub fn report(
        &self,
        caller: &Caller,
        event: &str,
        session_id: Option<String>,
        seq: Option<u64>,
    ) -> Result<Done, ApiError> {
        let Caller::Tab { id: tab, .. } = caller else {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                "reports come from agents inside their tabs (NERDR_TAB), not from the user",
            ));
        };
        let mut state = self.state.lock().unwrap();
        let t = state.tabs.get_mut(tab).ok_or_else(|| no_tab(tab))?;
        let mut new_session = false;
        if let Some(id) = session_id {
            if !valid_session_id(&id) {
                return Err(ApiError::new(
                    ErrorCode::BadRequest,
                    format!("session id {id:?} is not a plain word (letters, digits, - _ . :)"),
                ));
            }
            new_session = t.session_id.as_deref() != Some(id.as_str());
            t.session_id = Some(id);
        }
        t.last_event = Some(event.to_string());
        state.turns.reported(tab);
        // Only the caller's own tab: a report names no other. An older
        // hook sends no sequence number; the time it arrived stands in
        // (the same clock the hooks stamp with).
        let seq = seq.unwrap_or_else(super::clock::monotonic_ns);
        self.detect_report(&mut state, tab, event, seq);
        drop(state);
        // The tab list (and `tabs.json`) changes only with a new session
        // id; a state the report moved went to the windows already. Not
        // on every report: an agent sends one per tool call, and a program
        // that floods them would have the list written to disk and sent
        // to every window each time.
        if new_session {
            self.changed();
        }
        Ok(Done {})
    }

    pub fn report_agent(
        &self,
        caller: &Caller,
        tab: &str,
        argv: Vec<String>,
    ) -> Result<ReportTaken, ApiError> {
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
            return Ok(ReportTaken {
                ignored: Some("the agent is sandboxed".into()),
            });
        }
        t.reported = Some(argv);
        drop(state);
        self.changed();
        Ok(ReportTaken::default())
    }
}

impl Core {
    /// Typed input reached tab `tab`: maybe the start of a turn to watch.
    pub fn typed(&self, tab: &str, bytes: &[u8]) {
        let mut state = self.state.lock().unwrap();
        let watched = state
            .tabs
            .get(tab)
            .is_some_and(|t| t.sandboxed && t.kind == TabKind::Agent);
        if watched && state.turns.input(tab, bytes) {
            self.wake.turns.notify_one();
        }
    }

    /// Warn, once per tab, about sandboxed agents whose turns end without a
    /// report though their integration is installed; whether a turn is
    /// still open (to be looked at again).
    pub fn warn_silent_turns(&self) -> bool {
        let (ended, open) = {
            let mut state = self.state.lock().unwrap();
            let ended = state.turns.ended(std::time::Instant::now());
            let ended: Vec<(String, String)> = ended
                .into_iter()
                .filter_map(|id| Some((state.tabs.get(&id)?.agent.clone(), id)))
                .collect();
            (ended, state.turns.watching())
        };
        // Whether each agent's integration is installed: read from disk,
        // with the lock dropped.
        let integrated: Vec<(String, String)> = ended
            .into_iter()
            .filter(|(agent, _)| {
                super::held::assert_unlocked("reading the installed integrations");
                self.paths
                    .state_dir
                    .join("integrations")
                    .join(format!("{agent}.json"))
                    .exists()
            })
            .collect();
        if integrated.is_empty() {
            return open;
        }
        let mut state = self.state.lock().unwrap();
        for (agent, id) in integrated {
            // Closed, or restarted as another agent, meanwhile.
            let Some(t) = state.tabs.get_mut(&id).filter(|t| t.agent == agent) else {
                continue;
            };
            let text = format!(
                "agent {agent} in tab {id} finished a turn and no report from it reached nerdr: its \
                 sandbox probably blocks nerdr's integration. The sandbox must let the agent run \
                 {} and connect to {}",
                self.bin.display(),
                self.paths.hook_socket().display()
            );
            tracing::warn!(tab = %id, agent = %agent, "{text}");
            t.warning = Some(text);
        }
        drop(state);
        self.changed();
        open
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
