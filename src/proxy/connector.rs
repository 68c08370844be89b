//! The upstream side of every protocol the proxy speaks: decides a
//! request by the policy (asking the person about a host on neither
//! list), resolves it, checks the addresses, connects, relays and counts
//! bytes, and reports each step as a [`Decision`] on the trail. `forward`
//! (HTTP) and `socks` (SOCKS5) read what the client wants and call it;
//! `server` accepts the connections.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

use super::answers::Settled;
use super::asking::Questions;
use super::counted::Counted;
use super::decision::{Decision, Phase, Protocol, Trail};
use super::dns::Resolver;
use super::idle::until_idle;
use super::limits::Limits;
use super::policy::{self, NetRules, Refusal, Route, Rule, Verdict};

/// Buffer size for relaying: large enough that a download is not bounded by
/// system calls.
pub(super) const RELAY_BUF: usize = 64 * 1024;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

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

/// Rules, a resolver, the person to ask and where decisions go.
pub(super) struct Connector {
    rules: NetRules,
    resolver: Arc<dyn Resolver>,
    trail: Trail,
    questions: Questions,
    limits: Limits,
    next_id: AtomicU64,
}

impl Connector {
    pub(super) fn new(
        rules: NetRules,
        resolver: Arc<dyn Resolver>,
        trail: Trail,
        questions: Questions,
        limits: Limits,
    ) -> Connector {
        Connector {
            rules,
            resolver,
            trail,
            questions,
            limits,
            next_id: AtomicU64::new(1),
        }
    }

    pub(super) fn idle(&self) -> Duration {
        self.limits.idle
    }

    /// Decides, resolves, checks the addresses and connects; reports an
    /// opened connection. `admitted` is false for a connection over the
    /// limit, which is refused.
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
                .questions
                .settle(&self.trail, protocol, host, &normal, port, refusal)
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
                    self.trail.send(Decision {
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
        self.trail.send(Decision::unconnected(
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
        self.trail.send(Decision {
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

    /// The text a refused client sees (see `advice`).
    pub(super) fn blocked_text(&self, host: &str, port: u16, r: &Refusal) -> String {
        super::advice::blocked_text(host, port, r, &self.rules)
    }
}
