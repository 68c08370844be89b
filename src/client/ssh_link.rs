//! One `ssh HOST nerdr bridge` child and the client protocol on its stdio
//! (docs/ARCHITECTURE.md, "nerdr over SSH"): started, its greeting and the
//! remote core's verdict read and checked, then either asked one request
//! at a time (`over_ssh`, for commands) or handed over whole as a stream
//! (`attach::ssh_conn`, for a window). The ssh command line, the version
//! rule and what a failed ssh means are `crate::remote`'s pure decisions.
//!
//! Blocking I/O on the child's pipes. The greeting and each reply have a
//! deadline ([`PATIENCE`]): a remote that took the connection and stalls
//! must not hang a command forever. A window's
//! stream has none: a tab may rightly print nothing for hours.
//!
//! ssh's stderr (its own messages, the remote shell's) is read on a thread
//! into a bounded tail: it explains a failure, and a command passes it on
//! when it ends, so a warning of ssh's is not lost. Everything the far end
//! says that reaches the person (that tail, the greeting's version, the
//! verdict's reason) loses escape sequences and control characters first:
//! the far end is another machine.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{anyhow, bail, Context};

use super::deadline::{wait_child_at_most, Deadlined};
use crate::protocol::api::{Reply, Request};
use crate::protocol::bridge::{Greeting, BRIDGE_FORMAT};
use crate::protocol::frame::{read_frame_blocking, write_frame_blocking, Frame, FrameError};
use crate::protocol::handshake::{ClientMsg, CoreMsg, Verdict};
use crate::protocol::{MAX_FRAME, MAX_REQUEST, PROTOCOL_VERSION};
use crate::remote::ssh_failure::{self, Ended};
use crate::remote::target::Target;
use crate::remote::versions::{self, Build};

/// How much of ssh's stderr is kept: the end, where the reason is.
const STDERR_TAIL: usize = 16 << 10;

/// How long a link waits for the far end.
#[derive(Debug, Clone, Copy)]
pub struct Patience {
    /// For the greeting and verdict: logging in (a passphrase or host-key
    /// question typed at the terminal among it), then the remote core
    /// answering the bridge, started by socket activation if need be.
    pub greeting: Duration,
    /// For each reply: the slowest request a command sends over `--host`
    /// (starting an agent: a worktree, a sandbox check) takes seconds.
    pub reply: Duration,
}

pub const PATIENCE: Patience = Patience {
    greeting: Duration::from_secs(90),
    reply: Duration::from_secs(120),
};

/// An opening that trying again cannot mend, as the far end is now: it
/// speaks another client protocol, or what answers is no bridge (a login
/// that prints). Other failures (ssh could not log in, the core there
/// did not answer or refused the bridge, nerdr missing there) may mend by
/// themselves (a network back, a core restarted, a package mid-upgrade),
/// so a window keeps trying through them, saying why.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refusal(pub String);

pub struct SshLink {
    pub host: Target,
    child: Child,
    to: Option<ChildStdin>,
    from: BufReader<Deadlined<ChildStdout>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_done: Option<std::thread::JoinHandle<()>>,
    pub greeting: Greeting,
    /// The remote core's offer of paint acknowledgements, from its
    /// welcome (`protocol::acks`).
    pub ack_every: Option<u64>,
    next_id: u64,
    patience: Patience,
    /// The deadline the current read has, for the error when it passes.
    waiting: Duration,
}

/// A link past its handshake, as a window takes it: ssh itself, its
/// pipes, and the tail of its stderr.
pub struct SshStream {
    pub host: Target,
    pub child: Child,
    pub to: ChildStdin,
    /// Bytes already read past the verdict, then the rest of stdout.
    pub from: BufReader<std::io::Chain<std::io::Cursor<Vec<u8>>, ChildStdout>>,
    pub stderr: Arc<Mutex<Vec<u8>>>,
    /// The remote core's offer of paint acknowledgements.
    pub ack_every: Option<u64>,
}

/// How long ssh may take to end once its stdin is closed or its stdout
/// ended: it exits at once when the far end does; one that does not is
/// held open by the far end, and is ended.
const EXIT_GRACE: Duration = Duration::from_secs(5);

/// Run ssh to `host` with `extra` options before ssh's own (a window's
/// reconnect: no questions at the terminal), read the bridge's greeting
/// and the core's verdict there.
pub fn open(host: Target, extra: &[&str]) -> anyhow::Result<SshLink> {
    open_with(
        "ssh".as_ref(),
        host,
        extra,
        PATIENCE,
        Terminal::Shared,
        None,
    )
}

/// [`open`] for a window that holds the terminal (a reconnect): ssh runs
/// in a session of its own, so nothing it starts (a `ProxyJump` hop, whose
/// ssh does not get our `BatchMode`, a `ProxyCommand`) can open the
/// terminal and ask there, splitting the person's keys with the window;
/// and no askpass program is run.
/// `slot` holds the ssh until the link is greeted, so the window can end
/// an attempt it gave up on.
pub fn open_without_terminal(
    host: Target,
    extra: &[&str],
    slot: &super::child_slot::ChildSlot,
) -> anyhow::Result<SshLink> {
    open_with(
        "ssh".as_ref(),
        host,
        extra,
        PATIENCE,
        Terminal::None,
        Some(slot),
    )
}

/// Whether ssh may use the terminal nerdr runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Terminal {
    /// A command's first link: ssh may ask for a passphrase there.
    Shared,
    /// Its own session, no controlling terminal.
    None,
}

/// [`open`] with `ssh` as `program` and deadlines of `patience` (tests).
pub fn open_with(
    program: &std::ffi::OsStr,
    host: Target,
    extra: &[&str],
    patience: Patience,
    terminal: Terminal,
    slot: Option<&super::child_slot::ChildSlot>,
) -> anyhow::Result<SshLink> {
    let mut argv: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    argv.extend(crate::remote::ssh_command::argv(
        &host.destination,
        &host.nerdr,
    ));
    let mut cmd = Command::new(program);
    cmd.args(&argv)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if terminal == Terminal::None {
        use std::os::unix::process::CommandExt;
        cmd.env("SSH_ASKPASS_REQUIRE", "never");
        // SAFETY: setsid is async-signal-safe and touches only the child.
        unsafe {
            cmd.pre_exec(|| {
                nix::unistd::setsid().map_err(std::io::Error::from)?;
                Ok(())
            });
        }
    }
    let mut child = cmd.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => anyhow!(
            "--host runs `ssh`, which is not on PATH here: install OpenSSH's client \
                 (package openssh-client)"
        ),
        _ => anyhow!("cannot run ssh: {e}"),
    })?;
    let stderr = Arc::new(Mutex::new(Vec::new()));
    let pipe = child.stderr.take().expect("piped above");
    let tail = Arc::clone(&stderr);
    let stderr_done = std::thread::spawn(move || keep_tail(pipe, &tail));
    let mut link = SshLink {
        host,
        to: child.stdin.take(),
        from: BufReader::new(Deadlined::new(child.stdout.take().expect("piped above"))),
        child,
        stderr,
        stderr_done: Some(stderr_done),
        greeting: Greeting::ours(None, Vec::new()),
        ack_every: None,
        next_id: 1,
        patience,
        waiting: patience.greeting,
    };
    link.from.get_mut().within(patience.greeting);
    if slot.is_some_and(|s| !s.hold(link.child.id())) {
        let name = link.host.name.clone();
        link.finish(false);
        bail!("ssh to {name} was given up on");
    }
    let greeted = link.greet();
    if let Some(s) = slot {
        s.release();
    }
    if let Err(e) = greeted {
        link.finish(false);
        return Err(e);
    }
    Ok(link)
}

impl SshLink {
    fn here(&self) -> Build<'static> {
        Build {
            protocol: PROTOCOL_VERSION,
            nerdr: crate::VERSION,
        }
    }

    /// The greeting, checked, then the verdict.
    fn greet(&mut self) -> anyhow::Result<()> {
        let mut header = [0u8; 4];
        if let Err(e) = self.from.read_exact(&mut header) {
            return Err(self.ended(&e));
        }
        let len = u32::from_be_bytes(header) as usize;
        let mut body = vec![0u8; len.min(MAX_REQUEST)];
        let plausible = (2..=MAX_REQUEST).contains(&len);
        if !plausible || self.from.read_exact(&mut body).is_err() || body[0] != 1 {
            let mut seen = header.to_vec();
            seen.extend_from_slice(self.from.buffer());
            if plausible {
                seen.extend_from_slice(&body);
            }
            return Err(Refusal(ssh_failure::not_a_greeting(&self.host, &seen)).into());
        }
        let value: serde_json::Value = serde_json::from_slice(&body[1..]).map_err(|_| {
            let mut seen = header.to_vec();
            seen.extend_from_slice(&body);
            Refusal(ssh_failure::not_a_greeting(&self.host, &seen))
        })?;
        let (Some(format), Some(protocol)) = (
            value.get("bridge").and_then(|v| v.as_u64()),
            value.get("protocol").and_then(|v| v.as_u64()),
        ) else {
            return Err(Refusal(ssh_failure::not_a_greeting(&self.host, &body[1..])).into());
        };
        // Shown in the version error: the far end's words, as text.
        let nerdr = value
            .get("nerdr")
            .and_then(|v| v.as_str())
            .map(shown)
            .unwrap_or_else(|| "of an unknown version".to_owned());
        let there = Build {
            protocol: protocol as u32,
            nerdr: &nerdr,
        };
        versions::check(self.here(), there, &self.host.name).map_err(Refusal)?;
        if format != u64::from(BRIDGE_FORMAT) {
            return Err(Refusal(versions::unknown_greeting(
                self.here(),
                format as u32,
                &nerdr,
                &self.host.name,
            ))
            .into());
        }
        self.greeting = serde_json::from_value(value)
            .map_err(|_| Refusal(ssh_failure::not_a_greeting(&self.host, &body[1..])))?;
        self.greeting.nerdr = nerdr;
        let verdict = match read_frame_blocking(&mut self.from, MAX_FRAME) {
            Ok(f) => f.decode_control::<Verdict>().map_err(|e| {
                anyhow!(
                    "nerdr on {} sent a malformed verdict: {}",
                    self.host.name,
                    shown(&e.to_string())
                )
            })?,
            Err(e) => return Err(self.ended(&frame_io(e))),
        };
        match verdict {
            Verdict::Welcome { ack_every, .. } => {
                self.ack_every = ack_every;
                Ok(())
            }
            Verdict::Refused { message } => {
                bail!("nerdr on {}: {}", self.host.name, shown(&message))
            }
        }
    }

    /// One request, and its reply within the patience's `reply`.
    pub fn ask(&mut self, request: Request) -> anyhow::Result<Reply> {
        let id = self.next_id;
        self.next_id += 1;
        let msg = ClientMsg::Request { id, request };
        let to = self
            .to
            .as_mut()
            .ok_or_else(|| anyhow!("the link is closed"))?;
        if let Err(e) = write_frame_blocking(to, &Frame::control(&msg)) {
            return Err(self.ended(&e));
        }
        self.waiting = self.patience.reply;
        self.from.get_mut().within(self.waiting);
        loop {
            let frame = match read_frame_blocking(&mut self.from, MAX_FRAME) {
                Ok(f) => f,
                Err(e) => return Err(self.ended(&frame_io(e))),
            };
            if frame.kind != crate::protocol::frame::Kind::Control {
                continue;
            }
            let mut value: serde_json::Value = frame
                .decode_control()
                .with_context(|| format!("nerdr on {} sent a malformed reply", self.host.name))?;
            // The remote core is not this machine's: what it says reaches
            // the person's terminal only as text (no escape sequence can
            // set the clipboard or the title), newlines and tabs kept.
            untrusted_text(&mut value);
            match serde_json::from_value::<CoreMsg>(value)
                .with_context(|| format!("nerdr on {} sent a malformed reply", self.host.name))?
            {
                CoreMsg::Reply { id: got, outcome } if got == id => return Ok(outcome.into()),
                CoreMsg::Closing { message } => {
                    bail!(
                        "the core on {} closed the connection: {message}",
                        self.host.name
                    )
                }
                // Replies to no request of ours, and what only windows get.
                _ => {}
            }
        }
    }

    /// The error for a link that ended early or went silent: what ssh's
    /// end means, from its exit and its stderr. A silent one is ended
    /// here (our own child, by its handle).
    fn ended(&mut self, e: &std::io::Error) -> anyhow::Error {
        let silent = e.kind() == std::io::ErrorKind::TimedOut;
        drop(self.to.take());
        if silent {
            let _ = self.child.kill();
        }
        let status = wait_child_at_most(&mut self.child, EXIT_GRACE);
        if let Some(t) = self.stderr_done.take() {
            let _ = t.join();
        }
        let stderr = String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned();
        if silent {
            return anyhow!(
                "nerdr on {} did not answer within {}; ended ssh{}",
                self.host.name,
                seconds(self.waiting),
                said(&stderr)
            );
        }
        match status {
            Ok(status) => anyhow!(ssh_failure::explain(
                &self.host,
                Ended {
                    code: status.code(),
                    stderr: &stderr
                },
                crate::VERSION
            )),
            Err(w) => anyhow!("{e}; waiting for ssh: {w}"),
        }
    }

    /// Close stdin, wait for ssh, and pass its stderr on when `tell`.
    /// A link that failed is ended at once (our own child, by its handle).
    pub fn finish(mut self, tell: bool) {
        drop(self.to.take());
        if !tell {
            let _ = self.child.kill();
        }
        let _ = wait_child_at_most(&mut self.child, EXIT_GRACE);
        if let Some(t) = self.stderr_done.take() {
            let _ = t.join();
        }
        let said = std::mem::take(&mut *self.stderr.lock().unwrap());
        if tell && !said.is_empty() {
            let _ = std::io::stderr().write_all(shown(&String::from_utf8_lossy(&said)).as_bytes());
        }
    }

    /// The link for a window: no deadline from now on, and the stderr
    /// thread left to run (it ends with ssh).
    pub fn into_stream(self) -> SshStream {
        let SshLink {
            host,
            child,
            to,
            from,
            stderr,
            ack_every,
            ..
        } = self;
        // The bytes read ahead stay first (the bridge sends nothing after
        // its verdict unasked, but a frame must never be lost).
        let ahead = std::io::Cursor::new(from.buffer().to_vec());
        let stdout = from.into_inner().into_inner();
        SshStream {
            host,
            child,
            to: to.expect("a greeted link has its stdin"),
            from: BufReader::with_capacity(64 << 10, ahead.chain(stdout)),
            stderr,
            ack_every,
        }
    }
}

/// Text from the far end made safe to show: [`crate::printable::typeable`].
pub fn shown(text: &str) -> String {
    crate::printable::typeable(text)
}

/// ` (ssh said: ...)` for a non-empty stderr, as text.
fn said(stderr: &str) -> String {
    let last = stderr
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or_default();
    match last {
        "" => String::new(),
        l => format!(" (ssh said: {})", shown(l)),
    }
}

/// `90 s`, or `0.2 s` under a second.
fn seconds(d: Duration) -> String {
    match d.as_millis() {
        ms if ms % 1000 == 0 => format!("{} s", ms / 1000),
        ms => format!("{} s", ms as f64 / 1000.0),
    }
}

/// Every string in a remote reply made [`crate::printable::typeable`]:
/// escape sequences and control characters other than newline and tab
/// dropped, as they would be typed into another program.
pub fn untrusted_text(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::String(s) => *s = crate::printable::typeable(s),
        serde_json::Value::Array(a) => a.iter_mut().for_each(untrusted_text),
        serde_json::Value::Object(o) => o.values_mut().for_each(untrusted_text),
        _ => {}
    }
}

/// A frame error as the I/O error it carries (a closed pipe, a timeout).
fn frame_io(e: FrameError) -> std::io::Error {
    match e {
        FrameError::Io(e) => e,
        other => std::io::Error::other(other.to_string()),
    }
}

/// Read `pipe` to its end, keeping the last [`STDERR_TAIL`] bytes.
fn keep_tail(pipe: impl Read, tail: &Mutex<Vec<u8>>) {
    let mut reader = BufReader::new(pipe);
    loop {
        let n = match reader.fill_buf() {
            Ok([]) | Err(_) => return,
            Ok(bytes) => {
                let mut kept = tail.lock().unwrap();
                kept.extend_from_slice(bytes);
                let over = kept.len().saturating_sub(STDERR_TAIL);
                kept.drain(..over);
                bytes.len()
            }
        };
        reader.consume(n);
    }
}

#[cfg(test)]
#[path = "ssh_link_tests.rs"]
mod tests;
