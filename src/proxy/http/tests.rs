use super::*;

fn req(text: &str) -> Request {
    parse_request(text.as_bytes()).unwrap()
}

#[test]
fn targets_are_read_from_connect_and_absolute_urls() {
    #[rustfmt::skip]
    let table: &[(&str, Result<Target, &str>)] = &[
        ("CONNECT example.com:443 HTTP/1.1", Ok(Target::Tunnel { host: "example.com".into(), port: 443 })),
        ("CONNECT [::1]:8443 HTTP/1.1", Ok(Target::Tunnel { host: "::1".into(), port: 8443 })),
        ("CONNECT user@evil.test:443 HTTP/1.1", Ok(Target::Tunnel { host: "user@evil.test".into(), port: 443 })),
        ("CONNECT user:pw@evil.test:443 HTTP/1.1", Ok(Target::Tunnel { host: "user:pw@evil.test".into(), port: 443 })),
        ("GET http://a:b@evil.test/ HTTP/1.1", Ok(Target::Forward { host: "a:b@evil.test".into(), port: 80, authority: "a:b@evil.test".into(), path: "/".into() })),
        ("CONNECT example.com HTTP/1.1", Err("CONNECT needs host:port")),
        ("CONNECT ::1:443 HTTP/1.1", Err("needs brackets")),
        ("GET http://example.com/a?b HTTP/1.1", Ok(Target::Forward { host: "example.com".into(), port: 80, authority: "example.com".into(), path: "/a?b".into() })),
        ("GET HTTP://Example.com:8080 HTTP/1.1", Ok(Target::Forward { host: "Example.com".into(), port: 8080, authority: "Example.com:8080".into(), path: "/".into() })),
        ("GET http://allowed.test@evil.test/ HTTP/1.1", Ok(Target::Forward { host: "allowed.test@evil.test".into(), port: 80, authority: "allowed.test@evil.test".into(), path: "/".into() })),
        ("GET http://[::1]:81/x HTTP/1.1", Ok(Target::Forward { host: "::1".into(), port: 81, authority: "[::1]:81".into(), path: "/x".into() })),
        ("GET http://example.com?q HTTP/1.1", Ok(Target::Forward { host: "example.com".into(), port: 80, authority: "example.com".into(), path: "/?q".into() })),
        ("GET /relative HTTP/1.1", Err("absolute http:// URL")),
        ("GET https://example.com/ HTTP/1.1", Err("through CONNECT")),
        ("GET http://example.com:99999/ HTTP/1.1", Err("bad port")),
        ("CONNECT example.com:+443 HTTP/1.1", Err("bad port")),
        ("GET http://example.com:+80/ HTTP/1.1", Err("bad port")),
        ("GET http://example.com:/ HTTP/1.1", Err("bad port")),
        ("CONNECT example.com:0443 HTTP/1.1", Ok(Target::Tunnel { host: "example.com".into(), port: 443 })),
    ];
    for (line, want) in table {
        let got = req(&format!("{line}\r\nHost: x\r\n")).target();
        match (want, &got) {
            (Ok(w), Ok(g)) if w == g => {}
            (Err(w), Err(BadRequest(g))) if g.contains(w) => {}
            _ => panic!("{line}: want {want:?}, got {got:?}"),
        }
    }
}

#[test]
fn malformed_heads_are_refused() {
    for head in [
        "",
        "GET http://a/ HTTP/2\r\n",
        "GET  http://a/ HTTP/1.1\r\n",
        "GET http://a/ HTTP/1.1\r\nno colon\r\n",
        "GET http://a/ HTTP/1.1\r\nBad Name: x\r\n",
    ] {
        assert!(parse_request(head.as_bytes()).is_err(), "{head:?}");
    }
}

#[test]
fn bodies_are_framed() {
    #[rustfmt::skip]
    let table: &[(&str, Result<Body, ()>)] = &[
        ("", Ok(Body::None)),
        ("Content-Length: 12\r\n", Ok(Body::Length(12))),
        ("Content-Length: 12\r\nContent-Length: 12\r\n", Ok(Body::Length(12))),
        ("Content-Length: 12\r\nContent-Length: 13\r\n", Err(())),
        ("Content-Length: -1\r\n", Err(())),
        ("Transfer-Encoding: chunked\r\n", Ok(Body::Chunked)),
        ("Transfer-Encoding: gzip, chunked\r\n", Ok(Body::Chunked)),
        ("Transfer-Encoding: chunked, gzip\r\n", Err(())),
        ("Transfer-Encoding: chunked\r\nContent-Length: 3\r\n", Err(())),
    ];
    for (headers, want) in table {
        let got = req(&format!("POST http://a/ HTTP/1.1\r\n{headers}"))
            .body()
            .map_err(|_| ());
        assert_eq!(&got, want, "{headers:?}");
    }
    let resp = |s: &str| parse_response(s.as_bytes()).unwrap();
    assert_eq!(
        resp("HTTP/1.1 200 OK\r\n").body("GET"),
        Ok(Body::UntilClose)
    );
    assert_eq!(
        resp("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n").body("HEAD"),
        Ok(Body::None)
    );
    assert_eq!(
        resp("HTTP/1.1 204 No Content\r\n").body("GET"),
        Ok(Body::None)
    );
    assert_eq!(
        resp("HTTP/1.1 304 Not Modified\r\n").body("GET"),
        Ok(Body::None)
    );
    assert_eq!(
        resp("HTTP/1.0 200 OK\r\nContent-Length: 5\r\n").body("GET"),
        Ok(Body::Length(5))
    );
}

#[test]
fn keep_alive_follows_version_and_connection() {
    assert!(req("GET http://a/ HTTP/1.1\r\n").keep_alive());
    assert!(!req("GET http://a/ HTTP/1.1\r\nConnection: close\r\n").keep_alive());
    assert!(!req("GET http://a/ HTTP/1.1\r\nProxy-Connection: close\r\n").keep_alive());
    assert!(!req("GET http://a/ HTTP/1.0\r\n").keep_alive());
    assert!(req("GET http://a/ HTTP/1.0\r\nConnection: Keep-Alive\r\n").keep_alive());
}

#[test]
fn upstream_head_drops_proxy_headers_and_sets_host() {
    let r = req("GET http://a.test/x HTTP/1.1\r\nHost: evil.test\r\nProxy-Authorization: secret\r\nProxy-Connection: keep-alive\r\nExpect: 100-continue\r\nAccept: */*\r\n");
    let head = String::from_utf8(r.upstream_head("a.test", "/x")).unwrap();
    assert_eq!(
        head,
        "GET /x HTTP/1.1\r\nHost: a.test\r\nAccept: */*\r\nConnection: close\r\n\r\n"
    );
}

/// What becomes of a request head: its body framing, or the refusal
/// (a fragment of the 400 text).
fn verdict(head: &[u8]) -> Result<Body, String> {
    parse_request(head)
        .and_then(|r| r.body())
        .map_err(|BadRequest(why)| why)
}

#[test]
fn request_smuggling_heads_get_one_framing_or_a_refusal() {
    #[rustfmt::skip]
    let table: &[(&str, &[u8], Result<Body, &str>)] = &[
        ("a length alone frames the body",
            b"POST http://a/ HTTP/1.1\r\nContent-Length: 5\r\n", Ok(Body::Length(5))),
        ("a length with blanks around it is that length",
            b"POST http://a/ HTTP/1.1\r\nContent-Length:   5  \r\n", Ok(Body::Length(5))),
        ("two equal lengths are one length",
            b"POST http://a/ HTTP/1.1\r\nContent-Length: 5\r\ncontent-length: 5\r\n", Ok(Body::Length(5))),
        ("two lengths that differ are refused",
            b"POST http://a/ HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n", Err("conflicting Content-Length")),
        ("a length written as a list is refused",
            b"POST http://a/ HTTP/1.1\r\nContent-Length: 5, 5\r\n", Err("bad Content-Length")),
        ("a negative length is refused",
            b"POST http://a/ HTTP/1.1\r\nContent-Length: -1\r\n", Err("bad Content-Length")),
        ("a hexadecimal length is refused",
            b"POST http://a/ HTTP/1.1\r\nContent-Length: 0x5\r\n", Err("bad Content-Length")),
        ("a length past 64 bits is refused",
            b"POST http://a/ HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n", Err("bad Content-Length")),
        ("an empty length is refused",
            b"POST http://a/ HTTP/1.1\r\nContent-Length:\r\n", Err("bad Content-Length")),
        ("chunked framing is read in any case",
            b"POST http://a/ HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n", Ok(Body::Chunked)),
        ("chunked last over two headers is chunked",
            b"POST http://a/ HTTP/1.1\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n", Ok(Body::Chunked)),
        ("chunked not last is refused",
            b"POST http://a/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n", Err("unsupported Transfer-Encoding")),
        ("a trailing empty coding is refused",
            b"POST http://a/ HTTP/1.1\r\nTransfer-Encoding: chunked,\r\n", Err("unsupported Transfer-Encoding")),
        ("a coding that only contains chunked is refused",
            b"POST http://a/ HTTP/1.1\r\nTransfer-Encoding: xchunked\r\n", Err("unsupported Transfer-Encoding")),
        ("chunked with a Unicode blank after it is refused",
            "POST http://a/ HTTP/1.1\r\nTransfer-Encoding: chunked\u{a0}\r\n".as_bytes(), Err("unsupported Transfer-Encoding")),
        ("chunked with a Unicode blank before it is refused",
            "POST http://a/ HTTP/1.1\r\nTransfer-Encoding: gzip,\u{2003}chunked\r\n".as_bytes(), Err("unsupported Transfer-Encoding")),
        ("chunked with blanks and tabs around it in a list is chunked",
            b"POST http://a/ HTTP/1.1\r\nTransfer-Encoding: gzip ,\t chunked\r\n", Ok(Body::Chunked)),
        ("a Transfer-Encoding in an HTTP/1.0 request is refused",
            b"POST http://a/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n", Err("HTTP/1.0")),
        ("a length in an HTTP/1.0 request frames its body",
            b"POST http://a/ HTTP/1.0\r\nContent-Length: 2\r\n", Ok(Body::Length(2))),
        ("identity alone is refused",
            b"POST http://a/ HTTP/1.1\r\nTransfer-Encoding: identity\r\n", Err("unsupported Transfer-Encoding")),
        ("both framings are refused",
            b"POST http://a/ HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n", Err("both Transfer-Encoding and Content-Length")),
        ("both framings are refused whatever the order and case",
            b"POST http://a/ HTTP/1.1\r\ntransfer-encoding: chunked\r\ncontent-LENGTH: 0\r\n", Err("both Transfer-Encoding and Content-Length")),
        ("a space before the colon is refused",
            b"POST http://a/ HTTP/1.1\r\nContent-Length : 5\r\n", Err("malformed header line")),
        ("a tab before the colon is refused",
            b"POST http://a/ HTTP/1.1\r\nTransfer-Encoding\t: chunked\r\n", Err("malformed header line")),
        ("a header line folded onto the next is refused",
            b"POST http://a/ HTTP/1.1\r\nTransfer-Encoding: gzip,\r\n chunked\r\n", Err("malformed header line")),
        ("a first header line starting with a blank is refused",
            b"POST http://a/ HTTP/1.1\r\n Transfer-Encoding: chunked\r\n", Err("malformed header line")),
        ("a header line without a colon is refused",
            b"POST http://a/ HTTP/1.1\r\nTransfer-Encoding chunked\r\n", Err("malformed header line")),
        ("an empty header name is refused",
            b"POST http://a/ HTTP/1.1\r\n: chunked\r\n", Err("malformed header line")),
        ("a header name with a space is refused",
            b"POST http://a/ HTTP/1.1\r\nTransfer Encoding: chunked\r\n", Err("malformed header line")),
        // Stricter than the hand-written tokenizer, which passed these on
        // (the first read `+5` as 5; the bare CR hid a second framing).
        ("a signed length is refused",
            b"POST http://a/ HTTP/1.1\r\nContent-Length: +5\r\n", Err("bad Content-Length")),
        ("a header name with a delimiter is refused",
            b"POST http://a/ HTTP/1.1\r\nContent(Length): 5\r\n", Err("malformed header line")),
        ("a header name with a control byte is refused",
            b"POST http://a/ HTTP/1.1\r\nContent-Length\x00: 5\r\n", Err("malformed header line")),
        ("a header name outside ASCII is refused",
            "POST http://a/ HTTP/1.1\r\nÜber: 5\r\n".as_bytes(), Err("malformed header line")),
        ("a bare CR inside a header value is refused",
            b"POST http://a/ HTTP/1.1\r\nX: a\rTransfer-Encoding: chunked\r\n", Err("malformed header line")),
        ("a NUL inside a header value is refused",
            b"POST http://a/ HTTP/1.1\r\nX: a\x00b\r\n", Err("malformed header line")),
        // As before.
        ("a header value that is not UTF-8 is refused",
            b"POST http://a/ HTTP/1.1\r\nX: \xff\r\n", Err("not UTF-8")),
        ("bare LF line ends are read as CRLF",
            b"POST http://a/ HTTP/1.1\nContent-Length: 3\n", Ok(Body::Length(3))),
        ("two spaces in the request line are refused",
            b"POST  http://a/ HTTP/1.1\r\n", Err("malformed request line")),
        ("a tab in the request line is refused",
            b"POST\thttp://a/ HTTP/1.1\r\n", Err("malformed request line")),
        ("a blank after the version is refused",
            b"POST http://a/ HTTP/1.1 \r\n", Err("malformed request line")),
        ("a request line without a version is refused",
            b"POST http://a/\r\n", Err("malformed request line")),
        ("a version other than 1.0 or 1.1 is refused",
            b"POST http://a/ HTTP/1.2\r\n", Err("unsupported HTTP version")),
        ("a lower-case version is refused",
            b"POST http://a/ http/1.1\r\n", Err("unsupported HTTP version")),
    ];
    let wrong: Vec<String> = table
        .iter()
        .filter_map(|(sentence, head, want)| {
            let got = verdict(head);
            match (want, &got) {
                (Ok(w), Ok(g)) if w == g => None,
                (Err(w), Err(g)) if g.contains(w) => None,
                _ => Some(format!("{sentence}: want {want:?}, got {got:?}")),
            }
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn response_heads_get_one_framing_or_a_refusal() {
    /// A sentence, the head, the method answered and the verdict.
    type Row<'a> = (&'a str, &'a [u8], &'a str, Result<Body, &'a str>);
    #[rustfmt::skip]
    let table: &[Row] = &[
        ("a length frames a response",
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n", "GET", Ok(Body::Length(5))),
        ("a status line without a reason is read",
            b"HTTP/1.1 200\r\nContent-Length: 5\r\n", "GET", Ok(Body::Length(5))),
        ("a response without framing runs until close",
            b"HTTP/1.1 200 OK\r\n", "GET", Ok(Body::UntilClose)),
        ("both framings in a response are refused",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n", "GET", Err("both Transfer-Encoding and Content-Length")),
        ("chunked with a Unicode blank in a response is refused",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\u{85}\r\n".as_bytes(), "GET", Err("unsupported Transfer-Encoding")),
        ("two lengths that differ in a response are refused",
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 50\r\n", "GET", Err("conflicting Content-Length")),
        ("a response to HEAD has no body whatever its framing",
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n", "HEAD", Ok(Body::None)),
        ("a space before the colon in a response is refused",
            b"HTTP/1.1 200 OK\r\nContent-Length : 5\r\n", "GET", Err("malformed header line")),
        ("a folded header line in a response is refused",
            b"HTTP/1.1 200 OK\r\nX: a\r\n\tb\r\n", "GET", Err("malformed header line")),
        ("two spaces in a status line are refused",
            b"HTTP/1.1  200 OK\r\n", "GET", Err("malformed status line")),
        // Stricter than the hand-written tokenizer, which read these as 200.
        ("a four-digit status is refused",
            b"HTTP/1.1 2000 OK\r\n", "GET", Err("malformed status line")),
        ("a version other than 1.0 or 1.1 in a response is refused",
            b"HTTP/1.2 200 OK\r\n", "GET", Err("malformed status line")),
    ];
    let wrong: Vec<String> = table
        .iter()
        .filter_map(|(sentence, head, method, want)| {
            let got = parse_response(head)
                .and_then(|r| r.body(method))
                .map_err(|BadRequest(why)| why);
            match (want, &got) {
                (Ok(w), Ok(g)) if w == g => None,
                (Err(w), Err(g)) if g.contains(w) => None,
                _ => Some(format!("{sentence}: want {want:?}, got {got:?}")),
            }
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_status_line_is_relayed_as_upstream_wrote_it() {
    let r =
        parse_response(b"HTTP/1.0 404 Not  Found\r\nX-A: 1\r\nConnection: keep-alive\r\n").unwrap();
    assert_eq!(
        (r.status, r.status_line.as_str()),
        (404, "HTTP/1.0 404 Not  Found")
    );
    assert_eq!(
        String::from_utf8(r.client_head(true)).unwrap(),
        "HTTP/1.0 404 Not  Found\r\nX-A: 1\r\nConnection: close\r\n\r\n"
    );
}

#[test]
fn a_refusal_names_the_line_and_what_is_wrong_with_it() {
    let why = |head: &[u8]| parse_request(head).unwrap_err().0;
    assert_eq!(
        why(b"POST http://a/ HTTP/1.1\r\nAccept: */*\r\nContent-Length : 5\r\n"),
        "malformed header line \"Content-Length : 5\": invalid header name"
    );
    assert_eq!(
        why(b"POST http://a/ HTTP/1.1\r\nX: a\r\n b\r\n"),
        "malformed header line \" b\": invalid header name"
    );
    assert_eq!(
        why(b"GET http://a/ HTTP/1.1\r\nX: a\x01\r\n"),
        "malformed header line \"X: a\\u{1}\": invalid header value"
    );
    assert_eq!(
        why(b"GET  http://a/ HTTP/1.1\r\n"),
        "malformed request line \"GET  http://a/ HTTP/1.1\": invalid token"
    );
    assert_eq!(
        why(b"GET http://a/ HTTP/3\r\n"),
        "unsupported HTTP version in request line \"GET http://a/ HTTP/3\""
    );
    assert_eq!(why(b""), "empty request");
    assert_eq!(
        parse_response(b"HTTP/1.1 20 OK\r\n").unwrap_err().0,
        "malformed status line \"HTTP/1.1 20 OK\": invalid response status"
    );
}

#[test]
fn chunk_size_lines_are_read_strictly() {
    #[rustfmt::skip]
    let table: &[(&str, &[u8], Result<u64, ()>)] = &[
        ("a hex size is that many bytes", b"1A\r\n", Ok(26)),
        ("lower-case hex is read", b"1a\r\n", Ok(26)),
        ("an extension is skipped", b"4;name=value\r\n", Ok(4)),
        ("a blank before an extension is skipped", b"4 ;name\r\n", Ok(4)),
        ("the last chunk is size 0", b"0\r\n", Ok(0)),
        ("a line with no size is refused", b"\r\n", Err(())),
        ("an extension with no size is refused", b";name\r\n", Err(())),
        ("a size that is not hex is refused", b"zz\r\n", Err(())),
        ("a size with a 0x prefix is refused", b"0x4\r\n", Err(())),
        ("a negative size is refused", b"-4\r\n", Err(())),
        ("a size past 64 bits is refused", b"10000000000000000\r\n", Err(())),
        ("two sizes on a line are refused", b"4 5\r\n", Err(())),
        ("a line not ended by LF is refused", b"4\r", Err(())),
        // Stricter than the hand-written reading, which took these.
        ("a signed size is refused", b"+4\r\n", Err(())),
        ("a blank before the size is refused", b" 4\r\n", Err(())),
        ("a bare LF after the size is refused", b"4\n", Err(())),
    ];
    let wrong: Vec<String> = table
        .iter()
        .filter_map(|(sentence, line, want)| {
            let got = chunk_size(line).map_err(|_| ());
            (&got != want).then(|| format!("{sentence}: want {want:?}, got {got:?}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn trailers_are_checked_as_header_lines() {
    assert_eq!(check_trailers(b"\r\n"), Ok(()));
    assert_eq!(
        check_trailers(b"Expires: never\r\nX-Sum: 1\r\n\r\n"),
        Ok(())
    );
    for bad in [
        &b"Bad Name: x\r\n\r\n"[..],
        b"X: a\r\n b\r\n\r\n",
        b"X: a\rb\r\n\r\n",
        b"X : a\r\n\r\n",
    ] {
        assert!(
            check_trailers(bad).is_err(),
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
}
