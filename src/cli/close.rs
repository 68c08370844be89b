//! `nerdr close TAB`: stop the tab's program and forget the tab; with
//! `--remove-worktree`, remove its worktree, never losing work without a
//! word (see `core::close`).

use std::process::ExitCode;

use super::Folder;
use crate::client;
use crate::protocol::api::CloseTab;
use crate::protocol::printable;
use crate::protocol::replies::{Closed, WorktreeRemoved};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The tab: its id, a unique id prefix, its number or its name (see `nerdr tabs`)
    pub tab: String,
    /// Also remove the tab's git worktree (its branch stays); refused when
    /// the worktree holds work no commit has
    #[arg(long)]
    pub remove_worktree: bool,
    /// With --remove-worktree: remove it even so, saving that work first
    /// under refs/nerdr/saved/TAB (see `nerdr saved`)
    #[arg(long, requires = "remove_worktree")]
    pub force: bool,
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let closed = client::call(CloseTab {
        tab: args.tab,
        remove_worktree: args.remove_worktree,
        force: args.force,
        folder: folder.scope()?,
    })?;
    eprintln!("{}", closed_text(&closed));
    if let Some(left) = &closed.left {
        eprintln!("{}", printable(left));
    }
    if let Some(r) = &closed.removed {
        eprint!("{}", removed_text(r));
    }
    Ok(ExitCode::SUCCESS)
}

/// What was closed, in one line (as `quit` says how many it closed).
fn closed_text(c: &Closed) -> String {
    let tab = printable(&c.tab);
    match (c.tab.is_empty(), c.name.is_empty()) {
        (true, _) => "closed the tab".into(),
        (false, true) => format!("closed tab {tab}"),
        (false, false) => format!("closed tab {tab} ({})", printable(&c.name)),
    }
}

/// What a removal did, in words: where saved work went and how to get it
/// back, and that the branch stays.
fn removed_text(r: &WorktreeRemoved) -> String {
    let mut out = format!("removed the worktree {}\n", r.worktree.display());
    if let Some(saved) = &r.saved {
        out.push_str(&format!(
            "its uncommitted work (untracked files included) was saved first as {} \
             (commit {}); get it back with {}\n",
            saved.reference,
            saved.commit,
            crate::git::saved::how_to_restore(&saved.reference)
        ));
        if !saved.ignored.is_empty() {
            out.push_str(&format!(
                "it holds ignored files too, which no .gitignore unchanged since the tab's \
                 base, info/exclude or global excludes file ignores:{}\n",
                saved
                    .ignored
                    .iter()
                    .take(20)
                    .map(|p| format!("\n  {}", crate::protocol::printable(p)))
                    .collect::<String>()
            ));
            if saved.ignored.len() > 20 {
                out.push_str(&format!("  ... and {} more\n", saved.ignored.len() - 20));
            }
        }
    }
    let branch = &r.branch;
    let them = |n: usize| if n == 1 { "it" } else { "them" };
    // Unmerged (against its base) is what the person asks; commits no
    // other branch has undercounts when another branch was made from it
    // (a reviewer's, a spinoff's), so it is said when nothing is
    // unmerged (or the base is unknown): an empty commit is still one.
    match (r.unmerged, r.branch_only_commits) {
        (Some(n @ 1..), _) => out.push_str(&format!(
            "the branch {branch} stays, with {n} unmerged commit{}: see {} with `nerdr diff \
             {branch}`, merge {} with `nerdr merge {branch}`\n",
            if n == 1 { "" } else { "s" },
            them(n),
            them(n),
        )),
        (_, Some(n @ 1..)) => out.push_str(&format!(
            "the branch {branch} stays, with {n} commit{} no other branch has: see {} with \
             `nerdr diff {branch}`, merge {} with `nerdr merge {branch}`\n",
            if n == 1 { "" } else { "s" },
            them(n),
            them(n),
        )),
        _ => out.push_str(&format!("the branch {branch} stays\n")),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::replies::SavedWork;

    #[test]
    fn closing_says_which_tab() {
        let c = |tab: &str, name: &str| Closed {
            tab: tab.into(),
            name: name.into(),
            ..Default::default()
        };
        for (closed, want) in [
            (c("ab12cd34", "sh-1"), "closed tab ab12cd34 (sh-1)"),
            (c("ab12cd34", ""), "closed tab ab12cd34"),
            (c("", ""), "closed the tab"),
            (
                c("ab12cd34", "e\x1b[2J"),
                "closed tab ab12cd34 (e\\u{1b}[2J)",
            ),
        ] {
            assert_eq!(closed_text(&closed), want);
        }
    }

    #[test]
    fn a_removal_says_where_work_went_and_that_the_branch_stays() {
        let saved = WorktreeRemoved {
            worktree: "/w/ab12".into(),
            saved: Some(SavedWork {
                reference: "refs/nerdr/saved/ab12".into(),
                commit: "c0ffee".into(),
                ignored: vec![],
            }),
            branch: "nerdr/ab12".into(),
            branch_only_commits: Some(2),
            unmerged: None,
        };
        let text = removed_text(&saved);
        assert!(!text.contains("ignored"), "{text}");
        let mut hidden = saved.clone();
        if let Some(s) = hidden.saved.as_mut() {
            s.ignored = vec!["notes.txt".into()];
        }
        let text = removed_text(&hidden);
        assert!(
            text.contains("holds ignored files too") && text.contains("\n  notes.txt\n"),
            "{text}"
        );
        assert!(
            text.contains("saved first as refs/nerdr/saved/ab12"),
            "{text}"
        );
        assert!(
            text.contains("git stash apply refs/nerdr/saved/ab12"),
            "{text}"
        );
        assert!(
            text.contains(
                "nerdr/ab12 stays, with 2 commits no other branch has: see them with \
                 `nerdr diff nerdr/ab12`, merge them with `nerdr merge nerdr/ab12`"
            ),
            "{text}"
        );
        let clean = WorktreeRemoved {
            saved: None,
            branch_only_commits: Some(0),
            ..saved
        };
        let text = removed_text(&clean);
        assert!(!text.contains("saved"), "{text}");
        assert!(text.ends_with("the branch nerdr/ab12 stays\n"), "{text}");
        // A reviewer's branch holds the commits too: unmerged still says.
        let shared = WorktreeRemoved {
            branch_only_commits: Some(0),
            unmerged: Some(1),
            ..clean.clone()
        };
        let text = removed_text(&shared);
        assert!(
            text.contains("nerdr/ab12 stays, with 1 unmerged commit: see it with `nerdr diff"),
            "{text}"
        );
        let merged = WorktreeRemoved {
            branch_only_commits: Some(0),
            unmerged: Some(0),
            ..clean.clone()
        };
        assert!(removed_text(&merged).ends_with("the branch nerdr/ab12 stays\n"));
        let empty = WorktreeRemoved {
            branch_only_commits: Some(1),
            unmerged: Some(0),
            ..clean
        };
        assert!(removed_text(&empty).contains("with 1 commit no other branch has"));
    }
}
