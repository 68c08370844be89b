//! `nerdr man [--dir D]`: manual pages from the command line's own help
//! (clap_mangen), so they never disagree with `--help`. The packages run
//! `nerdr man --dir` when they are built.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::CommandFactory;

#[derive(Debug, clap::Args)]
#[command(long_about = "Write nerdr's manual pages.\n\n\
        With no --dir, print nerdr(1) to standard output (`nerdr man | man -l -`). \
        With --dir D, write nerdr.1 and one page per command (nerdr-agent.1, \
        nerdr-service-install.1, ...) into D, creating it; internal commands have none.")]
pub struct Args {
    /// Write every page into this folder instead of printing nerdr.1
    #[arg(long, value_name = "D")]
    pub dir: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.dir {
        Some(dir) => {
            let pages = write_all(&dir)?;
            eprintln!("wrote {} pages to {}", pages.len(), dir.display());
        }
        None => {
            let mut out = std::io::stdout().lock();
            clap_mangen::Man::new(super::Cli::command()).render(&mut out)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes every page into `dir`; returns the files written.
pub fn write_all(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    clap_mangen::generate_to(versioned(super::Cli::command()), dir)
        .with_context(|| format!("cannot write the manual pages into {}", dir.display()))?;
    let mut pages: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "1"))
        .collect();
    pages.sort();
    Ok(pages)
}

/// `cmd` with nerdr's version on every command below it, which each
/// page's footer names (it named the command alone), without a
/// `--version` flag of their own.
fn versioned(cmd: clap::Command) -> clap::Command {
    cmd.mut_subcommands(|sub| versioned(sub.version(crate::VERSION).disable_version_flag(true)))
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_page_per_visible_command_and_none_for_internal_ones() {
        let dir = tempfile::tempdir().unwrap();
        let pages = super::write_all(dir.path()).unwrap();
        let names: Vec<String> = pages
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        for want in [
            "nerdr.1",
            "nerdr-agent.1",
            "nerdr-read.1",
            "nerdr-service.1",
        ] {
            assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
        }
        for internal in ["nerdr-core.1", "nerdr-holder.1", "nerdr-hook.1"] {
            assert!(!names.iter().any(|n| n == internal), "{internal}");
        }
        let agent = std::fs::read_to_string(dir.path().join("nerdr-agent.1")).unwrap();
        assert!(agent.contains(".TH nerdr-agent 1"), "{agent}");
        let version = crate::VERSION;
        let th = agent.lines().find(|l| l.starts_with(".TH")).unwrap();
        assert!(
            th.contains(version),
            "the footer names nerdr's version: {th}"
        );
    }
}
