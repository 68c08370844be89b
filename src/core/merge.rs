//! `nerdr merge TAB`: the tab's branch into the branch it started from, in
//! the main checkout (`git::merge` holds the rule and the git). Only the
//! person and unsandboxed tabs get here (the privilege matrix).

use super::diff::no_worktree;
use super::not_found::no_tab;
use super::Core;
use crate::git::{base, merge};
use crate::protocol::api::{ApiError, ErrorCode, MergeHow, Merged};

impl Core {
    pub(super) async fn merge_tab(
        &self,
        tab: &str,
        into: Option<String>,
        how: MergeHow,
    ) -> Result<Merged, ApiError> {
        let (worktree, name) = {
            let state = self.state.lock().unwrap();
            let t = state.tabs.get(tab).ok_or_else(|| no_tab(tab))?;
            (t.worktree.clone(), t.name.clone())
        };
        let Some(w) = worktree else {
            return Err(no_worktree(tab));
        };
        let paths = self.paths.clone();
        let src = merge::Source {
            tab: tab.to_string(),
            name,
            worktree: w.path.clone(),
            repo: w.repo.clone(),
            branch: w.branch.clone(),
        };
        let merged = tokio::task::spawn_blocking(move || {
            let recorded = w.recorded_base().or_else(|| base::read_record(&w.path));
            let base = base::resolve(recorded, &w.repo, &w.branch).map_err(|e| {
                format!("nothing was merged: cannot tell where the tab's work started: {e}")
            })?;
            merge::merge(&paths, &src, &base, into, how)
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?
        .map_err(|why| ApiError::new(ErrorCode::BadRequest, why))?;
        tracing::info!(
            tab = %tab,
            into = %merged.into,
            how = merged.how.as_str(),
            after = %merged.after,
            "merged a tab's branch"
        );
        Ok(merged)
    }
}
