//! `nerdr doctor [--json]`: check the installation. Exit code: 2 when a
//! check fails, else 0 (warnings included).

use std::process::ExitCode;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Checks the service, the core process that serves (and that it is the only one), \
        config.toml, the agents' programs on PATH and the installed integrations.\n\n\
        Exit status: 0 when no check fails, warnings included \
        (`warn`: nerdr works, the line says what to improve; `info`: what the setup means, \
        such as no units without a user manager); 2 when one fails."
)]
pub struct Args {
    /// One JSON array of {name, status, detail, remedy}
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let code = crate::service::doctor(args.json)?;
    Ok(ExitCode::from(code as u8))
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// A script (or a person) reading `$?` after a warning must learn from
    /// the help that 1 is not a failure.
    #[test]
    fn help_says_what_the_exit_status_means() {
        let mut cli = super::super::Cli::command();
        let help = cli
            .find_subcommand_mut("doctor")
            .expect("doctor is a command")
            .render_help()
            .to_string();
        for want in [
            "0 when no check fails, warnings included",
            "2 when one fails",
        ] {
            assert!(
                help.contains(want),
                "`nerdr doctor --help` lacks {want:?}:\n{help}"
            );
        }
    }
}
