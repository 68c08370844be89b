//! Closing a tab, and removing its worktree without losing work: work no
//! commit holds refuses `--remove-worktree` before anything is stopped
//! (the tab stays open); with `--force` it is saved under
//! `refs/nerdr/saved/` first, and so is work that appears while the
//! program stops. The rule is `git::unsaved::decide`; the git is in
//! `git::unsaved` and `git::saved`. Every removal of a worktree nerdr
//! makes goes through [`Core::remove_worktree`].

use super::not_found::no_tab;
use super::state::Worktree;
use super::Core;
use crate::git::saved::{self, Saved};
use crate::git::unsaved::{self, Removal, Stage};
use crate::protocol::api::{ApiError, ErrorCode};
use crate::protocol::replies::{Closed, SavedWork, WorktreeRemoved};

/// What a removal did, for the log; the reply carries it as a
/// [`WorktreeRemoved`].
#[derive(Debug, Clone)]
pub(super) struct Removed {
    pub(super) worktree: std::path::PathBuf,
    /// Where the work no commit held went, if there was any.
    pub(super) saved: Option<Saved>,
    pub(super) branch: String,
    /// Commits of the branch that no other branch has.
    pub(super) branch_only_commits: Option<usize>,
    /// Commits of the branch not in its base (`worktrees::unmerged`).
    pub(super) unmerged: Option<usize>,
}

impl From<Removed> for WorktreeRemoved {
    fn from(r: Removed) -> Self {
        WorktreeRemoved {
            worktree: r.worktree,
            saved: r.saved.map(|s| SavedWork {
                reference: s.reference,
                commit: s.commit,
                ignored: s.ignored,
            }),
            branch: r.branch,
            branch_only_commits: r.branch_only_commits,
            unmerged: r.unmerged,
        }
    }
}

impl Core {
    /// Stop the tab's program (if it still runs) and forget the tab; with
    /// `remove_worktree`, remove its worktree too (see the module doc).
    pub async fn close_tab(
        &self,
        tab: &str,
        remove_worktree: bool,
        force: bool,
    ) -> Result<Closed, ApiError> {
        let (worktree, shared) = {
            let state = self.state.lock().unwrap();
            let t = state.tabs.get(tab).ok_or_else(|| no_tab(tab))?;
            let shared = t.worktree.as_ref().and_then(|w| {
                let tabs = state.tabs.values().map(|o| {
                    let w = o.worktree.as_ref().map(|w| w.path.as_path());
                    (
                        o.id.as_str(),
                        Some(super::shared_worktree::place(w, &o.cwd)),
                    )
                });
                super::shared_worktree::others_in(&w.path, tab, tabs)
                    .map(|other| super::shared_worktree::refusal(tab, &w.path, other))
            });
            (t.worktree.clone(), shared)
        };
        // A worktree another tab works in (a handoff's) is not removed
        // from under it; closing without removing it is always fine.
        if let (true, Some(why)) = (remove_worktree, shared) {
            return Err(ApiError::new(ErrorCode::BadRequest, why));
        }
        if let (true, Some(w)) = (remove_worktree, &worktree) {
            self.refuse_unsaved(tab, w, force).await?;
        }
        let _ = self.host.stop(tab).await;
        self.host.forget(tab);
        let removed = {
            let mut state = self.state.lock().unwrap();
            state.turns.forget(tab);
            state.remove(tab)
        };
        self.forget_questions_of(tab);
        self.forget_gate(tab);
        let mut reply = Closed::default();
        if let Some(t) = removed {
            tracing::info!(tab = %t.id, agent = %t.agent, "closed tab");
            reply.tab = t.id.clone();
            reply.name = t.name.clone();
            if let (false, Some(w)) = (remove_worktree, &t.worktree) {
                reply.left = self.left_behind(&t.id, w).await;
            }
            if let (true, Some(w)) = (remove_worktree, t.worktree) {
                match self.remove_worktree(tab, &w).await {
                    Ok(r) => reply.removed = Some(r.into()),
                    Err(e) => {
                        self.changed();
                        return Err(ApiError::new(
                            ErrorCode::Internal,
                            format!("closed tab {tab}, but its worktree stays: {e}"),
                        ));
                    }
                }
            }
        }
        self.changed();
        Ok(reply)
    }

    /// Before anything is stopped: refuse to remove a worktree holding
    /// work no commit holds, unless `force`; and refuse when git cannot
    /// tell (the guard refused, say): nothing is lost by asking again.
    async fn refuse_unsaved(&self, tab: &str, w: &Worktree, force: bool) -> Result<(), ApiError> {
        let (paths, path) = (self.paths.clone(), w.path.clone());
        let wt = w.clone();
        let changes = tokio::task::spawn_blocking(move || {
            if !path.exists() {
                // Removed by hand already: nothing there to lose.
                return Ok(Vec::new());
            }
            unsaved::changes(&paths, &path, wt.ignore_base().as_deref())
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?
        .map_err(|e| {
            ApiError::new(
                ErrorCode::BadRequest,
                format!(
                    "tab {tab} was not closed: cannot tell whether its worktree {} holds \
                         uncommitted work: {e}",
                    w.path.display()
                ),
            )
        })?;
        match unsaved::decide(Stage::Asked, !changes.is_empty(), nested(&changes), force) {
            Removal::Go | Removal::SaveThenRemove => Ok(()),
            Removal::Keep => Err(ApiError::new(
                ErrorCode::BadRequest,
                format!(
                    "tab {tab} was not closed: its worktree {} holds a repository of its own, \
                     whose files and commits nerdr cannot save (host git does not look inside \
                     one: that would run its config), so it is not removed, not even with \
                     --force:{}\n\
                     move each nested repository out of the worktree (or delete it, if \
                     nothing there is wanted), then close again; or close the tab and keep \
                     the worktree (`nerdr close {tab}`)",
                    w.path.display(),
                    unsaved::listed(&changes, 20),
                ),
            )),
            Removal::Refuse => Err(ApiError::new(
                ErrorCode::BadRequest,
                format!(
                    "tab {tab} was not closed: its worktree {} holds work no commit has \
                     (ignored files count unless a .gitignore unchanged since the tab's \
                     base, info/exclude or your global excludes ignore them):{}\n\
                     commit it there, or close the tab and keep the worktree (`nerdr close \
                     {tab}`), or save the work under {}{tab} and remove the worktree anyway \
                     (`nerdr close --remove-worktree --force {tab}`; `nerdr saved` lists \
                     saved work)",
                    w.path.display(),
                    unsaved::listed(&changes, 20),
                    saved::PREFIX,
                ),
            )),
        }
    }

    /// Remove worktree `w` of tab `tab`, whose program has stopped: work no
    /// commit holds is saved first; if it cannot be saved, the worktree
    /// stays. The branch always stays, and so does its base (in
    /// `<id>.left.json`, `git::left_branch`), so `nerdr diff`/`merge` of
    /// the branch know which commits are its work.
    pub(super) async fn remove_worktree(&self, tab: &str, w: &Worktree) -> Result<Removed, String> {
        let (paths, w, id) = (self.paths.clone(), w.clone(), tab.to_string());
        let removed = tokio::task::spawn_blocking(move || -> Result<Removed, String> {
            let recorded = w
                .recorded_base()
                .or_else(|| crate::git::base::read_record(&w.path));
            // Counted while the base's record is still beside the worktree.
            let unmerged = super::worktrees::unmerged(&paths, &w);
            let keep_base = || {
                let left = crate::git::left_branch::Left {
                    repo: w.repo.clone(),
                    base_branch: recorded.as_ref().and_then(|r| r.branch.clone()),
                    base_commit: recorded.as_ref().map(|r| r.commit.clone()),
                };
                crate::git::left_branch::write(&w.path, &left);
            };
            if !w.path.exists() {
                // Removed by hand: git's record of it is all that is left.
                crate::git::query(&w.repo, &["worktree", "prune"]).map_err(|e| e.to_string())?;
                keep_base();
                return Ok(Removed {
                    worktree: w.path.clone(),
                    branch_only_commits: unsaved::commits_only_on(&w.repo, &w.branch),
                    unmerged,
                    branch: w.branch.clone(),
                    saved: None,
                });
            }
            let ignore_base = w.ignore_base();
            let changes =
                unsaved::changes(&paths, &w.path, ignore_base.as_deref()).map_err(|e| {
                    format!("cannot tell whether it holds uncommitted work, so it was kept: {e}")
                })?;
            let saved = match unsaved::decide(
                Stage::Stopped,
                !changes.is_empty(),
                nested(&changes),
                true,
            ) {
                Removal::Keep => {
                    return Err(format!(
                        "it holds a repository of its own, whose work nerdr cannot save, so \
                         it was kept (move the nested repository out, then remove the \
                         worktree):{}",
                        unsaved::listed(&changes, 20)
                    ))
                }
                Removal::SaveThenRemove => {
                    let base = ignore_base.as_deref();
                    Some(
                        saved::save(&paths, &w.path, &id, &w.branch, base).map_err(|e| {
                            format!(
                                "it holds work no commit has, which could not be saved, so it was \
                             kept: {e}"
                            )
                        })?,
                    )
                }
                Removal::Go | Removal::Refuse => None,
            };
            crate::git::worktree::remove(&paths, &w.repo, &w.path).map_err(|e| {
                let kept = saved
                    .as_ref()
                    .map(|s| format!(" (its work was saved as {})", s.reference))
                    .unwrap_or_default();
                format!("{e}{kept}")
            })?;
            keep_base();
            Ok(Removed {
                worktree: w.path.clone(),
                branch_only_commits: unsaved::commits_only_on(&w.repo, &w.branch),
                unmerged,
                branch: w.branch.clone(),
                saved,
            })
        })
        .await
        .map_err(|e| e.to_string())??;
        match &removed.saved {
            Some(s) => tracing::info!(
                tab = %tab,
                worktree = %removed.worktree.display(),
                saved = %s.reference,
                "removed a worktree, its uncommitted work saved"
            ),
            None => {
                tracing::info!(tab = %tab, worktree = %removed.worktree.display(), "removed a worktree")
            }
        }
        Ok(removed)
    }

    /// Remove a worktree (and its branch, if it has nothing of its own)
    /// made for a launch that did not happen. The same rule as any
    /// removal: anything written there meanwhile (a wrapper run by the
    /// sandbox check) is saved first.
    pub(super) async fn drop_worktree(&self, tab: &str, worktree: Option<Worktree>) {
        let Some(w) = worktree else { return };
        match self.remove_worktree(tab, &w).await {
            Ok(_) => {
                let (repo, branch) = (w.repo.clone(), w.branch.clone());
                let record = crate::git::left_branch::record_file(&w.path);
                // `-d`, not `-D`: a branch with commits of its own stays.
                let _ = tokio::task::spawn_blocking(move || {
                    if crate::git::query(&repo, &["branch", "-d", &branch]).is_ok() {
                        // Gone with the launch that never was: the record
                        // of a kept branch the removal just wrote (nerdr's,
                        // named by this launch's new id) names nothing.
                        let _ = std::fs::remove_file(&record);
                    }
                })
                .await;
            }
            Err(e) => tracing::warn!(
                worktree = %w.path.display(),
                "the worktree of a launch that did not happen stays: {e}"
            ),
        }
    }
}

/// Whether `changes` name a nested repository (which cannot be saved).
fn nested(changes: &[unsaved::Change]) -> bool {
    changes
        .iter()
        .any(|c| c.kind == unsaved::ChangeKind::NestedRepository)
}
