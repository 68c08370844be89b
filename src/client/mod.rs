//! How a command reaches the core. From an ordinary terminal: the client
//! socket, with the key handshake, starting a core if none answers. From
//! inside a tab (`NERDR_TAB` set): the hook socket, under the tab's identity,
//! so nothing nerdr started can borrow the user's powers.
//!
//! A call names its method by its params type and gets that method's reply
//! type back (see `protocol::api::Method`): the JSON is read here, once.

pub mod attach;
mod autostart;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

use crate::paths::Paths;
use crate::protocol::api::{self, ApiError, Method, Reply, Request};
use crate::protocol::frame::{read_frame, write_frame, Frame};
use crate::protocol::handshake::{proof, Challenge, ClientMsg, CoreMsg, Hello, Verdict};
use crate::protocol::hook::{encode_line, HookReply, HookRequest};
use crate::protocol::PROTOCOL_VERSION;

/// Send one request and wait for its reply. `Err` is a failure to reach the
/// core (or a reply of another shape than `M`'s); a refusal by the core is
/// `Ok(Err(ApiError))`.
pub fn request<M: Method>(m: M) -> anyhow::Result<Result<M::Reply, ApiError>> {
    typed::<M>(send(m.into())?)
}

/// Like [`request`], but a refusal is an error carrying the core's message.
pub fn call<M: Method>(m: M) -> anyhow::Result<M::Reply> {
    request(m)?.map_err(|e| anyhow!(e.message))
}

/// The wire's reply read as `M`'s.
fn typed<M: Method>(reply: Reply) -> anyhow::Result<Result<M::Reply, ApiError>> {
    match reply {
        Ok(v) => Ok(Ok(api::decode::<M>(v)?)),
        Err(refused) => Ok(Err(refused)),
    }
}

/// One request on whichever socket this process should use.
fn send(req: Request) -> anyhow::Result<Reply> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        match std::env::var("NERDR_TAB") {
            Ok(secret) if !secret.is_empty() => {
                let sock = match std::env::var_os("NERDR_SOCKET") {
                    Some(s) => PathBuf::from(s),
                    None => Paths::from_process()?.hook_socket(),
                };
                hook_line(&sock, &secret, req).await
            }
            _ => via_client(&Paths::from_process()?, req).await,
        }
    })
}

/// The caller's environment as it goes to the core (for programs it starts).
pub fn own_env() -> Vec<(String, String)> {
    // Variables that are not UTF-8 cannot cross the JSON protocol; they are
    // rare in practice and dropping one is safer than mangling it.
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

/// One request on the hook socket as the tab whose secret is `secret`.
pub async fn via_hook<M: Method>(
    sock: &Path,
    secret: &str,
    m: M,
) -> anyhow::Result<Result<M::Reply, ApiError>> {
    typed::<M>(hook_line(sock, secret, m.into()).await?)
}

async fn hook_line(sock: &Path, secret: &str, req: Request) -> anyhow::Result<Reply> {
    let stream = UnixStream::connect(sock)
        .await
        .with_context(|| format!("cannot reach the nerdr hook socket {}", sock.display()))?;
    let (read, mut write) = stream.into_split();
    let line = encode_line(&HookRequest {
        id: 1.into(),
        tab: Some(secret.to_string()),
        request: req,
    });
    write.write_all(&line).await?;
    let mut reply = String::new();
    BufReader::new(read).read_line(&mut reply).await?;
    if reply.is_empty() {
        bail!("the core closed the hook connection without answering");
    }
    let reply: HookReply =
        serde_json::from_str(&reply).context("the core sent a malformed reply")?;
    Ok(reply.outcome.into())
}

async fn via_client(paths: &Paths, req: Request) -> anyhow::Result<Reply> {
    let mut stream = open_client(paths).await?;
    let msg = ClientMsg::Request {
        id: 1,
        request: req,
    };
    write_frame(&mut stream, &Frame::control(&msg)).await?;
    loop {
        match read_frame(&mut stream)
            .await
            .context("the core closed the connection without answering")?
            .decode_control::<CoreMsg>()?
        {
            CoreMsg::Reply { outcome, .. } => return Ok(outcome.into()),
            CoreMsg::Closing { message } => bail!("the core closed the connection: {message}"),
            // Only attached windows get these.
            CoreMsg::Tabs { .. }
            | CoreMsg::Redraw { .. }
            | CoreMsg::History { .. }
            | CoreMsg::Attention { .. } => {}
        }
    }
}

/// A client-socket connection past the key handshake: the core welcomed us.
pub async fn open_client(paths: &Paths) -> anyhow::Result<UnixStream> {
    let mut stream = connect_or_start(paths).await?;
    let challenge: Challenge = read_frame(&mut stream)
        .await
        .context("the core closed the connection before greeting")?
        .decode_control()?;
    if challenge.version != PROTOCOL_VERSION {
        bail!(
            "the running core speaks protocol {} and this nerdr speaks {PROTOCOL_VERSION}; \
             restart it: `systemctl --user restart nerdr.service`",
            challenge.version
        );
    }
    let key_path = paths.client_key();
    let key = std::fs::read(&key_path)
        .with_context(|| format!("cannot read the client key {}", key_path.display()))?;
    let hello = Hello {
        version: PROTOCOL_VERSION,
        proof: proof(&key, &challenge.nonce),
    };
    write_frame(&mut stream, &Frame::control(&hello)).await?;
    match read_frame(&mut stream).await?.decode_control::<Verdict>()? {
        Verdict::Welcome { .. } => Ok(stream),
        Verdict::Refused { message } => bail!("the core refused this client: {message}"),
    }
}

/// Connect to the client socket. If nothing is there to answer (no socket
/// unit, no core), start a core the way tmux starts its server.
async fn connect_or_start(paths: &Paths) -> anyhow::Result<UnixStream> {
    let sock = paths.client_socket();
    match UnixStream::connect(&sock).await {
        Ok(s) => return Ok(s),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
            ) => {}
        Err(e) => return Err(e).with_context(|| format!("cannot connect to {}", sock.display())),
    }
    let mut core = autostart::spawn_core()?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(s) = UnixStream::connect(&sock).await {
            return Ok(s);
        }
        if let Some(status) = core.try_wait()? {
            bail!(
                "started a nerdr core but it exited ({status}); see {}",
                paths.core_log().display()
            );
        }
        if tokio::time::Instant::now() > deadline {
            bail!(
                "started a nerdr core but {} did not answer within 10s; see {}",
                sock.display(),
                paths.core_log().display()
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
