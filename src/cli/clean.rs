//! `nerdr clean [--merged] [--dry-run]`: remove the worktrees of closed
//! tabs whose work is merged into their base branch (with `--merged`,
//! their `nerdr/*` branches too). Unmerged or uncommitted work is never
//! removed: such a worktree is kept, and the reason says what to do.
//!
//! It also removes the unsent diff-view comments (drafts) of tabs that no
//! longer exist, here in the client, where drafts live
//! (`client::attach::drafts`): each is printed whole as it goes, so the
//! person's words are said, never dropped silently.

use std::process::ExitCode;

use crate::client;
use crate::protocol::api::{CleanEntry, CleanWorktrees, Cleaned, ListTabs};
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
    /// One JSON object: dry_run, entries [{path, branch, action, branch_deleted, why}], drafts [{tab, file, action, comments}] (unsent diff-view comments of closed tabs)
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let cleaned = client::call(CleanWorktrees {
        merged: args.merged,
        dry_run: args.dry_run,
    })?;
    // The worktrees are cleaned already: a failure here must not hide that.
    let drafts = gone_drafts(args.dry_run).unwrap_or_else(|e| {
        eprintln!("nerdr: the drafts of closed tabs were not looked at: {e:#}");
        Vec::new()
    });
    if args.json {
        let mut v = serde_json::to_value(&cleaned)?;
        v["drafts"] = serde_json::to_value(&drafts)?;
        println!("{}", crate::printable::json(&v)?);
    } else {
        print!("{}", text(&cleaned));
        print!("{}", drafts_text(&drafts));
    }
    Ok(ExitCode::SUCCESS)
}

/// The drafts of one tab that is gone, and what became of them.
#[derive(Debug, serde::Serialize)]
struct GoneDrafts {
    tab: String,
    file: std::path::PathBuf,
    /// `removed`, `would remove`, or `kept: WHY` (a file that does not read).
    action: String,
    /// Each comment as `file:line: text`.
    comments: Vec<String>,
}

/// Remove (on a dry run, only list) the drafts of every tab the core no
/// longer has.
fn gone_drafts(dry_run: bool) -> anyhow::Result<Vec<GoneDrafts>> {
    use crate::client::attach::drafts;
    let paths = crate::paths::Paths::from_process()?;
    let dir = drafts::dir(&paths.state_dir);
    let kept = drafts::kept_tabs(&dir);
    if kept.is_empty() {
        return Ok(Vec::new());
    }
    let tabs = client::call(ListTabs {
        folder: None,
        all: true,
    })?;
    let ids: Vec<&str> = tabs.iter().map(|t| t.id.as_str()).collect();
    let mut out = Vec::new();
    for tab in drafts::orphans(&kept, &ids) {
        let file = dir.join(format!("{tab}.json"));
        let (action, comments) = match drafts::load(&dir, &tab) {
            Err(e) => (format!("kept: {e}"), Vec::new()),
            Ok(d) => {
                let comments = drafts::said(&d)
                    .lines()
                    .map(|l| l.trim_start().to_string())
                    .collect();
                let action = match dry_run {
                    true => "would remove".to_string(),
                    false => match drafts::save(&dir, &tab, &[]) {
                        Ok(()) => "removed".to_string(),
                        Err(e) => format!("kept: {e}"),
                    },
                };
                (action, comments)
            }
        };
        out.push(GoneDrafts {
            tab,
            file,
            action,
            comments,
        });
    }
    Ok(out)
}

fn drafts_text(gone: &[GoneDrafts]) -> String {
    let mut out = String::new();
    for g in gone {
        let n = g.comments.len();
        out.push_str(&format!(
            "{} {}: {n} unsent diff-view comment{} of closed tab {}{}\n",
            g.action,
            g.file.display(),
            if n == 1 { "" } else { "s" },
            g.tab,
            if n == 0 { "" } else { ", which read:" },
        ));
        for c in &g.comments {
            out.push_str(&format!("  {c}\n"));
        }
    }
    out
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
