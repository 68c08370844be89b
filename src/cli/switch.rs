//! `nerdr switch TAB AGENT [--file F|-] [TEXT] [--no-handoff]`: the tab
//! goes on with another agent, in the same worktree and branch, with a
//! handoff from the agent before as its first prompt (README.md,
//! "Switching agents").

use std::process::ExitCode;

use super::Folder;
use crate::client;
use crate::protocol::api::SwitchTab;

#[derive(Debug, clap::Args)]
#[command(
    about = "Give a tab another agent (same worktree and branch), with a handoff from the one before",
    long_about = "Stop a tab's agent and start another in the same tab: same id, \
    name, worktree and branch. Use it when an agent hit its plan's limit (the window offers \
    it then), or to go on with another agent's strengths.\n\n\
    The new agent gets a handoff as its first prompt, typed once it waits at its prompt: TEXT \
    (or --file F, `-` for stdin) when given, else one nerdr builds from the old agent's \
    conversation (claude's and codex's logs, `opencode export`), read before the old agent \
    is stopped. A custom agent's conversation cannot be read: give the handoff, or \
    --no-handoff. The agent's [agents.NAME] settings (args, env, wrapper, sandboxed) apply \
    as to a new tab.\n\n\
    The old agent's processes are stopped (its scope, all of them) without asking: its \
    conversation stays in its own log, and the worktree's files stay as they are. A \
    sandboxed tab switches only to sandboxed agents; a sandboxed agent may switch only its \
    own tab. `nerdr tabs` shows each tab's switches (claude→codex)."
)]
pub struct Args {
    /// The tab: its id, a unique id prefix, its number or its name (see `nerdr tabs`)
    pub tab: String,
    /// The agent to start in its place: built in, or an [agents.NAME] of config.toml
    pub agent: String,
    /// The handoff, as written (default: built from the old agent's conversation)
    #[arg(conflicts_with_all = ["file", "no_handoff"])]
    pub text: Option<String>,
    /// Read the handoff from this file (`-`: stdin)
    #[arg(long, value_name = "FILE", conflicts_with = "no_handoff")]
    pub file: Option<std::path::PathBuf>,
    /// Start the new agent with no handoff
    #[arg(long)]
    pub no_handoff: bool,
    /// Print the result as JSON: tab, from, to, handoff (the text typed), built, refused
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let text = super::handoff::given(args.text, args.file.as_deref())?;
    let done = client::call(SwitchTab {
        tab: args.tab,
        agent: args.agent,
        text,
        no_handoff: args.no_handoff,
        env: client::own_env(),
        folder: folder.scope()?,
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&done)?);
    } else {
        // The tab's id alone on stdout, for scripts: the same tab.
        println!("{}", done.tab);
        let how = match (&done.handoff, done.built) {
            (None, _) => "with no handoff",
            (Some(_), true) => "with a handoff built from its conversation",
            (Some(_), false) => "with the handoff given",
        };
        eprintln!(
            "nerdr: tab {} switched from {} to {} {how}",
            done.tab, done.from, done.to
        );
    }
    match done.refused {
        None => Ok(ExitCode::SUCCESS),
        Some(reason) => {
            eprintln!("nerdr: {reason}");
            Ok(ExitCode::FAILURE)
        }
    }
}
