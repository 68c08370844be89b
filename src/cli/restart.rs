//! `nerdr restart TAB`: stop the tab's agent if it runs and start it again in
//! the same tab and worktree, resuming its conversation (by the session id
//! nerdr recorded, else the agent's reported resume command, else its
//! "continue" mode). After a full stop, this is how a listed tab comes back.
//!
//! A running tab's program is stopped first, which a person should choose:
//! on a terminal the command asks; without one (a script) it refuses
//! unless `--force` says so, and the refusal names the flag.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use anyhow::bail;

use super::stopping::{step, Step};
use super::Folder;
use crate::client;
use crate::protocol::api::{ExplainTab, RestartTab};
use crate::protocol::printable;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "The agent gets this command's environment, as `nerdr agent` gives it its \
        own: run it where the agent's variables (an API key, a base URL) are set. It \
        reads the config and the screen rules afresh, and keeps the tab's number."
)]
pub struct Args {
    /// The tab: its id, a unique id prefix, its number or its name (see `nerdr tabs`)
    pub tab: String,
    /// Restart a running tab without asking (stops its program first)
    #[arg(short, long, visible_alias = "yes")]
    pub force: bool,
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    // By id from here on: the question is about the tab that is restarted.
    // A tab the caller may not look at (or none) is the core's to refuse,
    // as a restart, with the restart's own answer and journal entry.
    let scope = folder.scope()?;
    let tab = match client::call(ExplainTab {
        tab: args.tab.clone(),
        folder: scope.clone(),
    }) {
        Err(_) => args.tab,
        Ok(e) => {
            let what = format!("tab {} ({})", printable(&e.tab), printable(&e.agent));
            match step(&e.state, args.force, std::io::stdin().is_terminal()) {
                Step::Go => {}
                Step::Refuse => bail!(
                    "{what} is running: restarting stops its program first; add --force (-f) \
                     to restart it anyway"
                ),
                Step::Ask => {
                    eprint!("{what} is running: stop its program and start it again? [y/N] ");
                    std::io::stderr().flush()?;
                    let mut answer = String::new();
                    std::io::stdin().lock().read_line(&mut answer)?;
                    if !matches!(answer.trim(), "y" | "Y" | "yes") {
                        eprintln!("not restarted");
                        return Ok(ExitCode::FAILURE);
                    }
                }
            }
            e.tab
        }
    };
    let started = client::call(RestartTab {
        tab,
        env: client::own_env(),
        folder: scope,
    })?;
    println!("{}", started.tab);
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Restarting a running tab stops its program: the one-line help in
    /// `nerdr --help` must say so.
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
