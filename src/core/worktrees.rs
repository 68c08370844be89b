//! `nerdr worktrees` and `nerdr clean`: every nerdr worktree with its
//! tab, and the removal of closed tabs' merged ones (`git::listing`,
//! `git::clean`). The tabs are read under the state lock; git runs after,
//! off the async workers.

use std::path::{Path, PathBuf};

use super::diff::no_worktree;
use super::not_found::no_tab;
use super::state::Worktree;
use super::Core;
use crate::git::base::{self, Recorded};
use crate::git::clean::{self, Verdict};
use crate::git::left_branch;
use crate::git::listing::{self, Known};
use crate::git::unsaved::ChangeKind;
use crate::protocol::api::{ApiError, CleanEntry, Cleaned, ErrorCode, TabState, WorktreeInfo};

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

/// A closed tab's worktree another open tab still works in.
fn shared_note(path: &Path, other: &str, name: &str) -> String {
    let named = match name.is_empty() {
        true => format!("tab {other}"),
        false => format!("tab {other} ({name})"),
    };
    format!(
        "its worktree {} stays with {named}, which works in it too (a handoff shares it)",
        path.display()
    )
}

/// How to commit uncommitted work of `kinds` at `path`: `commit -a`
/// takes no untracked file, so with one `add -A` comes first; staged
/// work alone needs only `commit`. `None` (git could not tell): the
/// command that takes everything.
pub fn commit_advice(path: &Path, kinds: Option<&[ChangeKind]>) -> String {
    let p = path.display();
    let all = format!("git -C {p} add -A && git -C {p} commit");
    let Some(kinds) = kinds else { return all };
    if kinds
        .iter()
        .any(|k| matches!(k, ChangeKind::Untracked | ChangeKind::Ignored))
    {
        all
    } else if kinds.iter().all(|k| *k == ChangeKind::Staged) {
        format!("git -C {p} commit")
    } else {
        format!("git -C {p} commit -a")
    }
}

/// The note for a closed tab's worktree holding `unmerged` commits and
/// uncommitted work of `dirty` kinds, one per path (`None`: git could
/// not tell). `owner` is the id `diff`/`merge` know the worktree by.
fn left_note(
    closing: &str,
    owner: &str,
    path: &Path,
    branch: &str,
    unmerged: Option<usize>,
    dirty: Option<&[ChangeKind]>,
) -> Option<String> {
    let plural = |n: usize, one: &str, many: &str| match n {
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    };
    let mut held = Vec::new();
    match unmerged {
        Some(0) => {}
        Some(n) => held.push(plural(n, "unmerged commit", "unmerged commits")),
        None => held.push("commits nerdr cannot compare with their base".into()),
    }
    match dirty.map(<[_]>::len) {
        Some(0) => {}
        Some(n) => held.push(format!(
            "{} with uncommitted work",
            plural(n, "path", "paths")
        )),
        None => held.push("perhaps uncommitted work (git cannot tell)".into()),
    }
    if held.is_empty() {
        return None;
    }
    let commit_first = match dirty.map(<[_]>::len) {
        Some(0) => String::new(),
        _ => format!(
            " (commit the uncommitted work first: `{}`)",
            commit_advice(path, dirty)
        ),
    };
    // A handoff's tab closing after the tab that made the worktree.
    let whose = match closing == owner {
        true => "its worktree".to_string(),
        false => format!("the worktree of tab {owner} it worked in,"),
    };
    Some(format!(
        "{whose} {} stays, on branch {branch}, with {}: see it with `nerdr diff \
         {owner}`, bring it home with `nerdr merge {owner}`{commit_first}",
        path.display(),
        held.join(" and ")
    ))
}

/// A base that moved since it was recorded: the open tab's id, the
/// worktree and the base to record.
fn moved_base(f: &listing::Facts) -> Option<(Option<String>, PathBuf, Recorded)> {
    let b = f.base.as_ref().filter(|b| b.moved)?;
    Some((
        f.found.tab.as_ref().map(|k| k.tab.clone()),
        f.found.path.clone(),
        b.record(),
    ))
}

/// What became of a `nerdr/*` branch with no worktree: the verdict,
/// carried out unless `dry_run`.
fn left_entry(b: &left_branch::Branch, merged: bool, dry_run: bool) -> CleanEntry {
    let mut e = CleanEntry {
        path: b.input.repo.clone(),
        branch: Some(b.input.branch.clone()),
        tab: None,
        tab_name: None,
        action: "kept".into(),
        branch_deleted: false,
        why: String::new(),
        branch_only: true,
    };
    match left_branch::verdict(&b.input, merged) {
        left_branch::Verdict::Keep(why) => e.why = why,
        left_branch::Verdict::Delete(why) if dry_run => {
            e.action = "would delete".into();
            e.branch_deleted = true;
            e.why = why;
        }
        left_branch::Verdict::Delete(why) => match left_branch::apply(b) {
            Ok(()) => {
                e.action = "deleted".into();
                e.branch_deleted = true;
                e.why = why;
            }
            Err(kept) => e.why = kept,
        },
    }
    e
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
        tab: facts.found.tab.as_ref().map(|k| k.tab.clone()),
        tab_name: facts.found.tab.as_ref().map(|k| k.name.clone()),
        action: "kept".into(),
        branch_deleted: false,
        why: String::new(),
        branch_only: false,
    };
    let base = facts
        .base
        .as_ref()
        .and_then(|b| b.branch.clone())
        .unwrap_or_default();
    match verdict {
        Verdict::Keep(why) => e.why = why,
        Verdict::Remove { branch } => {
            let said = match (facts.base_gone, branch) {
                (true, true) => format!(
                    "it has no commits of its own (its base branch {base} is gone); its branch \
                     goes too"
                ),
                (true, false) => format!(
                    "it has no commits of its own (its base branch {base} is gone); its branch \
                     stays (`--merged` deletes it)"
                ),
                (false, true) => format!("its work is merged into {base}; its branch goes too"),
                (false, false) => format!(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_tab_says_what_it_left_and_how_to_get_it() {
        use ChangeKind::*;
        let note = |u, d: Option<&[ChangeKind]>| {
            left_note("ab12", "ab12", Path::new("/w/ab12"), "nerdr/ab12", u, d)
        };
        assert_eq!(note(Some(0), Some(&[])), None);
        let n = note(Some(2), Some(&[])).unwrap();
        assert_eq!(
            n,
            "its worktree /w/ab12 stays, on branch nerdr/ab12, with 2 unmerged commits: see it \
             with `nerdr diff ab12`, bring it home with `nerdr merge ab12`"
        );
        let n = note(Some(1), Some(&[Modified, Modified, Staged])).unwrap();
        assert!(
            n.contains("1 unmerged commit and 3 paths with uncommitted work"),
            "{n}"
        );
        assert!(
            n.contains("commit the uncommitted work first: `git -C /w/ab12 commit -a`"),
            "{n}"
        );
        let n = note(Some(0), Some(&[Untracked])).unwrap();
        assert!(n.contains("with 1 path with uncommitted work:"), "{n}");
        assert!(
            n.contains("`git -C /w/ab12 add -A && git -C /w/ab12 commit`"),
            "an untracked file is not in `commit -a`: {n}"
        );
        let n = note(None, None).unwrap();
        assert!(
            n.contains("cannot compare") && n.contains("cannot tell"),
            "{n}"
        );
        assert!(n.contains("add -A"), "{n}");
        // A handoff's tab closing after the tab that made the worktree.
        let n = left_note(
            "cd34",
            "ab12",
            Path::new("/w/ab12"),
            "nerdr/ab12",
            Some(1),
            Some(&[]),
        )
        .unwrap();
        assert!(
            n.starts_with("the worktree of tab ab12 it worked in, /w/ab12 stays")
                && n.contains("`nerdr diff ab12`")
                && n.contains("`nerdr merge ab12`")
                && !n.contains("cd34"),
            "{n}"
        );
    }

    #[test]
    fn the_commit_advice_fits_what_is_uncommitted() {
        use ChangeKind::*;
        let w = Path::new("/w");
        let all = "git -C /w add -A && git -C /w commit";
        #[rustfmt::skip]
        let rows: &[(&str, Option<&[ChangeKind]>, &str)] = &[
            ("modified files", Some(&[Modified, StagedAndModified]), "git -C /w commit -a"),
            ("staged only", Some(&[Staged, Staged]), "git -C /w commit"),
            ("an untracked file", Some(&[Untracked]), all),
            ("untracked among modified", Some(&[Modified, Untracked]), all),
            ("ignored by an uncommitted rule", Some(&[Ignored]), all),
            ("git could not tell", None, all),
        ];
        for (what, kinds, want) in rows {
            assert_eq!(commit_advice(w, *kinds), *want, "{what}");
        }
    }

    #[test]
    fn a_shared_worktree_stays_with_the_open_tab() {
        let n = shared_note(Path::new("/w/ab12"), "ab12", "sh-1");
        assert_eq!(
            n,
            "its worktree /w/ab12 stays with tab ab12 (sh-1), which works in it too (a handoff \
             shares it)"
        );
        assert!(!n.contains("merge"), "{n}");
    }
}
