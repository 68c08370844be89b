//! `nerdr close TAB`: stop the tab's program and forget the tab; with
//! `--remove-worktree`, remove its worktree, never losing work without a
//! word (see `core::close`).

use std::process::ExitCode;

use crate::client;
use crate::protocol::api::Request;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The tab id
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

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let reply = client::call(Request::Close {
        tab: args.tab,
        remove_worktree: args.remove_worktree,
        force: args.force,
    })?;
    if let Some(r) = reply.get("removed") {
        eprint!("{}", removed_text(r));
    }
    Ok(ExitCode::SUCCESS)
}

/// What a removal did, in words: where saved work went and how to get it
/// back, and that the branch stays.
fn removed_text(r: &serde_json::Value) -> String {
    let s = |v: &serde_json::Value| v.as_str().unwrap_or("?").to_string();
    let mut out = format!("removed the worktree {}\n", s(&r["worktree"]));
    if let Some(saved) = r.get("saved").filter(|v| !v.is_null()) {
        let reference = s(&saved["reference"]);
        out.push_str(&format!(
            "its uncommitted work (untracked files included) was saved first as {reference} \
             (commit {}); get it back with {}\n",
            s(&saved["commit"]),
            crate::git::saved::how_to_restore(&reference)
        ));
    }
    let branch = s(&r["branch"]);
    match r["branch_only_commits"].as_u64() {
        Some(0) | None => out.push_str(&format!("the branch {branch} stays\n")),
        Some(n) => out.push_str(&format!(
            "the branch {branch} stays, with {n} commit{} no other branch has\n",
            if n == 1 { "" } else { "s" }
        )),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_removal_says_where_work_went_and_that_the_branch_stays() {
        let saved = serde_json::json!({
            "worktree": "/w/ab12",
            "saved": {"reference": "refs/nerdr/saved/ab12", "commit": "c0ffee"},
            "branch": "nerdr/ab12",
            "branch_only_commits": 2,
        });
        let text = removed_text(&saved);
        assert!(
            text.contains("saved first as refs/nerdr/saved/ab12"),
            "{text}"
        );
        assert!(
            text.contains("git stash apply refs/nerdr/saved/ab12"),
            "{text}"
        );
        assert!(text.contains("nerdr/ab12 stays, with 2 commits"), "{text}");
        let clean = serde_json::json!({
            "worktree": "/w/ab12", "saved": null, "branch": "nerdr/ab12", "branch_only_commits": 0,
        });
        let text = removed_text(&clean);
        assert!(!text.contains("saved"), "{text}");
        assert!(text.ends_with("the branch nerdr/ab12 stays\n"), "{text}");
    }
}
