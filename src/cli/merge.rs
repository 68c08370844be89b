//! `nerdr merge TAB [--into BRANCH] [--squash|--rebase|--ff-only]`: the
//! tab's branch into the branch it started from, in the main checkout
//! (see `git::merge`).

use std::process::ExitCode;

use super::Folder;
use crate::client;
use crate::git::base::short;
use crate::protocol::api::{MergeHow, MergeTab, Merged};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Merges the tab's branch (nerdr/TAB) into the branch the tab started from, or \
        into --into BRANCH, in the repository's main checkout.\n\n\
        The main checkout must be on that branch and hold no uncommitted changes to tracked \
        files (untracked ones are fine unless the merge would overwrite one); otherwise, or \
        when the merge conflicts, nothing is merged and the checkout is left exactly as it \
        was (the reason names the files and says what to do). A branch whose changes are all \
        in the target already (squashed before) is nothing new to merge. Work the tab's worktree holds uncommitted is not \
        part of the merge (commit it there first).\n\n\
        --squash makes one new commit of all the branch's changes; --ff-only only moves the \
        branch forward; --rebase first rebases the tab's branch onto the target in the tab's \
        own worktree (which must hold no uncommitted work; a conflicting rebase is undone), \
        then fast-forwards the target to it. In a repository where a sandboxed agent has \
        worked, git runs through nerdr's git guard: a merge that would run a configured \
        program (a merge driver, a filter) is refused, not run.\n\n\
        The commits the merge makes are by GIT_AUTHOR_NAME/EMAIL/DATE and \
        GIT_COMMITTER_NAME/EMAIL/DATE of this shell when set (only those pass to the core), \
        else by git's user.name/user.email."
)]
pub struct Args {
    /// The tab: its id, a unique id prefix, its number or its name (see `nerdr tabs`); or a
    /// closed tab's id or branch (nerdr/ID), as `nerdr worktrees` lists it
    pub tab: String,
    /// The branch to merge into (default: the branch the tab's worktree started from)
    #[arg(long, value_name = "BRANCH")]
    pub into: Option<String>,
    /// One new commit with all of the branch's changes
    #[arg(long, conflicts_with_all = ["rebase", "ff_only"])]
    pub squash: bool,
    /// Rebase the tab's branch onto the target in its worktree, then fast-forward
    #[arg(long, conflicts_with = "ff_only")]
    pub rebase: bool,
    /// Only a fast-forward
    #[arg(long)]
    pub ff_only: bool,
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let how = match (args.squash, args.rebase, args.ff_only) {
        (true, _, _) => MergeHow::Squash,
        (_, true, _) => MergeHow::Rebase,
        (_, _, true) => MergeHow::FfOnly,
        _ => MergeHow::Merge,
    };
    let merged = client::call(MergeTab {
        tab: args.tab,
        into: args.into,
        how,
        folder: folder.scope()?,
        // The merge runs in the core: who commits comes from here.
        identity: crate::git::merge::identity::from_env(
            std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
        ),
    })?;
    for n in &merged.notes {
        eprintln!("{}", noted(n));
    }
    println!("{}", said(&merged));
    Ok(ExitCode::SUCCESS)
}

/// A note as lines: each line's control characters shown escaped, its
/// line breaks kept.
fn noted(n: &str) -> String {
    n.lines()
        .enumerate()
        .map(|(i, l)| match i {
            0 => format!("nerdr: {}", crate::protocol::printable(l)),
            _ => crate::protocol::printable(l),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The result in one line.
fn said(m: &Merged) -> String {
    let (from, to) = (short(&m.before), short(&m.after));
    if let Some(already) = &m.already {
        return format!(
            "nothing new to merge: {} is {already} into {}",
            m.branch, m.into
        );
    }
    if m.before == m.after {
        return format!(
            "nothing to merge: {} has every commit of {}",
            m.into, m.branch
        );
    }
    let how = match (m.how, m.fast_forward) {
        (MergeHow::Squash, _) => "squashed into one commit",
        (MergeHow::Rebase, _) => "rebased, then fast-forwarded",
        (_, true) => "fast-forward",
        (_, false) => "merge commit",
    };
    format!(
        "merged {} into {} in {} ({how}): {from}..{to}",
        m.branch,
        m.into,
        m.repo.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_result_says_how() {
        let m = |how, ff, before: &str| Merged {
            tab: "ab12".into(),
            branch: "nerdr/ab12".into(),
            into: "main".into(),
            repo: "/src/r".into(),
            how,
            before: before.into(),
            after: "bbbb".into(),
            fast_forward: ff,
            notes: vec![],
            already: None,
            new_base: None,
        };
        assert_eq!(
            said(&m(MergeHow::Merge, true, "aaaa")),
            "merged nerdr/ab12 into main in /src/r (fast-forward): aaaa..bbbb"
        );
        assert!(said(&m(MergeHow::Merge, false, "aaaa")).contains("merge commit"));
        assert!(said(&m(MergeHow::Squash, false, "aaaa")).contains("squashed"));
        assert!(said(&m(MergeHow::Rebase, true, "aaaa")).contains("rebased"));
        assert!(said(&m(MergeHow::Merge, false, "bbbb")).starts_with("nothing to merge"));
    }

    #[test]
    fn notes_keep_their_lines_and_lose_their_escapes() {
        assert_eq!(
            noted("left out of the merge:\n  untracked: scratch.txt"),
            "nerdr: left out of the merge:\n  untracked: scratch.txt"
        );
        assert_eq!(noted("a\x1b[2Jb"), "nerdr: a\\u{1b}[2Jb");
    }

    #[test]
    fn a_squashed_branch_is_nothing_new() {
        let m = Merged {
            tab: "ab12".into(),
            branch: "nerdr/ab12".into(),
            into: "main".into(),
            repo: "/src/r".into(),
            how: MergeHow::Squash,
            before: "aaaa".into(),
            after: "aaaa".into(),
            fast_forward: false,
            notes: vec![],
            already: Some("already merged (squashed in cccc)".into()),
            new_base: None,
        };
        assert_eq!(
            said(&m),
            "nothing new to merge: nerdr/ab12 is already merged (squashed in cccc) into main"
        );
    }
}
