//! `nerdr clean` and the `nerdr/<id>` branches whose worktree is gone (a
//! plain `nerdr clean` keeps the branch of each worktree it removes) and
//! whose tab is closed: with `--merged` such a branch goes when all its
//! work is in its base branch; otherwise it is kept, named, with git
//! commands that see and merge it (`nerdr diff`/`merge` need a tab or a
//! worktree). The base branch is the one recorded when the worktree went
//! (`<id>.left.json` beside where it was), else the branch the main
//! checkout is on, and the reason says which. [`verdict`] is the pure
//! rule; [`find`] gathers, [`apply`] deletes only the commit it judged.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::listing::{self, Found, Known};
use super::{base, query};
use crate::paths::Paths;

/// Written when `nerdr clean` removes a worktree and keeps its branch: the
/// repository and base branch, which nothing else holds once it is gone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Left {
    pub repo: PathBuf,
    pub base_branch: Option<String>,
}

/// The file beside the worktree `path` that was.
pub fn record_file(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".left.json");
    path.with_file_name(name)
}

/// Record where the branch of the removed worktree `path` merges. A failure
/// only means a later clean compares with the main checkout's branch.
pub fn write(path: &Path, left: &Left) {
    let file = record_file(path);
    let result = serde_json::to_vec_pretty(left)
        .map_err(std::io::Error::other)
        .and_then(|bytes| std::fs::write(&file, bytes));
    if let Err(e) = result {
        tracing::warn!(file = %file.display(), error = %e, "cannot record the kept branch's base");
    }
}

/// Every record under the data dir's `worktrees/`, with its file.
fn records(paths: &Paths) -> Vec<(PathBuf, Left)> {
    let mut out = Vec::new();
    let root = paths.data_dir.join("worktrees");
    for dir in std::fs::read_dir(root).into_iter().flatten().flatten() {
        for f in std::fs::read_dir(dir.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let p = f.path();
            if !p.to_string_lossy().ends_with(".left.json") {
                continue;
            }
            if let Some(l) = std::fs::read(&p)
                .ok()
                .and_then(|b| serde_json::from_slice::<Left>(&b).ok())
            {
                out.push((p, l));
            }
        }
    }
    out
}

/// The facts the rule looks at, as plain data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    pub repo: PathBuf,
    pub branch: String,
    /// The branch its work merges into; `None` when none was recorded and
    /// the main checkout is on a detached HEAD.
    pub base_branch: Option<String>,
    /// The base branch was recorded (not the main checkout's branch now).
    pub recorded: bool,
    /// Commits of the branch its base branch lacks.
    pub ahead: Option<usize>,
    /// Its work is in the base branch (commits, or content).
    pub merged: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Delete(String),
    Keep(String),
}

/// The rule: see the module doc. `merged_flag` is `--merged`.
pub fn verdict(i: &Input, merged_flag: bool) -> Verdict {
    let (repo, branch) = (i.repo.display(), &i.branch);
    let Some(base) = &i.base_branch else {
        return Verdict::Keep(format!(
            "its worktree is gone and no base branch was recorded, and the main checkout is on a \
             detached HEAD: see its commits with `git -C {repo} log {branch}`"
        ));
    };
    let which = match i.recorded {
        true => format!("its base branch {base}"),
        false => {
            format!("{base} (no base branch was recorded: the branch the main checkout is on)")
        }
    };
    match (i.merged, i.ahead) {
        (Some(true), _) if merged_flag => Verdict::Delete(format!(
            "its worktree is gone and its work is merged into {which}"
        )),
        (Some(true), _) => Verdict::Keep(format!(
            "its worktree is gone and its work is merged into {which}: `nerdr clean --merged` \
             deletes it"
        )),
        (Some(false), Some(n)) => Verdict::Keep(format!(
            "its worktree is gone and {n} commit{s} of it {are} not merged into {which}: see \
             them with `git -C {repo} log -p {base}..{branch}`, merge them with `git -C {repo} \
             merge {branch}`, or delete the branch yourself if they are not wanted",
            s = if n == 1 { "" } else { "s" },
            are = if n == 1 { "is" } else { "are" },
        )),
        _ => Verdict::Keep(format!(
            "its worktree is gone; cannot compare it with {base}"
        )),
    }
}

/// A branch found, its facts and the commit they are of.
#[derive(Debug, Clone)]
pub struct Branch {
    pub input: Input,
    pub commit: String,
    record: Option<PathBuf>,
}

/// The `nerdr/*` branches of the repositories nerdr knows (its tabs', its
/// worktrees' and the records') that no worktree has and no tab uses.
pub fn find(paths: &Paths, known: &[Known], found: &[Found]) -> Vec<Branch> {
    let records = records(paths);
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let mut repos: Vec<PathBuf> = known.iter().map(|k| canonical(&k.repo)).collect();
    repos.extend(found.iter().filter_map(|f| f.repo.clone()));
    repos.extend(records.iter().map(|(_, l)| canonical(&l.repo)));
    repos.sort();
    repos.dedup();
    let mut out = Vec::new();
    for repo in repos {
        let Ok(listed) = listing::worktrees_of(&repo) else {
            continue;
        };
        let busy = |b: &str| {
            listed
                .iter()
                .any(|l| l.branch.as_deref() == Some(&format!("refs/heads/{b}")))
                || known
                    .iter()
                    .any(|k| k.branch == b && canonical(&k.repo) == repo)
        };
        let Ok(refs) = query(
            &repo,
            &[
                "for-each-ref",
                "--format=%(refname:short) %(objectname)",
                "refs/heads/nerdr/",
            ],
        ) else {
            continue;
        };
        for line in refs.lines() {
            let Some((branch, commit)) = line.split_once(' ') else {
                continue;
            };
            if busy(branch) {
                continue;
            }
            let id = branch.trim_start_matches("nerdr/");
            let record = records.iter().find(|(p, l)| {
                canonical(&l.repo) == repo
                    && p.file_name().and_then(|n| n.to_str()) == Some(&format!("{id}.left.json"))
            });
            let (base_branch, recorded) = match record.and_then(|(_, l)| l.base_branch.clone()) {
                Some(b) => (Some(b), true),
                None => (base::current_branch(&repo), false),
            };
            let (ahead, merged) = match &base_branch {
                Some(bb) => match listing::ahead_behind(&repo, branch, bb) {
                    Some((a, _)) => (
                        Some(a),
                        Some(a == 0 || listing::content_merged(paths, &repo, branch, bb)),
                    ),
                    None => (None, None),
                },
                None => (None, None),
            };
            out.push(Branch {
                input: Input {
                    repo: repo.clone(),
                    branch: branch.to_string(),
                    base_branch,
                    recorded,
                    ahead,
                    merged,
                },
                commit: commit.to_string(),
                record: record.map(|(p, _)| p.clone()),
            });
        }
    }
    out
}

/// Delete the branch, only while it still points at the commit judged
/// (`update-ref` compares): a commit made since keeps it.
pub fn apply(b: &Branch) -> Result<(), String> {
    let full = format!("refs/heads/{}", b.input.branch);
    query(
        &b.input.repo,
        &["update-ref", "-d", full.as_str(), b.commit.as_str()],
    )
    .map_err(|e| format!("kept: {e}"))?;
    if let Some(r) = &b.record {
        let _ = std::fs::remove_file(r);
        if let Some(parent) = r.parent() {
            let _ = std::fs::remove_dir(parent);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn left() -> Input {
        Input {
            repo: "/src/r".into(),
            branch: "nerdr/ab12".into(),
            base_branch: Some("main".into()),
            recorded: true,
            ahead: Some(0),
            merged: Some(true),
        }
    }

    #[test]
    fn every_left_branch_verdict() {
        let (del, keep) = (|s: &str| Ok(s.to_string()), |s: &str| Err(s.to_string()));
        #[rustfmt::skip]
        let rows: Vec<(&str, Input, bool, Result<String, String>)> = vec![
            ("merged, --merged", left(), true, del("merged into its base branch main")),
            ("merged, plain clean", left(), false, keep("`nerdr clean --merged` deletes it")),
            ("squash-merged", Input { ahead: Some(2), ..left() }, true, del("merged")),
            ("merged into the checkout's branch", Input { recorded: false, ..left() }, true, del("no base branch was recorded: the branch the main checkout is on")),
            ("one unmerged", Input { ahead: Some(1), merged: Some(false), ..left() }, true, keep("1 commit of it is not merged into its base branch main: see them with `git -C /src/r log -p main..nerdr/ab12`")),
            ("unmerged", Input { ahead: Some(3), merged: Some(false), ..left() }, true, keep("3 commits of it are not")),
            ("no base", Input { base_branch: None, recorded: false, ..left() }, true, keep("detached HEAD")),
            ("not comparable", Input { ahead: None, merged: None, ..left() }, true, keep("cannot compare")),
        ];
        for (what, input, flag, want) in rows {
            let got = verdict(&input, flag);
            let ok = match (&want, &got) {
                (Ok(w), Verdict::Delete(s)) | (Err(w), Verdict::Keep(s)) => s.contains(w.as_str()),
                _ => false,
            };
            assert!(ok, "{what}: want {want:?}, got {got:?}");
        }
    }
}
