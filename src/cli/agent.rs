//! `nerdr agent NAME [--folder DIR] [-- ARGS...]`: start an agent in a new tab
//! of the folder's session.

use std::process::ExitCode;

use super::Folder;
use crate::client;
use crate::protocol::api::StartAgent;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A built-in agent (claude, codex, opencode, ...) or an [agents.NAME] from config
    pub name: String,
    /// Work in the folder itself, not in a new git worktree
    #[arg(long)]
    pub no_worktree: bool,
    /// Extra arguments for this run, after the configured ones
    #[arg(last = true)]
    pub extra_args: Vec<String>,
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let started = client::call(StartAgent {
        folder: folder.resolve()?,
        name: args.name,
        extra_args: args.extra_args,
        env: client::own_env(),
        worktree: !args.no_worktree,
    })?;
    // The tab id alone, so scripts can capture it.
    println!("{}", started.tab);
    Ok(ExitCode::SUCCESS)
}
