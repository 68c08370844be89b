//! `[review] automatic = true`: an author's turn that ends (its agent
//! state becomes idle or done, from the screen or a hook report: see
//! `agent_states`) with new commits on its branch asks for a review by
//! itself, once per new head (the head last asked for is kept per tab in
//! `reviews.json`, so a core restart does not ask again).
//!
//! One task follows the same counter `nerdr wait` waits on: it wakes only
//! when some state changed, notes which agent tabs entered idle or done
//! since it last looked (state and the time it was entered), and only for
//! those reads the config and git, off the state lock. Reviewer tabs are
//! never authors. A review that cannot start (no sandboxed agent for a
//! sandboxed author, say) leaves the reason as the author tab's warning,
//! once for that head.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::SystemTime;

use super::caller::Caller;
use super::Core;
use crate::protocol::api::{AgentState, TabKind};

/// Follow agent states for the life of the core.
pub(super) async fn watch_turn_ends(core: Arc<Core>) {
    let mut changes = core.states.subscribe();
    // Each agent tab's idle or done, by when it was entered.
    let mut seen: HashMap<String, SystemTime> = HashMap::new();
    loop {
        if changes.changed().await.is_err() {
            return;
        }
        let ended = turn_ends(&core, &mut seen);
        if !ended.is_empty() {
            core.after_turns(ended).await;
        }
    }
}

/// The agent tabs with a worktree that entered idle or done since the
/// last look (under the state lock: memory only).
fn turn_ends(core: &Core, seen: &mut HashMap<String, SystemTime>) -> Vec<String> {
    let state = core.state.lock().unwrap();
    seen.retain(|id, _| state.tabs.contains_key(id));
    let mut ended = Vec::new();
    for (id, t) in &state.tabs {
        if t.kind != TabKind::Agent || t.worktree.is_none() {
            continue;
        }
        let (Some(d), Some(now)) = (&t.detection, t.agent_state()) else {
            continue;
        };
        if !matches!(now, AgentState::Idle | AgentState::Done) {
            seen.remove(id);
            continue;
        }
        let since = d.tracker.since();
        if seen.insert(id.clone(), since) != Some(since) {
            ended.push(id.clone());
        }
    }
    ended
}

impl Core {
    /// Ask for a review of each tab in `ended` that has a new head, when
    /// the config says so.
    async fn after_turns(self: &Arc<Self>, ended: Vec<String>) {
        let file = self.paths.config_file();
        let automatic = super::edge::gather("reading the config for reviews", move || {
            crate::config::load(&file).is_ok_and(|c| c.review.automatic)
        })
        .await;
        if !automatic {
            return;
        }
        let Ok(store) = self.load_reviews().await else {
            return;
        };
        for tab in ended {
            if store.is_reviewer(&tab) {
                continue;
            }
            let Ok(author) = self.author_of(&tab) else {
                continue;
            };
            // No commits of its own (or none readable): nothing to review.
            let Ok(range) = self.range_of(&author).await else {
                continue;
            };
            if !store.due(&tab, &range.head) {
                continue;
            }
            // One reviewer at a time: while one works, the head is left
            // due, so the turn that ends after it reviews the newest head.
            if !matches!(self.review_under_way(&tab).await, Ok(None)) {
                continue;
            }
            let (key, head) = (tab.clone(), range.head.clone());
            if self
                .update_reviews(move |s| s.note_head(&key, &head))
                .await
                .is_err()
            {
                continue;
            }
            match self
                .start_review(&Caller::User, &tab, None, Vec::new(), true)
                .await
            {
                Ok(started) => {
                    tracing::info!(author = %tab, reviewer = %started.tab, head = %range.head,
                        "automatic review started")
                }
                Err(e) => {
                    tracing::warn!(author = %tab, head = %range.head, error = %e.message,
                        "automatic review not started");
                    if let Some(t) = self.state.lock().unwrap().tabs.get_mut(&tab) {
                        t.warning = Some(format!("automatic review: {}", e.message));
                    }
                    self.changed();
                }
            }
        }
    }
}
