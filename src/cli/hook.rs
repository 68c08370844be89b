//! `nerdr hook EVENT [JSON]`: run by an agent's own hook mechanism (put
//! there by `nerdr integration install`). Sends the event and the agent's
//! payload to the core as the tab it runs in. The payload is the last
//! argument when there is one (codex's `notify` appends it), else stdin
//! (claude and copilot write it there).
//!
//! A hook of a worktree install (`install = "worktree"`) whose sandbox
//! cannot reach the socket appends the report to `$NERDR_DATA_DIR`'s
//! reports file instead (`crate::file_reports`), which nerdr reads.
//!
//! A hook must never get in the agent's way: outside nerdr (`NERDR_TAB`
//! unset or empty) it does nothing; inside, a core that cannot be reached is
//! reported on stderr and the exit code is still 0 (claude reads exit 2 as
//! "block this"); it waits a few seconds at most; and it never writes to
//! stdout, which claude reads as instructions.
//!
//! `nerdr hook claude-statusline` is claude's status-line command instead:
//! it records the plan limits claude hands it (`crate::usage::claude`) in
//! or out of nerdr, and prints the status line claude shows.

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use crate::client;
use crate::integration::STATUSLINE_EVENT as STATUSLINE;
use crate::protocol::api::ReportEvent;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The event: SessionStart, UserPromptSubmit, Stop, Notification, PostToolUse (others are passed on as given);
    /// claude-statusline is claude's status-line command (keeps the plan's limits for `nerdr usage`)
    pub event: Option<String>,
    /// The payload as an argument (codex's notify); without it, stdin is read
    /// unless it is a terminal. Only the last word counts.
    #[arg(
        value_name = "JSON",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub payload: Vec<String>,
}

/// How long the agent gets to finish writing the payload.
const STDIN_WAIT: Duration = Duration::from_secs(3);
/// How long the core gets to answer.
const CORE_WAIT: Duration = Duration::from_secs(5);
/// Payloads past this are cut (nerdr's events carry a few hundred bytes).
const MAX_PAYLOAD: u64 = 1 << 20;

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Taken first: hooks of one agent run concurrently, and the core keeps
    // the newest by when each started, not by when each arrived.
    let seq = crate::core::clock::monotonic_ns();
    // Read the payload even outside nerdr: an agent writing to a pipe whose
    // reader is gone would get EPIPE.
    let payload = match args.payload.last() {
        Some(p) => Some(p.clone()),
        None => read_stdin(),
    };
    if args.event.as_deref() == Some(STATUSLINE) {
        statusline(payload.as_deref());
        return Ok(ExitCode::SUCCESS);
    }
    if std::env::var_os("NERDR_TAB").is_none_or(|v| v.is_empty()) {
        return Ok(ExitCode::SUCCESS);
    }
    let Some(event) = args.event else {
        say("nerdr hook: no EVENT given; the hook should run `nerdr hook EVENT`");
        return Ok(ExitCode::SUCCESS);
    };
    let req = report(&event, payload.as_deref(), seq);
    let line = file_line(&req);
    match send(req) {
        Ok(()) => {}
        // A sandbox that reaches only its worktree (`install =
        // "worktree"`): the report goes into the file nerdr reads.
        Err(Failed::Unreachable(e)) => match (line, crate::file_reports::reports_dir()) {
            (Some(line), Some(dir)) => {
                if let Err(w) = crate::file_reports::append(&dir, &line) {
                    say(&format!(
                        "nerdr hook {event}: {e:#}; nor could it be written to {}: {w}",
                        dir.join(crate::file_reports::FILE).display()
                    ));
                }
            }
            _ => say(&format!("nerdr hook {event}: {e:#}")),
        },
        Err(Failed::Other(e)) => say(&format!("nerdr hook {event}: {e:#}")),
    }
    Ok(ExitCode::SUCCESS)
}

/// Keeps the limits in claude's status-line payload and prints its status
/// line. The limits are the account's, so they are kept for any claude,
/// in a tab or not; a payload without them leaves the file as it was.
fn statusline(payload: Option<&str>) {
    let data: Value = payload
        .and_then(|p| serde_json::from_str(p).ok())
        .unwrap_or(Value::Null);
    let now = crate::usage::read::now();
    let limits = crate::usage::claude::from_statusline(&data, now);
    // A sandboxed claude's numbers are not kept: its state folder is a
    // read-only stand-in, and the file is not the sandbox's to write.
    if let Some(l) = limits.as_ref().filter(|_| !crate::usage::read::sandboxed()) {
        let kept = crate::paths::Paths::from_process()
            .map_err(|e| e.to_string())
            .and_then(|p| {
                let file = crate::usage::read::claude_file(&p.state_dir);
                // Claude runs its status line after every message: the same
                // numbers are written again only once a minute.
                if crate::usage::read::same_recent_claude(&file, l, 60) {
                    return Ok(());
                }
                crate::usage::read::write_claude(&file, l)
            });
        if let Err(e) = kept {
            say(&format!("nerdr hook {STATUSLINE}: {e}"));
        }
    }
    let _ = writeln!(
        std::io::stdout(),
        "{}",
        crate::usage::claude::status_text(&data, limits.as_ref())
    );
}

/// The report as a line of the reports file, for an event the file takes.
fn file_line(r: &ReportEvent) -> Option<Value> {
    if !crate::file_reports::check::EVENTS.contains(&r.event.as_str()) {
        return None;
    }
    let mut line = serde_json::json!({"kind": "state", "event": r.event});
    if let Some(id) = r
        .session_id
        .as_ref()
        .filter(|id| crate::file_reports::check::plain_session_id(id))
    {
        line["session_id"] = Value::String(id.clone());
    }
    Some(line)
}

/// A line on stderr; a stderr nobody reads is no reason to fail the agent
/// (`eprintln!` would panic).
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// The request for `event` with the agent's payload (JSON if it parses,
/// else the text as a string), the session id found in it, and `seq`, when
/// the hook started (CLOCK_MONOTONIC nanoseconds).
pub fn report(event: &str, payload: Option<&str>, seq: u64) -> ReportEvent {
    let data = match payload.map(str::trim) {
        None | Some("") => Value::Null,
        Some(t) => serde_json::from_str(t).unwrap_or_else(|_| Value::String(t.to_string())),
    };
    ReportEvent {
        event: event.to_string(),
        session_id: session_id(&data),
        data,
        seq: Some(seq),
    }
}

/// claude: `session_id`; copilot: `sessionId` (`session_id` in its
/// PascalCase events); codex's notify: `thread-id`.
fn session_id(data: &Value) -> Option<String> {
    ["session_id", "sessionId", "thread-id"]
        .iter()
        .find_map(|k| data.get(k)?.as_str().filter(|s| !s.is_empty()))
        .map(str::to_string)
}

/// Stdin's text, unless it is a terminal (a person, or an agent that shares
/// its own) or stays open without an end.
fn read_stdin() -> Option<String> {
    if std::io::stdin().is_terminal() {
        return None;
    }
    let (tx, rx) = mpsc::channel();
    // A thread, so a writer that never closes costs STDIN_WAIT, not forever;
    // it is left behind when the process exits.
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let read = std::io::stdin()
            .lock()
            .take(MAX_PAYLOAD)
            .read_to_end(&mut buf);
        let _ = tx.send(read.map(|_| buf));
    });
    match rx.recv_timeout(STDIN_WAIT) {
        Ok(Ok(bytes)) if !bytes.is_empty() => Some(String::from_utf8_lossy(&bytes).into_owned()),
        _ => None,
    }
}

enum Failed {
    /// No core to be reached: the report may go into the file instead.
    Unreachable(anyhow::Error),
    Other(anyhow::Error),
}

fn send(req: ReportEvent) -> Result<(), Failed> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(client::request(req));
    });
    match rx.recv_timeout(CORE_WAIT) {
        Ok(Ok(Ok(_))) => Ok(()),
        Ok(Ok(Err(refused))) => Err(Failed::Other(anyhow::anyhow!(
            "the core did not take the report: {}",
            refused.message
        ))),
        Ok(Err(unreachable)) => Err(Failed::Unreachable(
            unreachable.context("cannot report to nerdr"),
        )),
        Err(_) => Err(Failed::Other(anyhow::anyhow!(
            "the core did not answer within {}s; the agent goes on without it",
            CORE_WAIT.as_secs()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sid(payload: Option<&str>) -> Option<String> {
        report("Stop", payload, 1).session_id
    }

    #[test]
    fn the_session_id_comes_from_each_agents_payload() {
        for (agent, payload, want) in [
            (
                "claude",
                r#"{"session_id":"c1","hook_event_name":"Stop"}"#,
                Some("c1"),
            ),
            ("copilot", r#"{"sessionId":"p1","timestamp":1}"#, Some("p1")),
            (
                "codex",
                r#"{"type":"agent-turn-complete","thread-id":"x1"}"#,
                Some("x1"),
            ),
            ("none", r#"{"type":"agent-turn-complete"}"#, None),
            ("empty id", r#"{"session_id":""}"#, None),
            ("not an object", "[1]", None),
            ("not JSON", "hello", None),
        ] {
            assert_eq!(sid(Some(payload)).as_deref(), want, "{agent}");
        }
        assert_eq!(sid(None), None);
    }

    #[test]
    fn the_payload_travels_as_json_or_as_text() {
        let data = |p| report("E", p, 1).data;
        assert_eq!(data(Some(" {\"a\": 1}\n")), serde_json::json!({"a": 1}));
        assert_eq!(data(Some("plain")), Value::String("plain".into()));
        assert_eq!(data(Some("  \n")), Value::Null);
        assert_eq!(data(None), Value::Null);
    }
}
