//! `nerdr plugin NAME [ARGS...]`: run a program from
//! `$XDG_CONFIG_HOME/nerdr/plugins/` through the core. From a sandboxed
//! agent's tab each run waits for the user's approval (F3, `nerdr approvals`).

use std::io::Write;
use std::process::ExitCode;

use super::Folder;
use crate::client;
use crate::protocol::api::RunPlugin;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A file name in $XDG_CONFIG_HOME/nerdr/plugins/
    pub name: String,
    /// Passed to the plugin as they are
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let ran = client::call(RunPlugin {
        name: args.name,
        args: args.args,
        folder: folder.resolve()?,
    })?;
    std::io::stdout().write_all(ran.stdout.as_bytes())?;
    std::io::stderr().write_all(ran.stderr.as_bytes())?;
    // Killed by a signal: the shell's convention, 128 + signal, is not known here.
    let code = ran.code.unwrap_or(1);
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}
