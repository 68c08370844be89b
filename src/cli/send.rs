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
    client::call(Request::Send {
        tab: args.tab,
        text: args.text,
        enter: !args.no_enter,
    })?;
    Ok(ExitCode::SUCCESS)
}
