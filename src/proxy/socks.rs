//! SOCKS5 CONNECT without authentication (RFC 1928): domain, IPv4 and IPv6
//! address types. A refusal is the "connection not allowed by ruleset"
//! reply; the client sees no text, the audit trail gets the reason.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

use super::connector::{Connector, Failure};
use super::decision::Protocol;

pub(super) const VERSION: u8 = 5;
const NO_AUTH: u8 = 0;
const NO_ACCEPTABLE_METHOD: u8 = 0xff;
const CMD_CONNECT: u8 = 1;

/// Reply codes (RFC 1928 section 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Reply {
    Succeeded = 0,
    GeneralFailure = 1,
    NotAllowed = 2,
    HostUnreachable = 4,
    ConnectionRefused = 5,
    CommandNotSupported = 7,
    AddressTypeNotSupported = 8,
}

/// A reply with a bound address (zeros when there is none).
pub fn encode_reply(code: Reply, bound: Option<SocketAddr>) -> Vec<u8> {
    let mut out = vec![VERSION, code as u8, 0];
    match bound.unwrap_or_else(|| SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0)) {
        SocketAddr::V4(a) => {
            out.push(1);
            out.extend_from_slice(&a.ip().octets());
        }
        SocketAddr::V6(a) => {
            out.push(4);
            out.extend_from_slice(&a.ip().octets());
        }
    }
    out.extend_from_slice(&bound.map_or(0, |b| b.port()).to_be_bytes());
    out
}

/// How long a client may take over its greeting and request.
const HANDSHAKE_TIME: Duration = Duration::from_secs(120);

pub(super) async fn serve<S>(
    proxy: &Connector,
    client: &mut BufReader<S>,
    admitted: bool,
) -> io::Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let (host, port) = match tokio::time::timeout(HANDSHAKE_TIME, handshake(client)).await {
        Ok(Ok(Some(target))) => target,
        Ok(Ok(None)) => return Ok(()),
        Ok(Err(e)) => return Err(e),
        Err(_) => {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "SOCKS handshake too slow",
            ))
        }
    };
    let (ticket, upstream) = match proxy.open(Protocol::Socks5, &host, port, admitted).await {
        Ok(opened) => opened,
        Err(f) => {
            let code = match &f {
                Failure::Denied(_) => Reply::NotAllowed,
                Failure::Busy { .. } => Reply::GeneralFailure,
                Failure::Unreachable { error, .. } if error.contains("refused") => {
                    Reply::ConnectionRefused
                }
                Failure::Unreachable { .. } => Reply::HostUnreachable,
            };
            proxy.refused(Protocol::Socks5, &host, port, f);
            return send(client, code, None).await;
        }
    };
    send(client, Reply::Succeeded, upstream.local_addr().ok()).await?;
    proxy.relay(ticket, client, upstream, &host, port).await
}

/// The greeting and the request, answered when they are bad; the target
/// of a CONNECT, or `None` when the client got its answer already.
async fn handshake<S>(client: &mut BufReader<S>) -> io::Result<Option<(String, u16)>>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let mut greeting = [0u8; 2];
    client.read_exact(&mut greeting).await?;
    let mut methods = vec![0u8; greeting[1] as usize];
    client.read_exact(&mut methods).await?;
    if !methods.contains(&NO_AUTH) {
        client
            .get_mut()
            .write_all(&[VERSION, NO_ACCEPTABLE_METHOD])
            .await?;
        return Ok(None);
    }
    client.get_mut().write_all(&[VERSION, NO_AUTH]).await?;

    let mut req = [0u8; 4];
    client.read_exact(&mut req).await?;
    let host = match req[3] {
        1 => {
            let mut a = [0u8; 4];
            client.read_exact(&mut a).await?;
            Ipv4Addr::from(a).to_string()
        }
        4 => {
            let mut a = [0u8; 16];
            client.read_exact(&mut a).await?;
            Ipv6Addr::from(a).to_string()
        }
        3 => {
            let mut len = [0u8; 1];
            client.read_exact(&mut len).await?;
            let mut name = vec![0u8; len[0] as usize];
            client.read_exact(&mut name).await?;
            // Not UTF-8 becomes U+FFFD, which the policy refuses as non-ASCII.
            String::from_utf8_lossy(&name).into_owned()
        }
        _ => {
            send(client, Reply::AddressTypeNotSupported, None).await?;
            return Ok(None);
        }
    };
    let mut port = [0u8; 2];
    client.read_exact(&mut port).await?;
    let port = u16::from_be_bytes(port);
    if req[0] != VERSION || req[1] != CMD_CONNECT {
        send(client, Reply::CommandNotSupported, None).await?;
        return Ok(None);
    }
    Ok(Some((host, port)))
}

async fn send<S>(
    client: &mut BufReader<S>,
    code: Reply,
    bound: Option<SocketAddr>,
) -> io::Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    client
        .get_mut()
        .write_all(&encode_reply(code, bound))
        .await?;
    if code != Reply::Succeeded {
        client.get_mut().shutdown().await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_encoded_as_on_the_wire() {
        assert_eq!(
            encode_reply(Reply::NotAllowed, None),
            [5, 2, 0, 1, 0, 0, 0, 0, 0, 0]
        );
        let v4: SocketAddr = "10.0.0.2:4660".parse().unwrap();
        assert_eq!(
            encode_reply(Reply::Succeeded, Some(v4)),
            [5, 0, 0, 1, 10, 0, 0, 2, 0x12, 0x34]
        );
        let v6: SocketAddr = "[::1]:1".parse().unwrap();
        let r = encode_reply(Reply::Succeeded, Some(v6));
        assert_eq!((r[3], r.len(), r[19], &r[20..]), (4, 22, 1, &[0u8, 1][..]));
    }
}
