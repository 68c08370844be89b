//! What the person's answer to a waiting question does, as a pure function
//! of the queue and the answer: a list of plain [`Effect`]s that
//! `approvals::decide` then carries out (queue changes under the queue's
//! lock, files, typing and launches after it). Deciding here, doing there,
//! keeps every (kind, answer) pair reachable by a table test.

use super::question::{Approval, Asked, Said};
use crate::protocol::api::{ApiError, ErrorCode};

/// One thing an answer makes happen.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Take question `id` out of the queue.
    Forget(String),
    /// Whoever waits on question `id` (a plugin run, a proxy holding a
    /// connection) gets the answer; the run or connection happens there.
    Wake { id: String, said: Said },
    /// Type `text` into tab `to`.
    Deliver { to: String, text: String },
    /// Remember this setup content as approved, for good (saved).
    Remember { hash: String },
    /// Run this approved setup in its worktree.
    RunSetup(Approval),
    /// This setup was refused: its agent, waiting for it, starts without.
    SkipSetup(Approval),
}

/// The person's answer to question `id`: `yes`, and with `session` for the
/// rest of the asking sandbox's run (network questions only).
pub fn answer(
    pending: &[Approval],
    id: &str,
    yes: bool,
    session: bool,
) -> Result<Vec<Effect>, ApiError> {
    let Some(asked) = pending.iter().find(|p| p.id == id) else {
        return Err(ApiError::new(
            ErrorCode::NotFound,
            format!("nothing waits for approval as `{id}` (see `nerdr approvals`)"),
        ));
    };
    let said = match (yes, session, &asked.asked) {
        (
            _,
            true,
            Asked::Setup { .. }
            | Asked::Message { .. }
            | Asked::Plugin { .. }
            | Asked::Handoff { .. },
        ) => {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                format!("`{id}` is not a network question: --session applies to those only"),
            ))
        }
        (false, _, _) => Said::No,
        (true, false, _) => Said::Yes,
        (true, true, _) => Said::Session,
    };
    let forget = Effect::Forget(id.to_string());
    Ok(match (&asked.asked, said) {
        (Asked::Plugin { .. } | Asked::Network { .. } | Asked::Handoff { .. }, said) => vec![
            forget,
            Effect::Wake {
                id: id.to_string(),
                said,
            },
        ],
        (Asked::Message { to, text }, Said::Yes) => vec![
            forget,
            Effect::Deliver {
                to: to.clone(),
                text: text.clone(),
            },
        ],
        (Asked::Message { .. }, Said::No) => vec![forget],
        (Asked::Setup { .. }, Said::No) => vec![forget, Effect::SkipSetup(asked.clone())],
        // A yes in a repository sandboxed agents worked in is for this run:
        // never remembered, and it answers no other question.
        (Asked::Setup { once: true, .. }, _) => vec![forget, Effect::RunSetup(asked.clone())],
        (Asked::Setup { hash, .. }, _) => {
            // Every question about the same content is answered by this
            // yes, and runs too; the one asked runs first.
            let same = pending.iter().filter(|p| {
                p.id != id
                    && matches!(&p.asked, Asked::Setup { hash: h, once: false, .. } if h == hash)
            });
            let mut effects = vec![forget, Effect::Remember { hash: hash.clone() }];
            effects.extend(same.clone().map(|p| Effect::Forget(p.id.clone())));
            effects.push(Effect::RunSetup(asked.clone()));
            effects.extend(same.map(|p| Effect::RunSetup(p.clone())));
            effects
        }
        (Asked::Message { .. }, Said::Session) => unreachable!("refused above"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(id: &str, asked: Asked) -> Approval {
        Approval {
            id: id.into(),
            question: "q".into(),
            tab: "t1".into(),
            asked,
        }
    }

    fn setup(hash: &str, once: bool) -> Asked {
        Asked::Setup {
            worktree: "/w".into(),
            hash: hash.into(),
            argv: vec!["npm".into(), "ci".into()],
            once,
        }
    }

    fn message() -> Asked {
        Asked::Message {
            to: "t2".into(),
            text: "make test\r".into(),
        }
    }

    fn plugin() -> Asked {
        Asked::Plugin {
            name: "deploy".into(),
            args: vec![],
        }
    }

    fn network() -> Asked {
        Asked::Network {
            host: "example.test".into(),
            port: 443,
        }
    }

    fn forget(id: &str) -> Effect {
        Effect::Forget(id.into())
    }

    fn wake(said: Said) -> Effect {
        Effect::Wake {
            id: "a".into(),
            said,
        }
    }

    /// The queue every row answers `a` in: `a` itself, then the others a
    /// yes to a setup may also answer.
    fn queue(asked: Asked) -> Vec<Approval> {
        vec![
            q("a", asked),
            q("same", setup("h1", false)),
            q("same-once", setup("h1", true)),
            q("other", setup("h2", false)),
            q("msg", message()),
        ]
    }

    #[test]
    fn every_kind_of_question_meets_every_answer_as_the_table_says() {
        let setup_run = |once| Effect::RunSetup(q("a", setup("h1", once)));
        let deliver = Effect::Deliver {
            to: "t2".into(),
            text: "make test\r".into(),
        };
        let not_network = "`a` is not a network question: --session applies to those only";
        type Want = Result<Vec<Effect>, &'static str>;
        #[rustfmt::skip]
        let table: Vec<(&str, Asked, bool, bool, Want)> = vec![
            ("a setup approved is remembered, answers the same content's questions, and runs each", setup("h1", false), true, false,
                Ok(vec![forget("a"), Effect::Remember { hash: "h1".into() }, forget("same"), setup_run(false), Effect::RunSetup(q("same", setup("h1", false)))])),
            ("a setup denied is forgotten, and its agent starts without it", setup("h1", false), false, false,
                Ok(vec![forget("a"), Effect::SkipSetup(q("a", setup("h1", false)))])),
            ("a setup approved for the session is refused, naming --session", setup("h1", false), true, true, Err(not_network)),
            ("a setup denied for the session is refused, naming --session", setup("h1", false), false, true, Err(not_network)),
            ("a setup sandboxed agents may have written runs once and is not remembered", setup("h1", true), true, false,
                Ok(vec![forget("a"), setup_run(true)])),
            ("a once-only setup denied is forgotten, and its agent starts without it", setup("h1", true), false, false,
                Ok(vec![forget("a"), Effect::SkipSetup(q("a", setup("h1", true)))])),
            ("a once-only setup approved for the session is refused, naming --session", setup("h1", true), true, true, Err(not_network)),
            ("a message approved is delivered", message(), true, false, Ok(vec![forget("a"), deliver.clone()])),
            ("a message denied is only forgotten", message(), false, false, Ok(vec![forget("a")])),
            ("a message approved for the session is refused, naming --session", message(), true, true, Err(not_network)),
            ("a plugin run approved wakes the run with yes", plugin(), true, false, Ok(vec![forget("a"), wake(Said::Yes)])),
            ("a plugin run denied wakes the run with no", plugin(), false, false, Ok(vec![forget("a"), wake(Said::No)])),
            ("a plugin run approved for the session is refused, naming --session", plugin(), true, true, Err(not_network)),
            ("a network question approved lets this connection through", network(), true, false, Ok(vec![forget("a"), wake(Said::Yes)])),
            ("a network question denied refuses the connection", network(), false, false, Ok(vec![forget("a"), wake(Said::No)])),
            ("a network question approved for the session holds for the sandbox's run", network(), true, true, Ok(vec![forget("a"), wake(Said::Session)])),
            ("a network question denied with --session is denied", network(), false, true, Ok(vec![forget("a"), wake(Said::No)])),
        ];
        for (sentence, asked, yes, session, want) in table {
            let got = answer(&queue(asked), "a", yes, session).map_err(|e| e.message);
            assert_eq!(got, want.map_err(String::from), "{sentence}");
        }
    }

    #[test]
    fn an_answer_to_nothing_that_waits_is_refused_naming_the_id() {
        let e = answer(&queue(message()), "gone", true, false).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFound);
        assert_eq!(
            e.message,
            "nothing waits for approval as `gone` (see `nerdr approvals`)"
        );
    }
}
