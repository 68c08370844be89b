//! `nerdr git check [DIR] [--op OP]`: would nerdr run host git in DIR, and
//! if not, why (each setting, its value, its file, and what to do). Exits
//! 1 when refused. It runs the guard exactly as the core does, without
//! running the operation and without a journal entry (nothing was refused).

use std::path::PathBuf;
use std::process::ExitCode;

use crate::git::guard::history::{self, Standing};
use crate::git::guard::verdict::Verdict;
use crate::git::op::Op;
use crate::paths::Paths;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: GitCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum GitCommand {
    /// Say whether nerdr would run host git in DIR, and why not
    Check(CheckArgs),
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The folder (default: --folder, else the current folder)
    pub dir: Option<PathBuf>,
    /// The operation: worktree-add (what starting an agent runs),
    /// worktree-remove, status, diff, commit, checkout, fetch, push, other
    #[arg(long, default_value = "worktree-add", value_parser = parse_op)]
    pub op: Op,
}

fn parse_op(s: &str) -> Result<Op, String> {
    Op::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = Op::CHECKABLE.iter().map(|o| o.name()).collect();
        format!("unknown operation `{s}`; use one of: {}", names.join(", "))
    })
}

pub fn run(args: Args, folder: &super::Folder) -> anyhow::Result<ExitCode> {
    let GitCommand::Check(a) = args.command;
    let paths = Paths::from_process()?;
    let dir = match (a.dir, folder.given()) {
        (Some(d), None) => d,
        (None, Some(f)) => f.to_path_buf(),
        (Some(d), Some(f)) => anyhow::bail!(
            "name the folder once: DIR ({}) or --folder ({})",
            d.display(),
            f.display()
        ),
        (None, None) => std::env::current_dir()?,
    };
    if !dir.is_dir() {
        anyhow::bail!(
            "{} is not a folder; name a folder in a git repository",
            dir.display()
        );
    }
    let checked = crate::git::guard::check(&paths.state_dir, &dir, a.op);
    let place = checked
        .repo
        .as_deref()
        .unwrap_or(&dir)
        .display()
        .to_string();
    let op = a.op.command();
    let code = match (&checked.verdict, &checked.standing) {
        (Verdict::Allow, Standing::Clean) => {
            println!("{place}: no sandbox history; nerdr runs host git here (`git {op}`)");
            ExitCode::SUCCESS
        }
        (Verdict::Allow, _) => {
            println!(
                "{place}: sandbox history, but nothing git would read there lets `git {op}` \
                 run a program an agent planted; nerdr runs it"
            );
            ExitCode::SUCCESS
        }
        (Verdict::Refuse(reasons), _) => {
            println!("{place}: nerdr refuses to run `git {op}` here (sandbox history):");
            for r in reasons {
                println!("  - {}: {r}", r.setting);
            }
            ExitCode::from(1)
        }
    };
    describe_history(&paths, checked.repo.as_deref());
    Ok(code)
}

/// Since when the repository has sandbox history, and where agents wrote.
fn describe_history(paths: &Paths, repo: Option<&std::path::Path>) {
    let (Some(repo), Ok(h)) = (repo, history::load(&paths.state_dir)) else {
        return;
    };
    let Some(r) = h.repos.get(repo) else { return };
    println!(
        "sandbox history since {}",
        crate::audit::format_time(r.since_us)
    );
    for w in &r.writable {
        println!("  a sandboxed agent could write {}", w.display());
    }
    for i in &r.imports {
        println!(
            "  work imported from {} at {}",
            i.from.display(),
            crate::audit::format_time(i.at_us)
        );
    }
}
