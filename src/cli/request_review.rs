//! `nerdr request-review [TAB] [--reviewer AGENT]`: start a reviewer agent
//! on a tab's work, in a tab of its own (README.md, "Reviews").

use std::process::ExitCode;

use super::Folder;
use crate::client;
use crate::protocol::api::RequestReview;

#[derive(Debug, clap::Args)]
#[command(
    about = "Start a reviewer agent on a tab's work, in a tab of its own",
    long_about = "Start a reviewer agent on a tab's work, in a tab of its own.\n\n\
    The reviewer gets a worktree of its own on a new branch nerdr/<its tab> at the author's \
    last commit: it reads exactly the commits reviewed (base..head, base being where the \
    author's branch left the main checkout's HEAD), and nothing it does touches the author's \
    worktree. Uncommitted changes are not reviewed: commit them first. Once the reviewer waits \
    at its prompt (its state reads idle; for an agent whose screen rules cannot say idle, such \
    as a program or a shell, once its screen has drawn and then stayed quiet for 1.5 s), nerdr \
    types the range and how to answer (`nerdr post-review`); `nerdr reviews` lists what it \
    posts.\n\n\
    nerdr waits at most 180 s for the reviewer to be ready. After that nothing is typed and \
    the reviewer's tab carries a warning (`nerdr tabs`, the window's status line): answer what \
    it asks, then type the request yourself (`nerdr reviews AUTHOR` shows the range), or \
    `nerdr restart` the reviewer to wait again.\n\n\
    The reviewer is --reviewer, else [review] agent, else the author's own agent, with the \
    agent's settings plus [review.args]. Work of a sandboxed agent is reviewed only by a \
    sandboxed agent: an unsandboxed [review] agent is replaced by a sandboxed one, and with \
    none no review starts and this says why."
)]
pub struct Args {
    /// The author's tab: its id, a unique id prefix, its number or its name (default: the tab this runs in)
    pub tab: Option<String>,
    /// The agent that reviews (default: [review] agent, else the author's own agent)
    #[arg(long, value_name = "AGENT")]
    pub reviewer: Option<String>,
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let started = client::call(RequestReview {
        tab: args.tab,
        reviewer: args.reviewer,
        env: client::own_env(),
        folder: folder.scope()?,
    })?;
    if let Some(why) = &started.replaced {
        eprintln!("nerdr: {why}");
    }
    // The reviewer's tab id alone on stdout, for scripts.
    println!("{}", started.tab);
    eprintln!(
        "nerdr: {} reviews {}..{} of tab {} in tab {}",
        started.agent,
        crate::review::short(&started.base),
        crate::review::short(&started.head),
        started.author,
        started.tab
    );
    match started.refused {
        None => Ok(ExitCode::SUCCESS),
        Some(reason) => {
            eprintln!("nerdr: {reason}");
            Ok(ExitCode::FAILURE)
        }
    }
}
