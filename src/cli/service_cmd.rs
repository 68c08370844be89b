//! `nerdr service install [--bin PATH] | uninstall | status`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, Subcommand)]
pub enum Action {
    /// Write the units, reload, and start listening on both sockets
    Install {
        /// The nerdr binary the units run (default: this one)
        #[arg(long, value_name = "PATH")]
        bin: Option<PathBuf>,
    },
    /// Stop and remove everything `install` made
    Uninstall,
    /// Whether the units are installed and current, and what the core says
    Status,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.action {
        Action::Install { bin } => crate::service::install(bin)?,
        Action::Uninstall => crate::service::uninstall()?,
        Action::Status => crate::service::status()?,
    }
    Ok(ExitCode::SUCCESS)
}
