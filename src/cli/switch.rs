//! `nerdr switch TAB AGENT [--file F|-] [TEXT] [--no-handoff]`: the tab
//! goes on with another agent, in the same worktree and branch, with a
//! handoff from the agent before as its first prompt (README.md,
//! "Switching agents").
//!
//! A running tab's agent is stopped, which a person should choose: on a
//! terminal the command asks, naming the tab and both agents; without one
//! (a script) it refuses unless `--force` says so, as `nerdr restart`.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use anyhow::bail;

use super::stopping::{step, Step};
use super::Folder;
use crate::client;
use crate::protocol::api::{ExplainTab, ListTabs, SwitchTab};
use crate::protocol::printable;

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
    The old agent's processes are stopped (its scope, all of them): on a terminal the command \
    asks first; without one it refuses unless --force is given. Its conversation stays in its \
    own log, and the worktree's files stay as they are. A \
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
    /// Switch a running tab without asking (its agent is stopped)
    #[arg(short, long, visible_alias = "yes")]
    pub force: bool,
}

/// The tab as the person knows it: `tab 2 (claude-1)`, else its id.
fn tab_words(id: &str) -> String {
    let listed = client::call(ListTabs {
        folder: None,
        all: true,
    })
    .ok();
    match listed.into_iter().flatten().find(|t| t.id == id) {
        Some(t) if t.number > 0 => format!("tab {} ({})", t.number, printable(&t.name)),
        Some(t) => format!("tab {} ({})", printable(&t.id), printable(&t.name)),
        None => format!("tab {}", printable(id)),
    }
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    // The handoff read from stdin leaves no answer to read there.
    let stdin_free = args.file.as_deref() != Some(std::path::Path::new("-"));
    let text = super::handoff::given(args.text, args.file.as_deref())?;
    // By id from here on: the question is about the tab that is switched.
    // A tab the caller may not look at (or none) is the core's to refuse.
    let tab = match client::call(ExplainTab {
        tab: args.tab.clone(),
        folder: folder.scope()?,
    }) {
        Err(_) => args.tab,
        Ok(e) => {
            let terminal = stdin_free && std::io::stdin().is_terminal();
            let (from, to) = (printable(&e.agent), printable(&args.agent));
            match step(&e.state, args.force, terminal) {
                Step::Go => {}
                Step::Refuse => bail!(
                    "{} runs {from}: switching to {to} stops it first; add --force (-f) to \
                     switch anyway",
                    tab_words(&e.tab)
                ),
                Step::Ask => {
                    eprint!(
                        "switch {} from {from} to {to}? {from} is stopped (all its processes) \
                         [y/N] ",
                        tab_words(&e.tab)
                    );
                    std::io::stderr().flush()?;
                    let mut answer = String::new();
                    std::io::stdin().lock().read_line(&mut answer)?;
                    if !matches!(answer.trim(), "y" | "Y" | "yes") {
                        eprintln!("not switched");
                        return Ok(ExitCode::FAILURE);
                    }
                }
            }
            e.tab
        }
    };
    let done = client::call(SwitchTab {
        tab,
        agent: args.agent,
        text,
        no_handoff: args.no_handoff,
        env: client::own_env(),
        folder: folder.scope()?,
    })?;
    if args.json {
        println!("{}", crate::printable::json(&done)?);
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
