//! The command line: one file per command, each with its help text beside
//! the behaviour. Commands other than `core`, `holder`, `service` and
//! `doctor` are thin requests to the core (see `client::connect`).

mod agent;
mod all_hosts;
mod approvals;
mod attach;
mod bridge;
mod clean;
mod close;
mod completions;
mod core_cmd;
mod diff;
mod doctor;
mod explain;
mod git;
mod handoff;
mod handoffs;
pub(crate) mod hook;
mod integration;
mod log;
mod man;
mod merge;
mod on_host;
mod pane;
mod plugin;
mod post_review;
mod proxy_bridge;
mod proxy_serve;
mod quit;
mod read;
mod rename;
mod report_result;
mod request_review;
mod restart;
mod reviews;
mod sandbox;
mod saved;
mod search;
mod send;
mod service_cmd;
mod sessions;
mod spinoff;
mod spinoffs;
mod stopping;
mod switch;
mod tabs;
mod terminal;
mod usage;
mod wait;
mod why;
mod worktrees;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "nerdr",
    // The commit too (build.rs): `0.1.0 (07d2338)`.
    version = crate::VERSION,
    about = "Run coding agents in persistent terminal tabs",
    long_about = "Run coding agents in persistent terminal tabs.\n\n\
        Commands act on the session of the current folder unless --folder says otherwise \
        (in any position). A folder belongs to the session of its nearest folder that has \
        one, or to the session of the tab whose worktree it is in; a folder in none starts \
        a session of its own.\n\
        The core service starts on first use (socket activation, or by itself)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The folder whose session a command acts on (default: the current folder); with no command, attach to it
    #[arg(long, global = true, value_name = "DIR")]
    pub folder: Option<PathBuf>,
    /// Run the command on another machine's nerdr, over ssh: a [hosts] name from the config, or an ssh destination (the window, attach, tabs, agent, read and send for now)
    #[arg(long, global = true, value_name = "HOST")]
    pub host: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start an agent in a new tab; prints the tab id
    Agent(agent::Args),
    /// List the tabs of this folder's session
    Tabs(tabs::Args),
    /// List the sessions: name, folder, tabs and what their agents are doing
    Sessions(sessions::Args),
    /// Open a window onto a session, by its name (see `nerdr sessions`) or a folder in it
    Attach(attach::Args),
    /// Print a tab's current screen as text
    Read(read::Args),
    /// Type text into a tab, then Enter
    Send(send::Args),
    /// Wait until a tab's agent is working, blocked, idle or done, or its program exited
    Wait(wait::Args),
    /// Why nerdr thinks a tab's agent is in its state (the rule or report, the lines)
    Explain(explain::Args),
    /// Reports from agents about themselves (e.g. how to resume them) (internal)
    #[command(hide = true)]
    Pane(pane::Args),
    /// Open a terminal (your shell) in a tab's folder, in a tab of its own
    Terminal(terminal::Args),
    /// Start a tab's agent again, resuming its conversation (a running one is stopped first)
    Restart(restart::Args),
    // About line and long help: on sandbox::Args (a doc comment here would
    // shadow its long_about).
    Sandbox(sandbox::Args),
    /// What waits for your approval, and your answer
    Approvals(approvals::Args),
    /// Stop a tab's program and forget the tab
    Close(close::Args),
    // About line and long help: on request_review::Args (a doc comment here would
    // shadow its long_about).
    RequestReview(request_review::Args),
    /// Post a review, from the reviewer's tab (run by the reviewer agent)
    PostReview(post_review::Args),
    /// List a tab's reviews and their comments; --send gives comments to its agent
    Reviews(reviews::Args),
    /// Start part of a tab's work in a new agent, in a tab and worktree of its own
    Spinoff(spinoff::Args),
    /// Report a result to the tab this one was spun off from (or, --for TAB, a spun-off tab's last answer to its parent)
    ReportResult(report_result::Args),
    /// List the spinoffs of this folder's session, their parents and their results
    Spinoffs(spinoffs::Args),
    // About line and long help: on handoff::Args (a doc comment here would
    // shadow its long_about).
    Handoff(handoff::Args),
    /// The handoffs agents gave you (`nerdr handoff --to-me`)
    Handoffs(handoffs::Args),
    // About line and long help: on switch::Args (a doc comment here would
    // shadow its long_about).
    Switch(switch::Args),
    // About line and long help: on why::Args.
    Why(why::Args),
    // About line and long help: on search::Args.
    Search(search::Args),
    /// Name a tab (then use the name wherever a tab id goes)
    Rename(rename::Args),
    // About line and long help: on usage::Args.
    Usage(usage::Args),
    /// Work saved from worktrees before nerdr removed them, and how to get it back
    Saved(saved::Args),
    /// Stop every program of this folder's session and forget the session
    Quit(quit::Args),
    /// A tab's work as one patch: its branch since it started, plus uncommitted work
    Diff(diff::Args),
    /// Every nerdr worktree: its tab, branch, base, ahead/behind, uncommitted work, merged
    Worktrees(worktrees::Args),
    /// Merge a tab's branch into the branch it started from, in the main checkout
    Merge(merge::Args),
    /// Remove closed tabs' worktrees whose work is merged (never unmerged or uncommitted work)
    Clean(clean::Args),
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
    // About line and long help: on bridge::Args.
    Bridge(bridge::Args),
    /// Print the completion script for bash, zsh or fish (tab and agent names from the core)
    Completions(completions::Args),
    /// Write nerdr's manual pages (nerdr.1, nerdr-agent.1, ...)
    Man(man::Args),
    /// Report an agent's event to nerdr (run by the agent's hooks) (internal)
    #[command(hide = true)]
    Hook(hook::Args),
    /// Run the core service (normally started by systemd socket activation) (internal)
    #[command(hide = true)]
    Core(core_cmd::Args),
    /// Run the holder, which owns the terminals (started by the core) (internal)
    #[command(hide = true)]
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

/// `--folder DIR`, one option every command takes in any position
/// (`nerdr --folder DIR tabs` is `nerdr tabs --folder DIR`), handed to the
/// command that acts on a session; the core places it in its session.
///
/// Over `--host` the folder is the remote one, resolved from the host's
/// config and the bridge's home (`remote::folder`); the remote core makes
/// it canonical.
#[derive(Debug, Clone, Default)]
pub struct Folder {
    given: Option<PathBuf>,
    remote: Option<PathBuf>,
}

impl Folder {
    /// The canonical folder naming the session: `--folder`, else the
    /// current folder.
    pub fn resolve(&self) -> anyhow::Result<PathBuf> {
        use anyhow::Context;
        if let Some(remote) = &self.remote {
            return Ok(remote.clone());
        }
        let dir = match &self.given {
            Some(d) => d.clone(),
            None => std::env::current_dir().context("cannot read the current folder")?,
        };
        std::fs::canonicalize(&dir)
            .with_context(|| format!("folder {} does not exist or cannot be read", dir.display()))
    }

    /// The folder whose session tab numbers and names count in, for a
    /// command that names a tab. A current folder that cannot be read is
    /// none (ids and id prefixes work from anywhere); a `--folder` that
    /// does not exist is an error.
    pub fn scope(&self) -> anyhow::Result<Option<PathBuf>> {
        if let Some(remote) = &self.remote {
            return Ok(Some(remote.clone()));
        }
        match &self.given {
            Some(_) => self.resolve().map(Some),
            None => Ok(self.resolve().ok()),
        }
    }

    /// `--folder` as given, if it was.
    pub fn given(&self) -> Option<&std::path::Path> {
        self.given.as_deref()
    }
}

impl Cli {
    pub fn parse_args() -> Self {
        completions::answer_if_asked();
        Cli::parse()
    }
}

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let folder = Folder {
        given: cli.folder,
        remote: None,
    };
    if let Some(host) = cli.host {
        return on_host::run(&host, folder, cli.command);
    }
    let Some(command) = cli.command else {
        return crate::client::attach::run(folder.resolve()?);
    };
    if let Some(dir) = folder.given() {
        if let Some(why) = takes_no_folder(&command) {
            anyhow::bail!("--folder {}: {why}", dir.display());
        }
    }
    dispatch(command, &folder)
}

fn dispatch(command: Command, folder: &Folder) -> anyhow::Result<ExitCode> {
    match command {
        Command::Agent(a) => agent::run(a, folder),
        Command::Tabs(a) if a.all_hosts => all_hosts::run(a.all, a.json, a.timeout, folder),
        Command::Tabs(a) => tabs::run(a, folder),
        Command::Sessions(a) => sessions::run(a),
        Command::Attach(a) => attach::run(a, folder),
        Command::Read(a) => read::run(a, folder),
        Command::Send(a) => send::run(a, folder),
        Command::Wait(a) => wait::run(a, folder),
        Command::Explain(a) => explain::run(a, folder),
        Command::Close(a) => close::run(a, folder),
        Command::RequestReview(a) => request_review::run(a, folder),
        Command::PostReview(a) => post_review::run(a),
        Command::Reviews(a) => reviews::run(a, folder),
        Command::Spinoff(a) => spinoff::run(a, folder),
        Command::ReportResult(a) => report_result::run(a, folder),
        Command::Spinoffs(a) => spinoffs::run(a, folder),
        Command::Handoff(a) => handoff::run(a, folder),
        Command::Handoffs(a) => handoffs::run(a, folder),
        Command::Switch(a) => switch::run(a, folder),
        Command::Why(a) => why::run(a, folder),
        Command::Search(a) => search::run(a, folder),
        Command::Rename(a) => rename::run(a, folder),
        Command::Usage(a) => usage::run(a),
        Command::Terminal(a) => terminal::run(a, folder),
        Command::Pane(a) => pane::run(a),
        Command::Restart(a) => restart::run(a, folder),
        Command::Sandbox(a) => sandbox::run(a),
        Command::Approvals(a) => approvals::run(a),
        Command::Quit(a) => quit::run(a, folder),
        Command::Diff(a) => diff::run(a, folder),
        Command::Worktrees(a) => worktrees::run(a),
        Command::Merge(a) => merge::run(a, folder),
        Command::Clean(a) => clean::run(a),
        Command::Saved(a) => saved::run(a, folder),
        Command::Log(a) => log::run(a),
        Command::Plugin(a) => plugin::run(a, folder),
        Command::Git(a) => git::run(a, folder),
        Command::Service(a) => service_cmd::run(a),
        Command::Doctor(a) => doctor::run(a),
        Command::Integration(a) => integration::run(a),
        Command::Bridge(a) => bridge::run(a),
        Command::Completions(a) => completions::run(a),
        Command::Man(a) => man::run(a),
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

/// Why `--folder` means nothing to a command, for the error that says so
/// (rather than a folder dropped without a word); `None` for the commands
/// that act on a folder's session or name a tab in it.
fn takes_no_folder(command: &Command) -> Option<&'static str> {
    match command {
        Command::Agent(_)
        | Command::Tabs(_)
        | Command::Attach(_)
        | Command::Read(_)
        | Command::Send(_)
        | Command::Wait(_)
        | Command::Explain(_)
        | Command::Close(_)
        | Command::Rename(_)
        | Command::Terminal(_)
        | Command::Restart(_)
        | Command::Quit(_)
        | Command::Diff(_)
        | Command::Merge(_)
        | Command::Saved(_)
        | Command::Plugin(_)
        | Command::RequestReview(_)
        | Command::Reviews(_)
        | Command::Spinoff(_)
        | Command::Spinoffs(_)
        | Command::ReportResult(_)
        | Command::Handoff(_)
        | Command::Handoffs(_)
        | Command::Switch(_)
        | Command::Why(_)
        | Command::Search(_)
        | Command::Git(_) => None,
        Command::PostReview(_) => {
            Some("a review is posted for the reviewer's own tab; leave out --folder")
        }
        Command::Sessions(_) => {
            Some("`nerdr sessions` lists every session; `nerdr tabs --folder DIR` lists one's tabs")
        }
        Command::Sandbox(_) => {
            Some("`nerdr sandbox` takes the folder CMD may write as --worktree DIR, not --folder")
        }
        Command::Approvals(_) => {
            Some("the approval queue is one for every session; leave out --folder")
        }
        Command::Log(_) => Some("the log is one for every session; leave out --folder"),
        Command::Usage(_) => {
            Some("plan usage is your account's, not a session's; leave out --folder")
        }
        Command::Worktrees(_) | Command::Clean(_) => Some(
            "this command covers every repository nerdr knows, not one session; leave out --folder",
        ),
        Command::Service(_)
        | Command::Doctor(_)
        | Command::Integration(_)
        | Command::Completions(_)
        | Command::Man(_) => {
            Some("this command is about the installation, not a session; leave out --folder")
        }
        Command::Bridge(_) => Some(
            "the bridge passes on whatever the other end asks, folders included; leave out --folder",
        ),
        Command::Pane(_)
        | Command::Hook(_)
        | Command::Core(_)
        | Command::Holder(_)
        | Command::Shim(_)
        | Command::Probe(_)
        | Command::ProxyServe(_)
        | Command::ProxyBridge(_)
        | Command::SandboxInit(_) => Some("this internal command takes no --folder"),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// A command whose `--help` explains more than its one line keeps that
    /// text: a doc comment on its `Command` variant would reset the
    /// `long_about` its `Args` declare (clap applies the variant last).
    #[test]
    fn long_help_is_not_shadowed_by_the_about_line() {
        let cli = super::Cli::command();
        for (name, starts) in [
            ("sandbox", "Run CMD in nerdr's own sandbox"),
            (
                "request-review",
                "Start a reviewer agent on a tab's work, in a tab of its own.",
            ),
            ("handoff", "Pass a tab's conversation on"),
            ("search", "Search past conversations: the logs"),
            (
                "switch",
                "Stop a tab's agent and start another in the same tab",
            ),
        ] {
            let sub = cli.find_subcommand(name).unwrap();
            let long = sub
                .get_long_about()
                .map(|s| s.to_string())
                .unwrap_or_default();
            assert!(long.starts_with(starts), "{name}: {long:?}");
            assert!(
                sub.get_about().is_some(),
                "{name} keeps its line in `nerdr --help`"
            );
        }
    }
}
