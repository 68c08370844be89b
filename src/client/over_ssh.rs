//! `nerdr --host HOST CMD`: the client protocol over the stdio of `ssh
//! HOST nerdr bridge` (docs/ARCHITECTURE.md, "nerdr over SSH"). The edge
//! only: the ssh command line, the version rule and what a failed ssh
//! means are `crate::remote`'s pure decisions.
//!
//! One link per process (`ssh_link`), opened by `cli` before the command
//! runs and closed after it, or taken over by a window; while it is open,
//! [`super::call`] sends every request on it, and from its opening on
//! [`super::own_env`] is the bridge's environment (the one a command
//! typed there would send). Blocking: a command asks, then waits for its
//! reply, so nothing needs a runtime.

use std::path::PathBuf;
use std::sync::Mutex;

use anyhow::anyhow;

use super::ssh_link::{self, SshLink};
use crate::protocol::api::{Reply, Request};
use crate::remote::target::Target;

static LINK: Mutex<Option<SshLink>> = Mutex::new(None);

/// The bridge's environment, kept past the link for a window that took
/// it (agents it starts get the environment of a command run there).
static ENV: Mutex<Option<Vec<(String, String)>>> = Mutex::new(None);

/// What the bridge said of itself, once the link is open.
pub struct Opened {
    /// The remote home (where a relative folder counts from).
    pub home: Option<PathBuf>,
}

/// Run ssh to `host` (with `extra` options before the user's config: a
/// window's keepalive), read the bridge's greeting and the core's verdict
/// there; from then on requests go over it.
pub fn open(host: Target, extra: &[&str]) -> anyhow::Result<Opened> {
    let link = ssh_link::open(host, extra)?;
    let opened = Opened {
        home: link.greeting.home.clone(),
    };
    set_env(link.greeting.env.clone());
    *LINK.lock().unwrap() = Some(link);
    Ok(opened)
}

/// Whether requests go over ssh in this process.
pub fn is_open() -> bool {
    LINK.lock().unwrap().is_some()
}

/// The bridge's environment, once a link was open.
pub fn env() -> Option<Vec<(String, String)>> {
    ENV.lock().unwrap().clone()
}

/// The environment of the bridge a window reconnected through.
pub fn set_env(env: Vec<(String, String)>) {
    *ENV.lock().unwrap() = Some(env);
}

/// Forget the bridge's environment: a window that moved back to this
/// machine's core sends its own again.
pub fn forget_env() {
    *ENV.lock().unwrap() = None;
}

/// One request over the open link, and its reply.
pub fn ask(request: Request) -> anyhow::Result<Reply> {
    let mut guard = LINK.lock().unwrap();
    let link = guard
        .as_mut()
        .ok_or_else(|| anyhow!("no --host link is open"))?;
    link.ask(request)
}

/// The open link, for a window to take over: requests stop going over it.
pub fn take() -> Option<SshLink> {
    LINK.lock().unwrap().take()
}

/// End the link: the bridge sees its stdin close and ends, and ssh with
/// it. What ssh wrote on stderr is passed on.
pub fn close() {
    if let Some(link) = LINK.lock().unwrap().take() {
        link.finish(true);
    }
}

/// With SIGPIPE ignored (`--host`), printing to a closed stdout panics in
/// `println!`; such a panic instead closes the link and ends the process
/// with success: the reader took what it wanted, as `ls | head -1`'s `ls`
/// is done, but by an exit, not a signal.
pub fn end_quietly_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if stdout_closed(message) {
            // Not `close`: the panic may come with the link's lock held.
            if let Ok(mut link) = LINK.try_lock() {
                if let Some(link) = link.take() {
                    link.finish(true);
                }
            }
            std::process::exit(0);
        }
        default(info)
    }));
}

/// Whether a panic's message is `print!`'s on a stdout whose reader left.
pub fn stdout_closed(message: &str) -> bool {
    message.starts_with("failed printing to stdout") && message.contains("Broken pipe")
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_a_print_to_a_closed_stdout_ends_quietly() {
        #[rustfmt::skip]
        let rows = [
            ("failed printing to stdout: Broken pipe (os error 32)", true),
            ("failed printing to stdout: No space left on device (os error 28)", false),
            ("failed printing to stderr: Broken pipe (os error 32)", false),
            ("index out of bounds", false),
        ];
        for (message, quiet) in rows {
            assert_eq!(super::stdout_closed(message), quiet, "{message}");
        }
    }
}
