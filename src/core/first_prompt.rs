//! Typing an agent's first prompt once it is ready for it: a reviewer's
//! (`review_start`, `review::first_prompt`) and a spun-off agent's task
//! (`spinoff`); or saying in its tab why it was not typed.
//!
//! Ready means what the agent's screen rules can tell ([`sign`], pure):
//! an agent whose rules have an `idle` rule waits until its state reads
//! idle; one whose rules cannot say idle (a custom agent with no
//! `detect`, a program or a shell, a built-in agent whose rules only tell
//! working and blocked) would never read idle, so for it ready is a
//! screen that has settled: it drew something, then no output for the
//! rules' quiet period ([`crate::detect::RuleSet::quiet`], 1.5 s without
//! rules). Nothing polls: the idle wait is `nerdr wait`'s (the
//! state-change counter), the settled wait sleeps until the quiet period
//! after the last output and wakes early only on output (the core's
//! output counter, `Core::outputs`).
//!
//! Either wait ends after [`PROMPT_WAIT`]: the tab then carries a warning
//! (`nerdr tabs`, the window's status line) saying the prompt was not
//! typed and how to type it by hand; `nerdr restart` of the tab tries
//! again (`Core::review_restarted`, `Core::spinoff_restarted`).

use std::sync::Arc;
use std::time::Duration;

use super::Core;
use crate::protocol::api::{TabState, Until};

/// How long a new agent may take to be ready for its first prompt
/// (node programs start slowly on a loaded machine, behind a sandbox
/// check). README.md ("Reviews") and `nerdr request-review --help` say it.
pub const PROMPT_WAIT: Duration = Duration::from_secs(180);

/// What says an agent is ready for its first prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sign {
    /// Its state reads idle.
    Idle,
    /// Its screen drew and then stayed quiet this long.
    Settled(Duration),
}

/// The sign to wait for, from the agent's screen rules (`None`: it has
/// none).
pub fn sign(rules: Option<&crate::detect::RuleSet>) -> Sign {
    match rules {
        Some(r) if r.tells_idle() => Sign::Idle,
        Some(r) => Sign::Settled(r.quiet()),
        None => Sign::Settled(crate::detect::DEFAULT_QUIET),
    }
}

/// How a wait for the sign ended.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Waited {
    Ready,
    /// Not within [`PROMPT_WAIT`]: the state it was in.
    TimedOut(String),
    /// Never will be: the tab is gone, or its program ended.
    Never,
}

impl Core {
    /// Once tab `tab` is ready, type `prompt` and Enter; whether it was
    /// typed. If it never is ready, its tab's warning says so: `what`
    /// names the prompt ("the review's first prompt") and `by_hand` where
    /// the person finds it to type it themselves.
    pub(super) async fn type_first_prompt(
        self: &Arc<Self>,
        tab: &str,
        prompt: String,
        what: &str,
        by_hand: &str,
    ) -> bool {
        self.type_first_prompt_at(tab, prompt, what, by_hand)
            .await
            .is_some()
    }

    /// [`Core::type_first_prompt`], saying when the typing began: any
    /// state entered after it is the agent's answer to the prompt, one
    /// entered before it the wait for it.
    pub(super) async fn type_first_prompt_at(
        self: &Arc<Self>,
        tab: &str,
        prompt: String,
        what: &str,
        by_hand: &str,
    ) -> Option<std::time::SystemTime> {
        let (sign, waited) = self.wait_ready(tab).await?;
        match waited {
            Waited::Ready => {
                if sign == Sign::Idle {
                    // The prompt has drawn; a moment for its input to be ready.
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                tracing::info!(tab = %tab, ?sign, "typing {what}");
                let at = std::time::SystemTime::now();
                match self.type_message(tab, &prompt).await {
                    Ok(()) => {
                        // Its Enter is in: a turn on it ends at the next
                        // idle, however fast (`spinoff::due`).
                        if let Some(d) = self
                            .state
                            .lock()
                            .unwrap()
                            .tabs
                            .get_mut(tab)
                            .and_then(|t| t.detection.as_mut())
                        {
                            d.tracker.prompt_entered();
                        }
                        Some(at)
                    }
                    Err(e) => {
                        tracing::warn!(tab = %tab, error = %e, "{what} was not typed");
                        None
                    }
                }
            }
            Waited::TimedOut(state) => {
                let ready = match sign {
                    Sign::Idle => "never idle at its prompt",
                    Sign::Settled(_) => "its screen never settled",
                };
                let text = format!(
                    "{what} was not typed: the agent was {state} and {ready} within {}s; answer \
                     what it asks, then type it yourself ({by_hand}), or `nerdr restart` it to \
                     try again",
                    PROMPT_WAIT.as_secs()
                );
                tracing::warn!(tab = %tab, "{text}");
                if let Some(t) = self.state.lock().unwrap().tabs.get_mut(tab) {
                    t.warning = Some(text);
                }
                self.changed();
                None
            }
            Waited::Never => None,
        }
    }

    /// Wait until tab `tab` is ready for a prompt, by its sign: idle, or
    /// (an agent whose rules cannot say idle) its screen settled; the sign
    /// and how the wait ended; `None` without the tab.
    async fn wait_ready(&self, tab: &str) -> Option<(Sign, Waited)> {
        let sign = {
            let state = self.state.lock().unwrap();
            let t = state.tabs.get(tab)?;
            sign(
                t.detection
                    .as_ref()
                    .and_then(|d| d.tracker.rules())
                    .map(|r| &**r),
            )
        };
        let waited = match sign {
            Sign::Idle => match self.wait_for(tab, Until::Idle, Some(PROMPT_WAIT)).await {
                Ok(w) if w.reached => Waited::Ready,
                Ok(w) if w.never.is_none() => Waited::TimedOut(w.state),
                _ => Waited::Never,
            },
            Sign::Settled(quiet) => self.wait_settled(tab, quiet).await,
        };
        Some((sign, waited))
    }

    /// Whether tab `tab` became ready for a prompt ([`Core::wait_ready`]):
    /// a parent's kept results go then, whether or not its rules can
    /// say idle.
    pub(super) async fn ready_for_prompt(&self, tab: &str) -> bool {
        matches!(self.wait_ready(tab).await, Some((_, Waited::Ready)))
    }

    /// Wait until tab `tab` has drawn something and then written nothing
    /// for `quiet`, or [`PROMPT_WAIT`] passed.
    async fn wait_settled(&self, tab: &str, quiet: Duration) -> Waited {
        use tokio::time::{sleep_until, Instant};
        // Subscribed before the first look: output between the look and
        // the wait still wakes it.
        let mut outputs = self.outputs.subscribe();
        let deadline = Instant::now() + PROMPT_WAIT;
        let look = || {
            let state = self.state.lock().unwrap();
            let t = state.tabs.get(tab)?;
            Some((t.state, state.snapshots.offset(tab).unwrap_or(0)))
        };
        let mut seen = None;
        let mut quiet_at = None;
        loop {
            let Some((life, offset)) = look() else {
                return Waited::Never;
            };
            match life {
                TabState::Exited | TabState::Refused => return Waited::Never,
                TabState::Starting | TabState::Running => {}
            }
            if seen != Some(offset) {
                seen = Some(offset);
                // Nothing drawn yet: the quiet period starts at its output.
                quiet_at = (offset > 0).then(|| Instant::now() + quiet);
            }
            let settled = async {
                match quiet_at {
                    Some(at) => sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                changed = outputs.changed() => {
                    if changed.is_err() {
                        return Waited::Never;
                    }
                }
                () = settled => {
                    if life == TabState::Running && look().map(|(_, o)| o) == seen {
                        return Waited::Ready;
                    }
                }
                () = sleep_until(deadline) => {
                    return Waited::TimedOut(life.as_str().to_string());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::builtin;

    /// (what, the rules, the sign)
    #[test]
    fn what_says_an_agent_is_ready() {
        let claude = builtin("claude").unwrap();
        let amp = builtin("amp").unwrap();
        assert!(!amp.tells_idle(), "amp's rules say no idle (a row below)");
        let rows: &[(&str, Option<&crate::detect::RuleSet>, Sign)] = &[
            (
                "no rules (a program, a shell)",
                None,
                Sign::Settled(crate::detect::DEFAULT_QUIET),
            ),
            ("rules with an idle rule", Some(&claude), Sign::Idle),
            (
                "rules that never say idle: their quiet period",
                Some(&amp),
                Sign::Settled(amp.quiet()),
            ),
        ];
        for (what, rules, want) in rows {
            assert_eq!(sign(*rules), *want, "{what}");
        }
    }
}
