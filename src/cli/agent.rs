//! `nerdr agent NAME [--folder DIR] [-- ARGS...]`: start an agent in a new
//! tab; `nerdr agent -- CMD ARGS...`: start any program (found on PATH, or
//! a path) in a new tab, without config and outside every sandbox.

use std::path::Path;
use std::process::ExitCode;

use super::Folder;
use crate::client;
use crate::protocol::api::StartAgent;

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    nerdr agent claude              an agent\n  \
    nerdr agent claude --name fix   an agent, in a tab named fix\n  \
    nerdr agent codex -- --model o3 an agent, with extra arguments for this run\n  \
    nerdr agent -- bash             any program, without config\n  \
    nerdr agent -- sh -x            any program, with its arguments")]
pub struct Args {
    /// A built-in agent (claude, codex, opencode, ...) or an [agents.NAME]
    /// from config; without it, the words after `--` are the program to run
    #[arg(required_unless_present = "extra_args", value_name = "NAME")]
    pub agent: Option<String>,
    /// Work in the folder itself, not in a new git worktree
    #[arg(long)]
    pub no_worktree: bool,
    /// The new tab's name, as `nerdr rename` takes it (default: AGENT-N,
    /// the lowest N free in the session)
    #[arg(long, value_name = "N")]
    pub name: Option<String>,
    /// Extra arguments for this run, after the configured ones (without
    /// NAME: the program and its arguments)
    #[arg(last = true)]
    pub extra_args: Vec<String>,
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let (name, extra_args, program) = match args.agent {
        Some(name) => (name, args.extra_args, false),
        None => {
            let mut words = args.extra_args.into_iter();
            let program = words
                .next()
                .filter(|w| !w.is_empty())
                .ok_or_else(|| anyhow::anyhow!("name an agent, or a program after `--`"))?;
            (program, words.collect(), true)
        }
    };
    let asked = folder.resolve()?;
    let started = client::call(StartAgent {
        folder: asked.clone(),
        name,
        extra_args,
        env: client::own_env(),
        worktree: !args.no_worktree,
        program,
        tab_name: args.name,
        resume: None,
    })?;
    // The tab id alone on stdout, so scripts can capture it; a refused
    // tab's too (it stays, for `nerdr restart`), and then the reason on
    // stderr and a failure.
    println!("{}", started.tab);
    if let Some(note) = joined_around(&asked, started.session.as_deref()) {
        eprintln!("nerdr: {note}");
    }
    match started.refused {
        None => Ok(ExitCode::SUCCESS),
        Some(reason) => {
            eprintln!("nerdr: {reason}");
            Ok(ExitCode::FAILURE)
        }
    }
}

/// What to say when the tab joined the session of a folder around the
/// one asked for (the nearest session wins, README "Sessions"): the tab
/// works there, not where the person pointed. Nothing when it is that
/// folder, or the core said no session (an older core).
fn joined_around(asked: &Path, session: Option<&Path>) -> Option<String> {
    let session = session?;
    if session == asked || !asked.starts_with(session) {
        return None;
    }
    Some(format!(
        "{} is in the session of {} (the nearest session around it), so the tab joined that \
         session and works at its folder; `nerdr sessions` lists them",
        asked.display(),
        session.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tab_that_joined_a_session_around_the_folder_says_so() {
        #[rustfmt::skip]
        let rows: &[(&str, Option<&str>, bool)] = &[
            ("/h/proj", Some("/h"), true),
            ("/h/proj/src", Some("/h/proj"), true),
            ("/h/proj", Some("/h/proj"), false),
            // A worktree's session, or an older core: nothing to say.
            ("/h/proj", Some("/elsewhere"), false),
            ("/h/proj", None, false),
            // A prefix is not a folder around it.
            ("/h/proj-old", Some("/h/proj"), false),
        ];
        for (asked, session, says) in rows {
            let note = joined_around(Path::new(asked), session.map(Path::new));
            assert_eq!(note.is_some(), *says, "{asked} {session:?}: {note:?}");
        }
    }
}
