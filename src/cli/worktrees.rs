//! `nerdr worktrees [--json]`: every nerdr worktree (under the data dir's
//! `worktrees/`, and those git lists on `nerdr/*` branches of the
//! repositories nerdr knows) with its tab or none, branch, base, commits
//! ahead of and behind its base branch, uncommitted work, and whether its
//! work is merged.

use std::io::IsTerminal;
use std::process::ExitCode;

use crate::client;
use crate::git::base::short;
use crate::protocol::api::{ListWorktrees, WorktreeInfo};
use crate::protocol::printable;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// One JSON array: path, repo, tab, tab_name, tab_state, branch, base, base_branch, base_recorded, ahead, behind, dirty (paths with uncommitted work), merged, missing, notes
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let list = client::call(ListWorktrees)?;
    if args.json {
        println!("{}", crate::printable::json(&list)?);
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", table(&list, std::io::stdout().is_terminal()));
    Ok(ExitCode::SUCCESS)
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref()
        .map(|v| v.to_string())
        .unwrap_or_else(|| "?".into())
}

fn row(w: &WorktreeInfo) -> Vec<String> {
    let tab = tab_cell(
        w.tab.as_deref(),
        w.tab_name.as_deref(),
        w.tab_state.as_deref(),
        w.branch.as_deref(),
    );
    // A handoff's tab works in the worktree too: named beside it.
    let tab = w.also.iter().fold(tab, |cell, o| {
        let other = tab_cell(Some(&o.tab), Some(&o.name), Some(&o.state), None);
        format!("{cell} + {other}")
    });
    let base = match (&w.base, &w.base_branch) {
        (Some(c), Some(b)) => format!("{b}@{}", short(c).get(..8).unwrap_or(short(c))),
        (Some(c), None) => short(c).get(..8).unwrap_or(short(c)).to_string(),
        _ => "?".into(),
    };
    let base = if w.base.is_some() && !w.base_recorded {
        format!("{base}*")
    } else {
        base
    };
    let work = match (w.missing, w.dirty) {
        (true, _) => "missing".into(),
        (false, Some(0)) => "clean".into(),
        (false, Some(n)) => format!("dirty ({n})"),
        (false, None) => "?".into(),
    };
    let merged = match w.merged {
        Some(true) if w.no_commits => "no commits",
        Some(true) => "merged",
        Some(false) => "no",
        None => "?",
    };
    vec![
        tab,
        printable(w.branch.as_deref().unwrap_or("(detached)")),
        base,
        format!("+{} -{}", opt(&w.ahead), opt(&w.behind)),
        work,
        merged.into(),
        printable(&w.path.display().to_string()),
    ]
}

/// Who works in it, as `nerdr tabs` names them: the open tab's name, id
/// and state; a closed tab's id (its branch's `nerdr/<id>`, which `nerdr
/// diff` and `nerdr merge` take), marked closed.
pub fn tab_cell(
    tab: Option<&str>,
    name: Option<&str>,
    state: Option<&str>,
    branch: Option<&str>,
) -> String {
    let cell = match (tab, name.filter(|n| !n.is_empty())) {
        (Some(t), Some(n)) if n != t => match state {
            Some(s) => format!("{n} ({t}, {s})"),
            None => format!("{n} ({t})"),
        },
        (Some(t), _) => match state {
            Some(s) => format!("{t} ({s})"),
            None => t.to_string(),
        },
        (None, _) => match crate::git::listing::closed_id(false, branch) {
            Some(id) => format!("{id} (closed)"),
            None => "-".into(),
        },
    };
    printable(&cell)
}

/// The worktrees as a table whose columns are as wide as their widest
/// cell, then the notes; a base marked `*` was guessed, not recorded.
fn table(list: &[WorktreeInfo], colour: bool) -> String {
    if list.is_empty() {
        return "no nerdr worktrees\n".into();
    }
    let header: Vec<String> = [
        "TAB",
        "BRANCH",
        "BASE",
        "AHEAD/BEHIND",
        "WORK",
        "MERGED",
        "PATH",
    ]
    .map(String::from)
    .to_vec();
    let rows: Vec<Vec<String>> = list.iter().map(row).collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            std::iter::once(&header)
                .chain(&rows)
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |r: &[String], paint: bool| {
        let cells: Vec<String> = r
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, &w))| {
                let padded = format!("{c:<w$}");
                match (paint, i, c.as_str()) {
                    (true, 4, cell) if cell.starts_with("dirty") => {
                        format!("\x1b[33m{padded}\x1b[m")
                    }
                    (true, 5, "merged") => format!("\x1b[32m{padded}\x1b[m"),
                    _ => padded,
                }
            })
            .collect();
        cells.join("  ").trim_end().to_string() + "\n"
    };
    let mut out = line(&header, false);
    for r in &rows {
        out.push_str(&line(r, colour));
    }
    let mut guessed = false;
    for w in list {
        for n in &w.notes {
            guessed |= n.contains("merge-base");
            out.push_str(&format!(
                "{}: {}\n",
                printable(&w.path.display().to_string()),
                printable(n)
            ));
        }
    }
    if guessed {
        out.push_str("* a base nerdr did not record: guessed with `git merge-base`\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w() -> WorktreeInfo {
        WorktreeInfo {
            path: "/d/worktrees/r-1/ab12".into(),
            repo: "/src/r".into(),
            tab: Some("ab12".into()),
            tab_name: Some("sh-1".into()),
            tab_state: Some("running".into()),
            also: Vec::new(),
            branch: Some("nerdr/ab12".into()),
            base: Some("0123456789abcdef".into()),
            base_branch: Some("main".into()),
            base_recorded: true,
            ahead: Some(2),
            behind: Some(0),
            dirty: Some(1),
            merged: Some(false),
            no_commits: false,
            missing: false,
            notes: vec![],
        }
    }

    #[test]
    fn rows_say_everything_plainly() {
        let text = table(&[w()], false);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("TAB "), "{text}");
        for cell in [
            "sh-1 (ab12, running)",
            "nerdr/ab12",
            "main@01234567",
            "+2 -0",
            "dirty (1)",
            "no",
        ] {
            assert!(lines[1].contains(cell), "{cell}: {text}");
        }
        let closed = WorktreeInfo {
            tab: None,
            tab_state: None,
            also: Vec::new(),
            base_recorded: false,
            dirty: Some(0),
            merged: Some(true),
            notes: vec!["no base was recorded ... `git merge-base` ...".into()],
            ..w()
        };
        let text = table(&[closed], false);
        assert!(text.contains("main@01234567*"), "{text}");
        assert!(text.contains("clean") && text.contains("merged"), "{text}");
        assert!(text.contains("* a base nerdr did not record"), "{text}");
        assert!(!text.contains('\x1b'), "{text}");
        assert_eq!(table(&[], false), "no nerdr worktrees\n");
        let fresh = WorktreeInfo {
            ahead: Some(0),
            merged: Some(true),
            no_commits: true,
            ..w()
        };
        let text = table(&[fresh], false);
        assert!(
            text.contains("no commits") && !text.contains("merged "),
            "{text}"
        );
    }

    #[test]
    fn tabs_go_by_name_and_closed_ones_by_their_branch() {
        let cell = tab_cell;
        assert_eq!(
            cell(
                Some("ab12"),
                Some("fixer"),
                Some("running"),
                Some("nerdr/ab12")
            ),
            "fixer (ab12, running)"
        );
        assert_eq!(
            cell(Some("ab12"), Some(""), Some("exited"), None),
            "ab12 (exited)"
        );
        assert_eq!(cell(None, None, None, Some("nerdr/ab12")), "ab12 (closed)");
        assert_eq!(cell(None, None, None, Some("feature")), "-");
        assert_eq!(cell(None, None, None, None), "-");
        let closed = WorktreeInfo {
            tab: None,
            tab_name: None,
            tab_state: None,
            also: Vec::new(),
            ..w()
        };
        let text = table(&[closed], false);
        assert!(
            text.lines().nth(1).unwrap().starts_with("ab12 (closed)"),
            "{text}"
        );
    }
}
