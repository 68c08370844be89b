//! What a git command line does, as far as the guard cares: whether it can
//! run a program the repository's configuration names, convert content
//! through filters, or talk to a remote. Derived from the arguments
//! themselves, so a caller cannot mislabel a fetch as a query.

use std::ffi::OsStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Runs no program the configuration names: queries (rev-parse,
    /// config, ls-tree, cat-file, ...) and ref or worktree bookkeeping
    /// (branch, update-ref, worktree list/prune). The guard does not check these; it
    /// uses them to gather its own facts.
    Query,
    WorktreeAdd,
    /// `worktree remove --force`: deletes files, checks nothing out.
    WorktreeRemove,
    Status,
    Diff,
    Commit,
    /// checkout, switch, reset, restore, merge, rebase, cherry-pick, am,
    /// stash: writes the working tree from objects (smudge filters,
    /// merge drivers).
    Checkout,
    Fetch,
    Push,
    /// Anything else: treated like the strictest local operation.
    Other,
}

impl Op {
    pub const CHECKABLE: [Op; 9] = [
        Op::WorktreeAdd,
        Op::WorktreeRemove,
        Op::Status,
        Op::Diff,
        Op::Commit,
        Op::Checkout,
        Op::Fetch,
        Op::Push,
        Op::Other,
    ];

    /// Classify `git ARGS` (the arguments after nerdr's own `-c`/`-C`).
    pub fn of<S: AsRef<OsStr>>(args: &[S]) -> Op {
        let words: Vec<&str> = args
            .iter()
            .map(|a| a.as_ref().to_str().unwrap_or("\u{fffd}"))
            .collect();
        let has = |flag: &str| words.iter().skip(1).any(|w| *w == flag);
        match words.as_slice() {
            ["rev-parse" | "ls-tree" | "show-ref" | "for-each-ref" | "merge-base" | "rev-list"
            | "check-attr" | "check-ignore" | "ls-files" | "symbolic-ref", ..] => Op::Query,
            // Writes a ref and nothing else (hooks are off for host git).
            ["update-ref", ..] => Op::Query,
            // Hashing without filters or writing only reads the file;
            // with filters it runs the configured clean filter.
            ["hash-object", ..] if has("--no-filters") && !has("-w") && !has("--stdin-paths") => {
                Op::Query
            }
            // `cat-file --textconv/--filters` runs drivers; plain cat-file does not.
            ["cat-file", ..] if !has("--textconv") && !has("--filters") => Op::Query,
            // Listing and reading config runs nothing; `--edit` would open an editor.
            ["config", ..] if !has("--edit") && !has("-e") => Op::Query,
            ["branch", ..] if !has("--edit-description") => Op::Query,
            ["worktree", "list" | "prune", ..] => Op::Query,
            ["worktree", "add", ..] => Op::WorktreeAdd,
            ["worktree", "remove", ..] if has("--force") || has("-f") => Op::WorktreeRemove,
            ["status", ..] => Op::Status,
            ["diff" | "show" | "log" | "diff-files" | "diff-index" | "diff-tree" | "blame", ..] => {
                Op::Diff
            }
            // `add` hashes the working tree through clean filters;
            // `write-tree` and `commit-tree` only store what the index holds.
            ["commit" | "add" | "commit-tree" | "write-tree", ..] => Op::Commit,
            ["checkout" | "switch" | "reset" | "restore" | "merge" | "rebase" | "cherry-pick"
            | "am" | "stash" | "read-tree" | "checkout-index", ..] => Op::Checkout,
            ["fetch" | "pull" | "ls-remote" | "clone" | "remote" | "submodule", ..] => Op::Fetch,
            ["push" | "send-pack", ..] => Op::Push,
            _ => Op::Other,
        }
    }

    /// The name `nerdr git check --op` takes and journal entries carry.
    pub fn name(self) -> &'static str {
        match self {
            Op::Query => "query",
            Op::WorktreeAdd => "worktree-add",
            Op::WorktreeRemove => "worktree-remove",
            Op::Status => "status",
            Op::Diff => "diff",
            Op::Commit => "commit",
            Op::Checkout => "checkout",
            Op::Fetch => "fetch",
            Op::Push => "push",
            Op::Other => "other",
        }
    }

    /// As a person would type it after `git` (for messages).
    pub fn command(self) -> &'static str {
        match self {
            Op::WorktreeAdd => "worktree add",
            Op::WorktreeRemove => "worktree remove",
            Op::Other => "(other command)",
            op => op.name(),
        }
    }

    pub fn from_name(name: &str) -> Option<Op> {
        Op::CHECKABLE.into_iter().find(|o| o.name() == name)
    }

    /// Whether the operation may pass content through filter drivers
    /// (checking files out, hashing the working tree, diffing it).
    pub fn converts(self) -> bool {
        match self {
            Op::WorktreeAdd | Op::Status | Op::Diff | Op::Commit | Op::Checkout | Op::Other => true,
            Op::Query | Op::WorktreeRemove | Op::Fetch | Op::Push => false,
        }
    }

    /// Whether the operation may look inside submodules' working trees
    /// (running `git status` there, with each one's own config) even with
    /// `diff.ignoreSubmodules=all` and `submodule.recurse=false`, because
    /// a `submodule.<name>.ignore` in `.gitmodules` beats the setting and
    /// git takes no `--ignore-submodules` for it: checkout reporting local
    /// changes does. Status and diff get `--ignore-submodules=all` from
    /// the runner; adding a worktree, removing one and remotes never look.
    pub fn may_enter_submodules(self) -> bool {
        match self {
            Op::Commit | Op::Checkout | Op::Other => true,
            Op::Query
            | Op::WorktreeAdd
            | Op::WorktreeRemove
            | Op::Status
            | Op::Diff
            | Op::Fetch
            | Op::Push => false,
        }
    }

    /// Whether the operation talks to a remote (any transport runs
    /// configured programs: upload-pack, ssh, credential helpers).
    pub fn networked(self) -> bool {
        match self {
            Op::Fetch | Op::Push => true,
            Op::Query
            | Op::WorktreeAdd
            | Op::WorktreeRemove
            | Op::Status
            | Op::Diff
            | Op::Commit
            | Op::Checkout
            | Op::Other => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_are_classified() {
        let rows: &[(&[&str], Op)] = &[
            (&["rev-parse", "--git-common-dir"], Op::Query),
            (&["config", "--list", "--show-origin"], Op::Query),
            (&["config", "--edit"], Op::Other),
            (&["cat-file", "-p", "HEAD"], Op::Query),
            (&["cat-file", "--textconv", "HEAD:a"], Op::Other),
            (&["hash-object", "--no-filters", "--", "a"], Op::Query),
            (&["hash-object", "--", "a"], Op::Other),
            (&["hash-object", "-w", "--no-filters", "a"], Op::Other),
            (&["branch", "-D", "nerdr/x"], Op::Query),
            (&["worktree", "prune"], Op::Query),
            (
                &["worktree", "add", "-b", "b", "/p", "HEAD"],
                Op::WorktreeAdd,
            ),
            (&["worktree", "remove", "--force", "/p"], Op::WorktreeRemove),
            // Without --force git runs `status` in the worktree first.
            (&["worktree", "remove", "/p"], Op::Other),
            (&["status", "--porcelain"], Op::Status),
            (&["diff", "HEAD"], Op::Diff),
            (&["log", "-p"], Op::Diff),
            (&["commit", "-m", "x"], Op::Commit),
            // Saving a worktree before removing it (see `git::saved`).
            (&["add", "-A"], Op::Commit),
            (&["write-tree"], Op::Commit),
            (&["commit-tree", "-p", "HEAD", "-m", "m", "t"], Op::Commit),
            (&["update-ref", "refs/nerdr/saved/x", "c", ""], Op::Query),
            (&["merge", "nerdr/x"], Op::Checkout),
            (&["fetch", "origin"], Op::Fetch),
            (&["pull"], Op::Fetch),
            (&["push", "origin", "HEAD"], Op::Push),
            (&["gc"], Op::Other),
            (&[], Op::Other),
        ];
        for (args, want) in rows {
            assert_eq!(Op::of(args), *want, "{args:?}");
        }
    }

    #[test]
    fn names_round_trip() {
        for op in Op::CHECKABLE {
            assert_eq!(Op::from_name(op.name()), Some(op));
        }
        assert_eq!(Op::from_name("query"), None, "queries are not checked");
    }
}
