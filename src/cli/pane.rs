//! `nerdr pane report-agent TAB -- CMD ARGS...`: an agent (or its wrapper)
//! tells nerdr how to resume it. Used on the next restart of the tab, after
//! the agent's own `command` and `args`; ignored for sandboxed agents.

use std::process::ExitCode;

use clap::Subcommand;

use crate::client;
use crate::protocol::api::ReportAgent;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, Subcommand)]
pub enum Action {
    /// Report the agent's resume command for TAB
    ReportAgent {
        /// The tab (its id; inside a tab, its own)
        tab: String,
        /// The agent's word from its command, then the resume arguments
        #[arg(last = true, required = true)]
        argv: Vec<String>,
    },
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.action {
        Action::ReportAgent { tab, argv } => {
            let taken = client::call(ReportAgent { tab, argv })?;
            if let Some(why) = taken.ignored {
                eprintln!("nerdr: report ignored: {why}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
