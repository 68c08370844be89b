//! How `nerdr sandbox`'s proxy asks the person about a host on neither
//! network list: when `nerdr sandbox` runs in a nerdr tab (`NERDR_TAB` and
//! `NERDR_SOCKET` in its own environment, read before the sandboxed
//! program's is cleaned), each question is a request on the hook socket
//! as that tab; the core queues it and answers on the same connection.
//! Outside any tab there is no asker and such hosts are refused.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::protocol::api::{AskNetwork, BadReply};
use crate::protocol::replies::NetworkAnswer;
use crate::proxy::answers::{Answer, Outcome};
use crate::proxy::asking::{Asker, Asking};

/// Asks through the core, as the tab `secret` names.
pub struct HookAsker {
    socket: PathBuf,
    secret: String,
}

impl HookAsker {
    /// The asker for a process whose environment has these values of
    /// `NERDR_TAB` and `NERDR_SOCKET`; `None` outside any nerdr tab.
    pub fn from_env(tab: Option<OsString>, socket: Option<OsString>) -> Option<HookAsker> {
        let secret = tab?.into_string().ok().filter(|s| !s.is_empty())?;
        let socket = PathBuf::from(socket.filter(|s| !s.is_empty())?);
        Some(HookAsker { socket, secret })
    }
}

impl Asker for HookAsker {
    fn ask<'a>(&'a self, host: &'a str, port: u16) -> Asking<'a> {
        Box::pin(async move {
            let req = AskNetwork {
                host: host.to_string(),
                port,
            };
            match crate::client::via_hook(&self.socket, &self.secret, req).await {
                Err(e) if e.is::<BadReply>() => {
                    Outcome::NotAsked(format!("the core answered something unexpected: {e}"))
                }
                Err(e) => Outcome::NotAsked(format!("nerdr's core cannot be reached: {e:#}")),
                Ok(Err(refused)) => Outcome::NotAsked(refused.message),
                Ok(Ok(answer)) => outcome_of(answer),
            }
        })
    }
}

/// The core's answer as the proxy's outcome.
pub fn outcome_of(answer: NetworkAnswer) -> Outcome {
    match answer {
        NetworkAnswer::Once => Outcome::Answered(Answer::Once),
        NetworkAnswer::Session => Outcome::Answered(Answer::Session),
        NetworkAnswer::Deny => Outcome::Answered(Answer::Deny),
        NetworkAnswer::NoAnswer { secs } => Outcome::NoAnswer { secs },
        NetworkAnswer::NotAsked { why } => Outcome::NotAsked(why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::api::decode;
    use serde_json::json;

    #[test]
    fn replies_become_outcomes() {
        let rows = [
            (json!({"answer": "once"}), Outcome::Answered(Answer::Once)),
            (
                json!({"answer": "session"}),
                Outcome::Answered(Answer::Session),
            ),
            (json!({"answer": "deny"}), Outcome::Answered(Answer::Deny)),
            (
                json!({"answer": "no_answer", "secs": 7}),
                Outcome::NoAnswer { secs: 7 },
            ),
            (
                json!({"answer": "not_asked", "why": "no window"}),
                Outcome::NotAsked("no window".into()),
            ),
        ];
        for (reply, want) in rows {
            let answer = decode::<AskNetwork>(reply.clone()).unwrap();
            assert_eq!(outcome_of(answer), want, "{reply}");
        }
        // Anything else is no answer the proxy can act on: it refuses.
        for odd in [json!({}), json!({"answer": "yes"}), json!({"answer": 1})] {
            assert!(decode::<AskNetwork>(odd.clone()).is_err(), "{odd}");
        }
    }

    #[test]
    fn only_a_tab_has_an_asker() {
        let some = |s: &str| Some(OsString::from(s));
        assert!(HookAsker::from_env(some("secret"), some("/run/hook.sock")).is_some());
        assert!(HookAsker::from_env(None, some("/run/hook.sock")).is_none());
        assert!(HookAsker::from_env(some(""), some("/run/hook.sock")).is_none());
        assert!(HookAsker::from_env(some("secret"), None).is_none());
    }
}
