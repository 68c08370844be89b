//! How the proxy turns an allowed name into addresses: the [`Resolver`]
//! trait, the system resolver (getaddrinfo, as every other program on the
//! machine), and a small UDP A/AAAA client for a named DNS server (used by
//! tests and by `nerdr proxy-serve --dns`). The policy decides before any
//! of this runs.
//!
//! The DNS messages are built and read by `hickory-proto` (the wire
//! format only, no resolver of its own) rather than by hand: a reply is
//! input from the network, and hickory's decoder bounds name compression,
//! record lengths and the name's size, which the hand-written parser did
//! not. The client (one UDP query per type, a random id, a deadline,
//! replies to other ids ignored) stays here: hickory's own client and
//! resolver crates would bring a second async stack for these few lines.
//! The system resolver path, the one `nerdr sandbox` uses, does not touch
//! hickory.
//!
//! The cost, measured when it came in (release build, thin LTO): the
//! binary grew by 0.50 MB (13.68 to 14.18 MB, 3.6 %), as decoding any
//! message links every record type's decoder (CAA's URLs bring `url`,
//! `idna` and ICU's tables); about 40 more crates build, under a minute
//! of CPU. Weighed against dropping the client behind the `Resolver`
//! trait: the tests that check no name is looked up before the policy
//! decides (`connect_to_a_denied_name_asks_no_dns`) need a real resolver
//! in a separate process to watch, which `--dns` is, so the client stays
//! and is read by a maintained, fuzzed decoder.

use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::time::Duration;

use hickory_proto::op::{Header, Message, MessageType, OpCode, Query, ResponseCode};
use hickory_proto::rr::{Name, RData, RecordType};
use hickory_proto::serialize::binary::{BinDecodable, BinDecoder};

#[cfg(test)]
mod tests;

pub type Lookup<'a> = Pin<Box<dyn Future<Output = io::Result<Vec<IpAddr>>> + Send + 'a>>;

/// Resolves a host name the policy already allowed.
pub trait Resolver: Send + Sync {
    fn lookup<'a>(&'a self, name: &'a str) -> Lookup<'a>;
}

/// The machine's resolver (getaddrinfo through tokio).
pub struct SystemResolver;

impl Resolver for SystemResolver {
    fn lookup<'a>(&'a self, name: &'a str) -> Lookup<'a> {
        Box::pin(async move {
            let addrs = tokio::net::lookup_host((name, 0)).await?;
            Ok(addrs.map(|a| a.ip()).collect())
        })
    }
}

/// A/AAAA queries over UDP to one server.
pub struct DnsResolver {
    pub server: SocketAddr,
    pub timeout: Duration,
}

impl Resolver for DnsResolver {
    fn lookup<'a>(&'a self, name: &'a str) -> Lookup<'a> {
        Box::pin(async move {
            let mut out = self.query(name, TYPE_A).await?;
            out.extend(self.query(name, TYPE_AAAA).await?);
            Ok(out)
        })
    }
}

impl DnsResolver {
    async fn query(&self, name: &str, qtype: u16) -> io::Result<Vec<IpAddr>> {
        let bind: SocketAddr = match self.server {
            SocketAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
            SocketAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
        };
        let sock = tokio::net::UdpSocket::bind(bind).await?;
        sock.connect(self.server).await?;
        let mut id = [0u8; 2];
        getrandom::getrandom(&mut id).map_err(|e| io::Error::other(e.to_string()))?;
        let id = u16::from_be_bytes(id);
        sock.send(&encode_query(id, name, qtype)?).await?;
        let mut buf = vec![0u8; 1500];
        let deadline = tokio::time::Instant::now() + self.timeout;
        loop {
            let n = tokio::time::timeout_at(deadline, sock.recv(&mut buf))
                .await
                .map_err(|_| {
                    io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("DNS server {} did not answer for {name}", self.server),
                    )
                })??;
            // A reply with another id is someone else's (or forged): wait on.
            if let Some(addrs) = parse_answer(id, &buf[..n])? {
                return Ok(addrs);
            }
        }
    }
}

pub const TYPE_A: u16 = 1;
pub const TYPE_AAAA: u16 = 28;

fn malformed(e: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("malformed DNS reply: {e}"),
    )
}

/// A recursive query for one name and type.
pub fn encode_query(id: u16, name: &str, qtype: u16) -> io::Result<Vec<u8>> {
    let cannot = |why: String| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("cannot query {name:?}: {why}"),
        )
    };
    // An empty label (`a..b`) is refused here: hickory would read it as
    // the root and ask for `a.`.
    if name.trim_end_matches('.').split('.').any(str::is_empty) {
        return Err(cannot("empty label".into()));
    }
    let mut fqdn = Name::from_ascii(name).map_err(|e| cannot(e.to_string()))?;
    fqdn.set_fqdn(true);
    let mut m = Message::new(id, MessageType::Query, OpCode::Query);
    m.metadata.recursion_desired = true;
    m.add_query(Query::query(fqdn, RecordType::from(qtype)));
    m.to_vec().map_err(|e| cannot(e.to_string()))
}

/// The A/AAAA addresses of a reply to query `id`; `None` if the message
/// answers another query or is no reply (only its header is read then, so
/// a stranger's garbage does not end the wait). NXDOMAIN and other errors
/// are errors.
pub fn parse_answer(id: u16, msg: &[u8]) -> io::Result<Option<Vec<IpAddr>>> {
    let header = Header::read(&mut BinDecoder::new(msg)).map_err(malformed)?;
    if header.id != id || header.message_type != MessageType::Response {
        return Ok(None);
    }
    let reply = Message::from_vec(msg).map_err(malformed)?;
    match reply.metadata.response_code {
        ResponseCode::NoError => {}
        ResponseCode::NXDomain => {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                "no such name (NXDOMAIN)",
            ))
        }
        code => {
            return Err(io::Error::other(format!(
                "DNS server answered rcode {} ({code})",
                u16::from(code)
            )))
        }
    }
    Ok(Some(
        reply
            .answers
            .iter()
            .filter_map(|r| match &r.data {
                RData::A(a) => Some(IpAddr::V4(a.0)),
                RData::AAAA(a) => Some(IpAddr::V6(a.0)),
                _ => None,
            })
            .collect(),
    ))
}
