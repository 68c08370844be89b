//! `nerdr restart TAB`: stop the tab's agent if it runs and start it again in
//! the same tab and worktree, resuming its conversation (by the session id
//! nerdr recorded, else the agent's reported resume command, else its
//! "continue" mode). After a full stop, this is how a listed tab comes back.

use std::process::ExitCode;

use crate::client;
use crate::protocol::api::RestartTab;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The tab id
    pub tab: String,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let started = client::call(RestartTab {
        tab: args.tab,
        env: client::own_env(),
    })?;
    println!("{}", started.tab);
    Ok(ExitCode::SUCCESS)
}
