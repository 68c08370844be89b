//! SOCKS5, curl through the HTTP proxy, and the bridge carrying a
//! network namespace to the proxy.

use super::*;

use std::process::Command;

use crate::support::local::BIN;
use crate::support::sysenv::skip;

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
