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
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::net::{TcpListener, TcpStream, UnixListener};
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::Semaphore;

use super::answers::{SessionAnswers, Settled};
use super::asking::Asker;
use super::counted::Counted;
use super::dns::Resolver;
use super::policy::{self, NetRules, Refusal, Route, Rule, Verdict};

/// Buffer size for relaying: large enough that a download is not bounded by
/// system calls.
pub(super) const RELAY_BUF: usize = 64 * 1024;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Client connections one proxy serves at once. Each holds relay buffers
/// (2 x 64 KiB) in the outer nerdr process, so a sandbox cannot grow it
/// without bound.
pub const MAX_CONNECTIONS: usize = 256;
/// A tunnel or an absolute-URI exchange with no byte either way for this
/// long is closed.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(600);
/// How long a new connection may stay silent.
const FIRST_BYTE: Duration = Duration::from_secs(120);
/// How long a connection over the limit may take to say what it wants
/// before it is told no (or just closed).
const REFUSAL_TIME: Duration = Duration::from_secs(5);

/// The proxy's resource limits; tests shorten them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_connections: usize,
    pub idle: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: MAX_CONNECTIONS,
            idle: IDLE_TIMEOUT,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    HttpConnect,
    Http,
    Socks5,
}

/// Where a connection is in its life, as one decision line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Allowed and connected; a `Closed` line with the same id follows.
    Opened,
    /// Ended; the byte counts are final.
    Closed,
    /// Refused by the policy or the connection limit.
    Refused,
    /// Allowed, but no connection could be made.
    Unreachable,
    /// Still open when the sandbox ended (from `report::Merger`).
    OpenAtExit,
    /// A host on neither list: the person is being asked.
    Asked,
    /// What became of the question (`rule` says: allowed once, ...).
    Answered,
}

/// One decision: a refusal at once, an allowed connection when it opens
/// and again when it closes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    pub phase: Phase,
    /// Pairs an `Opened` line with its `Closed` one; 0 for refusals.
    pub id: u64,
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
    /// How many identical refusals this line stands for (see `report`).
    pub count: u64,
}

impl Decision {
    /// A line with no connection behind it (a refusal, a question): id 0,
    /// no bytes, standing for itself alone.
    pub(super) fn unconnected(
        phase: Phase,
        protocol: Protocol,
        host: &str,
        port: u16,
        allowed: bool,
        rule: String,
        why: Option<String>,
    ) -> Decision {
        Decision {
            phase,
            id: 0,
            protocol,
            host: host.to_string(),
            port,
            allowed,
            rule,
            why,
            bytes_up: 0,
            bytes_down: 0,
            count: 1,
        }
    }
}

/// Why a request got no upstream connection.
pub(super) enum Failure {
    Denied(Refusal),
    Unreachable {
        rule: Rule,
        error: String,
    },
    /// Over the connection limit.
    Busy {
        limit: usize,
    },
}

/// An allowed, opened connection: what its closing line needs.
pub(super) struct Ticket {
    id: u64,
    rule: Rule,
    protocol: Protocol,
}

/// The proxy: rules, a resolver and where decisions go.
pub struct Proxy {
    rules: NetRules,
    resolver: Arc<dyn Resolver>,
    decisions: UnboundedSender<Decision>,
    /// Who is asked about hosts on neither list; `None`: they are refused.
    pub(super) asker: Option<Arc<dyn Asker>>,
    /// The person's answers that hold for the rest of this run. Held only
    /// to read or record an answer, never across a wait.
    pub(super) answers: std::sync::Mutex<SessionAnswers>,
    limits: Limits,
    /// One permit per client connection being served.
    slots: Arc<Semaphore>,
    /// Connections over the limit being told so; beyond these, closed
    /// unanswered.
    refusing: Arc<Semaphore>,
    next_id: AtomicU64,
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
        Arc::new(Proxy {
            rules,
            resolver,
            decisions,
            asker,
            answers: Default::default(),
            limits,
            slots: Arc::new(Semaphore::new(limits.max_connections)),
            refusing: Arc::new(Semaphore::new((limits.max_connections / 8).max(16))),
            next_id: AtomicU64::new(1),
        })
    }

    pub(super) fn idle(&self) -> Duration {
        self.limits.idle
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
            super::socks::serve(self, &mut client, admitted).await
        } else {
            super::forward::serve(self, &mut client, admitted).await
        }
    }

    /// Decides, resolves, checks the addresses and connects; reports an
    /// opened connection.
    /// Carry bytes both ways between a client and the upstream it was let
    /// through to, until either side ends or the exchange goes idle; then
    /// record the close with its byte counts.
    pub(super) async fn relay<C>(
        &self,
        ticket: Ticket,
        client: &mut C,
        upstream: TcpStream,
        host: &str,
        port: u16,
    ) -> io::Result<()>
    where
        C: AsyncRead + AsyncWrite + Unpin + ?Sized,
    {
        let mut upstream = Counted::new(upstream);
        let activity = upstream.activity.clone();
        let result = until_idle(
            self.idle(),
            &activity,
            tokio::io::copy_bidirectional_with_sizes(client, &mut upstream, RELAY_BUF, RELAY_BUF),
        )
        .await;
        let why = result.as_ref().err().map(|e| e.to_string());
        self.closed(ticket, host, port, &upstream, why);
        result.map(|_| ())
    }

    pub(super) async fn open(
        &self,
        protocol: Protocol,
        host: &str,
        port: u16,
        admitted: bool,
    ) -> Result<(Ticket, TcpStream), Failure> {
        if !admitted {
            return Err(Failure::Busy {
                limit: self.limits.max_connections,
            });
        }
        let (rule, route) = match policy::decide(&self.rules, host, port) {
            Verdict::Deny(r) => return Err(Failure::Denied(r)),
            Verdict::Allow { rule, route } => (rule, route),
            Verdict::Ask {
                host: normal,
                route,
                refusal,
            } => match self
                .ask_person(protocol, host, &normal, port, refusal)
                .await
            {
                Settled::Allow(rule) => (rule, route),
                Settled::Deny(r) => return Err(Failure::Denied(r)),
            },
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
                    let ticket = Ticket {
                        id: self.next_id.fetch_add(1, Ordering::Relaxed),
                        rule,
                        protocol,
                    };
                    self.send(Decision {
                        phase: Phase::Opened,
                        id: ticket.id,
                        protocol,
                        host: host.to_string(),
                        port,
                        allowed: true,
                        rule: ticket.rule.to_string(),
                        why: None,
                        bytes_up: 0,
                        bytes_down: 0,
                        count: 1,
                    });
                    return Ok((ticket, s));
                }
                Ok(Err(e)) => last = format!("cannot connect to {to}: {e}"),
                Err(_) => last = format!("cannot connect to {to}: timed out"),
            }
        }
        Err(Failure::Unreachable { rule, error: last })
    }

    /// Reports a request that got no connection.
    pub(super) fn refused(&self, protocol: Protocol, host: &str, port: u16, f: Failure) {
        let (phase, allowed, rule, why) = match f {
            Failure::Denied(r) => (Phase::Refused, false, r.rule.to_string(), r.why),
            Failure::Unreachable { rule, error } => {
                (Phase::Unreachable, true, rule.to_string(), error)
            }
            Failure::Busy { limit } => (
                Phase::Refused,
                false,
                format!("connection limit ({limit})"),
                format!("{limit} connections already open"),
            ),
        };
        self.send(Decision::unconnected(
            phase,
            protocol,
            host,
            port,
            allowed,
            rule,
            Some(why),
        ));
    }

    /// Reports the end of an opened connection; `why` says why the proxy
    /// ended it, if it did.
    pub(super) fn closed(
        &self,
        t: Ticket,
        host: &str,
        port: u16,
        c: &Counted,
        why: Option<String>,
    ) {
        self.send(Decision {
            phase: Phase::Closed,
            id: t.id,
            protocol: t.protocol,
            host: host.to_string(),
            port,
            allowed: true,
            rule: t.rule.to_string(),
            why,
            bytes_up: c.up,
            bytes_down: c.down,
            count: 1,
        });
    }

    pub(super) fn send(&self, d: Decision) {
        // A closed receiver means nobody audits any more; the proxy still
        // enforces, so the send error is not fatal.
        let _ = self.decisions.send(d);
    }
}

/// When an opened connection last carried a byte, shared between its
/// relay and the watch that ends it when idle.
#[derive(Clone)]
pub(super) struct Activity {
    origin: Instant,
    last_ms: Arc<AtomicU64>,
}

impl Activity {
    pub(super) fn new() -> Activity {
        Activity {
            origin: Instant::now(),
            last_ms: Arc::new(AtomicU64::new(0)),
        }
    }

    pub(super) fn touch(&self) {
        let ms = self.origin.elapsed().as_millis() as u64;
        self.last_ms.store(ms, Ordering::Relaxed);
    }

    fn last(&self) -> Instant {
        self.origin + Duration::from_millis(self.last_ms.load(Ordering::Relaxed))
    }
}

/// Runs `work` (a relay) until it ends or `activity` shows no byte either
/// way for `idle`; then a `TimedOut` error naming the wait.
pub(super) async fn until_idle<T>(
    idle: Duration,
    activity: &Activity,
    work: impl Future<Output = io::Result<T>>,
) -> io::Result<T> {
    tokio::pin!(work);
    loop {
        let deadline = activity.last() + idle;
        tokio::select! {
            r = &mut work => return r,
            _ = tokio::time::sleep_until(deadline.into()) => {
                if activity.last() + idle <= Instant::now() {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("idle: no byte either way for {} ms", idle.as_millis()),
                    ));
                }
            }
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

impl Proxy {
    /// The text a refused client sees (see `advice`).
    pub(super) fn blocked_text(&self, host: &str, port: u16, r: &Refusal) -> String {
        super::advice::blocked_text(host, port, r, &self.rules)
    }
}
