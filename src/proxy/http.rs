//! HTTP/1 request and response heads as a forward proxy needs them: the
//! target of a request (CONNECT authority or absolute URI), the head sent
//! upstream, and how each body is framed. Pure functions over bytes; the
//! server does the reading and writing.

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

/// Splits a head (without its final blank line) into lines.
fn lines(head: &[u8]) -> Result<Vec<&str>, BadRequest> {
    let text = std::str::from_utf8(head).map_err(|_| BadRequest("head is not UTF-8".into()))?;
    Ok(text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .filter(|l| !l.is_empty())
        .collect())
}

fn parse_headers(lines: &[&str]) -> Result<Vec<(String, String)>, BadRequest> {
    lines
        .iter()
        .map(|l| match l.split_once(':') {
            Some((n, v)) if !n.is_empty() && !n.contains([' ', '\t']) => {
                Ok((n.to_string(), v.trim().to_string()))
            }
            _ => bad(format!("malformed header line {l:?}")),
        })
        .collect()
}

pub fn parse_request(head: &[u8]) -> Result<Request, BadRequest> {
    let lines = lines(head)?;
    let Some((first, rest)) = lines.split_first() else {
        return bad("empty request");
    };
    let parts: Vec<&str> = first.split(' ').collect();
    let [method, target, version] = parts[..] else {
        return bad(format!("malformed request line {first:?}"));
    };
    if !matches!(version, "HTTP/1.1" | "HTTP/1.0") {
        return bad(format!("unsupported HTTP version {version:?}"));
    }
    Ok(Request {
        method: method.to_string(),
        target: target.to_string(),
        version: version.to_string(),
        headers: parse_headers(rest)?,
    })
}

impl Request {
    fn has_token(&self, name: &str, token: &str) -> bool {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .any(|(_, v)| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
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
    /// servers disagree on which wins (request smuggling).
    pub fn body(&self) -> Result<Body, BadRequest> {
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
        (Some(p), _) => p
            .parse::<u16>()
            .map_err(|_| BadRequest(format!("bad port in {a:?}")))?,
        (None, Some(d)) => d,
        (None, None) => return bad(format!("CONNECT needs host:port, got {a:?}")),
    };
    Ok((host.to_string(), port))
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
            .is_some_and(|t| t.trim().eq_ignore_ascii_case("chunked"));
        return if chunked_last {
            Ok(Body::Chunked)
        } else {
            bad(format!("unsupported Transfer-Encoding {last:?}"))
        };
    }
    match cl.as_slice() {
        [] => Ok(default),
        [first, rest @ ..] if rest.iter().all(|v| v == first) => first
            .parse::<u64>()
            .map(Body::Length)
            .map_err(|_| BadRequest(format!("bad Content-Length {first:?}"))),
        _ => bad("conflicting Content-Length headers"),
    }
}

/// A parsed response head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub status_line: String,
    pub headers: Vec<(String, String)>,
}

pub fn parse_response(head: &[u8]) -> Result<Response, BadRequest> {
    let lines = lines(head)?;
    let Some((first, rest)) = lines.split_first() else {
        return bad("empty response");
    };
    let status = first
        .strip_prefix("HTTP/1.")
        .and_then(|r| r.get(2..5))
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or_else(|| BadRequest(format!("malformed status line {first:?}")))?;
    Ok(Response {
        status,
        status_line: first.to_string(),
        headers: parse_headers(rest)?,
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
