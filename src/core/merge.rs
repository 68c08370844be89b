//! `nerdr merge TAB`: the tab's branch into the branch it started from, in
//! the main checkout (`git::merge` holds the rule and the git). Only the
//! person and unsandboxed tabs get here (the privilege matrix).

use super::Core;
use crate::git::{base, merge};
use crate::protocol::api::{ApiError, ErrorCode, MergeHow, Merged};

impl Core {
    pub(super) async fn merge_tab(
        &self,
        tab: &str,
        into: Option<String>,
        how: MergeHow,
        identity: Vec<(String, String)>,
    ) -> Result<Merged, ApiError> {
        let identity = merge::identity::admit(&identity)
            .map_err(|why| ApiError::new(ErrorCode::BadRequest, why))?;
        let named = self.named_worktree(tab).await?;
        let w = named.worktree.clone();
        let paths = self.paths.clone();
        let src = merge::Source {
            tab: named.tab.clone().unwrap_or_else(|| tab.to_string()),
            name: named.name.clone(),
            worktree: w.path.clone(),
            repo: w.repo.clone(),
            branch: w.branch.clone(),
            open: named.tab.is_some(),
        };
        let (merged, moved) = tokio::task::spawn_blocking(move || {
            let recorded = w.recorded_base().or_else(|| base::read_record(&w.path));
            let base = base::resolve(recorded, &w.repo, &w.branch).map_err(|e| {
                format!("nothing was merged: cannot tell where the tab's work started: {e}")
            })?;
            let merged = merge::merge(&paths, &src, &base, into, how, &identity)?;
            let moved = match &merged.new_base {
                Some(c) => Some(base::Recorded {
                    commit: c.clone(),
                    branch: base.branch.clone(),
                }),
                None => base.moved.then(|| base.record()),
            };
            Ok::<_, String>((merged, moved))
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?
        .map_err(|why| ApiError::new(ErrorCode::BadRequest, why))?;
        if let Some(r) = moved {
            self.record_named_base(&named, r).await;
        }
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
