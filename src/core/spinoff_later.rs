//! Results for a parent that waits on a question for the person
//! (`spinoff::delivery`, `Delivery::Later`): typed into the question, a
//! result would answer it (Enter picks its first choice). The result is
//! kept with the parent's record, and a task of its own types it once
//! the parent is back at its prompt (idle, or done with a turn), waiting
//! on the state counter (`Core::states`), not polling. A parent that is
//! not back within [`LATER_WAIT`], or whose program ends, keeps it the
//! way a stopped parent does: `nerdr spinoffs` and the window show it,
//! and `nerdr restart` types it.

use std::sync::Arc;
use std::time::Duration;

use super::Core;
use crate::protocol::api::{AgentState, TabState};

/// How long a result waits in the background for its parent to be back
/// at its prompt (a person may take a while to answer).
pub const LATER_WAIT: Duration = Duration::from_secs(180);

/// Whether a parent in `life` with agent state `agent` can take a result
/// now (`Some(true)`), never will in this run of its program
/// (`Some(false)`), or may yet (`None`).
pub fn at_prompt(life: Option<TabState>, agent: Option<AgentState>) -> Option<bool> {
    match (life, agent) {
        (Some(TabState::Running), Some(AgentState::Idle | AgentState::Done)) => Some(true),
        (Some(TabState::Starting | TabState::Running), _) => None,
        (None | Some(TabState::Exited | TabState::Refused), _) => Some(false),
    }
}

impl Core {
    /// Type result `number` of spun-off tab `tab` into `parent` once the
    /// parent is back at its prompt, in the background.
    pub(super) fn deliver_later(self: &Arc<Self>, tab: &str, parent: &str, number: u32) {
        let (core, tab, parent) = (self.clone(), tab.to_string(), parent.to_string());
        tokio::spawn(async move {
            if !core.wait_at_prompt(&parent).await {
                tracing::info!(parent = %parent, tab = %tab, number,
                    "result kept: the parent was not back at its prompt");
                return;
            }
            let Ok(store) = core.load_spinoffs().await else {
                return;
            };
            // Gone meanwhile (a restart carried it): nothing to type.
            let Some(w) = store
                .waiting_for(&parent)
                .into_iter()
                .find(|w| w.tab == tab && w.number == number)
            else {
                return;
            };
            // Where it was written, as kept with it (`waiting_for`), never
            // what the spun-off tab runs by now.
            let (held, _) = core
                .deliver_result(&tab, &parent, number, w.message, w.sandboxed)
                .await;
            tracing::info!(parent = %parent, tab = %tab, number, ?held,
                "result carried once the parent was back at its prompt");
        });
    }

    /// Wait until `tab` is back at its prompt; false if it never is within
    /// [`LATER_WAIT`] or its program ends.
    async fn wait_at_prompt(&self, tab: &str) -> bool {
        // Subscribed before the first look: a change between the look and
        // the wait still wakes it.
        let mut changes = self.states.subscribe();
        let deadline = tokio::time::Instant::now() + LATER_WAIT;
        loop {
            let seen = {
                let state = self.state.lock().unwrap();
                let t = state.tabs.get(tab);
                at_prompt(t.map(|t| t.state), t.and_then(|t| t.agent_state()))
            };
            if let Some(answer) = seen {
                return answer;
            }
            tokio::select! {
                changed = changes.changed() => {
                    if changed.is_err() {
                        return false;
                    }
                }
                () = tokio::time::sleep_until(deadline) => return false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (what, the tab's life, its agent state, the answer)
    type Row = (
        &'static str,
        Option<TabState>,
        Option<AgentState>,
        Option<bool>,
    );

    #[test]
    fn when_a_kept_result_can_go() {
        use AgentState as A;
        use TabState as L;
        let rows: &[Row] = &[
            (
                "idle at its prompt",
                Some(L::Running),
                Some(A::Idle),
                Some(true),
            ),
            ("a turn ended", Some(L::Running), Some(A::Done), Some(true)),
            (
                "still on its question",
                Some(L::Running),
                Some(A::Blocked),
                None,
            ),
            (
                "working after the answer",
                Some(L::Running),
                Some(A::Working),
                None,
            ),
            ("state not known yet", Some(L::Running), None, None),
            ("starting again", Some(L::Starting), None, None),
            (
                "its program ended: kept for a restart",
                Some(L::Exited),
                None,
                Some(false),
            ),
            ("refused", Some(L::Refused), None, Some(false)),
            ("closed", None, None, Some(false)),
        ];
        for (what, life, agent, want) in rows {
            assert_eq!(at_prompt(*life, *agent), *want, "{what}");
        }
    }
}
