//! `nerdr clean`: which worktrees go. Only a closed tab's worktree whose
//! work is all in its base branch (its commits, or their content after a
//! squash merge) and that holds no uncommitted work goes, and with
//! `--merged` its `nerdr/*` branch too; everything else is kept, with the
//! reason and what to do. [`verdict`] is the pure rule; [`apply`] does it,
//! looking at the worktree once more just before removing it.

use std::path::Path;

use super::listing::Facts;
use super::unsaved::{self, ChangeKind};
use super::GitError;
use crate::paths::Paths;

/// Who uses the worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Occupant {
    /// No tab: it was closed.
    Nobody,
    /// A tab whose program runs (or starts) in it.
    Running(String),
    /// An open tab whose program has stopped.
    Open(String),
}

/// The facts the rule looks at, as plain data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    pub occupant: Occupant,
    /// Made elsewhere than the data dir's `worktrees/` (by hand, on a
    /// `nerdr/*` branch): not nerdr's to remove.
    pub foreign: bool,
    /// The folder is no git worktree any more.
    pub stale: bool,
    /// The folder is gone; git still lists it.
    pub missing: bool,
    /// Holds a repository of its own (which nerdr cannot save).
    pub nested: bool,
    /// Holds work no commit has; `None` when git could not say.
    pub dirty: Option<bool>,
    pub branch: Option<String>,
    /// The branch is `nerdr/<id>` for the tab `<id>` whose worktree nerdr
    /// made here (the folder's name): the only branch clean deletes.
    pub own_branch: bool,
    pub base_branch: Option<String>,
    /// Commits of the branch its base branch lacks.
    pub ahead: Option<usize>,
    /// Its work is in the base branch (commits, or content).
    pub merged: Option<bool>,
    /// The base branch is gone: `ahead` counts from the recorded base.
    pub base_gone: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Remove the worktree; and its branch too when `branch`.
    Remove { branch: bool },
    /// Keep it, for this reason (with what to do).
    Keep(String),
}

/// The rule: see the module doc. `merged_flag` is `--merged`.
pub fn verdict(i: &Input, merged_flag: bool) -> Verdict {
    let keep = |s: String| Verdict::Keep(s);
    match &i.occupant {
        Occupant::Running(t) => return keep(format!("tab {t} is running in it")),
        Occupant::Open(t) => {
            return keep(format!(
                "tab {t} is open: close it first (`nerdr close {t}` keeps the worktree)"
            ))
        }
        Occupant::Nobody => {}
    }
    if i.foreign {
        return keep(
            "nerdr did not make it (it is not under its worktrees folder): remove it yourself \
             with `git worktree remove` if it is not wanted"
                .into(),
        );
    }
    if i.stale {
        return keep(
            "it is no git worktree any more: remove the folder by hand if nothing in it is \
             wanted"
                .into(),
        );
    }
    if i.nested {
        return keep(
            "it holds a repository of its own, whose work nerdr cannot save: move it out first"
                .into(),
        );
    }
    match (i.missing, i.dirty) {
        (false, None) => {
            return keep("git cannot tell whether it holds uncommitted work".into());
        }
        (false, Some(true)) => {
            return keep(
                "it holds work no commit has: commit it there (then merge), or remove the \
                 worktree yourself"
                    .into(),
            )
        }
        _ => {}
    }
    let Some(branch) = &i.branch else {
        return keep("its HEAD is detached: its commits are on no branch".into());
    };
    if !i.own_branch {
        return keep(format!(
            "it is on branch {branch}, not the branch nerdr made for it: nerdr removes only a \
             worktree on its own nerdr/<tab> branch (and never deletes another branch); switch it \
             back or remove it yourself with `git worktree remove`"
        ));
    }
    let Some(base) = &i.base_branch else {
        return keep(format!(
            "the branch {branch} was made on a detached HEAD, so where it merges is unknown"
        ));
    };
    match (i.merged, i.ahead) {
        (Some(true), _) => Verdict::Remove {
            branch: merged_flag,
        },
        (Some(false), Some(n)) if i.base_gone => keep(format!(
            "{n} commit{} of {branch} {} its own, and its base branch {base} is gone: see them \
             with `nerdr diff {branch}`, merge them with `nerdr merge {branch} --into BRANCH`, \
             or delete the branch yourself if they are not wanted",
            if n == 1 { "" } else { "s" },
            if n == 1 { "is" } else { "are" }
        )),
        (Some(false), Some(n)) => keep(format!(
            "{n} commit{} of {branch} {} not merged into {base}: see them with `nerdr diff \
             {branch}`, merge them with `nerdr merge {branch}`, or delete the branch yourself if \
             they are not wanted",
            if n == 1 { "" } else { "s" },
            if n == 1 { "is" } else { "are" }
        )),
        _ => keep(format!("cannot compare {branch} with {base}")),
    }
}

/// An open tab that has no worktree of its own, and the folder it runs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dweller {
    pub tab: String,
    pub running: bool,
    pub folder: std::path::PathBuf,
}

/// Who uses worktree `path` among tabs without one of their own: the
/// first (by id) that runs in it or in a folder inside it (`nerdr search
/// --open` resumes a conversation in the folder it ran in, which may be a
/// closed tab's worktree). A running one before an open one.
pub fn dweller(path: &Path, dwellers: &[Dweller]) -> Occupant {
    let mut inside: Vec<&Dweller> = dwellers
        .iter()
        .filter(|d| d.folder.starts_with(path))
        .collect();
    inside.sort_by(|a, b| b.running.cmp(&a.running).then(a.tab.cmp(&b.tab)));
    match inside.first() {
        None => Occupant::Nobody,
        Some(d) if d.running => Occupant::Running(d.tab.clone()),
        Some(d) => Occupant::Open(d.tab.clone()),
    }
}

/// The rule's input from the gathered facts, `occupant` given.
pub fn input_of(f: &Facts) -> Input {
    let occupant = match &f.found.tab {
        None => Occupant::Nobody,
        Some(k) if k.running => Occupant::Running(k.tab.clone()),
        Some(k) => Occupant::Open(k.tab.clone()),
    };
    Input {
        occupant,
        foreign: !f.found.made_by_nerdr,
        stale: f.found.repo.is_none(),
        missing: f.found.missing,
        nested: f
            .changes
            .as_ref()
            .is_some_and(|c| c.iter().any(|c| c.kind == ChangeKind::NestedRepository)),
        dirty: f.changes.as_ref().map(|c| !c.is_empty()),
        branch: f.found.branch.clone(),
        own_branch: f
            .found
            .branch
            .as_deref()
            .is_some_and(|b| super::listing::own_branch(&f.found.path, b)),
        base_branch: f.base.as_ref().and_then(|b| b.branch.clone()),
        ahead: f.ahead,
        merged: f.merged,
        base_gone: f.base_gone,
    }
}

/// Remove the worktree `f` describes (and its branch with `branch`), once
/// it is seen clean again just before: work written since it was listed
/// keeps it.
pub fn apply(paths: &Paths, f: &Facts, branch: bool) -> Result<(), String> {
    let repo = f.found.repo.as_deref().ok_or("no repository")?;
    if f.found.missing {
        super::query(repo, &["worktree", "prune"]).map_err(|e| e.to_string())?;
        let _ = std::fs::remove_file(super::base::record_file(&f.found.path));
    } else {
        let base = super::listing::ignore_base(&f.found);
        let now = unsaved::changes(paths, &f.found.path, base.as_deref())
            .map_err(|e| format!("kept: cannot tell whether it holds uncommitted work now: {e}"))?;
        if !now.is_empty() {
            return Err(format!(
                "kept: work no commit has appeared meanwhile:{}",
                unsaved::listed(&now, 10)
            ));
        }
        super::worktree::remove(paths, repo, &f.found.path).map_err(|e| e.to_string())?;
        remove_empty_parent(&f.found.path);
    }
    if !branch && f.found.branch.is_some() {
        // A later `--merged` needs to know where the kept branch merges.
        if let Some(parent) = f.found.path.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let base_branch = f.base.as_ref().and_then(|b| b.branch.clone());
        // A guessed base is no record: `nerdr diff` of the branch then says
        // it has none rather than take the guess as known.
        let base_commit = f
            .base
            .as_ref()
            .filter(|b| b.recorded)
            .map(|b| b.commit.clone());
        let left = super::left_branch::Left {
            repo: repo.to_path_buf(),
            base_branch,
            base_commit,
        };
        super::left_branch::write(&f.found.path, &left);
    }
    let own = |b: &str| super::listing::own_branch(&f.found.path, b);
    if let (true, Some(b)) = (branch, f.found.branch.as_deref().filter(|b| own(b))) {
        delete_branch(repo, b).map_err(|e| format!("the worktree went, its branch stays: {e}"))?;
    }
    Ok(())
}

/// A merged branch goes with `-D`: merged into its base branch, which
/// need not be the one checked out (`-d` would compare with that).
fn delete_branch(repo: &Path, branch: &str) -> Result<(), GitError> {
    super::query(repo, &["branch", "-D", branch]).map(drop)
}

/// The repository's folder under `worktrees/`, once its last worktree went.
fn remove_empty_parent(path: &Path) {
    if let Some(parent) = path.parent() {
        let _ = std::fs::remove_dir(parent);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tab_running_inside_a_worktree_keeps_it() {
        let w = Path::new("/d/worktrees/r-1/ab12");
        let d = |tab: &str, running: bool, folder: &str| Dweller {
            tab: tab.into(),
            running,
            folder: folder.into(),
        };
        #[rustfmt::skip]
        let rows: Vec<(&str, Vec<Dweller>, Occupant)> = vec![
            ("nobody", vec![], Occupant::Nobody),
            ("a tab elsewhere", vec![d("cd34", true, "/home/me/p")], Occupant::Nobody),
            ("a resumed conversation in it", vec![d("cd34", true, "/d/worktrees/r-1/ab12")], Occupant::Running("cd34".into())),
            ("in a folder inside it", vec![d("cd34", false, "/d/worktrees/r-1/ab12/src")], Occupant::Open("cd34".into())),
            ("a name that only starts like it", vec![d("cd34", true, "/d/worktrees/r-1/ab123")], Occupant::Nobody),
            ("a running one before an open one", vec![d("aa00", false, "/d/worktrees/r-1/ab12"), d("zz99", true, "/d/worktrees/r-1/ab12")], Occupant::Running("zz99".into())),
        ];
        for (what, dwellers, want) in rows {
            assert_eq!(dweller(w, &dwellers), want, "{what}");
        }
    }

    #[test]
    fn only_nerdrs_own_branch_is_its_to_delete() {
        let w = Path::new("/d/worktrees/r-1/ab12");
        #[rustfmt::skip]
        let rows = [
            ("nerdr/ab12", true), ("feat", false), ("nerdr/cd34", false),
            ("nerdr/ab12/x", false), ("ab12", false), ("nerdr/", false),
        ];
        for (branch, want) in rows {
            assert_eq!(
                super::super::listing::own_branch(w, branch),
                want,
                "{branch}"
            );
        }
        assert!(!super::super::listing::own_branch(Path::new("/"), "nerdr/"));
    }

    fn closed() -> Input {
        Input {
            occupant: Occupant::Nobody,
            foreign: false,
            stale: false,
            missing: false,
            nested: false,
            dirty: Some(false),
            branch: Some("nerdr/ab12".into()),
            own_branch: true,
            base_branch: Some("main".into()),
            ahead: Some(0),
            merged: Some(true),
            base_gone: false,
        }
    }

    #[test]
    fn every_clean_verdict() {
        let keep = |why: &str| Err(why.to_string());
        #[rustfmt::skip]
        let rows: Vec<(&str, Input, bool, Result<bool, String>)> = vec![
            ("merged and clean", closed(), false, Ok(false)),
            ("merged and clean, --merged", closed(), true, Ok(true)),
            ("squash-merged (content in main)", Input { ahead: Some(2), ..closed() }, true, Ok(true)),
            ("folder gone, merged", Input { missing: true, dirty: None, ..closed() }, true, Ok(true)),
            ("running tab", Input { occupant: Occupant::Running("ab12".into()), ..closed() }, true, keep("running")),
            ("open tab", Input { occupant: Occupant::Open("ab12".into()), ..closed() }, true, keep("close it first")),
            ("stale folder", Input { stale: true, ..closed() }, true, keep("no git worktree")),
            ("made by hand elsewhere", Input { foreign: true, ..closed() }, true, keep("nerdr did not make it")),
            ("nested repository", Input { nested: true, dirty: Some(true), ..closed() }, true, keep("repository of its own")),
            ("dirty", Input { dirty: Some(true), ..closed() }, true, keep("work no commit has")),
            ("dirty unknown", Input { dirty: None, ..closed() }, true, keep("cannot tell")),
            ("detached", Input { branch: None, ..closed() }, true, keep("detached")),
            ("on another branch, merged", Input { branch: Some("feat".into()), own_branch: false, ..closed() }, true, keep("on branch feat, not the branch nerdr made")),
            ("on another branch, unmerged", Input { branch: Some("feat".into()), own_branch: false, merged: Some(false), ahead: Some(1), ..closed() }, false, keep("never deletes another branch")),
            ("base unknown", Input { base_branch: None, ..closed() }, true, keep("detached HEAD")),
            ("unmerged", Input { ahead: Some(1), merged: Some(false), ..closed() }, true, keep("1 commit of nerdr/ab12 is not merged into main: see them with `nerdr diff nerdr/ab12`, merge them with `nerdr merge nerdr/ab12`")),
            ("unmerged, many", Input { ahead: Some(3), merged: Some(false), ..closed() }, false, keep("3 commits")),
            ("not comparable", Input { ahead: None, merged: None, ..closed() }, true, keep("cannot compare")),
            ("base branch gone, no commits of its own", Input { ahead: Some(0), base_gone: true, ..closed() }, true, Ok(true)),
            ("base branch gone, commits of its own", Input { ahead: Some(1), merged: Some(false), base_gone: true, ..closed() }, true, keep("1 commit of nerdr/ab12 is its own, and its base branch main is gone: see them with `nerdr diff nerdr/ab12`, merge them with `nerdr merge nerdr/ab12 --into BRANCH`")),
            ("base branch gone, uncommitted work", Input { ahead: Some(0), base_gone: true, dirty: Some(true), ..closed() }, true, keep("work no commit has")),
        ];
        for (what, input, flag, want) in rows {
            let got = verdict(&input, flag);
            match (&want, &got) {
                (Ok(b), Verdict::Remove { branch }) => assert_eq!(b, branch, "{what}"),
                (Err(why), Verdict::Keep(said)) => {
                    assert!(said.contains(why.as_str()), "{what}: {said}")
                }
                _ => panic!("{what}: want {want:?}, got {got:?}"),
            }
        }
    }
}
