//! The sandbox's filtering proxy end to end: the real binary
//! (`nerdr proxy-serve`), a real loopback DNS server that logs queries, a
//! real HTTP origin, raw HTTP and SOCKS5 clients and curl. Issue 9,
//! acceptance 4, and the bridge in a fresh network namespace.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, TcpStream};
use std::process::Command;
use std::time::Duration;

use serde_json::json;

use crate::support::local::BIN;
use crate::support::netfix::{read_response, DnsServer, Origin, ProxyProc};
use crate::support::sysenv::skip;

const LO: Ipv4Addr = Ipv4Addr::LOCALHOST;

/// Two origins on loopback: `open` is named by an IP entry, `other` is
/// not; local services are otherwise closed, and `*` is allowed so that
/// only the deny rules and normalisation stand between a client and
/// `denied.test`.
struct World {
    dns: DnsServer,
    open: Origin,
    other: Origin,
    proxy: ProxyProc,
}

fn world() -> World {
    let dns = DnsServer::start(&[
        ("allowed.test", LO),
        ("a.wild.test", LO),
        ("denied.test", LO),
        ("x.denied.test", LO),
        ("both.test", LO),
        ("rebind.test", LO),
    ]);
    let open = Origin::start("127.0.0.1:0").unwrap();
    let other = Origin::start("127.0.0.1:0").unwrap();
    let network = json!({
        "allowedDomains": [format!("127.0.0.1:{}", open.addr.port()), "allowed.test", "*.wild.test", "both.test", "rebind.test"],
        "deniedDomains": ["denied.test", "*.denied.test", "both.test"],
        "allowLocalBinding": false,
    });
    let proxy = ProxyProc::start(network, dns.addr, None);
    World {
        dns,
        open,
        other,
        proxy,
    }
}

/// Sends `request` on a fresh connection; returns status and body.
fn send(w: &World, request: &str) -> (u16, String) {
    let mut s = w.proxy.connect();
    s.write_all(request.as_bytes()).unwrap();
    read_response(&mut BufReader::new(s))
}

fn connect_req(authority: &str) -> String {
    format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n")
}

fn get_req(url: &str) -> String {
    format!("GET {url} HTTP/1.1\r\nHost: ignored.test\r\n\r\n")
}

/// CONNECT, then one HTTP request through the tunnel.
fn tunnel_get(w: &World, authority: &str, path: &str) -> (u16, String) {
    let mut s = w.proxy.connect();
    s.write_all(connect_req(authority).as_bytes()).unwrap();
    let mut r = BufReader::new(s.try_clone().unwrap());
    let mut status = String::new();
    r.read_line(&mut status).unwrap();
    let mut blank = String::new();
    r.read_line(&mut blank).unwrap();
    assert_eq!(
        status, "HTTP/1.1 200 Connection established\r\n",
        "CONNECT {authority}"
    );
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
        .unwrap();
    read_response(&mut r)
}

fn assert_blocked(got: &(u16, String), host: &str, rule: &str) {
    assert_eq!(got.0, 403, "{host}: {got:?}");
    let first = got.1.lines().next().unwrap_or("");
    assert!(
        first.starts_with("Blocked by nerdr network policy: ") && first.contains(host),
        "{host}: first line {first:?}"
    );
    assert!(
        got.1.contains(&format!("rule: {rule}")),
        "{host}: want rule {rule:?} in {:?}",
        got.1
    );
}

#[test]
fn denied_and_unlisted_hosts_get_403_naming_them() {
    let w = world();
    let p = w.open.addr.port();
    assert_blocked(
        &send(&w, &connect_req(&format!("denied.test:{p}"))),
        "denied.test",
        "deniedDomains \"denied.test\"",
    );
    assert_blocked(
        &send(&w, &connect_req("unlisted.test:443")),
        "unlisted.test",
        "not in allowedDomains",
    );
    assert_blocked(
        &send(&w, &get_req(&format!("http://denied.test:{p}/x"))),
        "denied.test",
        "deniedDomains",
    );
    assert!(
        w.open.seen().is_empty(),
        "a refused request reached the origin: {:?}",
        w.open.seen()
    );
    let d = w.proxy.decisions_at_least(3);
    assert_eq!(d.len(), 3, "one decision per request: {d:?}");
    assert!(d.iter().all(|d| d["allowed"] == false), "{d:?}");
}

#[test]
fn deny_beats_allow_and_wildcards_match_subdomains_only() {
    let w = world();
    let p = w.open.addr.port();
    assert_blocked(
        &send(&w, &connect_req(&format!("both.test:{p}"))),
        "both.test",
        "deniedDomains \"both.test\"",
    );
    assert_blocked(
        &send(&w, &connect_req(&format!("x.denied.test:{p}"))),
        "x.denied.test",
        "deniedDomains \"*.denied.test\"",
    );
    assert_eq!(
        tunnel_get(&w, &format!("a.wild.test:{p}"), "/wild"),
        (200, "origin saw /wild".into())
    );
    assert_blocked(
        &send(&w, &connect_req(&format!("wild.test:{p}"))),
        "wild.test",
        "not in allowedDomains",
    );
    assert_blocked(
        &send(&w, &connect_req(&format!("evilwild.test:{p}"))),
        "evilwild.test",
        "not in allowedDomains",
    );
}

#[test]
fn authority_tricks_are_denied() {
    let w = world();
    let p = w.open.addr.port();
    let tricks = [
        (
            connect_req(&format!("allowed.test.evil.test:{p}")),
            "allowed.test.evil.test",
            "not in allowedDomains",
        ),
        (
            connect_req(&format!("denied.test.:{p}")),
            "denied.test.",
            "deniedDomains \"denied.test\"",
        ),
        (
            connect_req(&format!("DENIED.Test:{p}")),
            "DENIED.Test",
            "deniedDomains \"denied.test\"",
        ),
        (
            connect_req(&format!("allowed.test@denied.test:{p}")),
            "allowed.test@denied.test",
            "malformed host",
        ),
        (
            get_req(&format!("http://allowed.test@denied.test:{p}/")),
            "allowed.test@denied.test",
            "malformed host",
        ),
        (
            get_req(&format!("http://DENIED.TEST.:{p}/")),
            "DENIED.TEST.",
            "deniedDomains \"denied.test\"",
        ),
        (
            connect_req(&format!("denied%2etest:{p}")),
            "denied%2etest",
            "malformed host",
        ),
        (
            connect_req(&format!("127.1:{p}")),
            "127.1",
            "malformed host",
        ),
    ];
    for (req, host, rule) in &tricks {
        assert_blocked(&send(&w, req), host, rule);
    }
    assert!(
        w.open.seen().is_empty(),
        "a trick reached the origin: {:?}",
        w.open.seen()
    );

    // A kept-alive connection: the second request goes to a denied host.
    let mut s = w.proxy.connect();
    let mut r = BufReader::new(s.try_clone().unwrap());
    s.write_all(get_req(&format!("http://allowed.test:{p}/first")).as_bytes())
        .unwrap();
    assert_eq!(read_response(&mut r), (200, "origin saw /first".into()));
    s.write_all(get_req(&format!("http://denied.test:{p}/second")).as_bytes())
        .unwrap();
    assert_blocked(
        &read_response(&mut r),
        "denied.test",
        "deniedDomains \"denied.test\"",
    );
    assert_eq!(
        w.open.seen(),
        [format!("GET /first HTTP/1.1 host=allowed.test:{p}")]
    );
}

#[test]
fn allowed_name_resolving_to_loopback_is_denied() {
    let w = world();
    let q = w.other.addr.port();
    assert_blocked(
        &send(&w, &connect_req(&format!("rebind.test:{q}"))),
        "rebind.test",
        "resolves to private address 127.0.0.1",
    );
    assert_blocked(
        &send(&w, &get_req(&format!("http://rebind.test:{q}/"))),
        "rebind.test",
        "resolves to private address 127.0.0.1",
    );
    assert!(
        w.dns.asked().contains(&"rebind.test".to_string()),
        "the name was resolved: {:?}",
        w.dns.asked()
    );
    assert_eq!(
        *w.other.connections.lock().unwrap(),
        0,
        "the proxy connected anyway"
    );
}

#[test]
fn connect_to_a_denied_name_asks_no_dns() {
    let w = world();
    let p = w.open.addr.port();
    for host in [
        "denied.test",
        "x.denied.test",
        "both.test",
        "unlisted.test",
        "DENIED.test.",
    ] {
        assert_eq!(
            send(&w, &connect_req(&format!("{host}:{p}"))).0,
            403,
            "{host}"
        );
    }
    assert_eq!(
        w.dns.asked(),
        Vec::<String>::new(),
        "refused names reached DNS"
    );
    // The control: an allowed name does go through this DNS server.
    assert_eq!(tunnel_get(&w, &format!("allowed.test:{p}"), "/ok").0, 200);
    assert!(
        w.dns.asked().contains(&"allowed.test".to_string()),
        "{:?}",
        w.dns.asked()
    );
}

#[test]
fn loopback_server_is_reached_through_an_ip_entry_only() {
    let w = world();
    let (p, q) = (w.open.addr.port(), w.other.addr.port());
    assert_eq!(
        tunnel_get(&w, &format!("127.0.0.1:{p}"), "/tunnel"),
        (200, "origin saw /tunnel".into())
    );
    assert_eq!(
        send(&w, &get_req(&format!("http://127.0.0.1:{p}/plain"))),
        (200, "origin saw /plain".into())
    );
    assert_blocked(
        &send(&w, &connect_req(&format!("127.0.0.1:{q}"))),
        "127.0.0.1",
        "local services closed",
    );
    assert_blocked(
        &send(&w, &connect_req(&format!("localhost:{p}"))),
        "localhost",
        "local services closed",
    );
    assert_blocked(
        &send(&w, &connect_req(&format!("0.0.0.0:{p}"))),
        "0.0.0.0",
        "unspecified address",
    );
    // Two allowed connections (opened, closed) and three refusals.
    let d = w.proxy.decisions_at_least(7);
    let tunnel = d
        .iter()
        .find(|d| d["protocol"] == "http-connect" && d["phase"] == "closed")
        .unwrap();
    assert_eq!(tunnel["rule"], format!("allowedDomains \"127.0.0.1:{p}\""));
    assert!(
        tunnel["bytes_up"].as_u64().unwrap() > 0 && tunnel["bytes_down"].as_u64().unwrap() > 0,
        "{tunnel}"
    );
    let plain = d
        .iter()
        .find(|d| d["protocol"] == "http" && d["phase"] == "closed")
        .unwrap();
    assert!(
        plain["bytes_down"].as_u64().unwrap() >= "origin saw /plain".len() as u64,
        "{plain}"
    );
}

/// A SOCKS5 CONNECT with no authentication; returns the reply code and,
/// on success, the stream.
fn socks(w: &World, addr: &[u8], port: u16) -> (u8, TcpStream) {
    let mut s = w.proxy.connect();
    s.write_all(&[5, 1, 0]).unwrap();
    let mut m = [0u8; 2];
    s.read_exact(&mut m).unwrap();
    assert_eq!(m, [5, 0], "no-auth method");
    let mut req = vec![5, 1, 0];
    req.extend_from_slice(addr);
    req.extend_from_slice(&port.to_be_bytes());
    s.write_all(&req).unwrap();
    let mut head = [0u8; 4];
    s.read_exact(&mut head).unwrap();
    let rest = if head[3] == 4 { 18 } else { 6 };
    let mut tail = vec![0u8; rest];
    s.read_exact(&mut tail).unwrap();
    (head[1], s)
}

fn domain(name: &str) -> Vec<u8> {
    let mut v = vec![3, name.len() as u8];
    v.extend_from_slice(name.as_bytes());
    v
}

#[test]
fn socks5_connects_allowed_and_refuses_denied() {
    let w = world();
    let (p, q) = (w.open.addr.port(), w.other.addr.port());
    const NOT_ALLOWED: u8 = 2;
    let (code, mut s) = socks(&w, &domain("allowed.test"), p);
    assert_eq!(code, 0);
    s.write_all(b"GET /socks HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    assert_eq!(
        read_response(&mut BufReader::new(s)),
        (200, "origin saw /socks".into())
    );
    assert_eq!(socks(&w, &[1, 127, 0, 0, 1], p).0, 0, "IPv4 address type");
    assert_eq!(socks(&w, &domain("denied.test"), p).0, NOT_ALLOWED);
    assert_eq!(socks(&w, &domain("DENIED.test."), p).0, NOT_ALLOWED);
    assert_eq!(socks(&w, &domain("rebind.test"), q).0, NOT_ALLOWED);
    assert_eq!(
        socks(&w, &[1, 127, 0, 0, 1], q).0,
        NOT_ALLOWED,
        "unlisted loopback port"
    );
    let mut v6 = vec![4];
    v6.extend_from_slice(&std::net::Ipv6Addr::LOCALHOST.octets());
    assert_eq!(socks(&w, &v6, q).0, NOT_ALLOWED, "IPv6 address type");
    assert!(
        !w.dns.asked().contains(&"denied.test".to_string()),
        "{:?}",
        w.dns.asked()
    );
    let d = w.proxy.decisions_at_least(7);
    assert!(
        d.iter().filter(|d| d["protocol"] == "socks5").count() >= 7,
        "{d:?}"
    );

    // A real client: curl resolving through the proxy (socks5h).
    let out = Command::new("curl")
        .args([
            "-sS",
            "--max-time",
            "10",
            "-x",
            &format!("socks5h://{}", w.proxy.addr),
        ])
        .arg(format!("http://allowed.test:{p}/curl"))
        .output()
        .expect("curl runs");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "origin saw /curl",
        "{out:?}"
    );
}

#[test]
fn socks5_reaches_an_ipv6_loopback_server_named_by_an_entry() {
    let Ok(origin6) = Origin::start("[::1]:0") else {
        return skip("no IPv6 loopback on this machine");
    };
    let dns = DnsServer::start(&[]);
    let p = origin6.addr.port();
    let proxy = ProxyProc::start(
        json!({"allowedDomains": [format!("[::1]:{p}")], "allowLocalBinding": false}),
        dns.addr,
        None,
    );
    let w = World {
        dns,
        open: origin6,
        other: Origin::start("127.0.0.1:0").unwrap(),
        proxy,
    };
    let mut v6 = vec![4];
    v6.extend_from_slice(&std::net::Ipv6Addr::LOCALHOST.octets());
    let (code, mut s) = socks(&w, &v6, p);
    assert_eq!(code, 0);
    s.write_all(b"GET /v6 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    assert_eq!(
        read_response(&mut BufReader::new(s)),
        (200, "origin saw /v6".into())
    );
    assert_eq!(
        tunnel_get(&w, &format!("[::1]:{p}"), "/v6c"),
        (200, "origin saw /v6c".into())
    );
}

#[test]
fn curl_through_the_http_proxy() {
    let w = world();
    let p = w.open.addr.port();
    let curl = |url: String| {
        let out = Command::new("curl")
            .args([
                "-sS",
                "--max-time",
                "10",
                "-x",
                &format!("http://{}", w.proxy.addr),
            ])
            .arg(url)
            .output()
            .expect("curl runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(curl(format!("http://allowed.test:{p}/a")), "origin saw /a");
    assert!(curl(format!("http://denied.test:{p}/b"))
        .starts_with("Blocked by nerdr network policy: denied.test"));
}

/// The bridge inside a fresh network namespace (loopback only): a client
/// there reaches the origin only through bridge → Unix socket → proxy.
#[test]
fn bridge_carries_a_network_namespace_to_the_proxy() {
    let probe = Command::new("unshare").args(["-rn", "true"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        return skip("cannot create a network namespace (unshare -rn)");
    }
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("proxy.sock");
    let dns = DnsServer::start(&[("allowed.test", LO)]);
    let origin = Origin::start("127.0.0.1:0").unwrap();
    let p = origin.addr.port();
    let proxy = ProxyProc::start(
        json!({"allowedDomains": [format!("127.0.0.1:{p}"), "allowed.test"], "allowLocalBinding": false}),
        dns.addr,
        Some(&sock),
    );
    let script = format!(
        r#"ip link set lo up || exit 90
"$BIN" proxy-bridge --listen 127.0.0.1:3128 --to "$SOCK" & bridge=$!
for i in $(seq 200); do (exec 3<>/dev/tcp/127.0.0.1/3128) 2>/dev/null && break; sleep 0.05; done
echo "direct=$(curl -s --max-time 3 http://127.0.0.1:{p}/direct || echo refused)"
echo "proxied=$(curl -s --max-time 10 -x http://127.0.0.1:3128 http://allowed.test:{p}/bridged)"
echo "denied=$(curl -s --max-time 10 -x http://127.0.0.1:3128 http://127.0.0.1:9/ | head -n1)"
kill $bridge"#
    );
    let out = Command::new("unshare")
        .args(["-rn", "bash", "-c", &script])
        .env("BIN", BIN)
        .env("SOCK", &sock)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("direct=refused"),
        "the namespace reached the host directly: {text} {out:?}"
    );
    assert!(
        text.contains("proxied=origin saw /bridged"),
        "{text} {out:?}"
    );
    assert!(
        text.contains("denied=Blocked by nerdr network policy: 127.0.0.1:9"),
        "{text} {out:?}"
    );
    assert_eq!(
        origin.seen(),
        [format!("GET /bridged HTTP/1.1 host=allowed.test:{p}")]
    );
    let d = proxy.decisions_at_least(2);
    assert!(
        d.iter()
            .any(|d| d["host"] == "allowed.test" && d["allowed"] == true),
        "{d:?}"
    );
}

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
