//! `nerdr log [--probe] [--git] [--hook] [--json]`: nerdr's audit entries
//! (refusals and sandbox-check verdicts), from the journal or, without one,
//! from `$XDG_STATE_HOME/nerdr/audit.jsonl`.

use std::process::ExitCode;

use crate::audit::read::{load, Source};
use crate::audit::Kind;
use crate::paths::Paths;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Sandbox-check verdicts (refused, could not check, passed)
    #[arg(long)]
    pub probe: bool,
    /// Host git refusals
    #[arg(long)]
    pub git: bool,
    /// Refused requests on the hook socket
    #[arg(long)]
    pub hook: bool,
    /// One JSON object per line: time_us, kind, message, fields
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let paths = Paths::from_process()?;
    let kinds = kinds(&args);
    let (entries, source) = load(&crate::audit::audit_file(&paths), &kinds);
    for e in &entries {
        if args.json {
            println!(
                "{}",
                crate::printable::json_text(&serde_json::to_string(e)?)
            );
        } else {
            println!("{}", e.human());
        }
    }
    if entries.is_empty() && !args.json {
        let whence = match source {
            Source::Journal => "the journal".to_string(),
            Source::File => format!(
                "the journal or {}",
                crate::audit::audit_file(&paths).display()
            ),
        };
        eprintln!("no entries in {whence}");
    }
    Ok(ExitCode::SUCCESS)
}

fn kinds(args: &Args) -> Vec<Kind> {
    let mut kinds = Vec::new();
    if args.probe {
        kinds.extend([Kind::ProbeRefused, Kind::ProbeUnchecked, Kind::ProbePassed]);
    }
    if args.git {
        kinds.push(Kind::GitRefused);
    }
    if args.hook {
        kinds.push(Kind::HookRefused);
    }
    if kinds.is_empty() {
        kinds.extend(Kind::ALL);
    }
    kinds
}
