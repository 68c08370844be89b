//! `nerdr wait TAB --until STATE [--timeout S]`: returns once the tab is in
//! STATE, for scripts and for agents that drive other agents. The core
//! answers when the state changes (nothing polls); the timeout travels with
//! the request, and the client gives up a little after it as well, should
//! the core not answer.
//!
//! Exit codes: 0 reached; 124 (as `timeout(1)`) out of time, with the
//! state it saw; 3 the state can no longer be reached (the program exited,
//! the tab is a terminal); 1 any other error (no such tab, refused).

use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

use super::Folder;
use crate::client;
use crate::protocol::api::{Until, WaitFor};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 the tab is in the state (at once if it already was), \
        124 out of time (--timeout), 3 the state can no longer come (the program exited, \
        the tab is a terminal, the sandbox check refused it), 1 any other error (no such tab), 2 a wrong command line."
)]
pub struct Args {
    /// The tab: its id, a unique id prefix, its number or its name (see `nerdr tabs`)
    pub tab: String,
    /// The state to wait for
    #[arg(long, value_enum)]
    pub until: State,
    /// Give up after S seconds (exit 124, printing the state it saw)
    #[arg(long, value_name = "S", value_parser = seconds)]
    pub timeout: Option<Duration>,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum State {
    Working,
    Blocked,
    Idle,
    Done,
    Exited,
}

impl From<State> for Until {
    fn from(s: State) -> Until {
        match s {
            State::Working => Until::Working,
            State::Blocked => Until::Blocked,
            State::Idle => Until::Idle,
            State::Done => Until::Done,
            State::Exited => Until::Exited,
        }
    }
}

/// Out of time.
pub const TIMED_OUT: u8 = 124;
/// The state can no longer be reached.
pub const NEVER: u8 = 3;
/// How long past its timeout the client still waits for the core's answer.
const GRACE: Duration = Duration::from_secs(10);

fn seconds(s: &str) -> Result<Duration, String> {
    let n: f64 = s
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds (e.g. 30 or 0.5)"))?;
    Duration::try_from_secs_f64(n).map_err(|_| format!("`{s}` is not a number of seconds ≥ 0"))
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let until = Until::from(args.until);
    let req = WaitFor {
        tab: args.tab.clone(),
        until,
        timeout_ms: args
            .timeout
            .map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)),
        folder: folder.scope()?,
    };
    let waited = match args.timeout {
        None => client::call(req)?,
        Some(t) => {
            let (tx, rx) = mpsc::channel();
            // A thread, so a core that never answers costs the timeout and
            // a grace, not forever; it is left behind when we exit.
            std::thread::spawn(move || {
                let _ = tx.send(client::call(req));
            });
            match rx.recv_timeout(t.saturating_add(GRACE)) {
                Ok(r) => r?,
                Err(_) => anyhow::bail!(
                    "the core did not answer within {} of the timeout",
                    humane(GRACE)
                ),
            }
        }
    };
    if waited.reached {
        return Ok(ExitCode::SUCCESS);
    }
    let tab = &args.tab;
    match (waited.never, args.timeout) {
        (Some(why), _) => {
            eprintln!("{}", never_text(tab, until.as_str(), &why, &waited.state));
            Ok(ExitCode::from(NEVER))
        }
        (None, t) => {
            let after = t.map(humane).unwrap_or_default();
            eprintln!(
                "nerdr wait: tab {tab} is still {} after {after}",
                waited.state
            );
            Ok(ExitCode::from(TIMED_OUT))
        }
    }
}

/// Why the state cannot come, with what the tab is unless the reason
/// says it already ("the agent's program exited", not "... (it is exited)").
fn never_text(tab: &str, until: &str, why: &str, state: &str) -> String {
    let mut text = format!("nerdr wait: tab {tab} will not become {until}: {why}");
    if !why.contains(state) {
        text.push_str(&format!(" (it is {state})"));
    }
    text
}

/// `30s`, `0.5s`.
fn humane(d: Duration) -> String {
    format!("{}s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_that_cannot_come_is_said_once() {
        assert_eq!(
            never_text("ab12", "blocked", "the agent's program exited", "exited"),
            "nerdr wait: tab ab12 will not become blocked: the agent's program exited"
        );
        assert_eq!(
            never_text("ab12", "idle", "the tab is a terminal: it has no agent state (only `exited`)", "running"),
            "nerdr wait: tab ab12 will not become idle: the tab is a terminal: it has no agent state (only `exited`) (it is running)"
        );
    }

    #[test]
    fn timeouts_are_seconds() {
        assert_eq!(seconds("30"), Ok(Duration::from_secs(30)));
        assert_eq!(seconds("0.5"), Ok(Duration::from_millis(500)));
        assert!(seconds("-1").is_err());
        assert!(seconds("soon").unwrap_err().contains("`soon`"));
        assert_eq!(humane(Duration::from_secs(30)), "30s");
        assert_eq!(humane(Duration::from_millis(500)), "0.5s");
    }
}
