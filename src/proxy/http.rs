//! HTTP/1 request and response heads as a forward proxy needs them: the
//! target of a request (CONNECT authority or absolute URI), the head sent
//! upstream, and how each body is framed. Pure functions over bytes; the
//! server does the reading and writing.
//!
//! The bytes are tokenized by `httparse` (fuzzed, and used by hyper), with
//! every leniency it offers turned off (`strict`): no folded header lines,
//! no blank before a colon or a first header, one space between the parts
//! of a request or status line, only token bytes in names and no control
//! bytes but HTAB in values. Bare LF line ends are read as CRLF, as before
//! and as RFC 9112 allows. What the tokens mean stays here, as policy:
//! which framing a message has (`framing`: both framings, lengths that
//! differ and a `Transfer-Encoding` not ending in `chunked` are refused,
//! as servers disagree on them), which headers are hop-by-hop, the target.

#[cfg(test)]
mod tests;

/// A parsed request head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    pub target: String,
    pub version: String,
    pub headers: Vec<(String, String)>,
}

/// Where a request goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `CONNECT host:port`
    Tunnel { host: String, port: u16 },
    /// `GET http://host[:port]/path`: `authority` is the Host header to send.
    Forward {
        host: String,
        port: u16,
        authority: String,
        path: String,
    },
}

/// How a message body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    None,
    Length(u64),
    Chunked,
    UntilClose,
}

/// Why a request cannot be proxied; the text goes into a 400 reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRequest(pub String);

fn bad<T>(why: impl Into<String>) -> Result<T, BadRequest> {
    Err(BadRequest(why.into()))
}

/// The strict reading: every relaxation httparse offers stays off. They
/// are off by default; naming them here keeps a change of default from
/// loosening the proxy, since each one is a way for the proxy and the
/// server behind it to read the same bytes as different requests.
fn strict() -> httparse::ParserConfig {
    let mut c = httparse::ParserConfig::default();
    c.allow_multiple_spaces_in_request_line_delimiters(false)
        .allow_multiple_spaces_in_response_status_delimiters(false)
        .allow_spaces_after_header_name_in_responses(false)
        .allow_obsolete_multiline_headers_in_responses(false)
        .allow_space_before_first_header_name(false)
        .ignore_invalid_headers_in_requests(false)
        .ignore_invalid_headers_in_responses(false);
    c
}

/// The head with its final blank line put back, as httparse reads it; the
/// text is checked to be UTF-8 first, as header values are kept as text.
fn terminated(head: &[u8]) -> Result<Vec<u8>, BadRequest> {
    std::str::from_utf8(head).map_err(|_| BadRequest("head is not UTF-8".into()))?;
    let mut buf = Vec::with_capacity(head.len() + 2);
    buf.extend_from_slice(head);
    buf.extend_from_slice(b"\r\n");
    Ok(buf)
}

/// Room for every header the head can hold: each takes a line.
fn header_slots<'b>(buf: &[u8]) -> Vec<httparse::Header<'b>> {
    vec![httparse::EMPTY_HEADER; memchr::memchr_iter(b'\n', buf).count()]
}

/// The lines of a head, line ends removed, leading blank lines skipped (as
/// httparse skips them).
fn head_lines(head: &[u8]) -> impl Iterator<Item = &[u8]> {
    head.split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .skip_while(|l| l.is_empty())
}

fn show_line(line: &[u8]) -> String {
    format!("{:?}", String::from_utf8_lossy(line))
}

/// Which line of a head httparse refused, and why. httparse does not say
/// where it stopped, so the first line is read alone (`first_line` names
/// what is wrong with it, if anything), then each header line alone.
fn refusal(
    head: &[u8],
    e: httparse::Error,
    first_line: impl Fn(&[u8]) -> Option<String>,
) -> BadRequest {
    let mut lines = head_lines(head);
    if let Some(why) = first_line(lines.next().unwrap_or_default()) {
        return BadRequest(why);
    }
    for line in lines {
        let alone = [line, b"\r\n\r\n"].concat();
        let mut slot = [httparse::EMPTY_HEADER; 1];
        if let Err(e) = httparse::parse_headers(&alone, &mut slot) {
            return BadRequest(format!("malformed header line {}: {e}", show_line(line)));
        }
    }
    BadRequest(format!("malformed head: {e}"))
}

/// What is wrong with a request line read alone, if anything.
fn request_line_fault(line: &[u8]) -> Option<String> {
    let alone = [line, b"\r\n\r\n"].concat();
    let mut none = [];
    match strict().parse_request(&mut httparse::Request::new(&mut none), &alone) {
        Ok(_) => None,
        Err(httparse::Error::Version) => Some(format!(
            "unsupported HTTP version in request line {}",
            show_line(line)
        )),
        Err(e) => Some(format!("malformed request line {}: {e}", show_line(line))),
    }
}

/// What is wrong with a status line read alone, if anything.
fn status_line_fault(line: &[u8]) -> Option<String> {
    let alone = [line, b"\r\n\r\n"].concat();
    let mut none = [];
    match strict().parse_response(&mut httparse::Response::new(&mut none), &alone) {
        Ok(_) => None,
        Err(e) => Some(format!("malformed status line {}: {e}", show_line(line))),
    }
}

fn headers(parsed: &[httparse::Header<'_>]) -> Result<Vec<(String, String)>, BadRequest> {
    parsed
        .iter()
        .map(|h| {
            let value = std::str::from_utf8(h.value)
                .map_err(|_| BadRequest(format!("header {} is not UTF-8", h.name)))?;
            Ok((h.name.to_string(), value.to_string()))
        })
        .collect()
}

/// Reads a request head (without its final blank line) with httparse,
/// configured strictly (see `strict`).
pub fn parse_request(head: &[u8]) -> Result<Request, BadRequest> {
    let buf = terminated(head)?;
    let mut slots = header_slots(&buf);
    let mut req = httparse::Request::new(&mut slots);
    match strict().parse_request(&mut req, &buf) {
        Ok(httparse::Status::Complete(n)) if n == buf.len() => {}
        Ok(httparse::Status::Complete(_)) => return bad("a blank line inside the head"),
        Ok(httparse::Status::Partial) if head_lines(head).next().is_none() => {
            return bad("empty request")
        }
        Ok(httparse::Status::Partial) => return bad("incomplete request head"),
        Err(e) => return Err(refusal(head, e, request_line_fault)),
    }
    let (Some(method), Some(target), Some(version)) = (req.method, req.path, req.version) else {
        return bad("incomplete request line");
    };
    Ok(Request {
        method: method.to_string(),
        target: target.to_string(),
        version: format!("HTTP/1.{version}"),
        headers: headers(req.headers)?,
    })
}

impl Request {
    fn has_token(&self, name: &str, token: &str) -> bool {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .any(|(_, v)| {
                v.split(',')
                    .any(|t| ows_trim(t).eq_ignore_ascii_case(token))
            })
    }

    /// Whether the client expects the connection to stay open afterwards.
    pub fn keep_alive(&self) -> bool {
        if self.version == "HTTP/1.0" {
            self.has_token("connection", "keep-alive")
                || self.has_token("proxy-connection", "keep-alive")
        } else {
            !self.has_token("connection", "close") && !self.has_token("proxy-connection", "close")
        }
    }

    pub fn target(&self) -> Result<Target, BadRequest> {
        if self.method == "CONNECT" {
            let (host, port) = split_authority(&self.target, None)?;
            return Ok(Target::Tunnel { host, port });
        }
        let Some(rest) = strip_prefix_ignore_case(&self.target, "http://") else {
            if strip_prefix_ignore_case(&self.target, "https://").is_some() {
                return bad("an https:// URL goes through CONNECT, not a plain request");
            }
            return bad(format!(
                "a proxy request needs an absolute http:// URL, got {:?}",
                self.target
            ));
        };
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, path) = rest.split_at(end);
        let path = match path {
            "" => "/".to_string(),
            p if p.starts_with('/') => p.to_string(),
            p => format!("/{p}"),
        };
        let (host, port) = split_authority(authority, Some(80))?;
        Ok(Target::Forward {
            host,
            port,
            authority: authority.to_string(),
            path,
        })
    }

    /// How the request body ends; both framings at once is refused, as
    /// servers disagree on which wins (request smuggling). So is
    /// `Transfer-Encoding` in an HTTP/1.0 request: RFC 9112 (6.1) has a
    /// server treat that framing as faulty, so one behind the proxy may
    /// read the chunks as the next request.
    pub fn body(&self) -> Result<Body, BadRequest> {
        let te = self
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("transfer-encoding"));
        if te && self.version == "HTTP/1.0" {
            return bad("Transfer-Encoding in an HTTP/1.0 request");
        }
        framing(&self.headers, Body::None)
    }

    /// The head sent upstream: origin-form target, Host from the URL,
    /// proxy and hop-by-hop headers dropped, `Expect` dropped (the body
    /// follows the head without waiting for 100 Continue).
    pub fn upstream_head(&self, authority: &str, path: &str) -> Vec<u8> {
        let mut out = format!(
            "{} {} {}\r\nHost: {}\r\n",
            self.method, path, self.version, authority
        );
        for (n, v) in &self.headers {
            if is_hop_by_hop(n)
                || n.eq_ignore_ascii_case("host")
                || n.eq_ignore_ascii_case("expect")
            {
                continue;
            }
            out.push_str(&format!("{n}: {v}\r\n"));
        }
        out.push_str("Connection: close\r\n\r\n");
        out.into_bytes()
    }
}

fn is_hop_by_hop(name: &str) -> bool {
    [
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authorization",
        "te",
        "upgrade",
    ]
    .iter()
    .any(|h| name.eq_ignore_ascii_case(h))
}

fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

/// `host:port`, `[v6]:port`; the host is returned as written (brackets
/// removed) for the policy to judge.
pub fn split_authority(a: &str, default_port: Option<u16>) -> Result<(String, u16), BadRequest> {
    // Userinfo stays in the host, so the policy refuses it (and the audit
    // trail records the attempt) rather than it failing here as a bad port.
    if let Some((userinfo, rest)) = a.rsplit_once('@') {
        let (host, port) = split_authority(rest, default_port)?;
        return Ok((format!("{userinfo}@{host}"), port));
    }
    let (host, port) = if let Some(rest) = a.strip_prefix('[') {
        match rest.split_once(']') {
            Some((h, "")) => (h, None),
            Some((h, p)) => match p.strip_prefix(':') {
                Some(p) => (h, Some(p)),
                None => return bad(format!("malformed authority {a:?}")),
            },
            None => return bad(format!("malformed authority {a:?}")),
        }
    } else {
        match a.rsplit_once(':') {
            Some((h, p)) if !h.contains(':') => (h, Some(p)),
            Some(_) => return bad(format!("an IPv6 address needs brackets: {a:?}")),
            None => (a, None),
        }
    };
    let port = match (port, default_port) {
        // Digits only: `u16::from_str` also takes a leading `+`, and the
        // authority goes upstream as the Host header as it was written.
        (Some(p), _) => Some(p)
            .filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|p| p.parse::<u16>().ok())
            .ok_or_else(|| BadRequest(format!("bad port in {a:?}")))?,
        (None, Some(d)) => d,
        (None, None) => return bad(format!("CONNECT needs host:port, got {a:?}")),
    };
    Ok((host.to_string(), port))
}

/// A list element without the optional white space (space, tab) around
/// it, and nothing more: `str::trim` also takes Unicode blanks such as
/// U+00A0 (httparse lets them through as bytes of obs-text), which would
/// make `chunked\u{a0}` chunked to the proxy and an unknown coding to
/// the server behind it.
fn ows_trim(t: &str) -> &str {
    t.trim_matches([' ', '\t'])
}

fn framing(headers: &[(String, String)], default: Body) -> Result<Body, BadRequest> {
    let te: Vec<&str> = headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("transfer-encoding"))
        .map(|(_, v)| v.as_str())
        .collect();
    let cl: Vec<&str> = headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .map(|(_, v)| v.as_str())
        .collect();
    if !te.is_empty() && !cl.is_empty() {
        return bad("both Transfer-Encoding and Content-Length");
    }
    if !te.is_empty() {
        let last = te.join(",");
        let chunked_last = last
            .rsplit(',')
            .next()
            .is_some_and(|t| ows_trim(t).eq_ignore_ascii_case("chunked"));
        return if chunked_last {
            Ok(Body::Chunked)
        } else {
            bad(format!("unsupported Transfer-Encoding {last:?}"))
        };
    }
    match cl.as_slice() {
        [] => Ok(default),
        // Digits only: `u64::from_str` also takes a leading `+`, which a
        // server behind the proxy may read otherwise.
        [first, rest @ ..] if rest.iter().all(|v| v == first) => first
            .bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| first.parse::<u64>().ok())
            .flatten()
            .map(Body::Length)
            .ok_or_else(|| BadRequest(format!("bad Content-Length {first:?}"))),
        _ => bad("conflicting Content-Length headers"),
    }
}

/// The size of the chunk a chunk-size line (with its CRLF) announces,
/// read by httparse. httparse takes a line with no digit as size 0 (the
/// last chunk), which would end the body early by the proxy's reading and
/// not by the server's: a line must start with a hex digit.
pub fn chunk_size(line: &[u8]) -> Result<u64, BadRequest> {
    let refused = || BadRequest(format!("bad chunk size line {}", show_line(line)));
    if !line.first().is_some_and(u8::is_ascii_hexdigit) {
        return Err(refused());
    }
    match httparse::parse_chunk_size(line) {
        Ok(httparse::Status::Complete((n, size))) if n == line.len() => Ok(size),
        _ => Err(refused()),
    }
}

/// Checks a chunked body's trailer section (up to and with its blank line)
/// as strictly as a head's header lines.
pub fn check_trailers(trailers: &[u8]) -> Result<(), BadRequest> {
    let mut slots = header_slots(trailers);
    match httparse::parse_headers(trailers, &mut slots) {
        Ok(httparse::Status::Complete((n, _))) if n == trailers.len() => Ok(()),
        Ok(_) => bad("trailers run past their blank line"),
        Err(e) => Err(refusal(trailers, e, |_| None)),
    }
}

/// A parsed response head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub status_line: String,
    pub headers: Vec<(String, String)>,
}

/// Reads a response head (without its final blank line) with httparse,
/// configured strictly; the status line is kept as upstream wrote it.
pub fn parse_response(head: &[u8]) -> Result<Response, BadRequest> {
    let buf = terminated(head)?;
    let mut slots = header_slots(&buf);
    let mut resp = httparse::Response::new(&mut slots);
    match strict().parse_response(&mut resp, &buf) {
        Ok(httparse::Status::Complete(n)) if n == buf.len() => {}
        Ok(httparse::Status::Complete(_)) => return bad("a blank line inside the head"),
        Ok(httparse::Status::Partial) if head_lines(head).next().is_none() => {
            return bad("empty response")
        }
        Ok(httparse::Status::Partial) => return bad("incomplete response head"),
        Err(e) => return Err(refusal(head, e, status_line_fault)),
    }
    let Some(status) = resp.code else {
        return bad("incomplete status line");
    };
    let first = head_lines(head).next().unwrap_or_default();
    Ok(Response {
        status,
        status_line: String::from_utf8_lossy(first).into_owned(),
        headers: headers(resp.headers)?,
    })
}

impl Response {
    /// How the body ends, given the request method it answers.
    pub fn body(&self, method: &str) -> Result<Body, BadRequest> {
        if method == "HEAD" || (100..200).contains(&self.status) || matches!(self.status, 204 | 304)
        {
            return Ok(Body::None);
        }
        framing(&self.headers, Body::UntilClose)
    }

    /// The head relayed to the client, without upstream's hop-by-hop
    /// headers; `close` tells the client this connection ends after it.
    pub fn client_head(&self, close: bool) -> Vec<u8> {
        let mut out = format!("{}\r\n", self.status_line);
        for (n, v) in &self.headers {
            if !is_hop_by_hop(n) {
                out.push_str(&format!("{n}: {v}\r\n"));
            }
        }
        if close {
            out.push_str("Connection: close\r\n");
        }
        out.push_str("\r\n");
        out.into_bytes()
    }
}

/// A complete response with a plain-text body, closing the connection.
pub fn plain_response(status: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}
