//! Network questions: `nerdr sandbox`'s proxy, running in a tab, asks
//! (over the hook socket, as that tab) whether its sandbox may connect to
//! a host on neither network list. The question waits in the approval
//! queue with the tab's other questions (F3, `nerdr approvals`), and the
//! answer goes back on the same connection, which the proxy holds open
//! for it. With no window attached to the tab's session nobody would see
//! the question, so it is not asked: the proxy refuses at once.

use std::sync::Arc;
use std::time::Duration;

use super::caller::Caller;
use super::not_found::no_tab;
use super::privilege::Operation;
use super::question::{Approval, Asked, Said};
use super::Core;
use crate::protocol::api::{ApiError, ErrorCode};
use crate::protocol::replies::NetworkAnswer;
use crate::proxy::policy::Host;

impl Core {
    /// Ask the person about `host:port` for the caller's sandbox.
    pub async fn ask_network(
        self: &Arc<Self>,
        caller: &Caller,
        host: &str,
        port: u16,
    ) -> Result<NetworkAnswer, ApiError> {
        let Some(tab) = caller.tab().map(str::to_string) else {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                "network questions come from `nerdr sandbox` in a tab",
            ));
        };
        // The same reading of the host the proxy's policy made, and the
        // question shows that reading (what an answer opens), never the
        // spelling the program chose (`[::ffff:7f00:1]`, `x.localhost`).
        let host = match crate::proxy::policy::normalise_host(host) {
            Ok(h) => h,
            Err(why) => return Err(ApiError::new(ErrorCode::BadRequest, why)),
        };
        if port == 0 {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                "port 0 is not a destination",
            ));
        }
        let (agent, watched) = {
            let state = self.state.lock().unwrap();
            let t = state.tabs.get(&tab).ok_or_else(|| no_tab(&tab))?;
            let watched = state.windows.by_id.values().any(|w| w.folder == t.folder);
            (t.agent.clone(), watched)
        };
        if !watched {
            return Ok(NetworkAnswer::NotAsked {
                why: "no window is attached to this tab's session (`nerdr` in its folder attaches one)"
                    .into(),
            });
        }
        self.room_in_queue(caller, Operation::AskNetwork, None)?;
        let file = self.paths.config_file();
        let secs = tokio::task::spawn_blocking(move || {
            crate::config::load(&file).map(|c| c.sandbox.ask_timeout_secs)
        })
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or(crate::config::SandboxConfig::default().ask_timeout_secs);
        let shown = crate::protocol::printable(&host.to_string());
        let a = Approval {
            id: self.new_approval_id(),
            question: question_text(&format!("{tab} ({agent})"), &host, port, secs),
            tab: tab.clone(),
            asked: Asked::Network {
                host: host.to_string(),
                port,
            },
        };
        tracing::info!(tab = %tab, approval = %a.id, host = %shown, port, "network question waits for the user");
        let answer = self
            .ask_and_wait(a, Duration::from_secs(secs))
            .await
            .map_err(|full| self.refuse(caller, Operation::AskNetwork, None, full))?;
        Ok(match answer {
            Some(Said::Yes) => NetworkAnswer::Once,
            Some(Said::Session) => NetworkAnswer::Session,
            Some(Said::No) => NetworkAnswer::Deny,
            None => NetworkAnswer::NoAnswer { secs },
        })
    }
}

/// The question as the person reads it: who asks (`tab`: its id and
/// agent), the host as the proxy reads it (what an answer opens), and this
/// machine's own services said to be so.
fn question_text(tab: &str, host: &Host, port: u16, secs: u64) -> String {
    let tab = crate::protocol::printable(tab);
    let local = match host {
        Host::Localhost => true,
        Host::Ip(a) => a.is_loopback(),
        Host::Name(_) => false,
    };
    let what = if local {
        " (a service on this machine)"
    } else {
        ""
    };
    let shown = crate::protocol::printable(&host.to_string());
    format!(
        "sandboxed program of tab {tab} asks to connect to {shown}:{port}{what} (on neither \
         network list): y once, s for the rest of this sandbox run, n deny for the run; \
         refused in {secs} s without an answer"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxy::policy::normalise_host;

    #[test]
    fn a_question_shows_the_host_an_answer_opens() {
        // (as the program wrote it, port, what the question names)
        #[rustfmt::skip]
        let table: &[(&str, u16, &str)] = &[
            ("api.example.com", 443, "api.example.com:443 (on neither"),
            ("Example.COM.", 443, "example.com:443 (on neither"),
            ("localhost", 8080, "localhost:8080 (a service on this machine) (on neither"),
            ("github.com.localhost", 443, "localhost:443 (a service on this machine) (on neither"),
            ("127.0.0.1", 5432, "127.0.0.1:5432 (a service on this machine) (on neither"),
            ("127.8.9.10", 22, "127.8.9.10:22 (a service on this machine) (on neither"),
            ("::ffff:127.0.0.1", 6379, "127.0.0.1:6379 (a service on this machine) (on neither"),
            ("::ffff:7f00:1", 6379, "127.0.0.1:6379 (a service on this machine) (on neither"),
            ("0:0:0:0:0:0:0:1", 22, "[::1]:22 (a service on this machine) (on neither"),
            ("::ffff:8.8.8.8", 53, "8.8.8.8:53 (on neither"),
            ("2606:4700::1111", 443, "[2606:4700::1111]:443 (on neither"),
        ];
        let mut failures = Vec::new();
        for (raw, port, want) in table {
            let host = normalise_host(raw).unwrap();
            let q = question_text("t1", &host, *port, 120);
            let want = format!("sandboxed program of tab t1 asks to connect to {want}");
            if !q.starts_with(&want) {
                failures.push(format!("{raw}: want {want:?}, got {q:?}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}
