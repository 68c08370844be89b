//! Just enough HTTP/1.1 for the fake model server: read one request (head,
//! then a body framed by `Content-Length` or chunked), write a sized reply
//! or a chunked stream. Hand-written because the project has no HTTP
//! server crate and the server must stay small and std-only; anything it
//! does not understand is answered `400` and logged, never guessed at.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;

/// The largest head or body accepted (the CLIs send about 100 KB of tools).
const MAX: usize = 16 * 1024 * 1024;

/// One request as read from the wire.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Whether the client asked to close the connection after this one.
    pub fn wants_close(&self) -> bool {
        self.header("connection")
            .is_some_and(|v| v.to_ascii_lowercase().contains("close"))
    }
}

fn bad(why: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, why.into())
}

fn read_line(r: &mut BufReader<TcpStream>) -> io::Result<Option<String>> {
    let mut line = Vec::new();
    let n = r.by_ref().take(MAX as u64).read_until(b'\n', &mut line)?;
    if n == 0 {
        return Ok(None);
    }
    while line.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        line.pop();
    }
    String::from_utf8(line)
        .map(Some)
        .map_err(|_| bad("a head line that is not UTF-8"))
}

/// The next request on the connection; `None` when the client closed it.
pub fn read_request(r: &mut BufReader<TcpStream>) -> io::Result<Option<Request>> {
    let first = loop {
        match read_line(r)? {
            None => return Ok(None),
            // Tolerate stray blank lines between kept-alive requests.
            Some(l) if l.is_empty() => continue,
            Some(l) => break l,
        }
    };
    let mut words = first.split_whitespace();
    let (Some(method), Some(target)) = (words.next(), words.next()) else {
        return Err(bad(format!("bad request line {first:?}")));
    };
    let mut headers = Vec::new();
    loop {
        let line = read_line(r)?.ok_or_else(|| bad("the head ended early"))?;
        if line.is_empty() {
            break;
        }
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| bad(format!("bad header line {line:?}")))?;
        headers.push((name.trim().to_string(), value.trim().to_string()));
    }
    let mut req = Request {
        method: method.to_string(),
        // An absolute URI (a proxy's form) is reduced to its path.
        path: match target.split_once("://") {
            Some((_, rest)) => rest
                .find('/')
                .map_or("/".to_string(), |i| rest[i..].to_string()),
            None => target.to_string(),
        },
        headers,
        body: Vec::new(),
    };
    let chunked = req
        .header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    if chunked {
        req.body = read_chunked(r)?;
    } else if let Some(len) = req.header("content-length") {
        let len: usize = len
            .parse()
            .map_err(|_| bad(format!("bad Content-Length {len:?}")))?;
        if len > MAX {
            return Err(bad(format!("a body of {len} bytes")));
        }
        req.body = vec![0; len];
        r.read_exact(&mut req.body)?;
    }
    Ok(Some(req))
}

fn read_chunked(r: &mut BufReader<TcpStream>) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let size = read_line(r)?.ok_or_else(|| bad("a chunked body ended early"))?;
        let size = size.split(';').next().unwrap_or("").trim();
        let size =
            usize::from_str_radix(size, 16).map_err(|_| bad(format!("bad chunk size {size:?}")))?;
        if size == 0 {
            // Trailers, up to the blank line.
            while read_line(r)?.is_some_and(|l| !l.is_empty()) {}
            return Ok(body);
        }
        if body.len() + size > MAX {
            return Err(bad("a chunked body too large"));
        }
        let start = body.len();
        body.resize(start + size, 0);
        r.read_exact(&mut body[start..])?;
        read_line(r)?;
    }
}

/// A whole reply with a sized body.
pub fn reply(w: &mut impl Write, status: &str, content_type: &str, body: &[u8]) -> io::Result<()> {
    write!(
        w,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )?;
    w.write_all(body)?;
    w.flush()
}

/// A chunked reply written piece by piece (server-sent events).
pub struct Stream<'a, W: Write> {
    w: &'a mut W,
}

impl<'a, W: Write> Stream<'a, W> {
    pub fn start(
        w: &'a mut W,
        content_type: &str,
        headers: &[(String, String)],
    ) -> io::Result<Self> {
        let extra: String = headers
            .iter()
            .map(|(k, v)| format!("{k}: {v}\r\n"))
            .collect();
        write!(
            w,
            "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nCache-Control: no-cache\r\n\
             {extra}Transfer-Encoding: chunked\r\n\r\n"
        )?;
        w.flush()?;
        Ok(Stream { w })
    }

    pub fn send(&mut self, data: &[u8]) -> io::Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        write!(self.w, "{:x}\r\n", data.len())?;
        self.w.write_all(data)?;
        self.w.write_all(b"\r\n")?;
        self.w.flush()
    }

    pub fn finish(self) -> io::Result<()> {
        self.w.write_all(b"0\r\n\r\n")?;
        self.w.flush()
    }
}
