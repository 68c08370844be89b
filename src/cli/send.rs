//! `nerdr send TAB TEXT [--no-enter]`: type text into a tab.

use std::process::ExitCode;

use super::Folder;
use crate::client;
use crate::protocol::api::SendText;
use crate::protocol::replies::Sent;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The tab: its id, a unique id prefix, its number or its name (see `nerdr tabs`)
    pub tab: String,
    /// What to type
    pub text: String,
    /// Do not press Enter after the text
    #[arg(long)]
    pub no_enter: bool,
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let sent = client::call(SendText {
        tab: args.tab.clone(),
        text: args.text,
        enter: !args.no_enter,
        folder: folder.scope()?,
    })?;
    if let Sent::Queued { queued, why } = sent {
        // Not delivered yet: say so, so a script does not take it as sent.
        eprintln!(
            "nerdr: the message for tab {} waits for the user's approval as {queued}: {why}",
            args.tab,
        );
    }
    Ok(ExitCode::SUCCESS)
}
