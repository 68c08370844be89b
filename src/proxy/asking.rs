//! Asking the person about a host on neither list: the [`Asker`] the proxy
//! is given (for `nerdr sandbox` in a nerdr tab: a question over the hook
//! socket, see `sandbox::ask_person`), the wait, and the audit lines of
//! the question and its outcome. What an answer does is `answers`' (pure).
//!
//! Only the asking request waits: each client connection is its own task,
//! so other connections go on being accepted and served meanwhile. The
//! wait is bounded by the asker (the core's time-out) and again here by
//! [`MAX_WAIT`], in case the other side never answers.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::answers::{Answer, Outcome, SessionAnswers, Settled};
use super::decision::{Decision, Phase, Protocol, Trail};
use super::policy::{Host, Refusal};

/// The longest any question may keep a connection waiting, whatever the
/// asker says (the core's time-out is at most [`MAX_ASK_SECS`]).
pub const MAX_WAIT: Duration = Duration::from_secs(MAX_ASK_SECS + 15);
/// The longest time-out a question may be given.
pub const MAX_ASK_SECS: u64 = 600;

pub type Asking<'a> = Pin<Box<dyn Future<Output = Outcome> + Send + 'a>>;

/// Puts a question to the person and waits for what becomes of it.
pub trait Asker: Send + Sync {
    /// `host` as the client wrote it (the question shows it escaped).
    fn ask<'a>(&'a self, host: &'a str, port: u16) -> Asking<'a>;
}

/// The person to ask, if any, and the answers that hold for the rest of
/// this run.
pub(super) struct Questions {
    /// Who is asked about hosts on neither list; `None`: they are refused.
    asker: Option<Arc<dyn Asker>>,
    /// Held only to read or record an answer, never across a wait.
    answers: Mutex<SessionAnswers>,
}

impl Questions {
    pub(super) fn new(asker: Option<Arc<dyn Asker>>) -> Questions {
        Questions {
            asker,
            answers: Default::default(),
        }
    }

    /// Settles a request on neither list: an earlier answer of this run,
    /// else the person's, else `refusal`. The question and its outcome go
    /// on `trail`.
    pub(super) async fn settle(
        &self,
        trail: &Trail,
        protocol: Protocol,
        raw_host: &str,
        host: &Host,
        port: u16,
        refusal: Refusal,
    ) -> Settled {
        if let Some(earlier) = self.answers.lock().unwrap().recall(host, port) {
            return earlier;
        }
        let outcome = match &self.asker {
            None => Outcome::NotAsked("not run from a nerdr tab, so there is no one to ask".into()),
            Some(asker) => {
                report_question(trail, protocol, raw_host, port, Phase::Asked, None, None);
                let outcome = tokio::time::timeout(MAX_WAIT, asker.ask(raw_host, port))
                    .await
                    .unwrap_or(Outcome::NoAnswer {
                        secs: MAX_WAIT.as_secs(),
                    });
                let why = match &outcome {
                    Outcome::NotAsked(why) => Some(why.clone()),
                    _ => None,
                };
                let allowed = matches!(
                    outcome,
                    Outcome::Answered(Answer::Once) | Outcome::Answered(Answer::Session)
                );
                report_question(
                    trail,
                    protocol,
                    raw_host,
                    port,
                    Phase::Answered,
                    Some((allowed, outcome.word())),
                    why,
                );
                outcome
            }
        };
        self.answers
            .lock()
            .unwrap()
            .settle(host, port, &refusal, &outcome)
    }
}

/// The question's line (`asked`) and its outcome's (`answered`).
fn report_question(
    trail: &Trail,
    protocol: Protocol,
    host: &str,
    port: u16,
    phase: Phase,
    outcome: Option<(bool, String)>,
    why: Option<String>,
) {
    let (allowed, rule) = outcome.unwrap_or((false, "asking the user".into()));
    trail.send(Decision::unconnected(
        phase, protocol, host, port, allowed, rule, why,
    ));
}
