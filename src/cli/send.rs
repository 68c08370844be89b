//! `nerdr send TAB TEXT [--no-enter]`: type text into a tab.

use std::process::ExitCode;

use crate::client;
use crate::protocol::api::Request;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The tab id
    pub tab: String,
    /// What to type
    pub text: String,
    /// Do not press Enter after the text
    #[arg(long)]
    pub no_enter: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let reply = client::call(Request::Send {
        tab: args.tab.clone(),
        text: args.text,
        enter: !args.no_enter,
    })?;
    if let Some(id) = reply["queued"].as_str() {
        // Not delivered yet: say so, so a script does not take it as sent.
        eprintln!(
            "nerdr: the message for tab {} waits for the user's approval as {id}: {}",
            args.tab,
            reply["why"].as_str().unwrap_or_default()
        );
    }
    Ok(ExitCode::SUCCESS)
}
