//! One connection on the client socket: key handshake, then framed requests.

use std::sync::Arc;
use std::time::Duration;

use crate::protocol::outbox::Outbox;
use crate::protocol::quiet::Reader;
use tokio::io::BufReader;
use tokio::net::UnixStream;

use super::{Caller, Core};
use crate::platform;
use crate::protocol::frame::{read_frame_within, write_frame, Frame, FrameError, Kind};
use crate::protocol::handshake::{
    proof_matches, random_hex, Challenge, ClientMsg, CoreMsg, Hello, Verdict,
};
use crate::protocol::holder::split_data;
use crate::protocol::PROTOCOL_VERSION;

/// A client that has not finished the handshake by then is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

pub async fn serve(core: Arc<Core>, mut stream: UnixStream) -> anyhow::Result<()> {
    let nonce = random_hex(32);
    write_frame(
        &mut stream,
        &Frame::control(&Challenge {
            version: PROTOCOL_VERSION,
            nonce: nonce.clone(),
        }),
    )
    .await?;
    let hello = match tokio::time::timeout(
        HANDSHAKE_TIMEOUT,
        read_frame_within(&mut stream, crate::protocol::MAX_REQUEST),
    )
    .await
    {
        Err(_) => Err(format!("no hello within {HANDSHAKE_TIMEOUT:?}")),
        Ok(Err(e)) if left_before_hello(&e) => return Ok(()),
        Ok(Err(e)) => Err(e.to_string()),
        Ok(Ok(frame)) => frame.decode_control::<Hello>().map_err(|e| e.to_string()),
    };
    let verdict = match hello {
        Err(e) => refuse(format!("malformed hello: {e}")),
        Ok(h) if h.version != PROTOCOL_VERSION => refuse(format!(
            "this nerdr speaks protocol {} but the core speaks {PROTOCOL_VERSION}; \
             restart the core (`systemctl --user restart nerdr.service`) after upgrading",
            h.version
        )),
        Ok(h) if !proof_matches(&core.key, &nonce, &h.proof) => {
            refuse("wrong client key: this client could not read the core's key file".into())
        }
        Ok(_) => match inside_a_tab(&core, &stream).await {
            Some(tab) => refuse(format!(
                "this client runs inside tab {tab}, a program nerdr started; \
                 programs in a tab talk to nerdr through NERDR_SOCKET (the hook socket), \
                 not as the user's window"
            )),
            None => Verdict::Welcome {
                core_pid: std::process::id(),
                ack_every: Some(crate::protocol::acks::ACK_EVERY),
            },
        },
    };
    let welcomed = matches!(verdict, Verdict::Welcome { .. });
    write_frame(&mut stream, &Frame::control(&verdict)).await?;
    if !welcomed {
        return Ok(());
    }

    // From here on the core may push frames (output, tab lists) while
    // requests are answered, so one writer task owns the write half.
    // Watched for reading only (`protocol::quiet`): a window reading its
    // paint does not wake the core.
    let (read, write) = crate::protocol::quiet::split(stream)?;
    // A frame's length and body (a keystroke) in one read, not two; a
    // frame larger than the buffer is read into its own.
    let mut read = BufReader::with_capacity(8 * 1024, read);
    let (out, writer) = Outbox::new(write);
    let mut window: Option<u64> = None;
    let result = serve_frames(&core, &mut read, &out, &mut window).await;
    if let Some(id) = window {
        core.detach(id);
    }
    drop(out);
    let _ = writer.await;
    result
}

async fn serve_frames(
    core: &Arc<Core>,
    read: &mut BufReader<Reader>,
    out: &Outbox,
    window: &mut Option<u64>,
) -> anyhow::Result<()> {
    loop {
        let frame = match read_frame_within(read, crate::protocol::MAX_REQUEST).await {
            Ok(f) => f,
            Err(FrameError::Closed) => return Ok(()),
            Err(e) => return close_with(out, e),
        };
        if frame.kind == Kind::Data {
            // Keys typed into an attached window, for the tab it shows.
            if let (Some(id), Some((tab, bytes))) = (*window, split_data(&frame.body)) {
                core.window_input(id, tab, bytes.to_vec());
            }
            continue;
        }
        let msg = match frame.decode_control::<ClientMsg>() {
            Ok(m) => m,
            Err(e) => return close_with(out, e),
        };
        match msg {
            ClientMsg::Request { id, request } => {
                let reply = if matches!(request, crate::protocol::api::Request::Wait(_)) {
                    tokio::select! {
                        reply = core.handle(&Caller::User, request) => reply,
                        () = read.get_ref().hung_up() => return Ok(()),
                    }
                } else {
                    core.handle(&Caller::User, request).await
                };
                let msg = CoreMsg::Reply {
                    id,
                    outcome: reply.into(),
                };
                let _ = out.send(Frame::control(&msg));
            }
            ClientMsg::Attach {
                folder,
                rows,
                cols,
                env,
                acks,
            } => {
                let at = folder.clone();
                let resolved =
                    super::edge::gather_at("resolving a window's folder", &folder, || {
                        std::fs::canonicalize(at).ok().filter(|f| f.is_dir())
                    })
                    .await;
                let Some(folder) = resolved else {
                    let message = format!(
                        "folder {} does not exist or is not a folder",
                        folder.display()
                    );
                    let _ = out.send(Frame::control(&CoreMsg::Closing { message }));
                    return Ok(());
                };
                // A subfolder or a tab's worktree opens its session.
                let placed = core.state.lock().unwrap().session_of(&folder);
                let folder = placed.unwrap_or(folder);
                if let Some(old) = window.take() {
                    core.detach(old);
                }
                *window = Some(core.attach(folder, rows, cols, env, out.clone(), acks));
            }
            ClientMsg::Select { tab } => {
                if let Some(id) = *window {
                    core.select(id, &tab);
                }
            }
            ClientMsg::Resize { rows, cols } => {
                if let Some(id) = *window {
                    core.resize_window(id, rows, cols);
                }
            }
            ClientMsg::Repaint => {
                if let Some(id) = *window {
                    core.repaint(id);
                }
            }
            ClientMsg::History { tab } => {
                let lines = core.history(&tab).await;
                let _ = out.send(Frame::control(&CoreMsg::History { tab, lines }));
            }
            ClientMsg::Ack { bytes } => {
                if let Some(id) = *window {
                    core.acked(id, bytes);
                }
            }
        }
    }
}

/// A peer that hung up without a word: `nerdr doctor`'s socket probe (and
/// any liveness check) connects and closes, which socket activation
/// delivers here. It closed with our challenge unread, so the read sees a
/// reset rather than an end of file; neither is a malformed hello.
fn left_before_hello(e: &FrameError) -> bool {
    match e {
        FrameError::Closed => true,
        FrameError::Io(io) => matches!(
            io.kind(),
            std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe
        ),
        _ => false,
    }
}

fn refuse(message: String) -> Verdict {
    tracing::warn!(reason = %message, "client refused");
    Verdict::Refused { message }
}

/// Tell the peer why we hang up, then hang up. Only this connection ends.
fn close_with(out: &Outbox, e: FrameError) -> anyhow::Result<()> {
    let message = format!("closing the connection: {e}");
    tracing::warn!(socket = "client", error = %e, "bad frame");
    let _ = out.send(Frame::control(&CoreMsg::Closing { message }));
    Ok(())
}

/// The tab whose program the peer is, descends from, shares a session
/// with, or shares a scope with. Ancestry alone is not enough: a process
/// can leave its parent behind (`cmd & exit`), but not its session or its
/// cgroup without help. A PID counts only with the start time recorded at
/// launch, so a reused PID does not.
async fn inside_a_tab(core: &Core, stream: &UnixStream) -> Option<String> {
    super::held::assert_unlocked("identifying a client peer");
    let Some(peer) = tokio::task::block_in_place(|| platform::peer_process(stream)) else {
        // A peer the kernel cannot name (or gone already) is not trusted
        // as the user.
        return Some("unknown (the peer could not be identified)".into());
    };
    if let Some(cg) = &peer.cgroup {
        let unit = cg.rsplit('/').next().unwrap_or("");
        if let Some(rest) = unit
            .strip_prefix("nerdr-agent-")
            .or_else(|| unit.strip_prefix("nerdr-term-"))
        {
            return Some(rest.split(['-', '.']).next().unwrap_or(rest).to_string());
        }
    }
    let chain = peer.ancestry;
    let session = peer.session;
    let near: Vec<(String, u32, u64)> = core
        .state
        .lock()
        .unwrap()
        .tabs
        .values()
        .filter_map(|t| Some((t.id.clone(), t.pid?, t.start_time?)))
        .filter(|(_, p, _)| chain.contains(p) || session == Some(*p))
        .collect();
    // Each candidate's start time is read with the lock dropped.
    super::edge::gather("reading tabs' programs in /proc", move || {
        near.into_iter()
            .find(|(_, p, st)| platform::proc_start_time(*p).ok() == Some(*st))
            .map(|(id, _, _)| id)
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Error, ErrorKind};

    #[test]
    fn which_ends_before_a_hello_are_a_peer_leaving() {
        let rows: &[(&str, FrameError, bool)] = &[
            ("end of file", FrameError::Closed, true),
            (
                "reset: closed with the challenge unread",
                FrameError::Io(Error::from(ErrorKind::ConnectionReset)),
                true,
            ),
            (
                "broken pipe",
                FrameError::Io(Error::from(ErrorKind::BrokenPipe)),
                true,
            ),
            (
                "another io error",
                FrameError::Io(Error::from(ErrorKind::InvalidData)),
                false,
            ),
            ("half a frame", FrameError::Truncated, false),
            ("terminal data", FrameError::NotControl, false),
            ("too large", FrameError::TooLarge(9, 1), false),
        ];
        for (case, e, left) in rows {
            assert_eq!(left_before_hello(e), *left, "{case}");
        }
    }
}
