//! `nerdr clean [--merged] [--dry-run]`: remove the worktrees of closed
//! tabs whose work is merged into their base branch (with `--merged`,
//! their `nerdr/*` branches too). Unmerged or uncommitted work is never
//! removed: such a worktree is kept, and the reason says what to do.

use std::process::ExitCode;

use crate::client;
use crate::protocol::api::{CleanWorktrees, Cleaned};
use crate::protocol::printable;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Also delete the nerdr/* branches of the worktrees removed
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
        let branch = match (&e.branch, e.branch_deleted) {
            (Some(b), true) => format!(" and branch {}", printable(b)),
            _ => String::new(),
        };
        out.push_str(&format!(
            "{} {}{branch}: {}\n",
            e.action,
            printable(&e.path.display().to_string()),
            printable(&e.why)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::api::CleanEntry;

    #[test]
    fn each_worktree_says_what_became_of_it() {
        let c = Cleaned {
            dry_run: false,
            entries: vec![
                CleanEntry {
                    path: "/d/a".into(),
                    branch: Some("nerdr/a".into()),
                    action: "removed".into(),
                    branch_deleted: true,
                    why: "its work is merged into main".into(),
                },
                CleanEntry {
                    path: "/d/b".into(),
                    branch: Some("nerdr/b".into()),
                    action: "kept".into(),
                    branch_deleted: false,
                    why: "tab b is running in it".into(),
                },
            ],
        };
        let t = text(&c);
        assert!(
            t.contains("removed /d/a and branch nerdr/a: its work is merged"),
            "{t}"
        );
        assert!(t.contains("kept /d/b: tab b is running in it"), "{t}");
    }
}
