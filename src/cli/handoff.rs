//! `nerdr handoff [--to AGENT|--to-me] [--from TAB] [--file F|-] [TEXT]`:
//! pass a tab's conversation to another agent or to the person (README.md,
//! "Handoffs").

use std::io::Read;
use std::process::ExitCode;

use anyhow::Context;

use super::Folder;
use crate::client;
use crate::protocol::api::{Handoff, HandoffTo};

#[derive(Debug, clap::Args)]
#[command(
    long_about = "Pass a tab's conversation on, with what was done, what is next and the open \
    questions.\n\n\
    --to AGENT starts AGENT in a new tab in the same worktree and branch, and types the \
    handoff as its first prompt once it waits at its prompt. --to-me keeps it for you: \
    `nerdr handoffs` lists it and the window marks the tab.\n\n\
    The handoff is TEXT (or --file F, `-` for stdin) when the agent wrote one; otherwise nerdr \
    builds one from the agent's conversation: claude's log (~/.claude/projects/...), codex's \
    (~/.codex/sessions/...), or `opencode export`: the last 5 requests and answers, at most \
    8 KiB, tool calls left out. A custom agent must write its own.\n\n\
    From a sandboxed agent, a handoff to an agent outside every sandbox waits for your \
    approval (`nerdr approvals`) and carries the note that it was written in a sandbox; to a \
    sandboxed agent it goes at once.",
    group = clap::ArgGroup::new("whom").required(true).args(["to", "to_me"])
)]
pub struct Args {
    /// Start this agent in a new tab in the same worktree, with the handoff as its first prompt
    #[arg(long, value_name = "AGENT")]
    pub to: Option<String>,
    /// Keep the handoff for you (`nerdr handoffs`)
    #[arg(long)]
    pub to_me: bool,
    /// The tab handing off: its id, a unique id prefix, its number or its name (default: the tab this runs in)
    #[arg(long, value_name = "TAB")]
    pub from: Option<String>,
    /// Read the handoff from this file (`-`: stdin)
    #[arg(long, value_name = "FILE", conflicts_with = "text")]
    pub file: Option<std::path::PathBuf>,
    /// The handoff, as the agent wrote it (default: built from its conversation)
    pub text: Option<String>,
}

/// The longest handoff taken, as the core takes it.
const MAX_TEXT: u64 = crate::handoff::MAX_WRITTEN as u64;

/// The handoff given: `text`, or `file`'s (`-`: stdin), read up to one
/// byte past what the core takes (so it says the text is too long).
pub(super) fn given(
    text: Option<String>,
    file: Option<&std::path::Path>,
) -> anyhow::Result<Option<String>> {
    let Some(f) = file else {
        return Ok(text);
    };
    let mut text = String::new();
    let taken = if f.as_os_str() == "-" {
        std::io::stdin()
            .take(MAX_TEXT + 1)
            .read_to_string(&mut text)
    } else {
        std::fs::File::open(f).and_then(|file| file.take(MAX_TEXT + 1).read_to_string(&mut text))
    };
    taken.with_context(|| format!("cannot read the handoff from {}", f.display()))?;
    Ok(Some(text))
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let text = given(args.text, args.file.as_deref())?;
    let to = match args.to {
        Some(name) => HandoffTo::Agent { name },
        None => HandoffTo::Me,
    };
    let done = client::call(Handoff {
        tab: args.from,
        to,
        text,
        env: client::own_env(),
        folder: folder.scope()?,
    })?;
    let how = if done.built {
        "built from its conversation"
    } else {
        "as written"
    };
    match (&done.tab, done.kept, &done.queued) {
        (Some(tab), _, _) => {
            // The new tab's id alone on stdout, for scripts.
            println!("{tab}");
            eprintln!(
                "nerdr: tab {}'s handoff ({how}) goes to {} in tab {tab}, in the same worktree",
                done.from,
                done.agent.as_deref().unwrap_or("the agent")
            );
        }
        (None, Some(n), _) => {
            println!("{n}");
            eprintln!(
                "nerdr: tab {}'s handoff ({how}) is kept for you: `nerdr handoffs`",
                done.from
            );
        }
        (None, None, Some(id)) => {
            println!("{id}");
            eprintln!(
                "nerdr: the handoff ({how}) waits for the user's approval as {id}: {}",
                done.why.as_deref().unwrap_or("")
            );
        }
        (None, None, None) => {}
    }
    match done.refused {
        None => Ok(ExitCode::SUCCESS),
        Some(reason) => {
            eprintln!("nerdr: {reason}");
            Ok(ExitCode::FAILURE)
        }
    }
}
