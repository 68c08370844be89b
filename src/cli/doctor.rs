//! `nerdr doctor [--json]`: check the installation. Exit code: 0 when every
//! check passes, 1 when the worst is a warning, 2 when one fails.

use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// One JSON array of {name, status, detail, remedy}
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let code = crate::service::doctor(args.json)?;
    Ok(ExitCode::from(code as u8))
}
