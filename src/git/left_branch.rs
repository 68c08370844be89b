//! The `nerdr/<id>` branches whose worktree is gone (a plain `nerdr
//! clean` and `nerdr close --remove-worktree` keep the branch of each
//! worktree they remove) and whose tab is closed. `nerdr clean`: with
//! `--merged` such a branch goes when all its work is in its base branch;
//! otherwise it is kept, named, with git commands that see and merge it.
//! `nerdr diff`/`merge` take such a branch (or its id) against the base
//! recorded when the worktree went ([`base_of`]). The base is the one
//! recorded then (`<id>.left.json` beside where the worktree was: the
//! commit it started from, which older records lack, and the branch it
//! merges into), else for clean the branch the main checkout is on, and
//! the reason says which. [`verdict`] and [`base_of`] are pure; [`find`]
//! gathers, [`apply`] deletes only the commit it judged.

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
    /// The commit the worktree started from (`git::base`); records written
    /// before it was kept have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_commit: Option<String>,
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
    if let Some(parent) = file.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
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
    /// What the record holds, if there is one.
    pub left: Option<Left>,
}

impl Branch {
    /// Where its worktree was: beside the record (a path that no longer
    /// exists, so a diff or merge of it reads the branch alone).
    pub fn worktree_path(&self) -> Option<PathBuf> {
        let r = self.record.as_ref()?;
        let name = r.file_name()?.to_str()?.strip_suffix(".left.json")?;
        Some(r.with_file_name(name))
    }
}

/// Whether `handle` names the branch: the branch `nerdr/<id>` or its id.
pub fn names(handle: &str, branch: &str) -> bool {
    branch == handle || branch.strip_prefix("nerdr/") == Some(handle)
}

/// The base `nerdr diff`/`merge` take for a branch whose worktree is gone:
/// the commit and branch recorded when it went. With no commit recorded
/// (a record of an older nerdr) the recorded base branch is told, to
/// compare with by hand; with nothing recorded, no base is guessed (the
/// main checkout's branch may be any): the error names the branch and
/// the git commands that show and merge it.
pub fn base_of(branch: &str, repo: &Path, left: Option<&Left>) -> Result<base::Recorded, String> {
    if let Some(Left {
        base_commit: Some(commit),
        base_branch,
        ..
    }) = left
    {
        return Ok(base::Recorded {
            commit: commit.clone(),
            branch: base_branch.clone(),
        });
    }
    let repo = repo.display();
    let (why, target) = match left.and_then(|l| l.base_branch.as_deref()) {
        Some(b) => (
            format!("only its base branch {b} was recorded when its worktree went"),
            b.to_string(),
        ),
        None => (
            "no base was recorded when its worktree went".to_string(),
            "BRANCH".to_string(),
        ),
    };
    Err(format!(
        "the branch {branch} has no known base ({why}), so nerdr cannot tell which commits \
         are its work: see them with `git -C {repo} log -p {target}..{branch}` (BRANCH the \
         one it forked from), and merge it with `git -C {repo} merge {branch}` on that branch"
    ))
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
                left: record.map(|(_, l)| l.clone()),
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
    fn a_left_branch_is_named_by_its_branch_or_id() {
        assert!(names("nerdr/ab12", "nerdr/ab12"));
        assert!(names("ab12", "nerdr/ab12"));
        assert!(
            !names("ab", "nerdr/ab12"),
            "no prefix: a branch is named whole"
        );
        assert!(!names("nerdr/ab12", "nerdr/ab1"));
        assert!(!names("main", "main2"));
    }

    #[test]
    fn a_left_branchs_base_is_the_recorded_one_or_an_error_naming_it() {
        let left = |commit: Option<&str>, branch: Option<&str>| Left {
            repo: "/src/r".into(),
            base_branch: branch.map(String::from),
            base_commit: commit.map(String::from),
        };
        let repo = Path::new("/src/r");
        let full = left(Some("c0ffee"), Some("main"));
        assert_eq!(
            base_of("nerdr/ab12", repo, Some(&full)),
            Ok(base::Recorded {
                commit: "c0ffee".into(),
                branch: Some("main".into())
            })
        );
        let detached = left(Some("c0ffee"), None);
        assert_eq!(
            base_of("nerdr/ab12", repo, Some(&detached)).map(|r| r.branch),
            Ok(None)
        );
        #[rustfmt::skip]
        let refused: [(&str, Option<Left>, &str); 3] = [
            ("no record", None, "no base was recorded when its worktree went"),
            ("an older record: a branch alone", Some(left(None, Some("main"))), "only its base branch main was recorded"),
            ("an older record, detached", Some(left(None, None)), "no base was recorded"),
        ];
        for (what, l, says) in refused {
            let e = base_of("nerdr/ab12", repo, l.as_ref()).unwrap_err();
            assert!(
                e.starts_with("the branch nerdr/ab12 has no known base")
                    && e.contains(says)
                    && e.contains("`git -C /src/r merge nerdr/ab12`"),
                "{what}: {e}"
            );
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
