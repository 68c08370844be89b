//! `nerdr spinoff [--from TAB] [--agent NAME] [--name N] TASK|-|--file F`:
//! start part of a tab's work in a new agent, in a tab and worktree of its
//! own (README.md, "Spinoffs").

use std::path::PathBuf;
use std::process::ExitCode;

use super::Folder;
use crate::client;
use crate::protocol::api::SpinOff;

#[derive(Debug, clap::Args)]
// The variant's doc comment is the about line; what follows it goes
// after the options (a `long_about` here would be shadowed by it).
#[command(after_help = "\
    The new agent gets a worktree of its own on a new branch nerdr/<its tab>, made from the \
    parent tab's current HEAD (its last commit, not where it started). The parent's \
    uncommitted changes are not carried: this says how many there were; commit them first \
    if the new agent needs them. Once the new agent waits at its prompt, nerdr types TASK \
    (on one line) and how to answer: the agent runs `nerdr report-result TEXT`, and the \
    result reaches the parent as a message with the branch, its commits and a diffstat. \
    A parent whose program has ended keeps its results until `nerdr restart`.\n\n\
    The parent is the tab this runs in (an agent, or a terminal of its tab), or --from TAB. \
    The agent is --agent, else the parent's own agent, with its [agents.<name>] settings. \
    A sandboxed parent spins off only into sandboxed agents: an unsandboxed --agent is \
    refused, and by default a sandboxed agent of the same kind stands in when its own no \
    longer runs sandboxed. `nerdr spinoffs` lists spinoffs and their results.\n\n\
    TASK `-`, or --file, takes the task from standard input or a file. \
    It is typed as one line: line breaks become spaces.")]
pub struct Args {
    /// What the new agent is to do; `-` reads it from standard input
    #[arg(required_unless_present = "file")]
    pub task: Option<String>,
    /// Read the task from this file (`-`: standard input)
    #[arg(long, short = 'f', value_name = "FILE", conflicts_with = "task")]
    pub file: Option<PathBuf>,
    /// The agent to start (default: the parent's own agent)
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// The new tab's name (default: as any new tab of its agent)
    #[arg(long, value_name = "N")]
    pub name: Option<String>,
    /// The parent tab: its id, a unique id prefix, its number or its name (default: the tab this runs in)
    #[arg(long, value_name = "TAB")]
    pub from: Option<String>,
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let task = super::send::text_of(args.task, args.file)?;
    let spun = client::call(SpinOff {
        from: args.from,
        agent: args.agent,
        name: args.name,
        task,
        env: client::own_env(),
        folder: folder.scope()?,
    })?;
    if let Some(why) = &spun.instead {
        eprintln!("nerdr: {why}");
    }
    // The new tab's id alone on stdout, for scripts.
    println!("{}", spun.tab);
    eprintln!(
        "nerdr: {} works on tab {}'s task in tab {}, on branch {} from {}",
        spun.agent,
        spun.parent,
        spun.tab,
        spun.branch,
        crate::review::short(&spun.base)
    );
    eprintln!(
        "nerdr: {}",
        uncommitted_words(&spun.parent, spun.uncommitted)
    );
    match spun.refused {
        None => Ok(ExitCode::SUCCESS),
        Some(reason) => {
            eprintln!("nerdr: {reason}");
            Ok(ExitCode::FAILURE)
        }
    }
}

/// What the caller is told of its uncommitted changes, which the new
/// worktree does not have.
fn uncommitted_words(parent: &str, n: usize) -> String {
    match n {
        0 => format!("tab {parent} had no uncommitted changes: the new worktree has all its work"),
        1 => format!(
            "1 uncommitted change of tab {parent} is not carried: the new worktree has its \
             commits only (commit first, and spin off again, if it needs it)"
        ),
        n => format!(
            "{n} uncommitted changes of tab {parent} are not carried: the new worktree has its \
             commits only (commit first, and spin off again, if it needs them)"
        ),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_uncommitted_changes_are_counted_and_said_not_carried() {
        assert!(super::uncommitted_words("ab", 0).contains("no uncommitted changes"));
        assert!(super::uncommitted_words("ab", 1)
            .starts_with("1 uncommitted change of tab ab is not carried"));
        assert!(super::uncommitted_words("ab", 3)
            .starts_with("3 uncommitted changes of tab ab are not carried"));
    }
}
