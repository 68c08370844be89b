//! `nerdr worktrees` and `nerdr clean`: every nerdr worktree with its
//! tab, and the removal of closed tabs' merged ones (`git::listing`,
//! `git::clean`). The tabs are read under the state lock; git runs after,
//! off the async workers.

use super::Core;
use crate::git::clean::{self, Verdict};
use crate::git::listing::{self, Known};
use crate::protocol::api::{ApiError, CleanEntry, Cleaned, ErrorCode, TabState, WorktreeInfo};

impl Core {
    /// The tabs' worktrees, as `git::listing` takes them.
    fn known_worktrees(&self) -> Vec<Known> {
        let state = self.state.lock().unwrap();
        state
            .tabs
            .values()
            .filter_map(|t| {
                let w = t.worktree.as_ref()?;
                Some(Known {
                    tab: t.id.clone(),
                    name: t.name.clone(),
                    state: t.state.as_str().to_string(),
                    running: matches!(t.state, TabState::Running | TabState::Starting),
                    path: w.path.clone(),
                    repo: w.repo.clone(),
                    branch: w.branch.clone(),
                    recorded: w.recorded_base(),
                })
            })
            .collect()
    }

    pub(super) async fn list_worktrees(&self) -> Result<Vec<WorktreeInfo>, ApiError> {
        let known = self.known_worktrees();
        let paths = self.paths.clone();
        tokio::task::spawn_blocking(move || {
            listing::find(&paths, &known)
                .into_iter()
                .map(|f| listing::facts(&paths, f).info())
                .collect::<Vec<_>>()
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))
    }

    pub(super) async fn clean_worktrees(
        &self,
        merged: bool,
        dry_run: bool,
    ) -> Result<Cleaned, ApiError> {
        let known = self.known_worktrees();
        let paths = self.paths.clone();
        let entries = tokio::task::spawn_blocking(move || {
            listing::find(&paths, &known)
                .into_iter()
                .map(|f| {
                    let facts = listing::facts(&paths, f);
                    let verdict = clean::verdict(&clean::input_of(&facts), merged);
                    entry(&paths, &facts, verdict, dry_run)
                })
                .collect::<Vec<_>>()
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
        for e in entries.iter().filter(|e| e.action == "removed") {
            tracing::info!(
                worktree = %e.path.display(),
                branch_deleted = e.branch_deleted,
                "clean removed a merged worktree"
            );
        }
        Ok(Cleaned { dry_run, entries })
    }
}

/// What became of one worktree: the verdict, carried out unless `dry_run`.
fn entry(
    paths: &crate::paths::Paths,
    facts: &listing::Facts,
    verdict: Verdict,
    dry_run: bool,
) -> CleanEntry {
    let mut e = CleanEntry {
        path: facts.found.path.clone(),
        branch: facts.found.branch.clone(),
        action: "kept".into(),
        branch_deleted: false,
        why: String::new(),
    };
    let base = facts
        .base
        .as_ref()
        .and_then(|b| b.branch.clone())
        .unwrap_or_default();
    match verdict {
        Verdict::Keep(why) => e.why = why,
        Verdict::Remove { branch } => {
            let said = match branch {
                true => format!("its work is merged into {base}; its branch goes too"),
                false => format!(
                    "its work is merged into {base}; its branch stays (`--merged` deletes it)"
                ),
            };
            if dry_run {
                e.action = "would remove".into();
                e.branch_deleted = branch;
                e.why = said;
            } else {
                match clean::apply(paths, facts, branch) {
                    Ok(()) => {
                        e.action = "removed".into();
                        e.branch_deleted = branch;
                        e.why = said;
                    }
                    Err(why) => e.why = why,
                }
            }
        }
    }
    e
}
