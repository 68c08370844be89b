//! `nerdr worktrees` and `nerdr clean`: every nerdr worktree with its
//! tab, and the removal of closed tabs' merged ones (`git::listing`,
//! `git::clean`). The tabs are read under the state lock; git runs after,
//! off the async workers.

use std::path::Path;

use super::clean_entry::{entry, left_entry, left_note, moved_base, shared_note};
use super::diff::no_worktree;
use super::not_found::no_tab;
use super::state::Worktree;
use super::Core;
use crate::git::base::{self, Recorded};
use crate::git::clean;
use crate::git::left_branch;
use crate::git::listing::{self, Known};
use crate::protocol::api::{ApiError, Cleaned, ErrorCode, TabState, WorktreeInfo};

/// The worktree a `diff` or `merge` names: an open tab's, or one a closed
/// tab left (named by its branch `nerdr/<id>` or that id).
#[derive(Debug, Clone)]
pub(super) struct Named {
    /// The open tab's id; `None` for a closed tab's worktree.
    pub tab: Option<String>,
    /// The open tab's name (empty for a closed one).
    pub name: String,
    pub worktree: Worktree,
    /// A closed tab's branch whose worktree is gone: its base is the one
    /// recorded when the worktree went, never recorded again.
    pub left: bool,
}

/// What a handle that is no open tab names.
enum Closed {
    /// A worktree a closed tab left.
    Worktree(listing::Found),
    /// A closed tab's branch whose worktree is gone.
    Left(Named),
}

/// A closed tab's branch whose worktree is gone, as `diff`/`merge` take
/// it: its base as recorded when the worktree went, or why there is none.
fn left_named(b: &left_branch::Branch) -> Result<Named, String> {
    let (repo, branch) = (&b.input.repo, &b.input.branch);
    let base = left_branch::base_of(branch, repo, b.left.as_ref())?;
    // A base comes from a record, which sits where the worktree was.
    let path = b
        .worktree_path()
        .ok_or_else(|| format!("the branch {branch}'s record is not where nerdr keeps them"))?;
    Ok(Named {
        tab: None,
        name: String::new(),
        worktree: Worktree {
            // No folder is there: the branch's commits are the work.
            path,
            repo: repo.clone(),
            branch: branch.clone(),
            base: Some(base.commit),
            base_branch: base.branch,
        },
        left: true,
    })
}

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

    /// Every open tab without a worktree of its own and the folder it
    /// runs in: one inside a closed tab's worktree (a conversation resumed
    /// there) keeps that worktree from `nerdr clean`.
    fn dwellers(&self) -> Vec<clean::Dweller> {
        let state = self.state.lock().unwrap();
        state
            .tabs
            .values()
            .filter(|t| t.worktree.is_none())
            .map(|t| clean::Dweller {
                tab: t.id.clone(),
                running: matches!(t.state, TabState::Running | TabState::Starting),
                folder: t.cwd.clone(),
            })
            .collect()
    }

    /// The worktree `handle` names: the open tab's (resolved by
    /// `core::naming` already), else a closed tab's that nerdr made (see
    /// `listing::names`). Only the person and unsandboxed tabs get to the
    /// second (`request_facts::classify`: no tab is `Target::Nothing`).
    pub(super) async fn named_worktree(&self, handle: &str) -> Result<Named, ApiError> {
        let open = {
            let state = self.state.lock().unwrap();
            state
                .tabs
                .get(handle)
                .map(|t| (t.worktree.clone(), t.name.clone()))
        };
        match open {
            Some((Some(w), name)) => {
                return Ok(Named {
                    tab: Some(handle.to_string()),
                    name,
                    worktree: w,
                    left: false,
                })
            }
            Some((None, _)) => return Err(no_worktree(handle)),
            None => {}
        }
        let known = self.known_worktrees();
        let (paths, h) = (self.paths.clone(), handle.to_string());
        let found = tokio::task::spawn_blocking(move || {
            let all = listing::find(&paths, &known);
            if let Some(f) = all.iter().find(|f| listing::names(&h, f)) {
                return Ok(Some(Closed::Worktree(f.clone())));
            }
            // A closed tab's branch whose worktree is gone.
            match left_branch::find(&paths, &known, &all)
                .into_iter()
                .find(|b| left_branch::names(&h, &b.input.branch))
            {
                Some(b) => left_named(&b).map(|n| Some(Closed::Left(n))),
                None => Ok(None),
            }
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?
        .map_err(|why| ApiError::new(ErrorCode::BadRequest, why))?;
        let f = match found {
            Some(Closed::Worktree(f)) => f,
            Some(Closed::Left(named)) => return Ok(named),
            None => return Err(no_tab(handle)),
        };
        let (Some(repo), Some(branch)) = (f.repo, f.branch) else {
            return Err(no_tab(handle));
        };
        let recorded = base::read_record(&f.path);
        Ok(Named {
            tab: None,
            name: String::new(),
            worktree: Worktree {
                path: f.path,
                repo,
                branch,
                base: recorded.as_ref().map(|r| r.commit.clone()),
                base_branch: recorded.and_then(|r| r.branch),
            },
            left: false,
        })
    }

    /// The base of what `diff`/`merge` named moved: recorded where its base
    /// was read from (a left branch's record, or the worktree's).
    pub(super) async fn record_named_base(&self, named: &Named, r: Recorded) {
        if !named.left {
            return self
                .record_base(named.tab.as_deref(), &named.worktree.path, r)
                .await;
        }
        let w = &named.worktree;
        let left = left_branch::Left {
            repo: w.repo.clone(),
            base_branch: r.branch,
            base_commit: Some(r.commit),
        };
        let path = w.path.clone();
        let _ = tokio::task::spawn_blocking(move || left_branch::write(&path, &left)).await;
    }

    /// A worktree's base moved (`base::resolve`, a rebase): record it in
    /// the file beside the worktree and in its open tab's record.
    pub(super) async fn record_base(&self, tab: Option<&str>, path: &Path, r: Recorded) {
        let (file_path, file_r) = (path.to_path_buf(), r.clone());
        let _ = tokio::task::spawn_blocking(move || base::write_record(&file_path, &file_r)).await;
        self.set_recorded(tab, path, r);
    }

    fn set_recorded(&self, tab: Option<&str>, path: &Path, r: Recorded) {
        let Some(tab) = tab else { return };
        let set = {
            let mut state = self.state.lock().unwrap();
            match state
                .tabs
                .get_mut(tab)
                .and_then(|t| t.worktree.as_mut())
                .filter(|w| w.path == path)
            {
                Some(w) => {
                    tracing::info!(tab = %tab, base = %r.commit, "the tab's base moved");
                    w.base = Some(r.commit);
                    w.base_branch = r.branch;
                    true
                }
                None => false,
            }
        };
        if set {
            self.changed();
        }
    }

    /// The open tab (id, name) that works in worktree `path`, once the
    /// tab closing has gone from the state: the one a handoff shares it
    /// with. The first by id, as `shared_worktree::others_in` names it.
    pub(super) fn open_sharer(&self, path: &Path) -> Option<(String, String)> {
        let state = self.state.lock().unwrap();
        let mut sharing: Vec<(String, String)> = state
            .tabs
            .values()
            .filter(|t| {
                let w = t.worktree.as_ref().map(|w| w.path.as_path());
                super::shared_worktree::place(w, &t.cwd).starts_with(path)
            })
            .map(|t| (t.id.clone(), t.name.clone()))
            .collect();
        sharing.sort();
        sharing.into_iter().next()
    }

    /// What a closed tab left in its worktree that is not home yet, said
    /// with how to get it (`nerdr close` without `--remove-worktree`,
    /// `nerdr quit`). A worktree another open tab still works in (a
    /// handoff shares it) is that tab's: said so, with no advice.
    pub(super) async fn left_behind(&self, id: &str, w: &Worktree) -> Option<String> {
        if let Some((other, name)) = self.open_sharer(&w.path) {
            return Some(shared_note(&w.path, &other, &name));
        }
        let (paths, w, id) = (self.paths.clone(), w.clone(), id.to_string());
        // The worktree's own tab names it in `diff`/`merge`: for a
        // handoff's tab that is the tab that made it, not the one closing.
        let owner = listing::closed_id(false, Some(&w.branch))
            .unwrap_or(&id)
            .to_string();
        tokio::task::spawn_blocking(move || {
            if !w.path.exists() {
                return None;
            }
            let dirty = crate::git::unsaved::changes(&paths, &w.path, w.ignore_base().as_deref())
                .map(|c| c.iter().map(|c| c.kind).collect::<Vec<_>>())
                .ok();
            let unmerged = unmerged(&paths, &w);
            left_note(&id, &owner, &w.path, &w.branch, unmerged, dirty.as_deref())
        })
        .await
        .ok()
        .flatten()
    }

    pub(super) async fn list_worktrees(&self) -> Result<Vec<WorktreeInfo>, ApiError> {
        let known = self.known_worktrees();
        let paths = self.paths.clone();
        let listed = tokio::task::spawn_blocking(move || {
            listing::find(&paths, &known)
                .into_iter()
                .map(|f| {
                    let facts = listing::facts(&paths, f);
                    let moved = moved_base(&facts);
                    if let Some((_, path, r)) = &moved {
                        base::write_record(path, r);
                    }
                    (facts.info(), moved)
                })
                .collect::<Vec<_>>()
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
        let mut out = Vec::with_capacity(listed.len());
        for (info, moved) in listed {
            if let Some((tab, path, r)) = moved {
                self.set_recorded(tab.as_deref(), &path, r);
            }
            out.push(info);
        }
        Ok(out)
    }

    pub(super) async fn clean_worktrees(
        &self,
        merged: bool,
        dry_run: bool,
    ) -> Result<Cleaned, ApiError> {
        let known = self.known_worktrees();
        let dwellers = self.dwellers();
        let paths = self.paths.clone();
        let entries = tokio::task::spawn_blocking(move || {
            let found = listing::find(&paths, &known);
            let dwellers: Vec<clean::Dweller> = dwellers
                .into_iter()
                .map(|mut d| {
                    d.folder = std::fs::canonicalize(&d.folder).unwrap_or(d.folder);
                    d
                })
                .collect();
            // Found before any worktree goes: a branch this run keeps
            // beside a removed worktree is said with the worktree.
            let left = left_branch::find(&paths, &known, &found);
            let mut out = found
                .into_iter()
                .map(|f| {
                    let facts = listing::facts(&paths, f);
                    let mut input = clean::input_of(&facts);
                    if input.occupant == clean::Occupant::Nobody {
                        input.occupant = clean::dweller(&facts.found.path, &dwellers);
                    }
                    let verdict = clean::verdict(&input, merged);
                    entry(&paths, &facts, verdict, dry_run)
                })
                .collect::<Vec<_>>();
            out.extend(left.iter().map(|b| left_entry(b, merged, dry_run)));
            out
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

/// The commits of `w`'s branch not in its base yet (0 when their
/// content is there: a squash merge); `None` when git cannot compare.
pub(super) fn unmerged(paths: &crate::paths::Paths, w: &Worktree) -> Option<usize> {
    let recorded = w.recorded_base().or_else(|| base::read_record(&w.path));
    let b = base::resolve(recorded, &w.repo, &w.branch).ok()?;
    let bb = b.branch.clone()?;
    if b.recorded && !listing::branch_exists(&w.repo, &bb) {
        // Its base branch went: the recorded commit says what is its own.
        return listing::ahead_of_commit(&w.repo, &w.branch, &b.commit);
    }
    let (ahead, _) = listing::ahead_behind(&w.repo, &w.branch, &bb)?;
    let merged = ahead == 0 || listing::content_merged(paths, &w.repo, &w.branch, &bb);
    Some(if merged { 0 } else { ahead })
}
