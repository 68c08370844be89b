//! `nerdr --host HOST CMD`: the client protocol over the stdio of `ssh
//! HOST nerdr bridge` (docs/ARCHITECTURE.md, "nerdr over SSH"). The edge
//! only: the ssh command line, the version rule and what a failed ssh
//! means are `crate::remote`'s pure decisions.
//!
//! One link per process, opened by `cli` before the command runs and
//! closed after it; while it is open, [`super::call`] sends every request
//! on it and [`super::own_env`] is the bridge's environment (the one a
//! command typed there would send). Blocking I/O on the child's pipes:
//! a command asks, then waits for its reply, so nothing needs a runtime.
//!
//! ssh's stderr (its own messages, the remote shell's) is read on a thread
//! into a bounded tail: it explains a failure, and is passed on to ours
//! when the command ends, so a warning of ssh's is not lost.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};

use anyhow::{anyhow, bail, Context};

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

struct Link {
    host: Target,
    child: Child,
    to: Option<ChildStdin>,
    from: BufReader<ChildStdout>,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_done: Option<std::thread::JoinHandle<()>>,
    greeting: Greeting,
    next_id: u64,
}

static LINK: Mutex<Option<Link>> = Mutex::new(None);

/// What the bridge said of itself, once the link is open.
pub struct Opened {
    /// The remote home (where a relative folder counts from).
    pub home: Option<PathBuf>,
}

/// Run ssh to `host`, read the bridge's greeting and the core's verdict
/// there; from then on requests go over it.
pub fn open(host: Target) -> anyhow::Result<Opened> {
    let argv = crate::remote::ssh_command::argv(&host.destination, &host.nerdr);
    let mut child = Command::new("ssh")
        .args(&argv)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
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
    let mut link = Link {
        host,
        to: child.stdin.take(),
        from: BufReader::new(child.stdout.take().expect("piped above")),
        child,
        stderr,
        stderr_done: Some(stderr_done),
        greeting: Greeting::ours(None, Vec::new()),
        next_id: 1,
    };
    match link.greet() {
        Ok(()) => {}
        Err(e) => {
            link.finish(false);
            return Err(e);
        }
    }
    let opened = Opened {
        home: link.greeting.home.clone(),
    };
    *LINK.lock().unwrap() = Some(link);
    Ok(opened)
}

/// Whether requests go over ssh in this process.
pub fn is_open() -> bool {
    LINK.lock().unwrap().is_some()
}

/// The bridge's environment, when a link is open.
pub fn env() -> Option<Vec<(String, String)>> {
    LINK.lock()
        .unwrap()
        .as_ref()
        .map(|l| l.greeting.env.clone())
}

/// One request over the open link, and its reply.
pub fn ask(request: Request) -> anyhow::Result<Reply> {
    let mut guard = LINK.lock().unwrap();
    let link = guard
        .as_mut()
        .ok_or_else(|| anyhow!("no --host link is open"))?;
    link.ask(request)
}

/// End the link: the bridge sees its stdin close and ends, and ssh with
/// it. What ssh wrote on stderr is passed on.
pub fn close() {
    if let Some(link) = LINK.lock().unwrap().take() {
        link.finish(true);
    }
}

impl Link {
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
            return Err(self.ended(&e.to_string()));
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
            bail!(ssh_failure::not_a_greeting(&self.host, &seen));
        }
        let value: serde_json::Value = serde_json::from_slice(&body[1..]).map_err(|_| {
            let mut seen = header.to_vec();
            seen.extend_from_slice(&body);
            anyhow!(ssh_failure::not_a_greeting(&self.host, &seen))
        })?;
        let (Some(format), Some(protocol)) = (
            value.get("bridge").and_then(|v| v.as_u64()),
            value.get("protocol").and_then(|v| v.as_u64()),
        ) else {
            bail!(ssh_failure::not_a_greeting(&self.host, &body[1..]));
        };
        let nerdr = value
            .get("nerdr")
            .and_then(|v| v.as_str())
            .unwrap_or("of an unknown version")
            .to_owned();
        let there = Build {
            protocol: protocol as u32,
            nerdr: &nerdr,
        };
        versions::check(self.here(), there, &self.host.name).map_err(|e| anyhow!(e))?;
        if format != u64::from(BRIDGE_FORMAT) {
            bail!(versions::unknown_greeting(
                self.here(),
                format as u32,
                &nerdr,
                &self.host.name
            ));
        }
        self.greeting = serde_json::from_value(value)
            .map_err(|_| anyhow!(ssh_failure::not_a_greeting(&self.host, &body[1..])))?;
        let verdict = match read_frame_blocking(&mut self.from, MAX_FRAME) {
            Ok(f) => f.decode_control::<Verdict>().map_err(|e| {
                anyhow!("nerdr on {} sent a malformed verdict: {e}", self.host.name)
            })?,
            Err(e) => return Err(self.ended(&e.to_string())),
        };
        match verdict {
            Verdict::Welcome { .. } => Ok(()),
            Verdict::Refused { message } => bail!("nerdr on {}: {message}", self.host.name),
        }
    }

    fn ask(&mut self, request: Request) -> anyhow::Result<Reply> {
        let id = self.next_id;
        self.next_id += 1;
        let msg = ClientMsg::Request { id, request };
        let to = self
            .to
            .as_mut()
            .ok_or_else(|| anyhow!("the link is closed"))?;
        if let Err(e) = write_frame_blocking(to, &Frame::control(&msg)) {
            return Err(self.ended(&e.to_string()));
        }
        loop {
            let frame = match read_frame_blocking(&mut self.from, MAX_FRAME) {
                Ok(f) => f,
                Err(FrameError::Closed) => return Err(self.ended("the connection closed")),
                Err(e) => return Err(self.ended(&e.to_string())),
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

    /// The error for a link that ended early: what ssh's end means, from
    /// its exit and its stderr.
    fn ended(&mut self, what: &str) -> anyhow::Error {
        drop(self.to.take());
        let status = self.child.wait();
        if let Some(t) = self.stderr_done.take() {
            let _ = t.join();
        }
        let stderr = String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned();
        match status {
            Ok(status) => anyhow!(ssh_failure::explain(
                &self.host,
                Ended {
                    code: status.code(),
                    stderr: &stderr
                },
                crate::VERSION
            )),
            Err(e) => anyhow!("{what}; waiting for ssh: {e}"),
        }
    }

    /// Close stdin, wait for ssh, and pass its stderr on when `tell`.
    /// A link that failed is ended at once (our own child, by its PID).
    fn finish(mut self, tell: bool) {
        drop(self.to.take());
        if !tell {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
        if let Some(t) = self.stderr_done.take() {
            let _ = t.join();
        }
        let said = std::mem::take(&mut *self.stderr.lock().unwrap());
        if tell && !said.is_empty() {
            let _ = std::io::stderr().write_all(&said);
        }
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

/// Every string in a remote reply made [`crate::printable::typeable`]:
/// escape sequences and control characters other than newline and tab
/// dropped, as they would be typed into another program.
fn untrusted_text(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::String(s) => *s = crate::printable::typeable(s),
        serde_json::Value::Array(a) => a.iter_mut().for_each(untrusted_text),
        serde_json::Value::Object(o) => o.values_mut().for_each(untrusted_text),
        _ => {}
    }
}

#[cfg(test)]
mod untrusted_tests {
    #[test]
    fn a_remote_replys_strings_lose_escapes_and_keep_lines() {
        let mut v = serde_json::json!({
            "name": "\u{1b}]52;c;Y3VybCBldmls\u{7}tab",
            "rows": ["a\nb\tc", "\u{9b}2Jx"],
            "n": 3
        });
        super::untrusted_text(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"name": "tab", "rows": ["a\nb\tc", "2Jx"], "n": 3})
        );
    }
}
