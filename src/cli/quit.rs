//! `nerdr quit`: stop every program of this folder's session and forget it.

use std::process::ExitCode;

use super::Folder;
use crate::client;
use crate::protocol::api::QuitSession;

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let quit = client::call(QuitSession {
        folder: folder.resolve()?,
    })?;
    let n = quit.closed;
    eprintln!("closed {n} tab{}", if n == 1 { "" } else { "s" });
    for left in &quit.left {
        eprintln!("{}", crate::protocol::printable(left));
    }
    Ok(ExitCode::SUCCESS)
}
