//! The sandbox's filtering proxy end to end: the real binary
//! (`nerdr proxy-serve`), a real loopback DNS server that logs queries, a
//! real HTTP origin, raw HTTP and SOCKS5 clients and curl. Issue 9,
//! acceptance 4, and the bridge in a fresh network namespace.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, TcpStream};
use std::time::Duration;

use serde_json::json;

use crate::support::netfix::{read_response, DnsServer, Origin, ProxyProc};

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

mod audit;
mod framing;
mod policy;
mod socks;
