//! `nerdr terminal TAB`: a terminal (the user's shell) in the tab's folder,
//! in a tab of its own that belongs to TAB.

use std::process::ExitCode;

use super::Folder;
use crate::client;
use crate::protocol::api::OpenTerminal;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The agent tab whose folder the terminal opens in
    pub tab: String,
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let started = client::call(OpenTerminal {
        tab: args.tab,
        env: client::own_env(),
        folder: folder.scope()?,
    })?;
    println!("{}", started.tab);
    Ok(ExitCode::SUCCESS)
}
