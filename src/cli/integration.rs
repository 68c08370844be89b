//! `nerdr integration install|uninstall claude|codex|copilot`: add hooks to
//! the agent's own settings that report its session id and turns to nerdr,
//! and a skill that teaches it nerdr's commands, or take them out again
//! leaving the files as they were.

use std::process::ExitCode;

use clap::Subcommand;

use crate::integration::{self, Agent};

#[derive(Debug, clap::Args)]
#[command(after_help = "\
Files edited (the agent's own; comments and layout are kept):
  claude   $CLAUDE_CONFIG_DIR/settings.json (~/.claude/settings.json): hooks SessionStart, UserPromptSubmit, Stop, Notification, PostToolUse
  codex    $CODEX_HOME/config.toml (~/.codex/config.toml): notify (turn ends only; a notify of yours is left as it is, and the skill still installed)
  copilot  $COPILOT_HOME/hooks/nerdr.json (~/.copilot/hooks/nerdr.json): sessionStart, userPromptSubmitted, agentStop, postToolUse

Skills written (removed by uninstall only if unchanged):
  claude   ~/.claude/skills/nerdr/SKILL.md
  codex    $CODEX_HOME/skills/nerdr/SKILL.md
  copilot  $COPILOT_HOME/skills/nerdr/SKILL.md

The hooks run `\"${NERDR_BIN:-nerdr}\" hook EVENT`, which does nothing outside nerdr.

claude --status-line also sets statusLine (when the file has none) to \
`\"${NERDR_BIN:-nerdr}\" hook claude-statusline`, which keeps the plan limits claude gives it \
for `nerdr usage`. Claude then shows that line instead of its footer hints (esc to interrupt, \
? for shortcuts), which nerdr's screen rules read, so it is not the default.")]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, Subcommand)]
pub enum Action {
    /// Add nerdr's hooks to the agent's settings (again: no change)
    Install {
        #[arg(value_enum)]
        agent: Agent,
        /// claude only: also set claude's statusLine to nerdr's, for `nerdr usage`
        #[arg(long)]
        status_line: bool,
    },
    /// Remove what install added; an untouched file comes back byte for byte
    Uninstall {
        #[arg(value_enum)]
        agent: Agent,
    },
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.action {
        Action::Install { agent, status_line } => {
            if status_line && agent != Agent::Claude {
                anyhow::bail!(
                    "--status-line is claude's: {} gives no status-line command its limits",
                    agent.name()
                );
            }
            integration::install(agent)?;
            if status_line {
                integration::install_status_line()?;
            }
        }
        Action::Uninstall { agent } => integration::uninstall(agent)?,
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use crate::integration::{claude, copilot};

    /// The help lists what install writes; it named three of claude's five
    /// hooks once, so it is checked against the hooks themselves.
    #[test]
    fn help_names_every_hook_install_adds() {
        use clap::CommandFactory;
        let help = super::super::Cli::command()
            .find_subcommand_mut("integration")
            .expect("integration is a command")
            .render_long_help()
            .to_string();
        for (agent, target) in [("claude", &claude::TARGET), ("copilot", &copilot::TARGET)] {
            let line = help
                .lines()
                .find(|l| l.trim_start().starts_with(agent) && l.contains("hooks"))
                .unwrap_or_else(|| panic!("no hooks line for {agent}: {help}"));
            for (event, _) in target.events {
                assert!(line.contains(event), "{agent} {event} missing: {line}");
            }
            assert!(help.contains("skills/nerdr/SKILL.md"), "{help}");
        }
    }
}
