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
    /// One JSON array: tab, parent, agent, sandboxed, branch, base, task, open, parent_open, results (number, message, held: delivered, waiting or {"approval": ID})
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let rows = client::call(ListSpinoffs {
        folder: folder.scope()?,
    })?;
    if args.json {
        println!("{}", crate::printable::json(&rows)?);
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
        let parent_closed = if s.parent_open { "" } else { " (closed)" };
        let sb = if s.sandboxed { " [sb]" } else { "" };
        out.push_str(&format!(
            "{}{closed} from {}{parent_closed}: {}{sb} on {} from {}\n  task: {}\n",
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
                // Nothing restarts a closed tab: the result stays listed.
                Held::Waiting if !s.parent_open => "kept: the parent tab is closed".to_string(),
                Held::Waiting => "WAITING for the parent".to_string(),
                Held::Approval(id) => format!("put to the user as {id}"),
                Held::Denied(id) => format!("denied by the user ({id}), never typed"),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spinoff::store::Reported;

    fn row(open: bool, parent_open: bool, held: Held) -> SpinoffInfo {
        SpinoffInfo {
            tab: "c1".into(),
            parent: "p1".into(),
            agent: "sh".into(),
            sandboxed: false,
            branch: "nerdr/c1".into(),
            base: "0123456789abcdef".into(),
            task: "t".into(),
            open,
            parent_open,
            results: vec![Reported {
                number: 1,
                message: "m".into(),
                held,
                sandboxed: None,
            }],
        }
    }

    #[test]
    fn a_closed_parent_is_said_closed_and_its_kept_result_says_why() {
        #[rustfmt::skip]
        let rows = [
            (true, true, Held::Waiting, "c1 from p1: sh", "(WAITING for the parent)"),
            (true, false, Held::Waiting, "c1 from p1 (closed): sh", "(kept: the parent tab is closed)"),
            (false, false, Held::Delivered, "c1 (closed) from p1 (closed): sh", "(delivered)"),
        ];
        for (open, parent_open, held, head, result) in rows {
            let out = text(&[row(open, parent_open, held)]);
            assert!(out.starts_with(head), "{out}");
            assert!(out.contains(&format!("result 1 {result}: m")), "{out}");
        }
    }

    #[test]
    fn an_older_core_s_row_has_its_parent_open() {
        let mut v = serde_json::to_value(row(true, false, Held::Delivered)).unwrap();
        v.as_object_mut().unwrap().remove("parent_open");
        let back: SpinoffInfo = serde_json::from_value(v).unwrap();
        assert!(back.parent_open);
    }
}
