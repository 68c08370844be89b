//! nerdr: coding agents in persistent terminal tabs, under a per-user service.
//!
//! This file only parses the command line and hands each subcommand to its
//! module under `cli/`; nothing here touches the system.

// Wired into launch by the core (next issue); until then only its tests
// use it and its re-exports.
#[allow(dead_code, unused_imports)]
mod agents;
mod alerts;
mod audit;
mod calendar;
mod cli;
mod client;
mod config;
mod core;
mod detect;
mod did_you_mean;
mod executable;
mod file_reports;
mod git;
mod handed_env;
mod handoff;
mod holder;
mod host;
mod integration;
mod json_store;
mod logging;
mod notify;
mod paths;
mod peer;
mod platform;
mod printable;
mod private_dir;
mod probe;
mod protocol;
mod proxy;
#[cfg(test)]
mod readme_tests;
mod remote;
mod review;
mod sandbox;
mod search;
mod service;
mod sizes;
mod spinoff;
mod switch;
// list_units, main_pid and term_scope serve doctor and terminal panes (next
// issues); the rest is in use.
#[allow(dead_code)]
mod systemd;
mod term;
mod unit_names;
mod usage;
mod why;

use std::process::ExitCode;

/// `nerdr --version`: the package version and the commit built from
/// (`unknown` outside a git checkout; see build.rs).
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("NERDR_COMMIT"), ")");

fn main() -> ExitCode {
    let args = cli::Cli::parse_args();
    if args.host.is_some() {
        // `--host` keeps SIGPIPE ignored: a write to an ssh that ended is
        // an error nerdr explains (what ssh said) instead of a silent
        // death, and a window over ssh outlives the ssh it reconnects.
        // Its stdout closing early (`| head -1`) ends it quietly, the link
        // closed first (`over_ssh::end_quietly_on_closed_stdout`).
        client::over_ssh::end_quietly_on_closed_stdout();
    } else if !matches!(
        args.command,
        Some(cli::Command::Core(_) | cli::Command::Holder(_) | cli::Command::Hook(_))
    ) {
        // Commands print for pipelines (`nerdr tabs | head`): a closed pipe
        // ends them quietly, as it does `ls`. The shim must reset it too: an
        // ignored SIGPIPE survives exec, and every program would inherit it
        // (`yes | head -1` would complain of a broken pipe). The core and
        // holder keep Rust's default (ignored), so a vanished peer is an
        // error on that one socket; so does `hook`, which must exit 0 even
        // if its agent stopped listening.
        use nix::sys::signal::{signal, SigHandler, Signal};
        // SAFETY: no other thread exists yet; SIG_DFL installs no handler.
        let _ = unsafe { signal(Signal::SIGPIPE, SigHandler::SigDfl) };
    }
    match cli::run(args) {
        Ok(code) => code,
        Err(err) => {
            // The whole chain once, at the top: each layer adds what it knows.
            eprintln!("nerdr: {err:#}");
            ExitCode::from(1)
        }
    }
}
