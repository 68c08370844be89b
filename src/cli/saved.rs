//! `nerdr saved [--folder DIR] [--json]`: the work nerdr saved from
//! worktrees before removing them (`refs/nerdr/saved/*` of the repository
//! around the folder), and how to get it back. Reads refs only, in this
//! process: no core needed.

use std::process::ExitCode;

use super::Folder;
use crate::git::saved;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// One JSON array of {reference, commit, date, subject}
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let dir = folder.resolve()?;
    if crate::git::worktree::repo_of(&dir).is_none() {
        anyhow::bail!(
            "{} is not in a git repository; name a folder of the repository with --folder",
            dir.display()
        );
    }
    let entries = saved::list(&dir)?;
    if args.json {
        println!("{}", crate::printable::json(&entries)?);
        return Ok(ExitCode::SUCCESS);
    }
    if entries.is_empty() {
        println!("no work saved by nerdr in this repository");
        return Ok(ExitCode::SUCCESS);
    }
    for e in &entries {
        println!(
            "{}  {}  {}  {}",
            e.reference,
            &e.commit[..e.commit.len().min(12)],
            e.date,
            crate::protocol::printable(&e.subject)
        );
    }
    println!("get one back with {}", saved::how_to_restore("REF"));
    Ok(ExitCode::SUCCESS)
}
