//! One connection on the hook socket: newline-delimited JSON requests from
//! programs nerdr started, each naming its tab by the `NERDR_TAB` secret.

use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

use super::identity::{identify, Identity, PeerFacts, TabFacts};
use super::{Caller, Core};
use crate::platform;
use crate::protocol::api::{ApiError, ErrorCode};
use crate::protocol::handshake::Outcome;
use crate::protocol::hook::{encode_line, parse_line, HookReply};
use crate::protocol::MAX_LINE;

/// A connection with no request for this long is closed: a program in a tab
/// cannot hold connections open for nothing.
const IDLE: std::time::Duration = std::time::Duration::from_secs(60);

pub async fn serve(core: Arc<Core>, stream: UnixStream) -> anyhow::Result<()> {
    // Who connected, as the kernel recorded it at connect time.
    let peer = match platform::peer_process(&stream) {
        Some(p) => PeerFacts {
            ancestry: p.ancestry,
            cgroup: p.cgroup,
        },
        None => PeerFacts {
            ancestry: Vec::new(),
            cgroup: None,
        },
    };
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::new(read);
    loop {
        let line = match tokio::time::timeout(IDLE, read_line(&mut read)).await {
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
        let reply = match parse_line(&line) {
            Err(bad) => bad,
            Ok(req) => {
                let outcome = match authenticate(&core, req.tab.as_deref(), &peer) {
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
/// record of the connecting process decides whether the caller is it.
fn authenticate(core: &Core, secret: Option<&str>, peer: &PeerFacts) -> Result<Caller, ApiError> {
    let denied = || {
        ApiError::new(
            ErrorCode::Denied,
            "the hook socket serves programs nerdr started: NERDR_TAB is missing or names no open tab",
        )
    };
    let unknown = |why: &str| {
        crate::audit::record(
            &core.paths,
            &crate::audit::Event::new(
                crate::audit::Kind::HookRefused,
                format!("refused a request on the hook socket: {why}"),
            )
            .field("NERDR_TAB", "-")
            .field("NERDR_OPERATION", "identify")
            .field("NERDR_REASON", why),
        );
        denied()
    };
    let secret = secret.ok_or_else(|| unknown("no NERDR_TAB"))?;
    let state = core.state.lock().unwrap();
    let tab = state
        .tab_by_secret(secret)
        .ok_or_else(|| unknown("NERDR_TAB names no open tab"))?;
    let facts = TabFacts {
        sandboxed: tab.sandboxed,
        pid: tab.pid,
        start_recorded: tab.start_time,
        start_now: tab.pid.and_then(|p| platform::proc_start_time(p).ok()),
        scope: tab
            .pid
            .and_then(platform::cgroup_path)
            .filter(|cg| cg.contains("/nerdr-agent-") || cg.contains("/nerdr-term-")),
    };
    match identify(&tab.id, &facts, peer) {
        Identity::Verified => Ok(Caller::Tab {
            id: tab.id.clone(),
            sandboxed: tab.sandboxed,
        }),
        Identity::TreatedAsSandboxed => Ok(Caller::Tab {
            id: tab.id.clone(),
            sandboxed: true,
        }),
        Identity::Refused(why) => {
            tracing::warn!(tab = %tab.id, reason = %why, "hook request refused");
            crate::audit::record(
                &core.paths,
                &crate::audit::Event::new(
                    crate::audit::Kind::HookRefused,
                    format!("refused a request on the hook socket: {why}"),
                )
                .field("NERDR_TAB", &tab.id)
                .field("NERDR_OPERATION", "identify")
                .field("NERDR_REASON", &why),
            );
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
