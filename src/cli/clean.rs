//! `nerdr clean [--merged] [--dry-run]`: remove the worktrees of closed
//! tabs whose work is merged into their base branch (with `--merged`,
//! their `nerdr/*` branches too). Unmerged or uncommitted work is never
//! removed: such a worktree is kept, and the reason says what to do.

use std::process::ExitCode;

use crate::client;
use crate::protocol::api::{CleanEntry, CleanWorktrees, Cleaned};
use crate::protocol::printable;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Also delete the nerdr/* branches of the worktrees removed, and those
    /// whose worktree is gone already, when all their work is merged
    #[arg(long)]
    pub merged: bool,
    /// Only say what would be removed
    #[arg(long)]
    pub dry_run: bool,
    /// One JSON object: dry_run, entries [{path, branch, action, branch_deleted, why}]
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let cleaned = client::call(CleanWorktrees {
        merged: args.merged,
        dry_run: args.dry_run,
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&cleaned)?);
    } else {
        print!("{}", text(&cleaned));
    }
    Ok(ExitCode::SUCCESS)
}

fn text(c: &Cleaned) -> String {
    if c.entries.is_empty() {
        return "no nerdr worktrees\n".into();
    }
    let mut out = String::new();
    for e in &c.entries {
        if e.branch_only {
            out.push_str(&format!(
                "{} branch {} of {}{}: {}\n",
                e.action,
                printable(e.branch.as_deref().unwrap_or_default()),
                printable(&e.path.display().to_string()),
                label(e),
                printable(&e.why)
            ));
            continue;
        }
        let branch = match (&e.branch, e.branch_deleted) {
            (Some(b), true) => format!(" and branch {}", printable(b)),
            _ => String::new(),
        };
        let tab = label(e);
        out.push_str(&format!(
            "{} {}{tab}{branch}: {}\n",
            e.action,
            printable(&e.path.display().to_string()),
            printable(&e.why)
        ));
    }
    out
}

/// Which tab's worktree, as `nerdr tabs` names it: ` (tab NAME, ID)`, or
/// for a closed tab ` (closed tab ID)` (its branch's `nerdr/<id>`).
fn label(e: &CleanEntry) -> String {
    let name = e.tab_name.as_deref().filter(|n| !n.is_empty());
    let said = match (e.tab.as_deref(), name) {
        (Some(t), Some(n)) if n != t => format!(" (tab {n}, {t})"),
        (Some(t), _) => format!(" (tab {t})"),
        (None, _) => match crate::git::listing::closed_id(false, e.branch.as_deref()) {
            Some(id) => format!(" (closed tab {id})"),
            None => String::new(),
        },
    };
    printable(&said)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_worktree_says_what_became_of_it() {
        let c = Cleaned {
            dry_run: false,
            entries: vec![
                CleanEntry {
                    path: "/d/a".into(),
                    branch: Some("nerdr/a".into()),
                    tab: None,
                    tab_name: None,
                    action: "removed".into(),
                    branch_deleted: true,
                    why: "its work is merged into main".into(),
                    branch_only: false,
                },
                CleanEntry {
                    path: "/d/b".into(),
                    branch: Some("nerdr/b".into()),
                    tab: Some("b".into()),
                    tab_name: Some("fixer".into()),
                    action: "kept".into(),
                    branch_deleted: false,
                    why: "tab b is running in it".into(),
                    branch_only: false,
                },
                CleanEntry {
                    path: "/src/r".into(),
                    branch: Some("nerdr/c".into()),
                    tab: None,
                    tab_name: None,
                    action: "deleted".into(),
                    branch_deleted: true,
                    why: "its worktree is gone and its work is merged".into(),
                    branch_only: true,
                },
            ],
        };
        let t = text(&c);
        assert!(
            t.contains("removed /d/a (closed tab a) and branch nerdr/a: its work is merged"),
            "{t}"
        );
        assert!(
            t.contains("kept /d/b (tab fixer, b): tab b is running in it"),
            "{t}"
        );
        assert!(
            t.contains("deleted branch nerdr/c of /src/r (closed tab c): its worktree is gone"),
            "{t}"
        );
    }
}
