//! `nerdr restart TAB`: stop the tab's agent if it runs and start it again in
//! the same tab and worktree, resuming its conversation (by the session id
//! nerdr recorded, else the agent's reported resume command, else its
//! "continue" mode). After a full stop, this is how a listed tab comes back.

use std::process::ExitCode;

use super::Folder;
use crate::client;
use crate::protocol::api::RestartTab;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "The agent gets this command's environment, as `nerdr agent` gives it its \
        own: run it where the agent's variables (an API key, a base URL) are set. It \
        reads the config and the screen rules afresh, and keeps the tab's number."
)]
pub struct Args {
    /// The tab: its id, a unique id prefix, its number or its name (see `nerdr tabs`)
    pub tab: String,
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let started = client::call(RestartTab {
        tab: args.tab,
        env: client::own_env(),
        folder: folder.scope()?,
    })?;
    println!("{}", started.tab);
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Restarting a running tab stops its program without asking: the
    /// one-line help in `nerdr --help` must say so.
    #[test]
    fn help_says_a_running_agent_is_stopped_first() {
        let cli = super::super::Cli::command();
        let restart = cli
            .find_subcommand("restart")
            .expect("restart is a command");
        let about = restart
            .get_about()
            .map(|a| a.to_string())
            .unwrap_or_default();
        assert!(about.contains("a running one is stopped first"), "{about}");
    }
}
