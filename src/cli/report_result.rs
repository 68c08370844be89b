//! `nerdr report-result [TEXT|-] [--file F]`: a spun-off agent reports its
//! result to the tab it was spun off from (README.md, "Spinoffs").

use std::path::PathBuf;
use std::process::ExitCode;

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
    TEXT `-`, or --file, takes the text from standard input or a file.")]
pub struct Args {
    /// What was done and found; `-` reads it from standard input
    #[arg(required_unless_present = "file")]
    pub text: Option<String>,
    /// Read the text from this file (`-`: standard input)
    #[arg(long, short = 'f', value_name = "FILE", conflicts_with = "text")]
    pub file: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let text = super::send::text_of(args.text, args.file)?;
    let taken = client::call(ReportResult { text })?;
    let why = taken.why.map(|w| format!(": {w}")).unwrap_or_default();
    match taken.held {
        Held::Delivered => println!("result {} sent to tab {}", taken.number, taken.parent),
        Held::Waiting => println!("result {} kept for tab {}{why}", taken.number, taken.parent),
        Held::Approval(id) => println!(
            "result {} for tab {} waits for the user's approval as {id}{why}",
            taken.number, taken.parent
        ),
    }
    Ok(ExitCode::SUCCESS)
}
