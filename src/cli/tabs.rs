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

fn table(tabs: &[TabInfo], with_folder: bool) -> String {
    let mut out = String::new();
    if tabs.is_empty() {
        return "no tabs\n".into();
    }
    out.push_str(&format!(
        "{:<10} {:<12} {:<10} {:>8}  {}\n",
        "TAB",
        "AGENT",
        "STATE",
        "PID",
        if with_folder { "FOLDER" } else { "" }
    ));
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
        out.push_str(&format!(
            "{:<10} {:<12} {:<10} {:>8}  {}\n",
            t.id, agent, state, pid, folder
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::api::{decode, ListTabs};

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
