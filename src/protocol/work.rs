//! The requests and replies that bring an agent's work home: `diff` (also
//! the window's diff view), `worktrees`, `merge` and `clean`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Tab `tab`'s work as one patch: its branch against its base, plus the
/// uncommitted work of its worktree (untracked files as new files); with
/// `stat`, git's `--stat` of it instead.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiffTab {
    pub tab: String,
    #[serde(default)]
    pub stat: bool,
    /// The caller's folder: tab numbers and names count in its session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<PathBuf>,
}

/// The reply to [`DiffTab`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TabDiff {
    pub tab: String,
    pub worktree: PathBuf,
    /// The main checkout of the worktree's repository.
    pub repo: PathBuf,
    pub branch: String,
    /// The commit the patch starts from.
    pub base: String,
    /// The branch the work goes back to (`None`: unknown, a detached HEAD).
    pub base_branch: Option<String>,
    /// Whether the base was recorded when the worktree was made, or
    /// guessed by `git merge-base` (a worktree made before bases were).
    pub base_recorded: bool,
    /// The worktree is gone: the patch is the branch's commits alone.
    #[serde(default)]
    pub worktree_missing: bool,
    /// The patch as git prints it (`git apply` reads it), or the stat.
    pub patch: String,
    /// The paths in the patch whose change (or part of it) no commit
    /// holds yet: `nerdr merge` leaves them out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uncommitted: Vec<String>,
}

/// One nerdr worktree, as `nerdr worktrees --json` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorktreeInfo {
    pub path: PathBuf,
    /// The main checkout of its repository.
    pub repo: PathBuf,
    /// The tab working in it; `None` once the tab is closed.
    pub tab: Option<String>,
    pub tab_name: Option<String>,
    /// The tab's state (`running`, `exited`, ...).
    pub tab_state: Option<String>,
    /// Other open tabs working in it too (a handoff's new agent).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<SharingTab>,
    pub branch: Option<String>,
    pub base: Option<String>,
    pub base_branch: Option<String>,
    pub base_recorded: bool,
    /// Commits on the branch that the base branch lacks, and the reverse.
    pub ahead: Option<usize>,
    pub behind: Option<usize>,
    /// Paths holding work no commit has; `None` when git could not say
    /// (the guard refused, say).
    pub dirty: Option<usize>,
    /// Whether the branch's commits are all in the base branch.
    pub merged: Option<bool>,
    /// The branch is still where its work started: nothing to merge yet
    /// (not merged work).
    #[serde(default)]
    pub no_commits: bool,
    /// Git still lists it but its folder is gone.
    #[serde(default)]
    pub missing: bool,
    /// Why a fact is unknown, or what is odd about it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// An open tab sharing another tab's worktree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharingTab {
    pub tab: String,
    pub name: String,
    pub state: String,
}

/// How `nerdr merge` brings the branch in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MergeHow {
    /// `git merge` (a fast-forward when it can be).
    #[default]
    Merge,
    /// One new commit holding all of the branch's changes.
    Squash,
    /// The branch rebased onto the target in the tab's worktree, then
    /// fast-forwarded.
    Rebase,
    /// Only a fast-forward.
    FfOnly,
}

impl MergeHow {
    pub fn as_str(self) -> &'static str {
        match self {
            MergeHow::Merge => "merge",
            MergeHow::Squash => "squash",
            MergeHow::Rebase => "rebase",
            MergeHow::FfOnly => "ff-only",
        }
    }
}

/// Merge tab `tab`'s branch into its base branch (or `into`) in the main
/// checkout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergeTab {
    pub tab: String,
    #[serde(default)]
    pub into: Option<String>,
    #[serde(default)]
    pub how: MergeHow,
    /// The caller's folder: tab numbers and names count in its session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<PathBuf>,
    /// The caller's `GIT_AUTHOR_*` / `GIT_COMMITTER_*` (only those: see
    /// `git::merge::identity`), for the commits the merge makes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub identity: Vec<(String, String)>,
}

/// The reply to [`MergeTab`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Merged {
    pub tab: String,
    pub branch: String,
    pub into: String,
    pub repo: PathBuf,
    pub how: MergeHow,
    /// The target's commit before and after (equal: nothing to merge).
    pub before: String,
    pub after: String,
    /// The merge only moved the target forward.
    pub fast_forward: bool,
    /// Said beside the result (uncommitted work left out, a guessed base).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Nothing was merged because the target holds the branch's changes
    /// already: how (`already merged (squashed in COMMIT)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub already: Option<String>,
    /// The commit the tab's work starts from now (a rebase moved it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_base: Option<String>,
}

/// Remove closed tabs' worktrees whose work is merged; with `merged`,
/// their branches too; with `dry_run`, only say what would go.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CleanWorktrees {
    #[serde(default)]
    pub merged: bool,
    #[serde(default)]
    pub dry_run: bool,
}

/// What `clean` did (or would do) to each worktree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cleaned {
    pub dry_run: bool,
    pub entries: Vec<CleanEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CleanEntry {
    pub path: PathBuf,
    pub branch: Option<String>,
    /// The open tab working in it, its id and name; `None` once closed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab_name: Option<String>,
    /// `removed`, `kept`, or on a dry run `would remove`.
    pub action: String,
    /// The branch was deleted (or would be).
    #[serde(default)]
    pub branch_deleted: bool,
    /// Why it was kept, or what became of it.
    pub why: String,
    /// A `nerdr/*` branch with no worktree (`path` is its repository):
    /// `action` is about the branch.
    #[serde(default)]
    pub branch_only: bool,
}
