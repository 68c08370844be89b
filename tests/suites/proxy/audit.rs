//! What the proxy reports: a line when a connection opens and when it
//! closes, connections open at exit, the connection cap, idle timeouts,
//! refusals merged into counted lines.

use super::*;

/// Opens a CONNECT tunnel and checks its 200; the stream and a reader.
fn open_tunnel(proxy: &ProxyProc, authority: &str) -> (TcpStream, BufReader<TcpStream>) {
    let mut s = proxy.connect();
    s.write_all(connect_req(authority).as_bytes()).unwrap();
    let mut r = BufReader::new(s.try_clone().unwrap());
    let mut status = String::new();
    r.read_line(&mut status).unwrap();
    assert_eq!(status, "HTTP/1.1 200 Connection established\r\n");
    let mut blank = String::new();
    r.read_line(&mut blank).unwrap();
    (s, r)
}

fn with_phase<'a>(d: &'a [serde_json::Value], phase: &str) -> Vec<&'a serde_json::Value> {
    d.iter().filter(|d| d["phase"] == phase).collect()
}

/// Review finding 9: an allowed tunnel is in the trail while it is open,
/// not only once it closes, and its close carries the bytes.
#[test]
fn an_allowed_connection_is_recorded_when_it_opens_and_when_it_closes() {
    let w = world();
    let p = w.open.addr.port();
    let (mut s, mut r) = open_tunnel(&w.proxy, &format!("allowed.test:{p}"));
    s.write_all(b"GET /held HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    assert_eq!(read_response(&mut r), (200, "origin saw /held".into()));
    // Still open: the opened line is there already.
    let d = w.proxy.decisions_at_least(1);
    let opened = with_phase(&d, "opened");
    assert_eq!(opened.len(), 1, "{d:?}");
    assert_eq!(
        (&opened[0]["host"], opened[0]["allowed"].as_bool()),
        (&json!("allowed.test"), Some(true))
    );
    assert!(with_phase(&d, "closed").is_empty(), "{d:?}");
    drop((s, r));
    let d = w.proxy.decisions_at_least(2);
    let closed = with_phase(&d, "closed");
    assert_eq!(closed.len(), 1, "{d:?}");
    assert_eq!(closed[0]["id"], opened[0]["id"], "the pair shares an id");
    assert!(closed[0]["bytes_down"].as_u64().unwrap() > 0, "{d:?}");
}

/// Review finding 9: at the end, a tunnel still open is written as open
/// at exit instead of being lost.
#[test]
fn a_tunnel_still_open_at_the_end_is_written_as_open_at_exit() {
    let mut w = world();
    let p = w.open.addr.port();
    let held = open_tunnel(&w.proxy, &format!("allowed.test:{p}"));
    w.proxy.decisions_at_least(1);
    let d = w.proxy.stop();
    let at_exit = with_phase(&d, "open-at-exit");
    assert_eq!(at_exit.len(), 1, "{d:?}");
    assert_eq!(at_exit[0]["host"], "allowed.test");
    assert_eq!(at_exit[0]["id"], with_phase(&d, "opened")[0]["id"]);
    drop(held);
}

/// Review finding 10: beyond the connection limit a client is told so
/// (503, SOCKS general failure), the trail gets one line for a burst, and
/// a freed slot serves again.
#[test]
fn connections_over_the_limit_are_refused_with_503_and_one_line() {
    let dns = DnsServer::start(&[]);
    let origin = Origin::start("127.0.0.1:0").unwrap();
    let p = origin.addr.port();
    let proxy = ProxyProc::start_with(
        json!({"allowedDomains": [format!("127.0.0.1:{p}")], "allowLocalBinding": false}),
        dns.addr,
        None,
        &["--max-connections", "2"],
    );
    let authority = format!("127.0.0.1:{p}");
    let first = open_tunnel(&proxy, &authority);
    let second = open_tunnel(&proxy, &authority);
    for _ in 0..5 {
        let mut s = proxy.connect();
        s.write_all(connect_req(&authority).as_bytes()).unwrap();
        let (code, body) = read_response(&mut BufReader::new(s));
        assert_eq!(code, 503, "{body}");
        assert!(body.contains("too many open connections (2)"), "{body}");
    }
    // SOCKS5: general failure (1).
    let mut s = proxy.connect();
    s.write_all(&[5, 1, 0]).unwrap();
    let mut m = [0u8; 2];
    s.read_exact(&mut m).unwrap();
    let mut req = vec![5, 1, 0];
    req.extend_from_slice(&[1, 127, 0, 0, 1]);
    req.extend_from_slice(&p.to_be_bytes());
    s.write_all(&req).unwrap();
    let mut reply = [0u8; 10];
    s.read_exact(&mut reply).unwrap();
    assert_eq!(reply[1], 1, "SOCKS general failure: {reply:?}");
    // Six refusals of one host, port and rule: a line at once, the other
    // five merged into one when the window ends (two if the burst took
    // longer than a window).
    let counts = || -> Vec<u64> {
        let d = proxy.decisions.lock().unwrap();
        let refused = with_phase(&d, "refused");
        assert!(
            refused
                .iter()
                .all(|d| d["rule"] == "connection limit (2)" && d["host"] == "127.0.0.1"),
            "{d:?}"
        );
        refused
            .iter()
            .map(|d| d["count"].as_u64().unwrap())
            .collect()
    };
    crate::support::wait_until("six counted refusals", Duration::from_secs(10), || {
        counts().iter().sum::<u64>() == 6
    });
    let c = counts();
    assert!(c[0] == 1 && c.len() <= 3, "{c:?}");
    assert_eq!(origin.seen().len(), 0, "{:?}", origin.seen());
    // A freed slot serves again (once its task has ended: poll).
    drop(first);
    let mut again = None;
    crate::support::wait_until("a free slot", Duration::from_secs(10), || {
        let mut s = proxy.connect();
        s.write_all(connect_req(&authority).as_bytes()).unwrap();
        let mut r = BufReader::new(s.try_clone().unwrap());
        let mut status = String::new();
        let _ = r.read_line(&mut status);
        if status != "HTTP/1.1 200 Connection established\r\n" {
            return false;
        }
        let mut blank = String::new();
        r.read_line(&mut blank).unwrap();
        again = Some((s, r));
        true
    });
    let (mut s, mut r) = again.unwrap();
    s.write_all(b"GET /again HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    assert_eq!(read_response(&mut r), (200, "origin saw /again".into()));
    drop(second);
}

/// A loopback server that accepts and then says nothing.
fn silent_server() -> (std::net::TcpListener, u16) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    (l, port)
}

/// Review finding 10: a tunnel or an absolute-URI exchange with no byte
/// either way for the idle time is closed, and its close says why.
#[test]
fn idle_tunnels_and_exchanges_are_closed() {
    let dns = DnsServer::start(&[]);
    let (silent, q) = silent_server();
    let origin = Origin::start("127.0.0.1:0").unwrap();
    let p = origin.addr.port();
    let proxy = ProxyProc::start_with(
        json!({"allowLocalBinding": true}),
        dns.addr,
        None,
        &["--idle-timeout-ms", "1000"],
    );
    let t0 = std::time::Instant::now();
    // A tunnel that carries bytes now and then is not idle...
    let (mut s, mut r) = open_tunnel(&proxy, &format!("127.0.0.1:{p}"));
    for i in 0..4 {
        std::thread::sleep(std::time::Duration::from_millis(300));
        s.write_all(format!("GET /{i} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
            .unwrap();
        assert_eq!(read_response(&mut r), (200, format!("origin saw /{i}")));
    }
    // ...until it stops: then the proxy closes it.
    let mut rest = Vec::new();
    r.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty(), "{rest:?}");
    // An exchange whose origin never answers.
    let mut e = proxy.connect();
    e.write_all(get_req(&format!("http://127.0.0.1:{q}/silent")).as_bytes())
        .unwrap();
    let mut got = Vec::new();
    let _ = e.read_to_end(&mut got);
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(9),
        "closed by the idle timeout, not the client's: {:?}",
        t0.elapsed()
    );
    let d = proxy.decisions_at_least(4);
    let closed = with_phase(&d, "closed");
    assert_eq!(closed.len(), 2, "{d:?}");
    assert!(
        closed
            .iter()
            .all(|c| c["why"].as_str().unwrap_or("").contains("idle")),
        "{d:?}"
    );
    drop(silent);
}

/// Review finding 10: a loop of refused requests costs a line a second,
/// with the count, not a line a request.
#[test]
fn a_refusal_loop_is_merged_into_counted_lines() {
    let w = world();
    let p = w.open.addr.port();
    let t0 = std::time::Instant::now();
    for _ in 0..100 {
        assert_eq!(send(&w, &connect_req(&format!("denied.test:{p}"))).0, 403);
    }
    assert_eq!(send(&w, &connect_req("unlisted.test:443")).0, 403);
    let mut w = w;
    let d = w.proxy.stop();
    let denied: Vec<_> = d.iter().filter(|d| d["host"] == "denied.test").collect();
    // A line at once, then one per second the loop lasted.
    let most = 2 + t0.elapsed().as_secs() as usize;
    assert!(denied.len() <= most, "{} lines: {denied:?}", denied.len());
    assert_eq!(
        denied
            .iter()
            .map(|d| d["count"].as_u64().unwrap())
            .sum::<u64>(),
        100,
        "{denied:?}"
    );
    assert_eq!(
        d.iter().filter(|d| d["host"] == "unlisted.test").count(),
        1,
        "another host is not merged: {d:?}"
    );
}
