//! `nerdr sandbox [--settings FILE] [--worktree DIR] [--worktree-only] -- CMD [ARGS...]`: run
//! CMD in nerdr's own bubblewrap sandbox (see `crate::sandbox`).

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::sandbox::{self, weaken::Weaken};

#[derive(Debug, clap::Args)]
#[command(
    about = "Run a program in nerdr's own sandbox (bubblewrap)",
    long_about = "Run CMD in nerdr's own sandbox (bubblewrap): the worktree, the agent's own \
        config dirs and a private /tmp are writable, the rest read-only; .git/hooks and \
        .git/config stay read-only; credential stores, $XDG_RUNTIME_DIR, nerdr's state and other tabs' worktrees \
        (in $NERDR_DATA_DIR/worktrees) are hidden; \
        own PID, IPC and network namespaces (loopback only); a cleaned environment. \
        Settings: the `sandbox` block of ~/.claude/settings.json, \
        $XDG_CONFIG_HOME/nerdr/sandbox.json, --settings FILE, and the project's \
        .claude/settings.json and settings.local.json (which can only tighten). \
        Every decision goes to $NERDR_DATA_DIR/audit/<session>.jsonl and the journal. \
        CMD's exit code is passed through; 125 means the sandbox refused to run."
)]
pub struct Args {
    /// A settings file trusted like your own (may loosen the sandbox)
    #[arg(long, value_name = "FILE")]
    pub settings: Option<PathBuf>,
    /// The folder CMD may write (default: the repository around the current folder), never home or a folder holding $NERDR_DATA_DIR
    #[arg(long, value_name = "DIR")]
    pub worktree: Option<PathBuf>,
    /// Reach nerdr only through files in the worktree: the hook socket stays hidden, so nerdr commands inside cannot reach the core (for agents with install = "worktree", whose reports nerdr reads from $NERDR_DATA_DIR there)
    #[arg(long)]
    pub worktree_only: bool,
    /// Debug builds only: drop protections, for testing the probe
    #[arg(long, value_name = "LIST", hide = true)]
    pub weaken: Option<String>,
    /// The program and its arguments
    #[arg(last = true, required = true, value_name = "CMD")]
    pub cmd: Vec<OsString>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let weaken = match &args.weaken {
        None => Weaken::none(),
        Some(_) if !cfg!(debug_assertions) => {
            anyhow::bail!("--weaken is for tests and only debug builds of nerdr accept it")
        }
        Some(list) => Weaken::parse(list).map_err(|e| anyhow::anyhow!("--weaken: {e}"))?,
    };
    sandbox::run(sandbox::Request {
        settings: args.settings,
        worktree: args.worktree,
        worktree_only: args.worktree_only,
        weaken,
        cmd: args.cmd,
    })
}
