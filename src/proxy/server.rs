//! The proxy server: accepts connections on a Unix socket (how it reaches a
//! sandbox) or a loopback TCP listener (tests, benchmarks), within the
//! connection limit, and tells SOCKS5 from HTTP by the first byte.
//! Protocol details live in `forward` (HTTP) and `socks` (SOCKS5); what
//! they share (the policy before any DNS lookup, connecting, relaying,
//! counting bytes, reporting each [`Decision`]) lives in `connector`, so
//! none of them calls back into this module.

use std::future::Future;
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::Semaphore;

use super::asking::{Asker, Questions};
use super::connector::{Connector, RELAY_BUF};
use super::decision::{Decision, Trail};
use super::dns::Resolver;
use super::policy::NetRules;

/// The limits are set where the proxy is made (`nerdr proxy-serve` names
/// them as `server::`).
pub use super::limits::{Limits, IDLE_TIMEOUT, MAX_CONNECTIONS};

/// How long a new connection may stay silent.
const FIRST_BYTE: Duration = Duration::from_secs(120);
/// How long a connection over the limit may take to say what it wants
/// before it is told no (or just closed).
const REFUSAL_TIME: Duration = Duration::from_secs(5);

/// The proxy: what connects upstream, and the connection slots.
pub struct Proxy {
    connector: Connector,
    /// One permit per client connection being served.
    slots: Arc<Semaphore>,
    /// Connections over the limit being told so; beyond these, closed
    /// unanswered.
    refusing: Arc<Semaphore>,
}

impl Proxy {
    pub fn with_limits(
        rules: NetRules,
        resolver: Arc<dyn Resolver>,
        decisions: UnboundedSender<Decision>,
        limits: Limits,
    ) -> Arc<Proxy> {
        Proxy::with_asker(rules, resolver, decisions, limits, None)
    }

    /// A proxy that asks `asker` about hosts on neither list.
    pub fn with_asker(
        rules: NetRules,
        resolver: Arc<dyn Resolver>,
        decisions: UnboundedSender<Decision>,
        limits: Limits,
        asker: Option<Arc<dyn Asker>>,
    ) -> Arc<Proxy> {
        let trail = Trail::new(decisions);
        Arc::new(Proxy {
            connector: Connector::new(rules, resolver, trail, Questions::new(asker), limits),
            slots: Arc::new(Semaphore::new(limits.max_connections)),
            refusing: Arc::new(Semaphore::new((limits.max_connections / 8).max(16))),
        })
    }

    /// Serves a Unix socket until `shutdown` completes.
    pub async fn serve_unix(self: Arc<Self>, listener: UnixListener, shutdown: impl Future) {
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                _ = &mut shutdown => return,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => self.spawn(stream),
                    Err(e) => accept_failed(e).await,
                },
            }
        }
    }

    /// Serves a TCP listener until `shutdown` completes. Put the listener's
    /// own port in `NetRules::closed_local_ports`, or a client can make the
    /// proxy connect to itself.
    pub async fn serve_tcp(self: Arc<Self>, listener: TcpListener, shutdown: impl Future) {
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                _ = &mut shutdown => return,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        let _ = stream.set_nodelay(true);
                        self.spawn(stream)
                    }
                    Err(e) => accept_failed(e).await,
                },
            }
        }
    }

    fn spawn<S>(self: &Arc<Self>, stream: S)
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let me = self.clone();
        if let Ok(slot) = self.slots.clone().try_acquire_owned() {
            tokio::spawn(async move {
                if let Err(e) = me.handle(stream, true).await {
                    tracing::debug!("proxy connection ended: {e}");
                }
                drop(slot);
            });
        } else if let Ok(refusing) = self.refusing.clone().try_acquire_owned() {
            // Read the request, so the client gets an answer it understands
            // (503, SOCKS failure) and the trail names what was refused.
            tokio::spawn(async move {
                let _ = tokio::time::timeout(REFUSAL_TIME, me.handle(stream, false)).await;
                drop(refusing);
            });
        }
        // Else dropped: closed unanswered, still bounded.
    }

    /// `admitted` is false for a connection over the limit: it is parsed
    /// and then refused.
    async fn handle<S>(&self, stream: S, admitted: bool) -> io::Result<()>
    where
        S: AsyncRead + AsyncWrite + Unpin + Send,
    {
        use tokio::io::AsyncBufReadExt;
        let mut client = BufReader::with_capacity(RELAY_BUF, stream);
        let first = match tokio::time::timeout(FIRST_BYTE, client.fill_buf()).await {
            Ok(filled) => match filled?.first() {
                Some(&b) => b,
                None => return Ok(()),
            },
            // Silent: give its slot back.
            Err(_) => return Ok(()),
        };
        if first == super::socks::VERSION {
            super::socks::serve(&self.connector, &mut client, admitted).await
        } else {
            super::forward::serve(&self.connector, &mut client, admitted).await
        }
    }
}

/// Out of file descriptors and the like: wait a little instead of spinning.
async fn accept_failed(e: io::Error) {
    tracing::warn!("proxy cannot accept a connection: {e}");
    tokio::time::sleep(Duration::from_millis(100)).await;
}

/// Binds the proxy's Unix socket, readable and writable by the user only.
pub fn listen_unix(path: &Path) -> io::Result<UnixListener> {
    use std::os::unix::fs::PermissionsExt;
    let listener = UnixListener::bind(path).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot listen on {}: {e}", path.display()),
        )
    })?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}
