//! `nerdr reviews [TAB] [--json] [--send N|all]`: a tab's reviews and
//! their comments; `--send` types chosen comments to the author's agent as
//! one message, as `nerdr send` does.

use std::process::ExitCode;

use super::Folder;
use crate::client;
use crate::protocol::api::{ListReviews, SendText};
use crate::protocol::printable;
use crate::protocol::replies::{Sent, TabReviews};
use crate::review::SANDBOX_NOTE;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The author's tab: its id, a unique id prefix, its number or its name (default: the tab this runs in, else every reviewed tab of this folder's session)
    pub tab: Option<String>,
    /// One JSON array: per tab, tab, name, reviews (number, reviewer_tab, agent, written_in_sandbox, base, head, summary, comments: file, line, severity, text) and requested (reviewers at work)
    #[arg(long)]
    pub json: bool,
    /// Send comment N of the latest review (or `all` of them) to the author's agent, as one message
    #[arg(long, value_name = "N|all", requires = "tab")]
    pub send: Option<String>,
    /// With --send: the review to send from (default: the latest)
    #[arg(long, value_name = "N", requires = "send")]
    pub review: Option<u32>,
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let scope = folder.scope()?;
    let tabs = client::call(ListReviews {
        tab: args.tab.clone(),
        folder: scope.clone(),
    })?;
    if let Some(which) = &args.send {
        return send(&tabs, which, args.review, scope);
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&tabs)?);
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", text(&tabs));
    Ok(ExitCode::SUCCESS)
}

fn send(
    tabs: &[TabReviews],
    which: &str,
    number: Option<u32>,
    folder: Option<std::path::PathBuf>,
) -> anyhow::Result<ExitCode> {
    let Some(tab) = tabs.first() else {
        anyhow::bail!("no such tab");
    };
    let review = match number {
        Some(n) => tab.reviews.iter().find(|r| r.number == n),
        None => tab.reviews.last(),
    };
    let Some(review) = review else {
        anyhow::bail!(
            "tab {} has no review{}; `nerdr request-review {}` asks for one",
            tab.tab,
            number.map(|n| format!(" {n}")).unwrap_or_default(),
            tab.tab
        );
    };
    let chosen = match which {
        "all" => None,
        n => Some(n.parse::<usize>().map_err(|_| {
            anyhow::anyhow!("--send takes a comment's number (1, 2, ...) or `all`, not {n:?}")
        })?),
    };
    let message = crate::review::message(review, chosen).map_err(anyhow::Error::msg)?;
    let sent = client::call(SendText {
        tab: tab.tab.clone(),
        text: message,
        enter: true,
        folder,
    })?;
    if let Sent::Queued { queued, why } = sent {
        eprintln!(
            "nerdr: the message for tab {} waits for the user's approval as {queued}: {why}",
            tab.tab
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The reviews for a person: each review's summary, then its comments
/// numbered as `--send` takes them. Text from agents is made printable.
fn text(tabs: &[TabReviews]) -> String {
    if tabs.is_empty() {
        return "no reviews\n".into();
    }
    let mut out = String::new();
    for t in tabs {
        out.push_str(&format!("tab {} ({})\n", t.tab, printable(&t.name)));
        if t.reviews.is_empty() && t.requested.is_empty() {
            out.push_str("  no reviews\n");
        }
        for r in &t.reviews {
            out.push_str(&format!(
                "  review {} by {} (tab {}) of {}..{}\n",
                r.number,
                printable(&r.agent),
                r.reviewer_tab,
                crate::review::short(&r.base),
                crate::review::short(&r.head)
            ));
            if r.written_in_sandbox {
                out.push_str(&format!("    {SANDBOX_NOTE}\n"));
            }
            out.push_str(&format!("    summary: {}\n", printable(&r.summary)));
            for (i, c) in r.comments.iter().enumerate() {
                out.push_str(&format!(
                    "    {}. {}:{} {}: {}\n",
                    i + 1,
                    printable(&c.file),
                    c.line,
                    c.severity.as_str(),
                    printable(&c.text)
                ));
            }
        }
        for p in &t.requested {
            out.push_str(&format!(
                "  reviewing: {} (tab {}) on {}..{}{}\n",
                printable(&p.agent),
                p.reviewer_tab,
                crate::review::short(&p.base),
                crate::review::short(&p.head),
                if p.automatic { ", automatic" } else { "" }
            ));
        }
    }
    out
}
