//! The policy through the real proxy: 403s naming the host, deny over
//! allow, wildcards, authority tricks, names resolving to loopback, no DNS
//! for a denied name, loopback only through an IP entry.

use super::*;

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
