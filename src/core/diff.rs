//! `nerdr diff TAB` (and the window's diff view): the tab's work as one
//! patch, made in the core so every client gets the same one (see
//! `git::patch`). Git runs off the async workers.

use super::state::Worktree;
use super::Core;
use crate::git::{base, patch};
use crate::paths::Paths;
use crate::protocol::api::{ApiError, ErrorCode, TabDiff};

impl Core {
    pub(super) async fn diff_tab(&self, tab: &str, stat: bool) -> Result<TabDiff, ApiError> {
        let named = self.named_worktree(tab).await?;
        let w = named.worktree.clone();
        let (paths, id) = (self.paths.clone(), tab.to_string());
        let (diff, moved) = tokio::task::spawn_blocking(move || diff_of(&paths, &id, &w, stat))
            .await
            .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))??;
        if let Some(r) = moved {
            self.record_named_base(&named, r).await;
        }
        Ok(diff)
    }
}

/// The error for a tab that works in a folder of its own making.
pub(super) fn no_worktree(tab: &str) -> ApiError {
    ApiError::new(
        ErrorCode::BadRequest,
        format!(
            "tab {tab} has no worktree of its own (a terminal, a folder outside any git \
             repository, or started with --no-worktree), so it has no branch of work to show: \
             run git in its folder"
        ),
    )
}

/// The diff, and the base to record when it moved (`base::resolve`).
fn diff_of(
    paths: &Paths,
    tab: &str,
    w: &Worktree,
    stat: bool,
) -> Result<(TabDiff, Option<base::Recorded>), ApiError> {
    let bad = |m: String| ApiError::new(ErrorCode::BadRequest, m);
    let recorded = w.recorded_base().or_else(|| base::read_record(&w.path));
    let base = base::resolve(recorded, &w.repo, &w.branch)
        .map_err(|e| bad(format!("cannot tell where tab {tab}'s work started: {e}")))?;
    let missing = !w.path.exists();
    let err = |e: crate::git::GitError| bad(format!("cannot make tab {tab}'s diff: {e}"));
    let (made, uncommitted) = match missing {
        true => (
            patch::of_branch(paths, &w.repo, &base.commit, &w.branch, stat).map_err(err)?,
            Vec::new(),
        ),
        false => {
            let ignore_base = w.ignore_base();
            let snap = patch::worktree_tree(paths, &w.path, ignore_base.as_deref()).map_err(err)?;
            (
                patch::of_tree(paths, &w.path, &base.commit, &snap, stat).map_err(err)?,
                patch::uncommitted(paths, &w.path, &snap).map_err(err)?,
            )
        }
    };
    let made = patch::fits(made, &w.path, &base.commit).map_err(bad)?;
    let moved = base.moved.then(|| base.record());
    let diff = TabDiff {
        tab: tab.to_string(),
        worktree: w.path.clone(),
        repo: w.repo.clone(),
        branch: w.branch.clone(),
        base: base.commit,
        base_branch: base.branch,
        base_recorded: base.recorded,
        worktree_missing: missing,
        patch: String::from_utf8_lossy(&made).into_owned(),
        uncommitted,
    };
    Ok((diff, moved))
}
