//! The HTTP side of the proxy: `CONNECT` tunnels and absolute-URI requests.
//! Every request on a kept-alive client connection is decided again and
//! gets its own upstream connection, so one allowed request cannot carry
//! the next to a denied host.

use std::io;
use std::time::Duration;

use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader,
};

use super::connector::{Connector, Failure, RELAY_BUF};
use super::counted::Counted;
use super::decision::Protocol;
use super::http::{self, BadRequest, Body, Request, Target};
use super::idle::until_idle;

/// Longest request or response head accepted.
const MAX_HEAD: usize = 64 * 1024;
/// How long a kept-alive client connection may sit idle.
const IDLE: Duration = Duration::from_secs(120);

pub(super) async fn serve<S>(
    proxy: &Connector,
    client: &mut BufReader<S>,
    admitted: bool,
) -> io::Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    loop {
        let head = match tokio::time::timeout(IDLE, read_head(client)).await {
            Ok(Ok(Some(h))) => h,
            Ok(Ok(None)) | Err(_) => return Ok(()),
            Ok(Err(e)) => return reply_bad(client, &e.to_string()).await,
        };
        let req = match http::parse_request(&head) {
            Ok(r) => r,
            Err(BadRequest(why)) => return reply_bad(client, &why).await,
        };
        let target = match req.target() {
            Ok(t) => t,
            Err(BadRequest(why)) => return reply_bad(client, &why).await,
        };
        match target {
            Target::Tunnel { host, port } => {
                return tunnel(proxy, client, &host, port, admitted).await
            }
            Target::Forward {
                host,
                port,
                authority,
                path,
            } => {
                let body = match req.body() {
                    Ok(b) => b,
                    Err(BadRequest(why)) => return reply_bad(client, &why).await,
                };
                let (ticket, upstream) = match proxy
                    .open(Protocol::Http, &host, port, admitted)
                    .await
                {
                    Ok(opened) => opened,
                    Err(f) => return refuse(proxy, client, Protocol::Http, &host, port, f).await,
                };
                let mut upstream = BufReader::with_capacity(RELAY_BUF, Counted::new(upstream));
                let activity = upstream.get_ref().activity.clone();
                let result = until_idle(
                    proxy.idle(),
                    &activity,
                    exchange(client, &mut upstream, &req, &authority, &path, body),
                )
                .await;
                let why = result.as_ref().err().map(|e| e.to_string());
                proxy.closed(ticket, &host, port, upstream.get_ref(), why);
                if !result? {
                    return Ok(());
                }
            }
        }
    }
}

/// One request and its response; returns whether the client connection
/// may carry another request.
async fn exchange<C, U>(
    client: &mut BufReader<C>,
    upstream: &mut BufReader<U>,
    req: &Request,
    authority: &str,
    path: &str,
    body: Body,
) -> io::Result<bool>
where
    C: AsyncRead + AsyncWrite + Unpin,
    U: AsyncRead + AsyncWrite + Unpin,
{
    upstream
        .get_mut()
        .write_all(&req.upstream_head(authority, path))
        .await?;
    relay_body(client, upstream.get_mut(), body).await?;
    upstream.get_mut().flush().await?;
    loop {
        let head = read_head(upstream).await?.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "upstream closed before answering",
            )
        })?;
        let resp = http::parse_response(&head)
            .map_err(|BadRequest(w)| io::Error::new(io::ErrorKind::InvalidData, w))?;
        if (100..200).contains(&resp.status) {
            // Interim (e.g. 100 Continue): pass on and wait for the final one.
            client.get_mut().write_all(&resp.client_head(false)).await?;
            continue;
        }
        let body = resp
            .body(&req.method)
            .map_err(|BadRequest(w)| io::Error::new(io::ErrorKind::InvalidData, w))?;
        let close = body == Body::UntilClose || !req.keep_alive();
        client.get_mut().write_all(&resp.client_head(close)).await?;
        relay_body(upstream, client.get_mut(), body).await?;
        client.get_mut().flush().await?;
        return Ok(!close);
    }
}

async fn tunnel<S>(
    proxy: &Connector,
    client: &mut BufReader<S>,
    host: &str,
    port: u16,
    admitted: bool,
) -> io::Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let (ticket, upstream) = match proxy
        .open(Protocol::HttpConnect, host, port, admitted)
        .await
    {
        Ok(opened) => opened,
        Err(f) => return refuse(proxy, client, Protocol::HttpConnect, host, port, f).await,
    };
    client
        .get_mut()
        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .await?;
    // The client's bytes already buffered after the head go first: BufReader
    // hands them out before reading the socket again.
    proxy.relay(ticket, client, upstream, host, port).await
}

async fn refuse<S>(
    proxy: &Connector,
    client: &mut BufReader<S>,
    protocol: Protocol,
    host: &str,
    port: u16,
    f: Failure,
) -> io::Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let reply = match &f {
        Failure::Denied(r) => {
            http::plain_response("403 Forbidden", &proxy.blocked_text(host, port, r))
        }
        Failure::Unreachable { error, .. } => {
            http::plain_response("502 Bad Gateway", &format!("nerdr proxy: {error}\n"))
        }
        Failure::Busy { limit } => http::plain_response(
            "503 Service Unavailable",
            &format!(
                "nerdr proxy: too many open connections ({limit}); \
                 close some and try again\n"
            ),
        ),
    };
    proxy.refused(protocol, host, port, f);
    client.get_mut().write_all(&reply).await?;
    client.get_mut().shutdown().await
}

async fn reply_bad<S>(client: &mut BufReader<S>, why: &str) -> io::Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let body = format!("nerdr proxy: bad request: {why}\n");
    client
        .get_mut()
        .write_all(&http::plain_response("400 Bad Request", &body))
        .await?;
    client.get_mut().shutdown().await
}

/// Reads a head up to its blank line (which is not returned). `None` at a
/// clean end of stream before any byte.
async fn read_head<R: AsyncBufRead + Unpin>(r: &mut R) -> io::Result<Option<Vec<u8>>> {
    let mut head = Vec::new();
    loop {
        let start = head.len();
        // Lines that fill the room exactly leave none to read: without
        // this the empty read would be taken for the client's end.
        if start >= MAX_HEAD + 2 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "head longer than 64 KiB",
            ));
        }
        let n = (&mut *r)
            .take((MAX_HEAD + 2 - start) as u64)
            .read_until(b'\n', &mut head)
            .await?;
        if n == 0 {
            return if head.is_empty() {
                Ok(None)
            } else {
                Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "connection closed inside a head",
                ))
            };
        }
        if !head.ends_with(b"\n") {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "head longer than 64 KiB",
            ));
        }
        let line = &head[start..];
        if line == b"\r\n" || line == b"\n" {
            if start == 0 {
                // Blank lines before a request are allowed (RFC 9112 2.2).
                head.clear();
                continue;
            }
            head.truncate(start);
            return Ok(Some(head));
        }
    }
}

/// Copies one body from `src` to `dst` as framed.
async fn relay_body<R, W>(src: &mut R, dst: &mut W, body: Body) -> io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    match body {
        Body::None => Ok(()),
        Body::Length(n) => copy_exact(src, dst, n).await,
        Body::UntilClose => tokio::io::copy_buf(src, dst).await.map(|_| ()),
        Body::Chunked => loop {
            let mut line = Vec::new();
            (&mut *src).take(4096).read_until(b'\n', &mut line).await?;
            let size = http::chunk_size(&line).map_err(invalid)?;
            dst.write_all(&line).await?;
            if size == 0 {
                return relay_trailers(src, dst).await;
            }
            copy_exact(src, dst, size).await?;
            // The chunk's own CRLF: anything else would be read by the
            // server as the next chunk-size line, by the proxy as data.
            let mut end = [0u8; 2];
            src.read_exact(&mut end).await?;
            if &end != b"\r\n" {
                return Err(invalid(BadRequest(
                    "chunk data not followed by CRLF".into(),
                )));
            }
            dst.write_all(&end).await?;
        },
    }
}

fn invalid(BadRequest(why): BadRequest) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, why)
}

/// The trailer section after the last chunk, up to its blank line, checked
/// as header lines are and no longer than a head.
async fn relay_trailers<R, W>(src: &mut R, dst: &mut W) -> io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut trailers = Vec::new();
    loop {
        let start = trailers.len();
        if start >= MAX_HEAD + 2 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "trailers longer than 64 KiB",
            ));
        }
        let n = (&mut *src)
            .take((MAX_HEAD + 2 - start) as u64)
            .read_until(b'\n', &mut trailers)
            .await?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "body ended inside trailers",
            ));
        }
        if !trailers.ends_with(b"\n") {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "trailers longer than 64 KiB",
            ));
        }
        if matches!(&trailers[start..], b"\r\n" | b"\n") {
            http::check_trailers(&trailers).map_err(invalid)?;
            return dst.write_all(&trailers).await;
        }
    }
}

async fn copy_exact<R, W>(src: &mut R, dst: &mut W, n: u64) -> io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let copied = tokio::io::copy_buf(&mut (&mut *src).take(n), dst).await?;
    if copied < n {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "body shorter than announced",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run<T>(f: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    /// Relays `input` as framed; returns what was written and what was left.
    fn relay(input: &[u8], body: Body) -> io::Result<(Vec<u8>, Vec<u8>)> {
        run(async {
            let mut src = BufReader::new(input);
            let mut out = Vec::new();
            relay_body(&mut src, &mut out, body).await?;
            let mut rest = Vec::new();
            src.read_to_end(&mut rest).await?;
            Ok((out, rest))
        })
    }

    #[test]
    fn bodies_are_relayed_to_their_end_and_no_further() {
        let chunked = b"4;ext=1\r\nWiki\r\n5\r\npedia\r\n0\r\nTrailer: x\r\n\r\nGET /next";
        let (out, rest) = relay(chunked, Body::Chunked).unwrap();
        assert_eq!(
            (out.as_slice(), rest.as_slice()),
            (&chunked[..chunked.len() - 9], &b"GET /next"[..])
        );
        let (out, rest) = relay(b"hello world", Body::Length(5)).unwrap();
        assert_eq!(
            (out.as_slice(), rest.as_slice()),
            (&b"hello"[..], &b" world"[..])
        );
        let (out, rest) = relay(b"abc", Body::None).unwrap();
        assert_eq!((out.len(), rest.as_slice()), (0, &b"abc"[..]));
        assert_eq!(
            relay(b"to the end", Body::UntilClose).unwrap().0,
            b"to the end"
        );
        assert_eq!(
            relay(b"hel", Body::Length(5)).unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );
        assert!(
            relay(b"zz\r\nxx\r\n", Body::Chunked).is_err(),
            "bad chunk size"
        );
        assert!(relay(b"5\r\nab", Body::Chunked).is_err(), "short chunk");
    }

    #[test]
    fn chunked_bodies_are_relayed_only_as_framed() {
        /// A sentence, the bytes after a head, and what is left after
        /// the body or how relaying it fails.
        type Row<'a> = (&'a str, &'a [u8], Result<&'a [u8], io::ErrorKind>);
        #[rustfmt::skip]
        let table: &[Row] = &[
            ("a body with trailers ends at their blank line",
                b"1\r\nx\r\n0\r\nX-Sum: 1\r\n\r\nnext", Ok(b"next")),
            ("a body without trailers ends at the blank line after the last chunk",
                b"1\r\nx\r\n0\r\n\r\nnext", Ok(b"next")),
            ("chunk data not followed by CRLF is refused",
                b"1\r\nxy\r\n0\r\n\r\n", Err(io::ErrorKind::InvalidData)),
            ("chunk data followed by bytes that read as a chunk is refused",
                b"1\r\nxAB1\r\ny\r\n0\r\n\r\n", Err(io::ErrorKind::InvalidData)),
            ("chunk data followed by a bare LF is refused",
                b"1\r\nx\n0\r\n\r\n", Err(io::ErrorKind::InvalidData)),
            ("a chunk-size line without digits is refused",
                b"\r\nx\r\n0\r\n\r\n", Err(io::ErrorKind::InvalidData)),
            ("a malformed trailer is refused",
                b"0\r\nBad Trailer: 1\r\n\r\n", Err(io::ErrorKind::InvalidData)),
            ("a folded trailer is refused",
                b"0\r\nX: 1\r\n 2\r\n\r\n", Err(io::ErrorKind::InvalidData)),
            ("a body that ends inside its trailers is refused",
                b"0\r\nX: 1\r\n", Err(io::ErrorKind::UnexpectedEof)),
        ];
        let wrong: Vec<String> = table
            .iter()
            .filter_map(|(sentence, input, want)| {
                let got = relay(input, Body::Chunked);
                let ok = match (want, &got) {
                    // All of the body is relayed as it came, the rest left.
                    (Ok(rest), Ok((out, left))) => {
                        left == rest && [out.as_slice(), rest].concat() == *input
                    }
                    (Err(kind), Err(e)) => e.kind() == *kind,
                    _ => false,
                };
                (!ok).then(|| format!("{sentence}: want {want:?}, got {got:?}"))
            })
            .collect();
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
        let huge = format!("0\r\nX: {}\r\n\r\n", "a".repeat(MAX_HEAD));
        assert_eq!(
            relay(huge.as_bytes(), Body::Chunked).unwrap_err().kind(),
            io::ErrorKind::InvalidData,
            "trailers longer than a head"
        );
        let full = filled("", MAX_HEAD + 2);
        let e = relay(format!("0\r\n{full}\r\n").as_bytes(), Body::Chunked).unwrap_err();
        assert_eq!(
            (e.kind(), e.to_string().as_str()),
            (io::ErrorKind::InvalidData, "trailers longer than 64 KiB"),
            "trailer lines that fill the room to the byte"
        );
    }

    #[test]
    fn heads_are_read_up_to_64_kib() {
        let read = |input: &[u8]| run(async { read_head(&mut BufReader::new(input)).await });
        let head = |len: usize| {
            let line = "GET http://a/ HTTP/1.1\r\nX: ";
            format!("{line}{}\r\n", "a".repeat(len - line.len() - 2))
        };
        let fits = head(MAX_HEAD);
        assert_eq!(fits.len(), MAX_HEAD);
        assert_eq!(
            read(format!("{fits}\r\n").as_bytes()).unwrap().unwrap(),
            fits.as_bytes()
        );
        assert_eq!(
            read(format!("{}\r\n", head(MAX_HEAD + 1)).as_bytes())
                .unwrap_err()
                .kind(),
            io::ErrorKind::InvalidData
        );
    }

    #[test]
    fn heads_end_at_the_blank_line() {
        let read = |input: &[u8]| run(async { read_head(&mut BufReader::new(input)).await });
        assert_eq!(
            read(b"\r\nGET / HTTP/1.1\r\nA: b\r\n\r\nbody")
                .unwrap()
                .unwrap(),
            b"GET / HTTP/1.1\r\nA: b\r\n"
        );
        assert_eq!(read(b"").unwrap(), None);
        assert_eq!(
            read(b"GET / HTTP/1.1\r\n").unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );
        let huge = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(MAX_HEAD));
        assert_eq!(
            read(huge.as_bytes()).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
        // Whole lines that fill the room to the byte, the blank line after.
        let full = filled("GET / HTTP/1.1\r\n", MAX_HEAD + 2);
        let e = read(format!("{full}\r\n").as_bytes()).unwrap_err();
        assert_eq!(
            (e.kind(), e.to_string().as_str()),
            (io::ErrorKind::InvalidData, "head longer than 64 KiB")
        );
    }

    /// `first`, then short header lines up to exactly `len` bytes.
    fn filled(first: &str, len: usize) -> String {
        let mut s = first.to_string();
        let pad = (len - s.len()) % 4;
        if pad != 0 {
            s.push_str(&format!("b:{}\r\n", "x".repeat(pad)));
        }
        while s.len() < len {
            s.push_str("a:\r\n");
        }
        assert_eq!(s.len(), len);
        s
    }
}
