//! `nerdr rename TAB NAME`: give a tab a name of its own (a plain word,
//! unique in its session), usable wherever a tab id is.

use std::process::ExitCode;

use super::Folder;
use crate::client;
use crate::protocol::api::RenameTab;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The tab: its id, a unique id prefix, its number or its name (see `nerdr tabs`)
    pub tab: String,
    /// Its new name: a letter, then letters, digits, `-` or `_`
    pub name: String,
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let renamed = client::call(RenameTab {
        tab: args.tab,
        name: args.name,
        folder: folder.scope()?,
    })?;
    eprintln!("tab {} is now {}", renamed.tab, renamed.name);
    Ok(ExitCode::SUCCESS)
}
