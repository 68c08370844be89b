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
