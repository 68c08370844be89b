//! The command line: one file per command, each with its help text beside
//! the behaviour. Commands other than `core`, `holder`, `service` and
//! `doctor` are thin requests to the core (see `client::connect`).

mod agent;
mod approvals;
mod close;
mod core_cmd;
mod doctor;
mod explain;
mod git;
mod hook;
mod integration;
mod log;
mod pane;
mod plugin;
mod proxy_bridge;
mod proxy_serve;
mod quit;
mod read;
mod rename;
mod restart;
mod sandbox;
mod saved;
mod send;
mod service_cmd;
mod tabs;
mod terminal;
mod wait;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "nerdr",
    version,
    about = "Run coding agents in persistent terminal tabs",
    long_about = "Run coding agents in persistent terminal tabs.\n\n\
        Commands act on the session of the current folder unless --folder says otherwise.\n\
        The core service starts on first use (socket activation, or by itself)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// With no command: attach to this folder's session
    #[command(flatten)]
    pub folder: FolderArg,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start an agent in a new tab; prints the tab id
    Agent(agent::Args),
    /// List the tabs of this folder's session
    Tabs(tabs::Args),
    /// Print a tab's current screen as text
    Read(read::Args),
    /// Type text into a tab, then Enter
    Send(send::Args),
    /// Wait until a tab's agent is working, blocked, idle or done, or its program exited
    Wait(wait::Args),
    /// Why nerdr thinks a tab's agent is in its state (the rule or report, the lines)
    Explain(explain::Args),
    /// Reports from agents about themselves (e.g. how to resume them)
    Pane(pane::Args),
    /// Open a terminal (your shell) in a tab's folder, in a tab of its own
    Terminal(terminal::Args),
    /// Start a tab's agent again, resuming its conversation (a running one is stopped first)
    Restart(restart::Args),
    /// Run a program in nerdr's own sandbox (bubblewrap)
    Sandbox(sandbox::Args),
    /// What waits for your approval, and your answer
    Approvals(approvals::Args),
    /// Stop a tab's program and forget the tab
    Close(close::Args),
    /// Name a tab (then use the name wherever a tab id goes)
    Rename(rename::Args),
    /// Work saved from worktrees before nerdr removed them, and how to get it back
    Saved(saved::Args),
    /// Stop every program of this folder's session and forget the session
    Quit(quit::Args),
    /// Refusals and sandbox-check verdicts, from the journal (or audit.jsonl)
    Log(log::Args),
    /// Run a plugin from $XDG_CONFIG_HOME/nerdr/plugins/ (asks first for a sandboxed agent)
    Plugin(plugin::Args),
    /// Whether nerdr would run host git in a folder (the git guard)
    Git(git::Args),
    /// Install, remove or inspect the systemd user units
    Service(service_cmd::Args),
    /// Check the installation; each failing check says what to do
    Doctor(doctor::Args),
    /// Add or remove hooks in an agent's own settings that report to nerdr
    Integration(integration::Args),
    /// Report an agent's event to nerdr (run by the agent's hooks)
    Hook(hook::Args),
    /// Run the core service (normally started by systemd socket activation)
    Core(core_cmd::Args),
    /// Run the holder, which owns the terminals (started by the core)
    Holder(crate::holder::Args),
    /// The first program inside `nerdr sandbox` (internal)
    #[command(hide = true, name = "sandbox-init")]
    SandboxInit(crate::sandbox::init::Args),
    /// Wait to be placed in a scope, then become the program (internal)
    #[command(hide = true)]
    Shim(crate::host::shim::Args),
    /// The sandbox check, run by the core inside an agent's sandbox (internal)
    #[command(hide = true)]
    Probe(crate::probe::checks::Args),
    /// Run the sandbox's filtering network proxy alone (tests, benchmarks)
    #[command(hide = true)]
    ProxyServe(proxy_serve::Args),
    /// Inside a sandbox: forward a loopback port to the proxy's socket
    #[command(hide = true)]
    ProxyBridge(proxy_bridge::Args),
}

/// `--folder DIR` as every session command takes it.
#[derive(Debug, Clone, clap::Args)]
pub struct FolderArg {
    /// The session's folder (default: the current folder)
    #[arg(long, value_name = "DIR")]
    pub folder: Option<PathBuf>,
}

impl FolderArg {
    /// The canonical folder naming the session.
    pub fn resolve(&self) -> anyhow::Result<PathBuf> {
        use anyhow::Context;
        let dir = match &self.folder {
            Some(d) => d.clone(),
            None => std::env::current_dir().context("cannot read the current folder")?,
        };
        std::fs::canonicalize(&dir)
            .with_context(|| format!("folder {} does not exist or cannot be read", dir.display()))
    }
}

impl Cli {
    pub fn parse_args() -> Self {
        Cli::parse()
    }
}

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let Some(command) = cli.command else {
        return crate::client::attach::run(cli.folder.resolve()?);
    };
    match command {
        Command::Agent(a) => agent::run(a),
        Command::Tabs(a) => tabs::run(a),
        Command::Read(a) => read::run(a),
        Command::Send(a) => send::run(a),
        Command::Wait(a) => wait::run(a),
        Command::Explain(a) => explain::run(a),
        Command::Close(a) => close::run(a),
        Command::Rename(a) => rename::run(a),
        Command::Terminal(a) => terminal::run(a),
        Command::Pane(a) => pane::run(a),
        Command::Restart(a) => restart::run(a),
        Command::Sandbox(a) => sandbox::run(a),
        Command::Approvals(a) => approvals::run(a),
        Command::Quit(a) => quit::run(a),
        Command::Saved(a) => saved::run(a),
        Command::Log(a) => log::run(a),
        Command::Plugin(a) => plugin::run(a),
        Command::Git(a) => git::run(a),
        Command::Service(a) => service_cmd::run(a),
        Command::Doctor(a) => doctor::run(a),
        Command::Integration(a) => integration::run(a),
        Command::Hook(a) => hook::run(a),
        Command::Core(a) => core_cmd::run(a),
        Command::Holder(a) => crate::holder::run(a),
        Command::Shim(a) => crate::host::shim::run(a),
        Command::Probe(a) => crate::probe::checks::run(a),
        Command::ProxyServe(a) => proxy_serve::run(a),
        Command::ProxyBridge(a) => proxy_bridge::run(a),
        Command::SandboxInit(a) => crate::sandbox::init::run(a),
    }
}
