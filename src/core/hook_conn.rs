//! One connection on the hook socket: newline-delimited JSON requests from
//! programs nerdr started, each naming its tab by the `NERDR_TAB` secret.

use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

use super::identity::{identify, is_program, Identity, PeerFacts, TabFacts};
use super::{Caller, Core};
use crate::platform;
use crate::protocol::api::{ApiError, ErrorCode};
use crate::protocol::handshake::Outcome;
use crate::protocol::hook::{encode_line, parse_line, HookReply};
use crate::protocol::MAX_LINE;

/// A connection with no request for this long is closed: a program in a tab
/// cannot hold connections open for nothing.
const IDLE: std::time::Duration = std::time::Duration::from_secs(60);
/// Hook connections one program's scope may hold at once, so that one tab
/// cannot take every connection the core serves.
const PER_SCOPE: usize = 64;

/// One of a scope's hook connections, given back when dropped.
struct ScopeSlot<'a> {
    core: &'a Core,
    scope: Option<String>,
}

impl<'a> ScopeSlot<'a> {
    /// A slot for a peer in `cgroup`; counted only for nerdr's scopes.
    fn take(core: &'a Core, cgroup: Option<&str>) -> Option<Self> {
        let scope = cgroup
            .filter(|cg| cg.contains("/nerdr-agent-") || cg.contains("/nerdr-term-"))
            .map(String::from);
        if let Some(s) = &scope {
            let mut state = core.state.lock().unwrap();
            let held = &mut state.hook_slots;
            let n = held.entry(s.clone()).or_insert(0);
            if *n >= PER_SCOPE {
                return None;
            }
            *n += 1;
        }
        Some(ScopeSlot { core, scope })
    }
}

impl Drop for ScopeSlot<'_> {
    fn drop(&mut self) {
        if let Some(s) = &self.scope {
            let mut state = self.core.state.lock().unwrap();
            let held = &mut state.hook_slots;
            if let Some(n) = held.get_mut(s) {
                *n -= 1;
                if *n == 0 {
                    held.remove(s);
                }
            }
        }
    }
}

pub async fn serve(core: Arc<Core>, stream: UnixStream) -> anyhow::Result<()> {
    // Who connected, as the kernel recorded it at connect time (`/proc`
    // reads: this worker's other tasks move to another while it blocks).
    super::held::assert_unlocked("identifying a hook peer");
    let peer = match tokio::task::block_in_place(|| platform::peer_process(&stream)) {
        Some(p) => PeerFacts {
            ancestry: p.ancestry,
            cgroup: p.cgroup,
            namespaces: p.namespaces,
        },
        None => PeerFacts {
            ancestry: Vec::new(),
            cgroup: None,
            namespaces: None,
        },
    };
    let (read, mut write) = stream.into_split();
    let _slot = match ScopeSlot::take(&core, peer.cgroup.as_deref()) {
        Some(slot) => slot,
        None => {
            let reply = error_reply(
                serde_json::Value::Null,
                ErrorCode::Denied,
                format!("this program's scope already holds {PER_SCOPE} hook connections"),
            );
            write.write_all(&encode_line(&reply)).await?;
            return Ok(());
        }
    };
    let mut read = BufReader::new(read);
    // Only requests keep a connection open: blank lines do not.
    let mut deadline = tokio::time::Instant::now() + IDLE;
    loop {
        let line = match tokio::time::timeout_at(deadline, read_line(&mut read)).await {
            Err(_) => return Ok(()),
            Ok(line) => line?,
        };
        let line = match line {
            Line::Eof => return Ok(()),
            Line::TooLong => {
                let reply = error_reply(
                    serde_json::Value::Null,
                    ErrorCode::BadRequest,
                    format!("request line longer than {MAX_LINE} bytes; closing the connection"),
                );
                write.write_all(&encode_line(&reply)).await?;
                tracing::warn!(socket = "hook", "oversized request line");
                return Ok(());
            }
            Line::Text(l) => l,
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        deadline = tokio::time::Instant::now() + IDLE;
        let reply = match parse_line(&line) {
            Err(bad) => bad,
            Ok(req) => {
                let outcome = match authenticate(&core, req.tab.as_deref(), &peer).await {
                    // A wait ends with a caller that hung up (see
                    // `waiting::hung_up`), even one that sent more lines
                    // after it.
                    Ok(caller) if matches!(req.request, crate::protocol::api::Request::Wait(_)) => {
                        tokio::select! {
                            reply = core.handle(&caller, req.request) => reply.into(),
                            () = super::waiting::hung_up(read.get_ref()) => return Ok(()),
                        }
                    }
                    Ok(caller) => core.handle(&caller, req.request).await.into(),
                    Err(e) => Outcome::Error(e),
                };
                HookReply {
                    id: req.id,
                    outcome,
                }
            }
        };
        write.write_all(&encode_line(&reply)).await?;
    }
}

/// Which tab the caller belongs to: the secret names it, the kernel's
/// record of the connecting process decides whether the caller is it. The
/// tab's program is looked up in `/proc` with the state lock dropped.
async fn authenticate(
    core: &Core,
    secret: Option<&str>,
    peer: &PeerFacts,
) -> Result<Caller, ApiError> {
    let denied = || {
        ApiError::new(
            ErrorCode::Denied,
            "the hook socket serves programs nerdr started: NERDR_TAB is missing or names no open tab",
        )
    };
    let unknown = |why: &'static str| async move {
        // As every refusal: a loop of them is journaled once a second.
        if !core.first_this_second("-", "identify", why) {
            return denied();
        }
        let event = crate::audit::Event::new(
            crate::audit::Kind::HookRefused,
            format!("refused a request on the hook socket: {why}"),
        )
        .field("NERDR_TAB", "-")
        .field("NERDR_OPERATION", "identify")
        .field("NERDR_REASON", why);
        super::edge::audit(&core.paths, event).await;
        denied()
    };
    let Some(secret) = secret else {
        return Err(unknown("no NERDR_TAB").await);
    };
    let known = core
        .state
        .lock()
        .unwrap()
        .tab_by_secret(secret)
        .map(|t| (t.id.clone(), t.sandboxed, t.pid, t.start_time));
    let Some((id, sandboxed, pid, start_recorded)) = known else {
        return Err(unknown("NERDR_TAB names no open tab").await);
    };
    let facts = super::edge::gather("reading a tab's program in /proc", move || TabFacts {
        sandboxed,
        pid,
        start_recorded,
        start_now: pid.and_then(|p| platform::proc_start_time(p).ok()),
        scope: pid
            .and_then(platform::cgroup_path)
            .filter(|cg| cg.contains("/nerdr-agent-") || cg.contains("/nerdr-term-")),
        namespaces: pid.and_then(platform::namespaces),
    })
    .await;
    match identify(&id, &facts, peer) {
        Identity::Verified => Ok(Caller::Tab {
            id,
            sandboxed,
            program: is_program(&facts, peer),
        }),
        Identity::TreatedAsSandboxed => Ok(Caller::Tab {
            id,
            sandboxed: true,
            program: false,
        }),
        Identity::Refused(why) => {
            if !core.first_this_second(&id, "identify", &why) {
                return Err(ApiError::new(ErrorCode::Denied, why));
            }
            tracing::warn!(tab = %id, reason = %why, "hook request refused");
            let event = crate::audit::Event::new(
                crate::audit::Kind::HookRefused,
                format!("refused a request on the hook socket: {why}"),
            )
            .field("NERDR_TAB", &id)
            .field("NERDR_OPERATION", "identify")
            .field("NERDR_REASON", &why);
            super::edge::audit(&core.paths, event).await;
            Err(ApiError::new(ErrorCode::Denied, why))
        }
    }
}

fn error_reply(id: serde_json::Value, code: ErrorCode, message: String) -> HookReply {
    HookReply {
        id,
        outcome: Outcome::Error(ApiError::new(code, message)),
    }
}

enum Line {
    Text(Vec<u8>),
    TooLong,
    Eof,
}

/// Read up to a newline, never buffering more than [`MAX_LINE`] bytes.
async fn read_line<R: AsyncBufReadExt + Unpin>(r: &mut R) -> std::io::Result<Line> {
    let mut line = Vec::new();
    loop {
        let buf = r.fill_buf().await?;
        if buf.is_empty() {
            // A line cut off by the peer closing is not a request.
            return Ok(Line::Eof);
        }
        let (chunk, done) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if line.len() + chunk.len() > MAX_LINE {
            return Ok(Line::TooLong);
        }
        line.extend_from_slice(chunk);
        let used = done.unwrap_or(buf.len());
        r.consume(used);
        if done.is_some() {
            return Ok(Line::Text(line));
        }
    }
}
