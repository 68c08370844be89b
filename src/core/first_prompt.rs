//! Typing an agent's first prompt once it waits at its prompt: a reviewer's
//! (`review_start`) and a spun-off agent's (`spinoff`). The agent's state
//! says when (`nerdr wait --until idle`); one that never gets there gets a
//! warning on its tab saying how to send the prompt by hand.

use std::sync::Arc;
use std::time::Duration;

use super::Core;
use crate::protocol::api::{ApiError, Until};

/// How long a new agent may take to reach its prompt (node programs
/// start slowly on a loaded machine, behind a sandbox check).
const PROMPT_WAIT: Duration = Duration::from_secs(180);

impl Core {
    /// Once tab `tab` waits at its prompt, type `prompt` and Enter; whether
    /// it was typed. If it never gets there, its tab's warning says so:
    /// `what` names the prompt ("the review's first prompt") and `by_hand`
    /// where the person finds it to type it themselves.
    pub(super) async fn type_first_prompt(
        self: &Arc<Self>,
        tab: &str,
        prompt: String,
        what: &str,
        by_hand: &str,
    ) -> bool {
        let waited = self.wait_for(tab, Until::Idle, Some(PROMPT_WAIT)).await;
        match waited {
            Ok(w) if w.reached => {
                // The prompt has drawn; a moment for its input to be ready.
                tokio::time::sleep(Duration::from_millis(500)).await;
                match self.type_prompt(tab, prompt).await {
                    Ok(()) => true,
                    Err(e) => {
                        tracing::warn!(tab = %tab, error = %e, "{what} was not typed");
                        false
                    }
                }
            }
            Ok(w) => {
                let text = format!(
                    "{what} was not typed: the agent was {} and never idle at its prompt within \
                     {}s; answer it, then type the request yourself ({by_hand})",
                    w.state,
                    PROMPT_WAIT.as_secs()
                );
                if let Some(t) = self.state.lock().unwrap().tabs.get_mut(tab) {
                    t.warning = Some(text);
                }
                self.changed();
                false
            }
            Err(_) => false,
        }
    }

    /// Type `prompt`, and Enter once the screen shows it took the text (a
    /// long text is a paste to some agents, and an Enter inside the paste
    /// would be a new line).
    pub(super) async fn type_prompt(&self, tab: &str, prompt: String) -> Result<(), ApiError> {
        let before = self.screen_of(tab);
        self.write_input(tab, prompt.into_bytes()).await?;
        for _ in 0..50 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if self.screen_of(tab) != before {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        self.write_input(tab, b"\r".to_vec()).await
    }

    fn screen_of(&self, tab: &str) -> Option<String> {
        let state = self.state.lock().unwrap();
        state.tabs.get(tab).map(|t| t.screen_text(None))
    }
}
