//! `nerdr spinoffs [--json]`: the spinoffs of this folder's session, their
//! parents and their results (README.md, "Spinoffs").

use std::process::ExitCode;

use super::Folder;
use crate::client;
use crate::protocol::api::ListSpinoffs;
use crate::protocol::printable;
use crate::protocol::spinoffs::SpinoffInfo;
use crate::spinoff::store::Held;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// One JSON array: tab, parent, agent, sandboxed, branch, base, task, open, results (number, message, held: delivered, waiting or {"approval": ID})
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let rows = client::call(ListSpinoffs {
        folder: folder.scope()?,
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", text(&rows));
    Ok(ExitCode::SUCCESS)
}

fn text(rows: &[SpinoffInfo]) -> String {
    if rows.is_empty() {
        return "no spinoffs\n".into();
    }
    let mut out = String::new();
    for s in rows {
        let closed = if s.open { "" } else { " (closed)" };
        let sb = if s.sandboxed { " [sb]" } else { "" };
        out.push_str(&format!(
            "{}{closed} from {}: {}{sb} on {} from {}\n  task: {}\n",
            s.tab,
            s.parent,
            s.agent,
            s.branch,
            crate::review::short(&s.base),
            printable(&s.task)
        ));
        for r in &s.results {
            let held = match &r.held {
                Held::Delivered => "delivered".to_string(),
                Held::Waiting => "WAITING for the parent".to_string(),
                Held::Approval(id) => format!("put to the user as {id}"),
            };
            out.push_str(&format!(
                "  result {} ({held}): {}\n",
                r.number,
                printable(&r.message)
            ));
        }
    }
    out
}
