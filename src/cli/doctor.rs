//! `nerdr doctor [--json]`: check the installation. Exit code: 0 when every
//! check passes, 1 when the worst is a warning, 2 when one fails.

use std::process::ExitCode;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 when every check is ok, 1 when the worst is a warning \
        (`warn`: nerdr works, the line says what to improve), 2 when one fails."
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
            "0 when every check is ok",
            "1 when the worst is a warning",
            "2 when one fails",
        ] {
            assert!(
                help.contains(want),
                "`nerdr doctor --help` lacks {want:?}:\n{help}"
            );
        }
    }
}
