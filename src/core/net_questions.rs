//! Network questions: `nerdr sandbox`'s proxy, running in a tab, asks
//! (over the hook socket, as that tab) whether its sandbox may connect to
//! a host on neither network list. The question waits in the approval
//! queue with the tab's other questions (F3, `nerdr approvals`), and the
//! answer goes back on the same connection, which the proxy holds open
//! for it. With no window attached to the tab's session nobody would see
//! the question, so it is not asked: the proxy refuses at once.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::api::Caller;
use super::approvals::{Approval, Asked, Said};
use super::privilege::Operation;
use super::Core;
use crate::protocol::api::{ApiError, ErrorCode, Reply};

impl Core {
    /// Ask the person about `host:port` for the caller's sandbox; the
    /// reply's `answer` is `once`, `session`, `deny`, `no_answer` (with
    /// `secs`) or `not_asked` (with `why`).
    pub async fn ask_network(self: &Arc<Self>, caller: &Caller, host: &str, port: u16) -> Reply {
        let Some(tab) = caller.tab().map(str::to_string) else {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                "network questions come from `nerdr sandbox` in a tab",
            ));
        };
        // The same reading of the host the proxy's policy made: the
        // question never shows something else than what would be opened.
        if let Err(why) = crate::proxy::policy::normalise_host(host) {
            return Err(ApiError::new(ErrorCode::BadRequest, why));
        }
        if port == 0 {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                "port 0 is not a destination",
            ));
        }
        let folder = self
            .state
            .lock()
            .unwrap()
            .tabs
            .get(&tab)
            .map(|t| t.folder.clone())
            .ok_or_else(|| super::api::no_tab(&tab))?;
        let watched = self
            .windows
            .lock()
            .unwrap()
            .by_id
            .values()
            .any(|w| w.folder == folder);
        if !watched {
            return Ok(json!({
                "answer": "not_asked",
                "why": "no window is attached to this tab's session (`nerdr` in its folder attaches one)",
            }));
        }
        self.room_in_queue(caller, Operation::AskNetwork, None)?;
        let secs = crate::config::load(&self.paths.config_file())
            .map(|c| c.sandbox.ask_timeout_secs)
            .unwrap_or(crate::config::SandboxConfig::default().ask_timeout_secs);
        let shown = crate::protocol::printable(host);
        let question = format!(
            "sandboxed program of tab {tab} asks to connect to {shown}:{port} (on neither \
             network list): y once, s for the rest of this sandbox run, n deny for the run; \
             refused in {secs} s without an answer"
        );
        let a = Approval {
            id: self.new_approval_id(),
            question,
            tab: tab.clone(),
            asked: Asked::Network {
                host: host.to_string(),
                port,
            },
        };
        tracing::info!(tab = %tab, approval = %a.id, host = %shown, port, "network question waits for the user");
        let answer = match self.ask_and_wait(a, Duration::from_secs(secs)).await {
            Some(Said::Yes) => "once",
            Some(Said::Session) => "session",
            Some(Said::No) => "deny",
            None => return Ok(json!({ "answer": "no_answer", "secs": secs })),
        };
        Ok(json!({ "answer": answer }))
    }
}
