//! `nerdr approvals [--json]`, `nerdr approvals approve [--session]|deny
//! ID`: what waits for your yes (a repository's worktree setup, a
//! sandboxed agent's message or plugin run, a sandbox's network question).
//! Also under F3 in the window. Only you can answer: programs in tabs are
//! refused.

use std::process::ExitCode;

use clap::Subcommand;

use crate::client;
use crate::protocol::api::Request;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Option<Action>,
    /// The list as JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum Action {
    /// Say yes: a setup runs now, and whenever the same content comes again;
    /// a network question opens the host for this request only
    Approve {
        /// The id `nerdr approvals` lists first on the question's line
        id: String,
        /// A network question: open the host for the rest of that sandbox run
        #[arg(long)]
        session: bool,
    },
    /// Say no: nothing runs; a network question refuses that host and port for
    /// the rest of that sandbox run
    Deny {
        /// The id `nerdr approvals` lists first on the question's line
        id: String,
    },
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (id, approve, session) = match args.action {
        None => {
            let reply = client::call(Request::Approvals)?;
            if args.json {
                println!("{}", serde_json::to_string_pretty(&reply["pending"])?);
            } else {
                let pending = reply["pending"].as_array().cloned().unwrap_or_default();
                if pending.is_empty() {
                    println!("nothing waits for approval");
                }
                for p in pending {
                    println!(
                        "{}  {}",
                        p["id"].as_str().unwrap_or(""),
                        crate::protocol::printable(p["question"].as_str().unwrap_or(""))
                    );
                }
            }
            return Ok(ExitCode::SUCCESS);
        }
        Some(Action::Approve { id, session }) => (id, true, session),
        Some(Action::Deny { id }) => (id, false, false),
    };
    let reply = client::call(Request::Decide {
        id,
        approve,
        session,
    })?;
    for tab in reply["ran"].as_array().into_iter().flatten() {
        println!("{}", tab.as_str().unwrap_or_default());
    }
    Ok(ExitCode::SUCCESS)
}
