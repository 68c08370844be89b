//! A worktree made for one launch, held by a guard until the launch keeps
//! it: every way out of a launch that fails removes it, once, here, rather
//! than each error path remembering to. Removal goes through
//! `Core::drop_worktree`, so the never-lose-work rules of `close` hold
//! (anything written there meanwhile is saved first).
//!
//! The launch ends with [`FreshWorktree::settle`], which removes the
//! worktree of a failed launch before the caller gets the error (so the
//! error means "nothing is left"). A guard dropped unsettled (the request
//! was cancelled, a task panicked) hands the removal to a task instead,
//! and only while no tab holds the worktree.

use std::sync::Arc;

use super::state::Worktree;
use super::Core;
use crate::protocol::api::ApiError;

#[must_use = "a fresh worktree is removed by `settle` when its launch fails"]
pub(super) struct FreshWorktree {
    held: Option<Held>,
}

struct Held {
    core: Arc<Core>,
    tab: String,
    worktree: Worktree,
}

impl FreshWorktree {
    /// No worktree was made for this launch (a restart's, a terminal's).
    pub(super) fn none() -> Self {
        FreshWorktree { held: None }
    }

    /// `worktree`, just made for tab `tab`'s launch.
    pub(super) fn new(core: &Arc<Core>, tab: &str, worktree: Option<Worktree>) -> Self {
        FreshWorktree {
            held: worktree.map(|worktree| Held {
                core: core.clone(),
                tab: tab.to_string(),
                worktree,
            }),
        }
    }

    /// The worktree is not this launch's to remove any more: the tab holds
    /// it (running, or refused and waiting for `nerdr restart`), or a
    /// `nerdr close` that came meanwhile decided about it.
    pub(super) fn keep(&mut self) {
        self.held = None;
    }

    /// The launch's answer, once the worktree of a launch that failed
    /// without keeping it is gone.
    pub(super) async fn settle<T>(mut self, r: Result<T, ApiError>) -> Result<T, ApiError> {
        match (self.held.take(), &r) {
            (Some(h), Err(_)) => h.core.drop_worktree(&h.tab, Some(h.worktree)).await,
            // Answered: a launch that succeeded keeps it, whether or not
            // it said so.
            (Some(_), Ok(_)) | (None, _) => {}
        }
        r
    }
}

impl Drop for FreshWorktree {
    fn drop(&mut self) {
        let Some(h) = self.held.take() else { return };
        // A tab recorded with it may run in it: that tab's close decides.
        if h.core.state.lock().unwrap().tabs.contains_key(&h.tab) {
            return;
        }
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => drop(rt.spawn(async move {
                h.core.drop_worktree(&h.tab, Some(h.worktree)).await;
            })),
            Err(_) => tracing::warn!(
                worktree = %h.worktree.path.display(),
                "the worktree of a launch that did not happen stays (no runtime to remove it)"
            ),
        }
    }
}
