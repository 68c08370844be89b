//! Every nerdr worktree and what it holds: the folders under the data
//! dir's `worktrees/`, the worktrees `git worktree list` gives for the
//! repositories nerdr knows (those on a `nerdr/*` branch), and the tabs'
//! own records; each with its base, how far it is ahead of and behind its
//! base branch, whether it holds uncommitted work and whether its work is
//! merged. [`parse_worktree_list`] is pure; the rest asks git, through
//! the guard where git could run a configured program.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::base::{self, Base, Recorded};
use super::{query, query_bytes, run, unsaved, GitError};
use crate::paths::Paths;

/// A tab's worktree as the core knows it.
#[derive(Debug, Clone)]
pub struct Known {
    pub tab: String,
    pub name: String,
    pub state: String,
    /// Its program runs (or is starting): its worktree is in use.
    pub running: bool,
    pub path: PathBuf,
    pub repo: PathBuf,
    pub branch: String,
    pub recorded: Option<Recorded>,
}

/// One entry of `git worktree list --porcelain -z`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Listed {
    pub path: PathBuf,
    /// `refs/heads/...`, or `None` when detached (or bare).
    pub branch: Option<String>,
    pub prunable: bool,
}

/// The entries of `git worktree list --porcelain -z`: attributes ending in
/// NUL, entries ending in an empty one. The first is the main worktree.
pub fn parse_worktree_list(out: &[u8]) -> Vec<Listed> {
    use std::os::unix::ffi::OsStrExt;
    let mut all = Vec::new();
    let mut cur: Option<Listed> = None;
    for field in out.split(|b| *b == 0) {
        if field.is_empty() {
            all.extend(cur.take());
            continue;
        }
        let (key, value) = match field.iter().position(|b| *b == b' ') {
            Some(i) => (&field[..i], &field[i + 1..]),
            None => (field, &b""[..]),
        };
        match key {
            b"worktree" => {
                all.extend(cur.take());
                cur = Some(Listed {
                    path: PathBuf::from(std::ffi::OsStr::from_bytes(value)),
                    ..Listed::default()
                });
            }
            b"branch" => {
                if let Some(c) = cur.as_mut() {
                    c.branch = Some(String::from_utf8_lossy(value).into_owned());
                }
            }
            b"prunable" => {
                if let Some(c) = cur.as_mut() {
                    c.prunable = true;
                }
            }
            _ => {}
        }
    }
    all.extend(cur);
    all
}

/// A nerdr worktree found, before its facts are gathered.
#[derive(Debug, Clone)]
pub struct Found {
    pub path: PathBuf,
    /// The repository's main checkout; `None` when the folder is no git
    /// worktree any more.
    pub repo: Option<PathBuf>,
    /// Its branch's short name (`nerdr/<tab>`), `None` when detached.
    pub branch: Option<String>,
    /// Git lists it but its folder is gone.
    pub missing: bool,
    /// Made by nerdr: under the data dir's `worktrees/`.
    pub made_by_nerdr: bool,
    /// The open tab it is (the one that made it, when several work in it).
    pub tab: Option<Known>,
    /// The other open tabs working in it (a handoff's shares it).
    pub also: Vec<Known>,
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// The worktrees of the repository around `dir`, main checkout first.
pub fn worktrees_of(dir: &Path) -> Result<Vec<Listed>, GitError> {
    Ok(parse_worktree_list(&query_bytes(
        dir,
        &["worktree", "list", "--porcelain", "-z"],
    )?))
}

/// Every nerdr worktree: under `paths.data_dir/worktrees/`, on a `nerdr/*`
/// branch of a repository nerdr knows, or a tab's.
pub fn find(paths: &Paths, known: &[Known]) -> Vec<Found> {
    let root = canonical(&paths.data_dir.join("worktrees"));
    let mut folders: Vec<PathBuf> = Vec::new();
    if let Ok(repos) = std::fs::read_dir(&root) {
        for repo in repos.flatten() {
            if let Ok(tabs) = std::fs::read_dir(repo.path()) {
                folders.extend(
                    tabs.flatten()
                        .map(|t| t.path())
                        .filter(|p| p.symlink_metadata().is_ok_and(|m| m.is_dir())),
                );
            }
        }
    }
    let mut repos: Vec<PathBuf> = known.iter().map(|k| canonical(&k.repo)).collect();
    let mut found: BTreeMap<PathBuf, Found> = BTreeMap::new();
    for f in &folders {
        match worktrees_of(f).ok().and_then(|l| l.into_iter().next()) {
            Some(main) => repos.push(canonical(&main.path)),
            None => {
                let path = canonical(f);
                found.insert(
                    path.clone(),
                    Found {
                        path,
                        repo: None,
                        branch: None,
                        missing: false,
                        made_by_nerdr: true,
                        tab: None,
                        also: Vec::new(),
                    },
                );
            }
        }
    }
    repos.sort();
    repos.dedup();
    let ours = |l: &Listed| {
        l.path.starts_with(&root)
            || l.branch
                .as_deref()
                .is_some_and(|b| b.starts_with("refs/heads/nerdr/"))
    };
    for repo in &repos {
        let Ok(listed) = worktrees_of(repo) else {
            continue;
        };
        for l in listed.into_iter().skip(1) {
            let path = canonical(&l.path);
            let is_tabs = known.iter().any(|k| canonical(&k.path) == path);
            if !ours(&l) && !is_tabs {
                continue;
            }
            found.insert(
                path.clone(),
                Found {
                    missing: !l.path.exists(),
                    made_by_nerdr: path.starts_with(&root),
                    path,
                    repo: Some(repo.clone()),
                    branch: l
                        .branch
                        .map(|b| b.trim_start_matches("refs/heads/").to_string()),
                    tab: None,
                    also: Vec::new(),
                },
            );
        }
    }
    for k in known {
        let path = canonical(&k.path);
        let made_it = own_branch(&path, &format!("nerdr/{}", k.tab));
        let entry = found.entry(path.clone()).or_insert_with(|| Found {
            missing: !k.path.exists(),
            made_by_nerdr: path.starts_with(&root),
            path,
            repo: Some(canonical(&k.repo)),
            branch: Some(k.branch.clone()),
            tab: None,
            also: Vec::new(),
        });
        // The tab that made it keeps it; the others are listed beside it.
        match entry.tab.take() {
            None => entry.tab = Some(k.clone()),
            Some(first) if made_it => {
                entry.also.push(first);
                entry.tab = Some(k.clone());
            }
            Some(first) => {
                entry.tab = Some(first);
                entry.also.push(k.clone());
            }
        }
    }
    for f in found.values_mut() {
        f.also.sort_by(|a, b| a.tab.cmp(&b.tab));
    }
    found.into_values().collect()
}

/// The id of the closed tab whose worktree `f` is, as `nerdr worktrees`
/// shows it: its branch's `nerdr/<id>`; `None` for an open tab's.
pub fn closed_id(f_tab: bool, branch: Option<&str>) -> Option<&str> {
    branch
        .filter(|_| !f_tab)
        .and_then(|b| b.strip_prefix("nerdr/"))
}

/// Whether `handle` names the closed tab's worktree `f`: its branch
/// (`nerdr/<id>`), or that id. An open tab's worktree is named by its tab
/// (`core::naming`), and one nerdr did not make is no tab's work.
pub fn names(handle: &str, f: &Found) -> bool {
    if f.tab.is_some() || !f.made_by_nerdr || f.repo.is_none() {
        return false;
    }
    let branch = f.branch.as_deref();
    branch == Some(handle) || closed_id(false, branch) == Some(handle)
}

/// What `nerdr worktrees` and `nerdr clean` know of one worktree.
#[derive(Debug, Clone)]
pub struct Facts {
    pub found: Found,
    pub base: Option<Base>,
    pub ahead: Option<usize>,
    pub behind: Option<usize>,
    /// The work no commit holds, `None` when git could not say.
    pub changes: Option<Vec<unsaved::Change>>,
    /// All of the branch's changes are in the base branch already (its
    /// commits, or their content: a squash merge).
    pub merged: Option<bool>,
    /// The branch's tip is its base: no commits of its own yet.
    pub no_commits: bool,
    /// Its base branch is gone: compared with the recorded base commit.
    pub base_gone: bool,
    pub notes: Vec<String>,
}

/// The commit whose `.gitignore` files are trusted in the worktree
/// `found` (`super::ignored`): its recorded base (the tab's record, else
/// the file beside the worktree), never a guess.
pub fn ignore_base(found: &Found) -> Option<String> {
    found
        .tab
        .as_ref()
        .and_then(|k| k.recorded.clone())
        .or_else(|| base::read_record(&found.path))
        .map(|r| r.commit)
}

/// `branch`'s commits the base branch lacks, and the reverse.
pub fn ahead_behind(repo: &Path, branch: &str, base_branch: &str) -> Option<(usize, usize)> {
    let range = format!("refs/heads/{base_branch}...refs/heads/{branch}");
    let out = query(
        repo,
        &["rev-list", "--left-right", "--count", range.as_str()],
    )
    .ok()?;
    let mut n = out.split_whitespace().map(|w| w.parse::<usize>().ok());
    let behind = n.next()??;
    let ahead = n.next()??;
    Some((ahead, behind))
}

/// `branch`'s commits since `base_commit` (its recorded base), for a
/// base branch that is gone (a reviewer's, whose author's branch
/// `clean --merged` deleted): what is not there is the branch's own.
pub fn ahead_of_commit(repo: &Path, branch: &str, base_commit: &str) -> Option<usize> {
    let range = format!("{base_commit}..refs/heads/{branch}");
    query(repo, &["rev-list", "--count", range.as_str()])
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Whether `branch` exists in `repo`.
pub fn branch_exists(repo: &Path, branch: &str) -> bool {
    let full = format!("refs/heads/{branch}");
    query(repo, &["rev-parse", "--verify", "--quiet", full.as_str()]).is_ok()
}

/// Whether merging `branch` into `base_branch` would change nothing: its
/// work is there already, as a squash merge (or a cherry-pick) leaves it.
/// Through the guard: `merge-tree` merges, with whatever drivers the
/// repository configures.
pub fn content_merged(paths: &Paths, repo: &Path, branch: &str, base_branch: &str) -> bool {
    // Asked quietly first: a listing must not journal a refusal per
    // worktree each time it is run (a merge would, and says why).
    let op = super::op::Op::of(&["merge-tree"]);
    if let super::guard::verdict::Verdict::Refuse(_) =
        super::guard::check(&paths.state_dir, repo, op).verdict
    {
        return false;
    }
    let (b, t) = (
        format!("refs/heads/{base_branch}"),
        format!("refs/heads/{branch}"),
    );
    let merged = run(
        paths,
        repo,
        &[
            "merge-tree",
            "--write-tree",
            "--no-messages",
            b.as_str(),
            t.as_str(),
        ],
    );
    let tree = query(repo, &["rev-parse", &format!("{b}^{{tree}}")]);
    match (merged, tree) {
        (Ok(m), Ok(t)) => m.lines().next() == Some(t.as_str()),
        _ => false,
    }
}

/// Gather the facts of one worktree found.
pub fn facts(paths: &Paths, found: Found) -> Facts {
    let mut notes = Vec::new();
    let mut f = Facts {
        found,
        base: None,
        ahead: None,
        behind: None,
        changes: None,
        merged: None,
        no_commits: false,
        base_gone: false,
        notes: Vec::new(),
    };
    let Some(repo) = f.found.repo.clone() else {
        notes.push(
            "not a git worktree any more (git no longer lists it): remove the folder by hand if \
             nothing in it is wanted"
                .to_string(),
        );
        f.notes = notes;
        return f;
    };
    if !f.found.missing {
        match unsaved::changes(paths, &f.found.path, ignore_base(&f.found).as_deref()) {
            Ok(c) => f.changes = Some(c),
            Err(e) => notes.push(format!(
                "cannot tell whether it holds uncommitted work: {e}"
            )),
        }
    } else {
        notes.push("its folder is gone (git still lists it until `git worktree prune`)".into());
        f.changes = Some(Vec::new());
    }
    let Some(branch) = f.found.branch.clone() else {
        notes.push("detached HEAD: its commits are on no branch".into());
        f.notes = notes;
        return f;
    };
    let recorded = f
        .found
        .tab
        .as_ref()
        .and_then(|k| k.recorded.clone())
        .or_else(|| base::read_record(&f.found.path));
    match base::resolve(recorded, &repo, &branch) {
        Ok(b) => {
            if let Some(note) = b.guessed_note(&f.found.path) {
                notes.push(note);
            }
            if let Some(bb) = b.branch.clone() {
                match ahead_behind(&repo, &branch, &bb) {
                    Some((ahead, behind)) => {
                        f.ahead = Some(ahead);
                        f.behind = Some(behind);
                        f.merged = Some(ahead == 0 || content_merged(paths, &repo, &branch, &bb));
                        let full = format!("refs/heads/{branch}");
                        f.no_commits = ahead == 0
                            && query(&repo, &["rev-parse", "--verify", full.as_str()])
                                .is_ok_and(|tip| tip == b.commit);
                    }
                    None if b.recorded && !branch_exists(&repo, &bb) => {
                        // Its base branch went (deleted once merged): the
                        // recorded commit still says what is its own.
                        match ahead_of_commit(&repo, &branch, &b.commit) {
                            Some(ahead) => {
                                f.ahead = Some(ahead);
                                f.merged = Some(ahead == 0);
                                f.base_gone = true;
                                let full = format!("refs/heads/{branch}");
                                f.no_commits = ahead == 0
                                    && query(&repo, &["rev-parse", "--verify", full.as_str()])
                                        .is_ok_and(|tip| tip == b.commit);
                                notes.push(format!(
                                    "its base branch {bb} is gone: compared with the commit it \
                                     started from ({})",
                                    base::short(&b.commit)
                                ));
                            }
                            None => notes.push(format!(
                                "cannot compare {branch} with {bb} (gone) nor with the commit it \
                                 started from ({})",
                                base::short(&b.commit)
                            )),
                        }
                    }
                    None => notes.push(format!("cannot compare {branch} with {bb} (is it gone?)")),
                }
            } else {
                notes.push("its base branch is unknown (made on a detached HEAD)".into());
            }
            f.base = Some(b);
        }
        Err(e) => notes.push(format!("cannot tell where its work started: {e}")),
    }
    f.notes = notes;
    f
}

impl Facts {
    pub fn info(&self) -> crate::protocol::work::WorktreeInfo {
        let k = self.found.tab.as_ref();
        crate::protocol::work::WorktreeInfo {
            path: self.found.path.clone(),
            repo: self.found.repo.clone().unwrap_or_default(),
            tab: k.map(|k| k.tab.clone()),
            tab_name: k.map(|k| k.name.clone()),
            tab_state: k.map(|k| k.state.clone()),
            also: self
                .found
                .also
                .iter()
                .map(|k| crate::protocol::work::SharingTab {
                    tab: k.tab.clone(),
                    name: k.name.clone(),
                    state: k.state.clone(),
                })
                .collect(),
            branch: self.found.branch.clone(),
            base: self.base.as_ref().map(|b| b.commit.clone()),
            base_branch: self.base.as_ref().and_then(|b| b.branch.clone()),
            base_recorded: self.base.as_ref().is_some_and(|b| b.recorded),
            ahead: self.ahead,
            behind: self.behind,
            dirty: self.changes.as_ref().map(|c| c.len()),
            merged: self.merged,
            no_commits: self.no_commits,
            missing: self.found.missing,
            notes: self.notes.clone(),
        }
    }
}

/// Whether `branch` is `nerdr/<id>` for the worktree folder `.../<id>`.
pub fn own_branch(worktree: &Path, branch: &str) -> bool {
    let id = worktree.file_name().and_then(|n| n.to_str());
    id.is_some_and(|id| !id.is_empty() && branch.strip_prefix("nerdr/") == Some(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worktree_lists_are_read() {
        let out = b"worktree /src/r\0HEAD 1111\0branch refs/heads/main\0\0\
worktree /d/worktrees/r-1/ab12\0HEAD 2222\0branch refs/heads/nerdr/ab12\0\0\
worktree /d/worktrees/r-1/cd34\0HEAD 3333\0detached\0prunable gitdir file points to non-existent location\0\0\
worktree /odd\nname\0HEAD 4444\0locked\0\0";
        let got = parse_worktree_list(out);
        assert_eq!(got.len(), 4, "{got:?}");
        assert_eq!(got[0].path, PathBuf::from("/src/r"));
        assert_eq!(got[0].branch.as_deref(), Some("refs/heads/main"));
        assert_eq!(got[1].branch.as_deref(), Some("refs/heads/nerdr/ab12"));
        assert!(!got[1].prunable);
        assert_eq!(got[2].branch, None);
        assert!(got[2].prunable);
        assert_eq!(got[3].path, PathBuf::from("/odd\nname"));
        assert!(parse_worktree_list(b"").is_empty());
    }

    #[test]
    fn a_closed_tabs_worktree_is_named_by_its_branch_or_id() {
        let f = |tab: bool, ours: bool| Found {
            path: "/d/worktrees/r-1/ab12".into(),
            repo: Some("/src/r".into()),
            branch: Some("nerdr/ab12".into()),
            missing: false,
            made_by_nerdr: ours,
            also: Vec::new(),
            tab: tab.then(|| Known {
                tab: "ab12".into(),
                name: "fixer".into(),
                state: "running".into(),
                running: true,
                path: "/d/worktrees/r-1/ab12".into(),
                repo: "/src/r".into(),
                branch: "nerdr/ab12".into(),
                recorded: None,
            }),
        };
        #[rustfmt::skip]
        let rows = [
            ("its branch", "nerdr/ab12", f(false, true), true),
            ("its id", "ab12", f(false, true), true),
            ("a prefix is not enough", "ab1", f(false, true), false),
            ("another id", "cd34", f(false, true), false),
            ("an open tab's: named by its tab", "ab12", f(true, true), false),
            ("not made by nerdr", "ab12", f(false, false), false),
        ];
        for (what, handle, found, want) in rows {
            assert_eq!(names(handle, &found), want, "{what}");
        }
        assert_eq!(closed_id(false, Some("nerdr/ab12")), Some("ab12"));
        assert_eq!(closed_id(true, Some("nerdr/ab12")), None);
        assert_eq!(closed_id(false, Some("main")), None);
    }
}
