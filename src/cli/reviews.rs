//! `nerdr reviews [TAB] [--json] [--send N|all]`: a tab's reviews and
//! their comments; `--send` types chosen comments to the author's agent as
//! one message, as `nerdr send` does (the person's to do: a reviewer's
//! agent may not type into its author). The core escapes the reviewer's
//! text (`review::shown`); the text form escapes it again, harmlessly.

use std::process::ExitCode;

use super::Folder;
use crate::client;
use crate::protocol::api::{ListReviews, SendText};
use crate::protocol::printable;
use crate::protocol::replies::{Sent, TabReviews};
use crate::review::SANDBOX_NOTE;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The author's tab: its id, a unique id prefix, its number or its name (default: the tab this runs in, else every reviewed tab of this folder's session). Named, from outside the tabs and without --json, its reviews count as read (its @N mark goes)
    pub tab: Option<String>,
    /// One JSON array: per tab, tab, name, reviews (number, reviewer_tab, agent, written_in_sandbox, from_sandbox, note (from a sandbox only), base, head, summary, read, comments: file, line, severity, text; hidden and control characters in the reviewer's text as escapes such as \u{202e}) and requested (reviews not posted yet: reviewer_tab, agent, base, head, automatic, state, status)
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
        // Printed for a person, a named tab's reviews are read (its mark
        // in the window and `nerdr tabs` goes); `--json` is for scripts.
        mark_read: args.tab.is_some() && !args.json && args.send.is_none(),
    })?;
    if let Some(which) = &args.send {
        return send(&tabs, which, args.review, scope);
    }
    if args.json {
        println!("{}", crate::printable::json(&tabs)?);
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
    // What was asked for is checked first: a comment that does not exist
    // is the answer, whatever else would refuse the send.
    let chosen = send_choice(which).map_err(anyhow::Error::msg)?;
    let review = match number {
        Some(n) => tab.reviews.iter().find(|r| r.review.number == n),
        None => tab.reviews.last(),
    }
    .map(|r| &r.review);
    let Some(review) = review else {
        anyhow::bail!(
            "tab {} has no review{}; `nerdr request-review {}` asks for one",
            tab.tab,
            number.map(|n| format!(" {n}")).unwrap_or_default(),
            tab.tab
        );
    };
    let message = crate::review::message(review, chosen).map_err(anyhow::Error::msg)?;
    if let Some(why) = crate::review::not_for_a_program(
        &tab.tab,
        tab.program.as_deref(),
        crate::review::Meant::Review,
    ) {
        anyhow::bail!(why);
    }
    let sent = client::call(SendText {
        tab: tab.tab.clone(),
        text: message,
        enter: true,
        agent_only: true,
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

/// `--send`'s argument: a comment's number, or `None` for `all`.
fn send_choice(which: &str) -> Result<Option<usize>, String> {
    match which {
        "all" => Ok(None),
        n => n.parse::<usize>().map(Some).map_err(|_| {
            format!("--send takes a comment's number (1, 2, ...) or `all`: {n:?} is neither")
        }),
    }
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
        for r in t.reviews.iter().map(|r| &r.review) {
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
                "  requested: {} (tab {}) on {}..{}{}: {}\n",
                printable(&p.agent),
                p.reviewer_tab,
                crate::review::short(&p.base),
                crate::review::short(&p.head),
                if p.automatic { ", automatic" } else { "" },
                printable(&p.status)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn send_takes_a_number_or_all() {
        assert_eq!(send_choice("all"), Ok(None));
        assert_eq!(send_choice("5"), Ok(Some(5)));
        for bad in ["two", "", "-1", "1,2"] {
            let err = send_choice(bad).unwrap_err();
            assert!(
                err.contains("is neither") && err.contains("`all`"),
                "{bad}: {err}"
            );
        }
    }
    use crate::protocol::replies::{ReviewRequested, ShownReview};
    use crate::review::format::{Comment, Severity};
    use crate::review::store::Review;

    #[test]
    fn a_review_from_a_sandbox_says_so_and_agent_text_is_made_printable() {
        let tabs = [TabReviews {
            program: None,
            tab: "ab12".into(),
            name: "claude-1".into(),
            // As it is stored: this output makes it printable itself too.
            reviews: vec![ShownReview {
                from_sandbox: true,
                note: None,
                review: Review {
                    read: true,
                    number: 1,
                    reviewer_tab: "r1".into(),
                    agent: "codex".into(),
                    written_in_sandbox: true,
                    base: "0123456789abcdef".into(),
                    head: "fedcba9876543210".into(),
                    summary: "ok\u{1b}[2J".into(),
                    comments: vec![Comment {
                        file: "a.rs".into(),
                        line: 3,
                        severity: Severity::Error,
                        text: "bad".into(),
                    }],
                },
            }],
            requested: vec![ReviewRequested {
                reviewer_tab: "r2".into(),
                agent: "claude".into(),
                base: "0123456789abcdef".into(),
                head: "aaaaaaaaaaaaaaaa".into(),
                automatic: true,
                state: crate::review::status::State::Ended,
                status: "ended without a review (exit code 1)".into(),
            }],
        }];
        let shown = text(&tabs);
        assert_eq!(
            shown,
            format!(
                "tab ab12 (claude-1)\n  review 1 by codex (tab r1) of 0123456789ab..fedcba987654\n    \
                 {SANDBOX_NOTE}\n    summary: ok\\u{{1b}}[2J\n    1. a.rs:3 error: bad\n  \
                 requested: claude (tab r2) on 0123456789ab..aaaaaaaaaaaa, automatic: ended without a \
                 review (exit code 1)\n"
            )
        );
        assert_eq!(text(&[]), "no reviews\n");
    }
}
