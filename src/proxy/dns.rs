//! How the proxy turns an allowed name into addresses: the [`Resolver`]
//! trait, the system resolver (getaddrinfo, as every other program on the
//! machine), and a small UDP A/AAAA client for a named DNS server (used by
//! tests and by `nerdr proxy-serve --dns`). The wire format is pure and
//! tested here; the policy decides before any of this runs.

use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::time::Duration;

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

/// A recursive query for one name and type.
pub fn encode_query(id: u16, name: &str, qtype: u16) -> io::Result<Vec<u8>> {
    let mut q = Vec::with_capacity(32 + name.len());
    q.extend_from_slice(&id.to_be_bytes());
    q.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
    for label in name.trim_end_matches('.').split('.') {
        if label.is_empty() || label.len() > 63 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("cannot query {name:?}: empty or over-long label"),
            ));
        }
        q.push(label.len() as u8);
        q.extend_from_slice(label.as_bytes());
    }
    q.push(0);
    q.extend_from_slice(&qtype.to_be_bytes());
    q.extend_from_slice(&1u16.to_be_bytes());
    Ok(q)
}

fn truncated() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, "truncated DNS reply")
}

/// Skips a (possibly compressed) name; returns the offset after it.
fn skip_name(msg: &[u8], mut at: usize) -> io::Result<usize> {
    loop {
        let len = *msg.get(at).ok_or_else(truncated)?;
        match len {
            0 => return Ok(at + 1),
            l if l & 0xc0 == 0xc0 => return Ok(at + 2),
            l => at += 1 + l as usize,
        }
    }
}

fn u16_at(msg: &[u8], at: usize) -> io::Result<u16> {
    let b = msg.get(at..at + 2).ok_or_else(truncated)?;
    Ok(u16::from_be_bytes([b[0], b[1]]))
}

/// The A/AAAA addresses of a reply to query `id`; `None` if the reply
/// answers another query. NXDOMAIN and other errors are errors.
pub fn parse_answer(id: u16, msg: &[u8]) -> io::Result<Option<Vec<IpAddr>>> {
    if msg.len() < 12 {
        return Err(truncated());
    }
    if u16_at(msg, 0)? != id || msg[2] & 0x80 == 0 {
        return Ok(None);
    }
    let rcode = msg[3] & 0x0f;
    if rcode == 3 {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            "no such name (NXDOMAIN)",
        ));
    }
    if rcode != 0 {
        return Err(io::Error::other(format!(
            "DNS server answered rcode {rcode}"
        )));
    }
    let qd = u16_at(msg, 4)?;
    let an = u16_at(msg, 6)?;
    let mut at = 12;
    for _ in 0..qd {
        at = skip_name(msg, at)? + 4;
    }
    let mut out = Vec::new();
    for _ in 0..an {
        at = skip_name(msg, at)?;
        let rtype = u16_at(msg, at)?;
        let rdlen = u16_at(msg, at + 8)? as usize;
        let data = msg.get(at + 10..at + 10 + rdlen).ok_or_else(truncated)?;
        match (rtype, rdlen) {
            (TYPE_A, 4) => out.push(IpAddr::from(
                <[u8; 4]>::try_from(data).map_err(|_| truncated())?,
            )),
            (TYPE_AAAA, 16) => out.push(IpAddr::from(
                <[u8; 16]>::try_from(data).map_err(|_| truncated())?,
            )),
            _ => {}
        }
        at += 10 + rdlen;
    }
    Ok(Some(out))
}
