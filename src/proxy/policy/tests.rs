//! Every rule of the policy, one table row each.

use super::*;

fn entries(list: &[&str]) -> Vec<Entry> {
    list.iter().map(|t| Entry::parse(t).unwrap()).collect()
}

fn rules(allowed: &[&str], denied: &[&str]) -> NetRules {
    NetRules {
        allowed: entries(allowed),
        denied: entries(denied),
        ..NetRules::default()
    }
}

fn preset(text: &str) -> PresetHost {
    PresetHost {
        entry: Entry::parse(text).unwrap(),
        source: "cargo: ~/.cargo/config.toml".into(),
    }
}

/// Short name of a verdict's rule, for the tables.
fn outcome(v: &Verdict) -> String {
    match v {
        Verdict::Allow { rule, .. } => format!("allow {rule}"),
        Verdict::Deny(r) => format!("deny {}", r.rule),
        Verdict::Ask { refusal, .. } => format!("ask {}", refusal.rule),
    }
}

#[test]
fn decisions_follow_the_table() {
    let base = rules(
        &[
            "example.com",
            "*.wild.test",
            "api.ported.test:8443",
            "93.184.216.34",
            "[2606:4700::1111]:443",
            "10.1.2.3:8080",
            "allowed.test",
            "both.test",
            "*.both.test",
        ],
        &["both.test", "bad.wild.test", "*.both.test"],
    );
    let mut local_closed = base.clone();
    local_closed.allow_local_binding = false;
    local_closed.allow_local_ports = vec![5432];
    local_closed
        .allowed
        .push(Entry::parse("127.0.0.1:7000").unwrap());
    let mut nerdr_ports = base.clone();
    nerdr_ports.closed_local_ports = vec![3128];
    nerdr_ports.allowed.push(Entry::parse("localhost").unwrap());
    let everything = rules(&["*"], &[]);
    let deny_all = rules(&["*", "127.0.0.1", "10.0.0.1"], &["*"]);
    let localhost_only = NetRules {
        allow_local_binding: false,
        ..rules(&["localhost"], &[])
    };
    let with_preset = NetRules {
        presets: vec![preset("index.crates.io"), preset("static.crates.io")],
        ..rules(&[], &["static.crates.io"])
    };

    #[rustfmt::skip]
    let table: &[(&str, &NetRules, &str, u16, &str)] = &[
        // exact names, case, trailing dot
        ("exact name", &base, "example.com", 443, "allow allowedDomains \"example.com\""),
        ("upper case is the same name", &base, "EXAMPLE.com", 443, "allow allowedDomains \"example.com\""),
        ("trailing dot is the same name", &base, "example.com.", 443, "allow allowedDomains \"example.com\""),
        ("exact does not cover subdomains", &base, "www.example.com", 443, "ask not in allowedDomains"),
        ("unlisted name", &base, "evil.test", 443, "ask not in allowedDomains"),
        ("allowed name as a prefix of another", &base, "allowed.test.evil.test", 443, "ask not in allowedDomains"),
        ("allowed name as a suffix of a label", &base, "notallowed.test", 443, "ask not in allowedDomains"),
        ("two trailing dots", &base, "example.com..", 443, "deny malformed host"),
        // authority tricks
        ("user info", &base, "example.com@evil.test", 443, "deny malformed host"),
        ("user info before an allowed host", &base, "evil.test@example.com", 443, "deny malformed host"),
        ("percent escape", &base, "example%2ecom", 443, "deny malformed host"),
        ("non-ASCII", &base, "exämple.com", 443, "deny malformed host"),
        ("space", &base, "example.com evil.test", 443, "deny malformed host"),
        ("slash", &base, "example.com/evil", 443, "deny malformed host"),
        ("empty host", &base, "", 443, "deny malformed host"),
        ("port 0", &base, "example.com", 0, "deny malformed host"),
        ("short numeric form of loopback", &everything, "127.1", 80, "deny malformed host"),
        ("decimal form of loopback", &everything, "2130706433", 80, "deny malformed host"),
        ("hex form of loopback", &everything, "0x7f.0.0.1", 80, "deny malformed host"),
        ("octal-looking address", &everything, "0177.0.0.1", 80, "deny malformed host"),
        ("IPv6 zone", &everything, "fe80::1%eth0", 80, "deny malformed host"),
        // wildcards
        ("wildcard subdomain", &base, "a.wild.test", 443, "allow allowedDomains \"*.wild.test\""),
        ("wildcard deep subdomain", &base, "a.b.wild.test", 443, "allow allowedDomains \"*.wild.test\""),
        ("wildcard does not cover its apex", &base, "wild.test", 443, "ask not in allowedDomains"),
        ("wildcard needs a label boundary", &base, "evilwild.test", 443, "ask not in allowedDomains"),
        ("star allows any name", &everything, "anything.test", 443, "allow allowedDomains \"*\""),
        ("star allows a public address", &everything, "93.184.216.34", 443, "allow allowedDomains \"*\""),
        ("star does not open a private address", &everything, "10.0.0.1", 443, "deny private address"),
        ("star does not open link-local metadata", &everything, "169.254.169.254", 80, "deny private address"),
        ("star does not open a ULA", &everything, "fd00::1", 80, "deny private address"),
        ("star does not open the unspecified address", &everything, "0.0.0.0", 80, "deny unspecified address"),
        ("star does not open localhost when closed", &NetRules { allow_local_binding: false, ..everything.clone() }, "localhost", 80, "ask local services closed"),
        // deny wins
        ("deny beats allow, exact", &base, "both.test", 443, "deny deniedDomains \"both.test\""),
        ("deny beats allow, wildcard", &base, "x.both.test", 443, "deny deniedDomains \"*.both.test\""),
        ("deny beats allowed wildcard", &base, "bad.wild.test", 443, "deny deniedDomains \"bad.wild.test\""),
        ("deny star beats everything", &deny_all, "example.com", 443, "deny deniedDomains \"*\""),
        ("deny star beats IP entries", &deny_all, "10.0.0.1", 443, "deny deniedDomains \"*\""),
        ("deny star beats loopback entries", &deny_all, "127.0.0.1", 80, "deny deniedDomains \"*\""),
        ("deny beats a preset", &with_preset, "static.crates.io", 443, "deny deniedDomains \"static.crates.io\""),
        // ports
        ("entry port matches", &base, "api.ported.test", 8443, "allow allowedDomains \"api.ported.test:8443\""),
        ("entry port differs", &base, "api.ported.test", 443, "ask not in allowedDomains"),
        // addresses
        ("public IPv4 entry", &base, "93.184.216.34", 80, "allow allowedDomains \"93.184.216.34\""),
        ("IPv6 entry with port", &base, "2606:4700::1111", 443, "allow allowedDomains \"[2606:4700::1111]:443\""),
        ("IPv6 entry, other port", &base, "2606:4700::1111", 80, "ask not in allowedDomains"),
        ("IPv4-mapped IPv6 is the IPv4 address", &base, "::ffff:93.184.216.34", 80, "allow allowedDomains \"93.184.216.34\""),
        ("private address named by an entry", &base, "10.1.2.3", 8080, "allow allowedDomains \"10.1.2.3:8080\""),
        ("private address, other port", &base, "10.1.2.3", 22, "deny private address"),
        ("private address not named", &base, "192.168.1.1", 80, "deny private address"),
        ("mapped private address not named", &base, "::ffff:192.168.1.1", 80, "deny private address"),
        ("CGNAT address not named", &everything, "100.64.0.1", 80, "deny private address"),
        ("IPv4-compatible loopback", &everything, "::127.0.0.1", 80, "deny private address"),
        ("IPv4-translated loopback", &everything, "::ffff:0:127.0.0.1", 80, "deny private address"),
        ("discard prefix", &everything, "100::1", 80, "deny private address"),
        ("NAT64 of a public address", &everything, "64:ff9b::5db8:d822", 80, "allow allowedDomains \"*\""),
        ("NAT64 of a private address", &everything, "64:ff9b::a00:1", 80, "deny private address"),
        // loopback and localhost
        ("loopback open by default", &base, "127.0.0.1", 8000, "allow allowLocalBinding"),
        ("localhost open by default", &base, "localhost", 8000, "allow allowLocalBinding"),
        ("IPv6 loopback open by default", &base, "::1", 8000, "allow allowLocalBinding"),
        ("mapped loopback is loopback", &base, "::ffff:127.0.0.1", 8000, "allow allowLocalBinding"),
        ("local closed: port not listed", &local_closed, "127.0.0.1", 8000, "ask local services closed"),
        ("local closed: allowLocalPorts", &local_closed, "127.0.0.1", 5432, "allow allowLocalPorts 5432"),
        ("local closed: IP entry", &local_closed, "127.0.0.1", 7000, "allow allowedDomains \"127.0.0.1:7000\""),
        ("local closed: an address entry does not open localhost", &local_closed, "localhost", 7000, "ask local services closed"),
        ("denying loopback denies localhost", &rules(&[], &["127.0.0.1"]), "localhost", 80, "deny deniedDomains \"127.0.0.1\""),
        ("denying loopback on a port", &rules(&[], &["127.0.0.1:80"]), "localhost", 81, "allow allowLocalBinding"),
        ("local closed: IP entry is exact", &local_closed, "127.0.0.2", 7000, "ask local services closed"),
        ("localhost entry reaches localhost", &localhost_only, "localhost", 9000, "allow allowedDomains \"localhost\""),
        ("localhost entry reaches 127.0.0.1", &localhost_only, "127.0.0.1", 9000, "allow allowedDomains \"localhost\""),
        ("localhost entry does not reach private", &localhost_only, "10.0.0.1", 9000, "deny private address"),
        ("localhost entry does not reach names", &localhost_only, "example.com", 443, "ask not in allowedDomains"),
        ("subdomain of localhost is localhost", &localhost_only, "a.localhost", 9000, "allow allowedDomains \"localhost\""),
        ("nerdr's port closed even with localhost entry", &nerdr_ports, "localhost", 3128, "deny nerdr's own port 3128"),
        ("nerdr's port closed on 127.0.0.1", &nerdr_ports, "127.0.0.1", 3128, "deny nerdr's own port 3128"),
        ("other local ports stay open", &nerdr_ports, "127.0.0.1", 3129, "allow allowedDomains \"localhost\""),
        // presets
        ("preset host", &with_preset, "index.crates.io", 443, "allow preset \"index.crates.io\" (cargo: ~/.cargo/config.toml)"),
        ("preset is exact", &with_preset, "evil.crates.io", 443, "ask not in allowedDomains"),
    ];
    let mut failures = Vec::new();
    for (name, r, host, port, want) in table {
        let got = outcome(&decide(r, host, *port));
        if !got.starts_with(want) {
            failures.push(format!("{name}: {host}:{port}: want {want:?}, got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn routes_say_where_to_connect() {
    let r = rules(&["example.com", "93.184.216.34"], &[]);
    let route = |h| match decide(&r, h, 443) {
        Verdict::Allow { route, .. } => route,
        Verdict::Deny(d) => panic!("{h} denied: {}", d.why),
        Verdict::Ask { refusal, .. } => panic!("{h} asked: {}", refusal.why),
    };
    assert_eq!(route("Example.COM."), Route::Resolve("example.com".into()));
    assert_eq!(
        route("93.184.216.34"),
        Route::Address("93.184.216.34".parse().unwrap())
    );
    assert_eq!(route("localhost"), Route::Loopback);
}

#[test]
fn resolved_addresses_are_checked_again() {
    let r = NetRules {
        allowed: entries(&["*", "10.9.9.9"]),
        denied: entries(&["93.184.216.99"]),
        ..NetRules::default()
    };
    let ip = |s: &str| s.parse::<IpAddr>().unwrap();
    #[rustfmt::skip]
    let table: &[(&str, Vec<IpAddr>, Option<&str>)] = &[
        ("public address", vec![ip("93.184.216.34")], None),
        ("resolves to loopback", vec![ip("127.0.0.1")], Some("resolves to private address 127.0.0.1")),
        ("resolves to IPv6 loopback", vec![ip("::1")], Some("resolves to private address ::1")),
        ("resolves to mapped loopback", vec![ip("::ffff:127.0.0.1")], Some("resolves to private address 127.0.0.1")),
        ("one bad address among good", vec![ip("93.184.216.34"), ip("192.168.0.1")], Some("resolves to private address 192.168.0.1")),
        ("resolves to metadata address", vec![ip("169.254.169.254")], Some("resolves to private address")),
        ("resolves to unspecified", vec![ip("0.0.0.0")], Some("resolves to private address 0.0.0.0")),
        ("private address named by an IP entry", vec![ip("10.9.9.9")], None),
        ("resolves to a denied address", vec![ip("93.184.216.99")], Some("deniedDomains \"93.184.216.99\"")),
        ("no address", vec![], Some("no address")),
    ];
    for (name, addrs, want) in table {
        let got = check_resolved(&r, "allowed.test", 443, addrs).map_err(|e| e.rule.to_string());
        match (want, &got) {
            (None, Ok(())) => {}
            (Some(w), Err(g)) if g.starts_with(w) => {}
            _ => panic!("{name}: want {want:?}, got {got:?}"),
        }
    }
}

#[test]
fn bad_entries_name_themselves() {
    for bad in [
        "exa mple.com",
        "*.",
        "*.10.0.0.1",
        "example.com:99999",
        "example.com:0",
        "[::1",
        "[::1]x",
        "a@b",
    ] {
        let e = Entry::parse(bad).expect_err(bad).to_string();
        assert!(e.contains(&format!("\"{bad}\"")), "{e}");
    }
    let e = Entry::parse("[::1]:8080").unwrap();
    assert_eq!(
        (e.pattern, e.port),
        (Pattern::Ip("::1".parse().unwrap()), Some(8080))
    );
    let e = Entry::parse("2001:db8::1").unwrap();
    assert_eq!(
        (e.pattern, e.port),
        (Pattern::Ip("2001:db8::1".parse().unwrap()), None)
    );
    let e = Entry::parse("*.Example.COM.").unwrap();
    assert_eq!(e.pattern, Pattern::Subdomains("example.com".into()));
}

#[test]
fn rules_from_settings_lists_name_the_key() {
    let r = NetRules::from_lists(&["a.test".into()], &["*.b.test".into()]).unwrap();
    assert_eq!(
        (r.allowed.len(), r.denied.len(), r.allow_local_binding),
        (1, 1, true)
    );
    let e = NetRules::from_lists(&[], &["ok.test".into(), "bad host".into()]).unwrap_err();
    assert_eq!(e.key, "deniedDomains");
    assert!(
        e.to_string()
            .starts_with("deniedDomains: entry \"bad host\""),
        "{e}"
    );
}
