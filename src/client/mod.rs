//! How a command reaches the core. From an ordinary terminal: the client
//! socket, with the key handshake, starting a core if none answers. From
//! inside a tab (`NERDR_TAB` set): the hook socket, under the tab's identity,
//! so nothing nerdr started can borrow the user's powers. With `--host`:
//! the client protocol over ssh to that host's `nerdr bridge`
//! ([`over_ssh`]).
//!
//! A call names its method by its params type and gets that method's reply
//! type back (see `protocol::api::Method`): the JSON is read here, once.

pub mod attach;
mod autostart;
mod child_slot;
mod deadline;
pub mod over_ssh;
pub mod patch;
pub mod ssh_link;
mod start_plan;

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
use start_plan::Start;

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

/// One request on whichever socket this process should use; one over
/// [`crate::protocol::MAX_REQUEST`] is refused here, saying so, rather
/// than cut off by the core with a closed connection.
fn send(req: Request) -> anyhow::Result<Reply> {
    let len = serde_json::to_vec(&req).map_or(0, |b| b.len());
    if let Some(why) = crate::protocol::request_too_large(len) {
        bail!(why);
    }
    if over_ssh::is_open() {
        return over_ssh::ask(req);
    }
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
/// Over `--host`, the bridge's: the environment a command run on that host
/// would send.
pub fn own_env() -> Vec<(String, String)> {
    if let Some(env) = over_ssh::env() {
        return env;
    }
    // Variables that are not UTF-8 cannot cross the JSON protocol; they are
    // rare in practice and dropping one is safer than mangling it.
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

/// What to say instead of the raw error when a tab's command cannot reach
/// the hook socket because there is none (`kind` NotFound) and
/// `NERDR_DATA_DIR` holds a reports file (`reports`): the command runs in
/// a `--worktree-only` sandbox (a worktree install's tab), where nerdr is
/// reached only through files in the worktree. None: the raw error says it.
pub fn unreachable_hook(kind: std::io::ErrorKind, reports: bool) -> Option<&'static str> {
    (reports && kind == std::io::ErrorKind::NotFound).then_some(
        "this sandbox (--worktree-only, install = \"worktree\") reaches nerdr only through \
         files in the worktree: `nerdr hook` and `nerdr why add` work here (written to the \
         reports file in $NERDR_DATA_DIR); run other nerdr commands outside the sandbox",
    )
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
    let stream = match UnixStream::connect(sock).await {
        Ok(s) => s,
        Err(e) => {
            let reports = crate::file_reports::reports_dir().is_some();
            if let Some(plain) = unreachable_hook(e.kind(), reports) {
                bail!("{plain}");
            }
            return Err(anyhow::Error::new(e).context(format!(
                "cannot reach the nerdr hook socket {}",
                sock.display()
            )));
        }
    };
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
    ask_on(open_client(paths).await?, req).await
}

/// One request on a client-socket connection past the handshake.
async fn ask_on(mut stream: UnixStream, req: Request) -> anyhow::Result<Reply> {
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
/// Starts the core first when nothing answers (see [`connect_or_start`]).
pub async fn open_client(paths: &Paths) -> anyhow::Result<UnixStream> {
    open_welcomed(paths).await.map(|(stream, _)| stream)
}

/// Why a handshake did not end in a welcome.
#[derive(Debug, thiserror::Error)]
pub enum HandshakeError {
    /// The connection broke (the core is going away or not up yet): trying
    /// again later may work.
    #[error("{0}")]
    Broken(String),
    /// The core answered and said no (another protocol version, a key it
    /// does not accept): trying again gives the same answer.
    #[error("{0}")]
    Refused(String),
}

/// What the core's welcome said.
#[derive(Debug, Clone, Copy)]
pub struct Welcome {
    pub core_pid: u32,
    /// Its offer of paint acknowledgements (`protocol::acks`).
    pub ack_every: Option<u64>,
}

/// The key handshake on a fresh connection to the client socket, and the
/// core's welcome.
pub async fn handshake(
    stream: UnixStream,
    paths: &Paths,
) -> Result<(UnixStream, Welcome), HandshakeError> {
    welcomed(stream, paths).await
}

/// A client-socket connection past the key handshake, with what the
/// core's welcome said (for a window, and for `nerdr bridge`, which
/// passes the verdict on). Starts the core first when nothing answers.
pub async fn open_welcomed(paths: &Paths) -> anyhow::Result<(UnixStream, Welcome)> {
    let stream = connect_or_start(paths).await?;
    welcomed(stream, paths).await.map_err(|e| anyhow!(e))
}

/// [`handshake`].
async fn welcomed(
    mut stream: UnixStream,
    paths: &Paths,
) -> Result<(UnixStream, Welcome), HandshakeError> {
    let broken =
        |what: &str, e: &dyn std::fmt::Display| HandshakeError::Broken(format!("{what}: {e}"));
    let challenge: Challenge = read_frame(&mut stream)
        .await
        .map_err(|e| broken("the core closed the connection before greeting", &e))?
        .decode_control()
        .map_err(|e| HandshakeError::Refused(format!("the core's greeting is malformed: {e}")))?;
    if challenge.version != PROTOCOL_VERSION {
        return Err(HandshakeError::Refused(format!(
            "the running core speaks protocol {} and this nerdr speaks {PROTOCOL_VERSION} \
             (one of them was upgraded); run the same version: restart the core \
             (`systemctl --user restart nerdr.service`) or run the nerdr it came with",
            challenge.version
        )));
    }
    let key_path = paths.client_key();
    // A core that just started may not have written its key yet.
    let key = std::fs::read(&key_path).map_err(|e| {
        broken(
            &format!("cannot read the client key {}", key_path.display()),
            &e,
        )
    })?;
    let hello = Hello {
        version: PROTOCOL_VERSION,
        proof: proof(&key, &challenge.nonce),
    };
    write_frame(&mut stream, &Frame::control(&hello))
        .await
        .map_err(|e| broken("the core closed the connection during the handshake", &e))?;
    let verdict = read_frame(&mut stream)
        .await
        .map_err(|e| broken("the core closed the connection during the handshake", &e))?
        .decode_control::<Verdict>()
        .map_err(|e| HandshakeError::Refused(format!("the core's verdict is malformed: {e}")))?;
    match verdict {
        Verdict::Welcome {
            core_pid,
            ack_every,
        } => Ok((
            stream,
            Welcome {
                core_pid,
                ack_every,
            },
        )),
        Verdict::Refused { message } => Err(HandshakeError::Refused(format!(
            "the core refused this client: {message}"
        ))),
    }
}
/// Whether a failed connection means nothing listens there (so starting
/// something may help), rather than a path nerdr cannot use.
fn nobody_there(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
    )
}

/// Connect to the client socket. If nothing answers there, do what
/// `start_plan::decide` says: start the stopped socket units through
/// systemd, or a core by hand when nerdr's units are not installed.
async fn connect_or_start(paths: &Paths) -> anyhow::Result<UnixStream> {
    let sock = paths.client_socket();
    match UnixStream::connect(&sock).await {
        Ok(s) => return Ok(s),
        Err(e) if nobody_there(&e) => {}
        Err(e) => return Err(e).with_context(|| format!("cannot connect to {}", sock.display())),
    }
    let mut core = match start_plan::decide(&autostart::gather(paths).await) {
        Start::Fail(message) => bail!("{message}"),
        Start::Sockets(units) => {
            if let Err(why) = autostart::start_units(&units).await {
                bail!("{}", start_plan::start_failed(&units, &why));
            }
            eprintln!("{}", start_plan::started_line(&units));
            None
        }
        Start::ByHand => Some(autostart::spawn_core()?),
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(s) = UnixStream::connect(&sock).await {
            return Ok(s);
        }
        if let Some(status) = core.as_mut().map(|c| c.try_wait()).transpose()?.flatten() {
            bail!(
                "started a nerdr core but it exited ({status}); see {}",
                paths.core_log().display()
            );
        }
        if tokio::time::Instant::now() > deadline {
            let see = match core {
                Some(_) => paths.core_log().display().to_string(),
                None => "`systemctl --user status nerdr-client.socket`".to_string(),
            };
            bail!("{} did not answer within 10s; see {see}", sock.display());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// What a window's reconnect attempt found at the client socket.
pub enum Reopen {
    Connected(UnixStream),
    /// Nothing answers; the core may come back.
    Down(String),
    /// The socket units are stopped.
    Stopped(String),
}

/// Connect to the client socket for a window that lost its core, starting
/// nothing (see `attach::link` for why); when nothing answers, say why.
pub async fn reopen(paths: &Paths) -> Reopen {
    let sock = paths.client_socket();
    let e = match UnixStream::connect(&sock).await {
        Ok(s) => return Reopen::Connected(s),
        Err(e) => e,
    };
    if !nobody_there(&e) {
        return Reopen::Down(format!("cannot connect to {}: {e}", sock.display()));
    }
    match start_plan::decide(&autostart::gather(paths).await) {
        Start::Sockets(units) => Reopen::Stopped(format!(
            "{} {} stopped; start {}: `{}`",
            units.join(" and "),
            if units.len() == 1 { "is" } else { "are" },
            if units.len() == 1 { "it" } else { "them" },
            start_plan::start_command()
        )),
        Start::Fail(why) => Reopen::Down(why),
        Start::ByHand => Reopen::Down("no core is running (any nerdr command starts one)".into()),
    }
}

/// One request to a core that is already running, for shell completion:
/// `None` when none answers within `within`, or it refuses. Nothing is
/// started (a TAB press must not start a service) and nothing is printed.
pub fn peek<M: Method>(m: M, within: Duration) -> Option<M::Reply> {
    let req: Request = m.into();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    let reply = rt.block_on(async {
        let ask = async {
            match std::env::var("NERDR_TAB") {
                Ok(secret) if !secret.is_empty() => {
                    let sock = match std::env::var_os("NERDR_SOCKET") {
                        Some(s) => PathBuf::from(s),
                        None => Paths::from_process()?.hook_socket(),
                    };
                    hook_line(&sock, &secret, req).await
                }
                _ => {
                    let paths = Paths::from_process()?;
                    let stream = UnixStream::connect(paths.client_socket()).await?;
                    let (stream, _) = handshake(stream, &paths).await?;
                    ask_on(stream, req).await
                }
            }
        };
        tokio::time::timeout(within, ask).await.ok()?.ok()
    })?;
    typed::<M>(reply).ok()?.ok()
}

#[cfg(test)]
mod tests {
    use super::unreachable_hook;
    use std::io::ErrorKind::{ConnectionRefused, NotFound, PermissionDenied};

    /// Only a missing socket beside a reports file is a worktree-only
    /// sandbox; anything else keeps the raw error (a stopped core, a
    /// socket nerdr cannot open, a tab with no reports file).
    #[test]
    fn a_worktree_only_sandbox_is_said_plainly() {
        #[rustfmt::skip]
        let rows = [
            (NotFound,          true,  true),
            (NotFound,          false, false),
            (ConnectionRefused, true,  false),
            (PermissionDenied,  true,  false),
        ];
        for (kind, reports, plain) in rows {
            let said = unreachable_hook(kind, reports);
            assert_eq!(said.is_some(), plain, "{kind:?} reports={reports}");
            if let Some(s) = said {
                for w in [
                    "nerdr hook",
                    "nerdr why add",
                    "outside the sandbox",
                    "worktree",
                ] {
                    assert!(s.contains(w), "{w}: {s}");
                }
            }
        }
    }
}
