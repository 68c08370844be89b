//! `nerdr approvals [--json]`, `nerdr approvals approve [--session]|deny
//! ID`: what waits for your yes (a repository's worktree setup, a
//! sandboxed agent's message or plugin run, a sandbox's network question).
//! Also under F3 in the window. Only you can answer: programs in tabs are
//! refused.

use std::process::ExitCode;

use clap::Subcommand;

use crate::client;
use crate::protocol::api::{Decide, ListApprovals};
use crate::protocol::replies::Approval;

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
    /// Say yes: a setup runs now, in a tab of its own whose id is printed
    /// (`nerdr read TAB` shows how it went), and whenever the same content
    /// comes again; a network question opens the host for this request only
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
            let list = client::call(ListApprovals)?;
            if args.json {
                println!("{}", json_text(&list.pending)?);
            } else {
                if list.pending.is_empty() {
                    println!("nothing waits for approval");
                }
                for p in &list.pending {
                    println!("{}  {}", p.id, crate::protocol::printable(&p.question));
                }
            }
            return Ok(ExitCode::SUCCESS);
        }
        Some(Action::Approve { id, session }) => (id, true, session),
        Some(Action::Deny { id }) => (id, false, false),
    };
    // The question is read first so the answer can be confirmed in the
    // person's words: a bare exit status left them unsure anything happened.
    let question = client::call(ListApprovals)?
        .pending
        .into_iter()
        .find(|p| p.id == id)
        .map(|p| p.question);
    let decided = client::call(Decide {
        id: id.clone(),
        approve,
        session,
    })?;
    eprintln!(
        "{}",
        confirmation(&id, approve, session, question.as_deref())
    );
    for tab in decided.ran {
        println!("{tab}");
    }
    Ok(ExitCode::SUCCESS)
}

/// What `approve`/`deny` says on stderr (stdout keeps only the tab ids a
/// setup ran in, for scripts).
fn confirmation(id: &str, approve: bool, session: bool, question: Option<&str>) -> String {
    let verb = match (approve, session) {
        (true, true) => "approved for the rest of that sandbox run",
        (true, false) => "approved",
        (false, _) => "denied",
    };
    match question {
        Some(q) => format!("{verb} {id}: {}", crate::protocol::printable(q)),
        None => format!("{verb} {id}"),
    }
}

/// The list as `--json` has always printed it: the wire's JSON,
/// pretty-printed, fields in its (alphabetical) order.
fn json_text(pending: &[Approval]) -> serde_json::Result<String> {
    crate::printable::json(&serde_json::to_value(pending)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::api::decode;

    /// `approve` prints a bare tab id; its help must say what that id is.
    #[test]
    fn approve_help_says_what_it_prints() {
        use clap::CommandFactory;
        let mut cli = super::super::Cli::command();
        let help = cli
            .find_subcommand_mut("approvals")
            .and_then(|a| a.find_subcommand_mut("approve"))
            .expect("approvals approve is a command")
            .render_help()
            .to_string();
        assert!(help.contains("whose id is printed"), "{help}");
        assert!(help.contains("nerdr read TAB"), "{help}");
    }

    #[test]
    fn approve_and_deny_say_what_they_decided() {
        let q = Some("run `npm ci`?\x1b[2J");
        for (approve, session, question, said) in [
            (true, false, q, "approved q1: run `npm ci`?"),
            (
                true,
                true,
                q,
                "approved for the rest of that sandbox run q1: run `npm ci`?",
            ),
            (false, false, q, "denied q1: run `npm ci`?"),
            (false, true, None, "denied q1"),
        ] {
            let got = confirmation("q1", approve, session, question);
            assert!(got.starts_with(said), "{got}");
            assert!(!got.contains('\x1b'), "{got:?}");
        }
    }

    /// `--json` printed the wire's `pending` as it came; read into
    /// approvals and printed again, it must be the same text.
    #[test]
    fn json_output_is_the_wire_as_it_came() {
        let pending = serde_json::json!([
            {"id": "q1", "question": "run `npm ci`?", "tab": "ab12", "kind": "setup",
             "worktree": "/w/ab12", "hash": "5e7", "argv": ["npm", "ci"], "once": false},
            {"id": "q2", "question": "connect?", "tab": "ab12", "kind": "network",
             "host": "example.com", "port": 443},
        ]);
        let before = serde_json::to_string_pretty(&pending).unwrap();
        let list = decode::<ListApprovals>(serde_json::json!({ "pending": pending })).unwrap();
        assert_eq!(json_text(&list.pending).unwrap(), before);
    }
}
