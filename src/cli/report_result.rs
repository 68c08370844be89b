//! `nerdr report-result [TEXT|-] [--file F] [--for TAB]`: a spun-off agent
//! reports its result to the tab it was spun off from; the person reports
//! one for a spun-off tab, by default its agent's last answer (README.md,
//! "Spinoffs").

use std::path::PathBuf;
use std::process::ExitCode;

use super::Folder;
use crate::client;
use crate::protocol::api::ReportResult;
use crate::spinoff::store::Held;

#[derive(Debug, clap::Args)]
// The variant's doc comment is the about line; what follows it goes
// after the options (a `long_about` here would be shadowed by it).
#[command(after_help = "\
    The parent gets it as one message: TEXT, this tab's branch, its commits since the spinoff \
    point (git log --oneline, at most 20) and a diffstat. It goes only to the parent: no other \
    tab can be named, and a tab nerdr spinoff did not start cannot report. Run it again for a \
    follow-up. A parent whose program has ended keeps the result until `nerdr restart` starts \
    it; a result written in a sandbox, for a parent outside every sandbox, waits for the \
    user's approval (`nerdr approvals`), as a message from a sandboxed agent does.\n\n\
    TEXT `-`, or --file, takes the text from standard input or a file; at most 256 KiB (the \
    parent reads its first 4000 characters): commit a longer document on this tab's branch \
    and name its path.\n\n\
    --for TAB reports for spun-off tab TAB (its id, number or name), when its agent's turn \
    ended without a report (`nerdr tabs` says report_due; the window offers it): without TEXT \
    the result is its agent's last answer, read from its conversation log (claude, codex, \
    opencode), or its last 40 screen lines for an agent nerdr cannot read, and the message \
    says which and that the person reported it. The person may report for any spun-off tab; \
    a tab's program only for its own.")]
pub struct Args {
    /// What was done and found; `-` reads it from standard input
    #[arg(required_unless_present_any = ["file", "for_tab"])]
    pub text: Option<String>,
    /// Read the text from this file (`-`: standard input)
    #[arg(long, short = 'f', value_name = "FILE", conflicts_with = "text")]
    pub file: Option<PathBuf>,
    /// Report for this spun-off tab (without TEXT: its agent's last answer)
    #[arg(long = "for", value_name = "TAB")]
    pub for_tab: Option<String>,
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let text = match (&args.text, &args.file, &args.for_tab) {
        // The person's report of the tab's last answer.
        (None, None, Some(_)) => String::new(),
        _ => super::send::text_of(args.text, args.file)?,
    };
    if let Some(why) = crate::spinoff::report_too_long(text.len()) {
        anyhow::bail!(why);
    }
    let taken = client::call(ReportResult {
        text,
        tab: args.for_tab,
        env: client::own_env(),
        folder: folder.scope()?,
    })?;
    let why = taken.why.map(|w| format!(": {w}")).unwrap_or_default();
    match taken.held {
        Held::Delivered => println!("result {} sent to tab {}", taken.number, taken.parent),
        Held::Waiting => println!("result {} kept for tab {}{why}", taken.number, taken.parent),
        Held::Approval(id) => println!(
            "result {} for tab {} waits for the user's approval as {id}{why}",
            taken.number, taken.parent
        ),
        // Only an answer sets it, never a report.
        Held::Denied(id) => println!(
            "result {} for tab {} was denied by the user ({id})",
            taken.number, taken.parent
        ),
    }
    Ok(ExitCode::SUCCESS)
}
