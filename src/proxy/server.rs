//! The proxy server: accepts connections on a Unix socket (how it reaches a
//! sandbox) or a loopback TCP listener (tests, benchmarks), tells SOCKS5
//! from HTTP by the first byte, asks the policy before any DNS lookup,
//! connects, relays and counts bytes, and reports every decision as a
//! [`Decision`] on a channel. Protocol details live in `forward` (HTTP)
//! and `socks` (SOCKS5).

use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use serde::Serialize;
use tokio::io::{AsyncRead, AsyncWrite, BufReader, ReadBuf};
use tokio::net::{TcpListener, TcpStream, UnixListener};
use tokio::sync::mpsc::UnboundedSender;

use super::dns::Resolver;
use super::policy::{self, NetRules, Refusal, Route, Rule, Verdict};

/// Buffer size for relaying: large enough that a download is not bounded by
/// system calls.
pub(super) const RELAY_BUF: usize = 64 * 1024;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    HttpConnect,
    Http,
    Socks5,
}

/// One decision, reported once its exchange ends (at once for a refusal).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    pub protocol: Protocol,
    /// The host as the client wrote it.
    pub host: String,
    pub port: u16,
    pub allowed: bool,
    pub rule: String,
    /// Why it was refused, or why an allowed connection could not be made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    pub bytes_up: u64,
    pub bytes_down: u64,
}

/// Why a request got no upstream connection.
pub(super) enum Failure {
    Denied(Refusal),
    Unreachable { rule: Rule, error: String },
}

/// The proxy: rules, a resolver and where decisions go.
pub struct Proxy {
    rules: NetRules,
    resolver: Arc<dyn Resolver>,
    decisions: UnboundedSender<Decision>,
}

impl Proxy {
    pub fn new(
        rules: NetRules,
        resolver: Arc<dyn Resolver>,
        decisions: UnboundedSender<Decision>,
    ) -> Arc<Proxy> {
        Arc::new(Proxy {
            rules,
            resolver,
            decisions,
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
        tokio::spawn(async move {
            if let Err(e) = me.handle(stream).await {
                tracing::debug!("proxy connection ended: {e}");
            }
        });
    }

    async fn handle<S>(&self, stream: S) -> io::Result<()>
    where
        S: AsyncRead + AsyncWrite + Unpin + Send,
    {
        use tokio::io::AsyncBufReadExt;
        let mut client = BufReader::with_capacity(RELAY_BUF, stream);
        let first = match client.fill_buf().await?.first() {
            Some(&b) => b,
            None => return Ok(()),
        };
        if first == super::socks::VERSION {
            super::socks::serve(self, &mut client).await
        } else {
            super::forward::serve(self, &mut client).await
        }
    }

    /// Decides, resolves, checks the addresses and connects.
    pub(super) async fn open(&self, host: &str, port: u16) -> Result<(Rule, TcpStream), Failure> {
        let (rule, route) = match policy::decide(&self.rules, host, port) {
            Verdict::Deny(r) => return Err(Failure::Denied(r)),
            Verdict::Allow { rule, route } => (rule, route),
        };
        let addrs = match route {
            Route::Address(a) => vec![a],
            Route::Loopback => vec![
                IpAddr::V4(Ipv4Addr::LOCALHOST),
                IpAddr::V6(Ipv6Addr::LOCALHOST),
            ],
            Route::Resolve(name) => {
                let addrs = match self.resolver.lookup(&name).await {
                    Ok(a) => a,
                    Err(e) => {
                        return Err(Failure::Unreachable {
                            rule,
                            error: format!("cannot resolve {name}: {e}"),
                        })
                    }
                };
                policy::check_resolved(&self.rules, &name, port, &addrs)
                    .map_err(Failure::Denied)?;
                addrs
            }
        };
        let mut last = String::from("no address");
        for a in addrs {
            let to = SocketAddr::new(a, port);
            match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(to)).await {
                Ok(Ok(s)) => {
                    let _ = s.set_nodelay(true);
                    return Ok((rule, s));
                }
                Ok(Err(e)) => last = format!("cannot connect to {to}: {e}"),
                Err(_) => last = format!("cannot connect to {to}: timed out"),
            }
        }
        Err(Failure::Unreachable { rule, error: last })
    }

    pub(super) fn report(&self, protocol: Protocol, host: &str, port: u16, outcome: Outcome) {
        let (allowed, rule, why, bytes_up, bytes_down) = match outcome {
            Outcome::Denied(r) => (false, r.rule.to_string(), Some(r.why), 0, 0),
            Outcome::Unreachable { rule, error } => (true, rule.to_string(), Some(error), 0, 0),
            Outcome::Relayed { rule, up, down } => (true, rule.to_string(), None, up, down),
        };
        // A closed receiver means nobody audits any more; the proxy still
        // enforces, so the send error is not fatal.
        let _ = self.decisions.send(Decision {
            protocol,
            host: host.to_string(),
            port,
            allowed,
            rule,
            why,
            bytes_up,
            bytes_down,
        });
    }
}

pub(super) enum Outcome {
    Denied(Refusal),
    Unreachable { rule: Rule, error: String },
    Relayed { rule: Rule, up: u64, down: u64 },
}

impl From<Failure> for Outcome {
    fn from(f: Failure) -> Outcome {
        match f {
            Failure::Denied(r) => Outcome::Denied(r),
            Failure::Unreachable { rule, error } => Outcome::Unreachable { rule, error },
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

/// `host:port` as written in an authority (IPv6 in brackets), with control
/// characters made visible so a reply cannot be split by a hostile name.
pub(super) fn show(host: &str, port: u16) -> String {
    let clean: String = host
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if clean.contains(':') {
        format!("[{clean}]:{port}")
    } else {
        format!("{clean}:{port}")
    }
}

/// The text a refused client sees.
pub(super) fn blocked_text(host: &str, port: u16, r: &Refusal) -> String {
    format!(
        "Blocked by nerdr network policy: {}\n{}\nrule: {}\n",
        show(host, port),
        r.why,
        r.rule
    )
}

/// An upstream stream that counts the bytes it carries each way.
pub(super) struct Counted {
    pub inner: TcpStream,
    pub up: u64,
    pub down: u64,
}

impl Counted {
    pub fn new(inner: TcpStream) -> Counted {
        Counted {
            inner,
            up: 0,
            down: 0,
        }
    }
}

impl AsyncRead for Counted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        self.down += (buf.filled().len() - before) as u64;
        r
    }
}

impl AsyncWrite for Counted {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = r {
            self.up += n as u64;
        }
        r
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
