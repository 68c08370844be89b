//! `nerdr service install [--bin PATH] | uninstall | status | package-units --dir D`.

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
    /// Write the units as a package ships them (for /usr/lib/systemd/user) into D
    #[command(long_about = "Write the units as a package ships them into D, for \
            /usr/lib/systemd/user: they run /usr/bin/nerdr and name XDG's default paths \
            under %h and %t, so they serve every user without `nerdr service install`; \
            a user whose paths differ runs `nerdr service install` for drop-ins.")]
    PackageUnits {
        /// The folder to write nerdr-hook.socket, nerdr-client.socket and nerdr.service into
        #[arg(long, value_name = "D")]
        dir: PathBuf,
    },
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.action {
        Action::Install { bin } => crate::service::install(bin)?,
        Action::Uninstall => crate::service::uninstall()?,
        Action::Status => crate::service::status()?,
        Action::PackageUnits { dir } => crate::service::package_units(&dir)?,
    }
    Ok(ExitCode::SUCCESS)
}
