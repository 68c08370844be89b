//! `nerdr tabs [--json] [--all]`: the tabs of this folder's session.

use std::process::ExitCode;

use super::FolderArg;
use crate::client;
use crate::protocol::api::{ListTabs, TabInfo};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub folder: FolderArg,
    /// Tabs of every session
    #[arg(long)]
    pub all: bool,
    /// One JSON array: id, folder, agent, command, sandboxed, state, reason (why a tab is refused), pid, exit_code
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let folder = if args.all {
        None
    } else {
        Some(args.folder.resolve()?)
    };
    let tabs = client::call(ListTabs {
        folder,
        all: args.all,
    })?;
    if args.json {
        println!("{}", json_text(&tabs)?);
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", table(&tabs, args.all));
    Ok(ExitCode::SUCCESS)
}

/// The rows as `--json` has always printed them: the wire's JSON,
/// pretty-printed, fields in its (alphabetical) order.
fn json_text(tabs: &[TabInfo]) -> serde_json::Result<String> {
    serde_json::to_string_pretty(&serde_json::to_value(tabs)?)
}

/// The rows as a table whose columns are as wide as their widest cell
/// (`exited, resumable` is wider than any fixed width a state would get).
fn table(tabs: &[TabInfo], with_folder: bool) -> String {
    if tabs.is_empty() {
        return "no tabs\n".into();
    }
    let header = [
        "TAB",
        "AGENT",
        "STATE",
        "PID",
        if with_folder { "FOLDER" } else { "" },
    ]
    .map(String::from);
    let mut rows = vec![header];
    for t in tabs {
        let state = match (t.state.as_str(), t.exit_code, t.resumable) {
            (s, _, true) => format!("{s}, resumable"),
            (s, Some(c), _) => format!("{s}({c})"),
            (s, None, _) => s.to_string(),
        };
        let agent = if t.sandboxed {
            format!("{} [sb]", t.agent)
        } else {
            t.agent.clone()
        };
        let pid = t.pid.map(|p| p.to_string()).unwrap_or_else(|| "-".into());
        let folder = if with_folder {
            t.folder.display().to_string()
        } else {
            String::new()
        };
        rows.push([t.id.clone(), agent, state, pid, folder]);
    }
    // The old fixed widths stay the least, so short tables look as before.
    let mut width = [10, 12, 10, 8];
    for row in &rows {
        for (w, cell) in width.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for [id, agent, state, pid, folder] in &rows {
        let line = format!(
            "{id:<w0$} {agent:<w1$} {state:<w2$} {pid:>w3$}  {folder}",
            w0 = width[0],
            w1 = width[1],
            w2 = width[2],
            w3 = width[3],
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::api::{decode, ListTabs};

    /// Each column starts at the same place on every line, whatever its
    /// cells hold (a resumable exited tab's state is the widest).
    #[test]
    fn table_columns_line_up() {
        let wire = serde_json::json!([
            {"id": "ec3a8db6", "folder": "/w", "agent": "terminal", "command": ["sh"],
             "sandboxed": false, "kind": "terminal", "parent": null, "worktree": null,
             "session_id": null, "resumable": false, "state": "running", "pid": 15225,
             "exit_code": null},
            {"id": "9f117acb", "folder": "/a/longer/folder", "agent": "claude", "command": ["claude"],
             "sandboxed": true, "kind": "agent", "parent": null, "worktree": null,
             "session_id": "s", "resumable": true, "state": "exited", "pid": 15229,
             "exit_code": 1},
        ]);
        let rows = decode::<ListTabs>(wire).unwrap();
        for with_folder in [false, true] {
            let text = table(&rows, with_folder);
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines.len(), 3, "{text}");
            for word in ["PID", "15229", "15225"] {
                assert!(text.contains(word), "{text}");
            }
            // Where the PID column ends on the header line, every row's ends.
            let end = lines[0].find("PID").unwrap() + 3;
            for line in &lines[1..] {
                let cell = line[..end].rsplit(' ').next().unwrap();
                assert!(cell == "15225" || cell == "15229", "misaligned:\n{text}");
            }
            assert!(lines.iter().all(|l| !l.ends_with(' ')), "{text:?}");
            if with_folder {
                let at = lines[0].find("FOLDER").unwrap();
                assert_eq!(&lines[2][at..], "/a/longer/folder", "{text}");
            }
        }
    }

    /// `--json` printed the wire's JSON as it came; read into rows and
    /// printed again, it must be the same text, byte for byte.
    #[test]
    fn json_output_is_the_wire_as_it_came() {
        let wire = serde_json::json!([
            {"id": "ab12", "folder": "/w", "agent": "claude", "command": ["claude", "--x"],
             "sandboxed": true, "kind": "agent", "parent": null, "worktree": "/w/.nerdr/ab12",
             "session_id": null, "resumable": true, "state": "exited", "pid": null,
             "exit_code": 0},
            {"id": "cd34", "folder": "/w", "agent": "sh", "command": ["sh"],
             "sandboxed": false, "kind": "terminal", "parent": "ab12", "worktree": null,
             "session_id": null, "resumable": false, "state": "refused",
             "reason": "no such program", "pid": null, "exit_code": null,
             "warning": "hooks blocked"},
        ]);
        let before = serde_json::to_string_pretty(&wire).unwrap();
        let rows = decode::<ListTabs>(wire).unwrap();
        assert_eq!(json_text(&rows).unwrap(), before);
    }
}
