//! `nerdr read TAB [--lines N]`: a tab's current screen as text.

use std::process::ExitCode;

use super::Folder;
use crate::client;
use crate::protocol::api::ReadScreen;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The tab: its id, a unique id prefix, its number or its name (see `nerdr tabs`)
    pub tab: String,
    /// Only the last N lines of the screen
    #[arg(long, value_name = "N")]
    pub lines: Option<usize>,
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let screen = client::call(ReadScreen {
        tab: args.tab,
        lines: args.lines,
        folder: folder.scope()?,
    })?;
    println!("{}", screen.text);
    Ok(ExitCode::SUCCESS)
}
