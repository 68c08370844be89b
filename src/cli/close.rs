//! `nerdr close TAB`: stop the tab's program and forget the tab.

use std::process::ExitCode;

use crate::client;
use crate::protocol::api::Request;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The tab id
    pub tab: String,
    /// Also remove the tab's git worktree (its branch stays)
    #[arg(long)]
    pub remove_worktree: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    client::call(Request::Close {
        tab: args.tab,
        remove_worktree: args.remove_worktree,
    })?;
    Ok(ExitCode::SUCCESS)
}
