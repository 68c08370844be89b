//! The network policy of `nerdr sandbox`: a pure decision over plain data.
//!
//! A request (the host as the client wrote it, and a port) becomes a
//! [`Verdict`] before any DNS lookup; an allowed name is checked again, by
//! [`check_resolved`], against the addresses it resolved to. Gathering the
//! settings, resolving names and moving bytes live elsewhere (`server`,
//! `presets`); nothing here touches the system.
//!
//! The rules, in order:
//! - a host that is malformed or ambiguous (`user@host`, percent-escapes,
//!   non-ASCII, numeric forms like `127.1` that resolvers would turn into an
//!   address) is refused: the policy never guesses what a resolver will do;
//! - a `deniedDomains` entry that matches wins over everything;
//! - loopback (`localhost`, `127.0.0.0/8`, `::1`): nerdr's own ports are
//!   always closed; otherwise a `localhost` or IP entry opens it, else
//!   `allowLocalBinding` (default open) or `allowLocalPorts`;
//! - another private, link-local or reserved address only through an IP
//!   entry naming it (`*` does not reach it);
//! - a public address or a name through a matching `allowedDomains` entry or
//!   a package-registry preset; anything else is on neither list and its
//!   verdict is [`Verdict::Ask`]: the person may open it (see `answers`),
//!   and the request is refused when no one can answer;
//! - a loopback port closed by `allowLocalBinding = false` is asked about
//!   the same way (a person can judge `localhost:8080`; private addresses
//!   and names resolving to them are never asked: they are refused);
//! - after resolution, a name whose addresses include a private or local one
//!   is refused unless an IP entry names that address (DNS rebinding).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

mod address;
#[cfg(test)]
mod tests;

use address::canonical;
pub use address::is_public;

/// What a rule entry matches, besides its optional port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pattern {
    /// `*`: any host name or public address (deny `*` matches everything).
    Any,
    /// `example.com`: that name only.
    Exact(String),
    /// `*.example.com`: names below `example.com`, not `example.com` itself.
    Subdomains(String),
    /// `1.2.3.4`, `[::1]`: that address only.
    Ip(IpAddr),
    /// `localhost`: the loopback addresses only, never resolved.
    Localhost,
}

/// One `allowedDomains` / `deniedDomains` / preset entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The entry as the user wrote it, for reports.
    pub text: String,
    pub pattern: Pattern,
    /// `None` matches every port.
    pub port: Option<u16>,
}

/// A host a package registry or toolchain download needs, and where nerdr
/// learnt it (e.g. `cargo: ~/.cargo/config.toml`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresetHost {
    pub entry: Entry,
    pub source: String,
}

/// Everything the decision needs, as plain data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetRules {
    pub allowed: Vec<Entry>,
    pub denied: Vec<Entry>,
    pub presets: Vec<PresetHost>,
    /// Loopback services are open unless this is false (then only
    /// `allow_local_ports` and explicit entries reach them).
    pub allow_local_binding: bool,
    pub allow_local_ports: Vec<u16>,
    /// nerdr's own loopback ports (the proxy's TCP listener, …): never open.
    pub closed_local_ports: Vec<u16>,
}

impl Default for NetRules {
    fn default() -> Self {
        NetRules {
            allowed: Vec::new(),
            denied: Vec::new(),
            presets: Vec::new(),
            allow_local_binding: true,
            allow_local_ports: Vec::new(),
            closed_local_ports: Vec::new(),
        }
    }
}

/// An `allowedDomains` / `deniedDomains` entry that cannot be read, with
/// the settings key it came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {entry}")]
pub struct RulesError {
    pub key: &'static str,
    pub entry: EntryError,
}

impl NetRules {
    /// Rules from the settings' `allowedDomains` and `deniedDomains`
    /// lists; the other fields keep their defaults (local services open,
    /// no presets, no closed ports) for the caller to fill in.
    pub fn from_lists(allowed: &[String], denied: &[String]) -> Result<NetRules, RulesError> {
        let parse = |key: &'static str, list: &[String]| -> Result<Vec<Entry>, RulesError> {
            list.iter()
                .map(|t| Entry::parse(t).map_err(|entry| RulesError { key, entry }))
                .collect()
        };
        Ok(NetRules {
            allowed: parse("allowedDomains", allowed)?,
            denied: parse("deniedDomains", denied)?,
            ..NetRules::default()
        })
    }
}

/// Which rule decided, for the audit trail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule {
    Denied(String),
    Allowed(String),
    Preset {
        source: String,
        entry: String,
    },
    LocalOpen,
    LocalPort(u16),
    NerdrPort(u16),
    LocalClosed,
    PrivateAddress,
    Unspecified,
    Unlisted,
    Malformed,
    ResolvedPrivate(IpAddr),
    NoAddress,
    /// The person's answers to a question (see `answers`).
    PersonOnce,
    PersonSession,
    PersonDenied,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rule::Denied(e) => write!(f, "deniedDomains \"{e}\""),
            Rule::Allowed(e) => write!(f, "allowedDomains \"{e}\""),
            Rule::Preset { source, entry } => write!(f, "preset \"{entry}\" ({source})"),
            Rule::LocalOpen => f.write_str("allowLocalBinding"),
            Rule::LocalPort(p) => write!(f, "allowLocalPorts {p}"),
            Rule::NerdrPort(p) => write!(f, "nerdr's own port {p}"),
            Rule::LocalClosed => f.write_str("local services closed"),
            Rule::PrivateAddress => f.write_str("private address"),
            Rule::Unspecified => f.write_str("unspecified address"),
            Rule::Unlisted => f.write_str("not in allowedDomains"),
            Rule::Malformed => f.write_str("malformed host"),
            Rule::ResolvedPrivate(a) => write!(f, "resolves to private address {a}"),
            Rule::NoAddress => f.write_str("no address"),
            Rule::PersonOnce => f.write_str("allowed once by the user"),
            Rule::PersonSession => f.write_str("allowed for this sandbox run by the user"),
            Rule::PersonDenied => f.write_str("denied by the user"),
        }
    }
}

/// Where an allowed connection goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// The address the client wrote.
    Address(IpAddr),
    /// `localhost`: 127.0.0.1, then ::1; never asks DNS.
    Loopback,
    /// A name to resolve, then to pass through [`check_resolved`].
    Resolve(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub rule: Rule,
    /// A sentence for the 403 body and the audit trail.
    pub why: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow {
        rule: Rule,
        route: Route,
    },
    Deny(Refusal),
    /// On neither list: the person may be asked. `refusal` is the answer
    /// when no one can be asked or no one answers; `route` is where an
    /// allowed request goes; `host` is the normalised host the answer is
    /// remembered under.
    Ask {
        host: Host,
        route: Route,
        refusal: Refusal,
    },
}

/// A request's host after normalisation: what the rules compare against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    Name(String),
    Ip(IpAddr),
    Localhost,
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Name(n) => f.write_str(n),
            Host::Ip(IpAddr::V6(a)) => write!(f, "[{a}]"),
            Host::Ip(a) => write!(f, "{a}"),
            Host::Localhost => f.write_str("localhost"),
        }
    }
}

/// An entry that cannot be read, naming it and the accepted forms.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("entry \"{text}\": {why} (expected a host such as example.com, *.example.com, *, localhost, 1.2.3.4 or [::1], optionally followed by :PORT)")]
pub struct EntryError {
    pub text: String,
    pub why: String,
}

impl Entry {
    pub fn parse(text: &str) -> Result<Entry, EntryError> {
        let err = |why: &str| EntryError {
            text: text.to_string(),
            why: why.to_string(),
        };
        let t = text.trim();
        let (host, port) = split_host_port(t).map_err(|w| err(&w))?;
        let pattern = if host == "*" {
            Pattern::Any
        } else if let Some(rest) = host.strip_prefix("*.") {
            match normalise_host(rest).map_err(|w| err(&w))? {
                Host::Name(n) => Pattern::Subdomains(n),
                _ => return Err(err("a wildcard needs a domain name after \"*.\"")),
            }
        } else {
            match normalise_host(host).map_err(|w| err(&w))? {
                Host::Name(n) => Pattern::Exact(n),
                Host::Ip(a) => Pattern::Ip(a),
                Host::Localhost => Pattern::Localhost,
            }
        };
        Ok(Entry {
            text: t.to_string(),
            pattern,
            port,
        })
    }

    /// Structural match; which entries may reach local or private hosts is
    /// decided by [`decide`], not here.
    fn matches(&self, host: &Host, port: u16) -> bool {
        if self.port.is_some_and(|p| p != port) {
            return false;
        }
        match (&self.pattern, host) {
            (Pattern::Any, _) => true,
            (Pattern::Exact(e), Host::Name(h)) => e == h,
            (Pattern::Subdomains(s), Host::Name(h)) => h
                .strip_suffix(s.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
            (Pattern::Ip(a), Host::Ip(b)) => a == b,
            (Pattern::Localhost, Host::Localhost) => true,
            (Pattern::Localhost, Host::Ip(b)) => b.is_loopback(),
            _ => false,
        }
    }

    /// Like [`Entry::matches`], but a loopback address entry also covers
    /// `localhost`: denying 127.0.0.1 must not leave `localhost` open,
    /// while allowing 127.0.0.1 must not open ::1 as well.
    fn denies(&self, host: &Host, port: u16) -> bool {
        self.matches(host, port)
            || (*host == Host::Localhost
                && matches!(self.pattern, Pattern::Ip(a) if a.is_loopback())
                && self.port.is_none_or(|p| p == port))
    }

    fn names_address(&self, addr: IpAddr, port: u16) -> bool {
        matches!(self.pattern, Pattern::Ip(a) if a == addr) && self.port.is_none_or(|p| p == port)
    }
}

/// Splits `host[:port]`, `[v6][:port]` or a bare IPv6 address.
fn split_host_port(t: &str) -> Result<(&str, Option<u16>), String> {
    let parse_port = |p: &str| {
        p.parse::<u16>()
            .ok()
            .filter(|&p| p != 0)
            .map(Some)
            .ok_or_else(|| format!("port \"{p}\" is not a number from 1 to 65535"))
    };
    if let Some(rest) = t.strip_prefix('[') {
        let (inside, after) = rest
            .split_once(']')
            .ok_or("an IPv6 address opened with \"[\" needs a closing \"]\"")?;
        return match after {
            "" => Ok((inside, None)),
            _ => match after.strip_prefix(':') {
                Some(p) => Ok((inside, parse_port(p)?)),
                None => Err(format!("unexpected \"{after}\" after \"]\"")),
            },
        };
    }
    match t.matches(':').count() {
        0 => Ok((t, None)),
        1 => {
            let (h, p) = t.split_once(':').unwrap_or((t, ""));
            Ok((h, parse_port(p)?))
        }
        _ => Ok((t, None)),
    }
}

/// Normalises a host as a client wrote it (brackets already removed).
/// Refuses, with a reason, anything a resolver or server might read
/// differently from the policy.
pub fn normalise_host(raw: &str) -> Result<Host, String> {
    if raw.is_empty() {
        return Err("empty host".into());
    }
    if raw.contains('@') {
        return Err(format!(
            "\"{raw}\" carries user info (\"user@host\"); write the host alone"
        ));
    }
    if raw.contains('%') {
        return Err(format!(
            "\"{raw}\" contains a percent sign (escapes and IPv6 zones are refused)"
        ));
    }
    if !raw.is_ascii() {
        return Err(format!("\"{raw}\" is not ASCII; use its IDNA form (xn--…)"));
    }
    if let Ok(v6) = raw.parse::<Ipv6Addr>() {
        return Ok(Host::Ip(canonical(IpAddr::V6(v6))));
    }
    let lower = raw.to_ascii_lowercase();
    // One trailing dot is the DNS root; `host.` and `host` are the same name.
    let name = lower.strip_suffix('.').unwrap_or(&lower);
    if let Ok(v4) = name.parse::<Ipv4Addr>() {
        return Ok(Host::Ip(IpAddr::V4(v4)));
    }
    if name.len() > 253 {
        return Err(format!("\"{raw}\" is longer than 253 characters"));
    }
    for label in name.split('.') {
        if label.is_empty() || label.len() > 63 {
            return Err(format!("\"{raw}\" has an empty or over-long label"));
        }
        if !label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(format!(
                "\"{raw}\" contains characters a host name cannot have"
            ));
        }
    }
    let last = name.rsplit('.').next().unwrap_or(name);
    let numeric = last.bytes().all(|b| b.is_ascii_digit())
        || (last.starts_with("0x") && last[2..].bytes().all(|b| b.is_ascii_hexdigit()));
    if numeric {
        // `127.1`, `2130706433`, `0x7f.1`: getaddrinfo reads these as
        // addresses, so they are refused rather than matched as names.
        return Err(format!(
            "\"{raw}\" looks like an address in a non-standard form; write it as a.b.c.d"
        ));
    }
    if name == "localhost" || name.ends_with(".localhost") {
        return Ok(Host::Localhost);
    }
    Ok(Host::Name(name.to_string()))
}

fn refuse(rule: Rule, why: String) -> Verdict {
    Verdict::Deny(Refusal { rule, why })
}

/// The allowed entries, then the presets, each with the rule it reports.
fn grants(rules: &NetRules) -> impl Iterator<Item = (&Entry, Rule)> {
    let allowed = rules
        .allowed
        .iter()
        .map(|e| (e, Rule::Allowed(e.text.clone())));
    let presets = rules.presets.iter().map(|p| {
        (
            &p.entry,
            Rule::Preset {
                source: p.source.clone(),
                entry: p.entry.text.clone(),
            },
        )
    });
    allowed.chain(presets)
}

/// The decision for a request, made before any DNS lookup.
pub fn decide(rules: &NetRules, raw_host: &str, port: u16) -> Verdict {
    let host = match normalise_host(raw_host) {
        Ok(h) => h,
        Err(why) => return refuse(Rule::Malformed, why),
    };
    if port == 0 {
        return refuse(
            Rule::Malformed,
            format!("{host}: port 0 is not a destination"),
        );
    }
    if let Some(e) = rules.denied.iter().find(|e| e.denies(&host, port)) {
        return refuse(
            Rule::Denied(e.text.clone()),
            format!("{host}:{port} matches deniedDomains entry \"{}\"", e.text),
        );
    }
    match host {
        Host::Localhost => local(rules, &host, port, Route::Loopback),
        Host::Ip(a) if a.is_loopback() => local(rules, &host, port, Route::Address(a)),
        Host::Ip(a) if a.is_unspecified() => refuse(
            Rule::Unspecified,
            format!("{host} is the unspecified address (it reaches this machine)"),
        ),
        Host::Ip(a) if !is_public(a) => match grants(rules).find(|(e, _)| e.names_address(a, port))
        {
            Some((_, rule)) => Verdict::Allow {
                rule,
                route: Route::Address(a),
            },
            None => refuse(
                Rule::PrivateAddress,
                format!(
                    "{host} is a private or local address; only an IP entry naming it opens it"
                ),
            ),
        },
        Host::Ip(a) => match grants(rules).find(|(e, _)| e.matches(&host, port)) {
            Some((_, rule)) => Verdict::Allow {
                rule,
                route: Route::Address(a),
            },
            None => unlisted(&host, port, Route::Address(a)),
        },
        Host::Name(ref n) => match grants(rules).find(|(e, _)| e.matches(&host, port)) {
            Some((_, rule)) => Verdict::Allow {
                rule,
                route: Route::Resolve(n.clone()),
            },
            None => unlisted(&host, port, Route::Resolve(n.clone())),
        },
    }
}

/// Loopback: nerdr's ports closed, then explicit entries, then the
/// `allowLocalBinding` / `allowLocalPorts` switches.
fn local(rules: &NetRules, host: &Host, port: u16, route: Route) -> Verdict {
    if rules.closed_local_ports.contains(&port) {
        return refuse(
            Rule::NerdrPort(port),
            format!("{host}:{port} is one of nerdr's own ports"),
        );
    }
    let explicit = grants(rules).find(|(e, _)| {
        matches!(e.pattern, Pattern::Localhost | Pattern::Ip(_)) && e.matches(host, port)
    });
    if let Some((_, rule)) = explicit {
        return Verdict::Allow { rule, route };
    }
    if rules.allow_local_binding {
        return Verdict::Allow {
            rule: Rule::LocalOpen,
            route,
        };
    }
    if rules.allow_local_ports.contains(&port) {
        return Verdict::Allow {
            rule: Rule::LocalPort(port),
            route,
        };
    }
    Verdict::Ask {
        host: host.clone(),
        route,
        refusal: Refusal {
            rule: Rule::LocalClosed,
            why: format!("{host}:{port}: local services are closed (allowLocalBinding = false) and {port} is not in allowLocalPorts"),
        },
    }
}

/// A host on neither list: asked about, refused if no one answers yes.
fn unlisted(host: &Host, port: u16, route: Route) -> Verdict {
    Verdict::Ask {
        host: host.clone(),
        route,
        refusal: Refusal {
            rule: Rule::Unlisted,
            why: format!("{host}:{port} is not in allowedDomains"),
        },
    }
}

/// The second check, after an allowed name resolved: every address must be
/// public, or named by an IP entry, and none may be denied.
pub fn check_resolved(
    rules: &NetRules,
    name: &str,
    port: u16,
    addrs: &[IpAddr],
) -> Result<(), Refusal> {
    if addrs.is_empty() {
        return Err(Refusal {
            rule: Rule::NoAddress,
            why: format!("{name} resolved to no address"),
        });
    }
    for &a in addrs {
        let a = canonical(a);
        let as_host = Host::Ip(a);
        if let Some(e) = rules
            .denied
            .iter()
            .find(|e| matches!(e.pattern, Pattern::Ip(_)) && e.matches(&as_host, port))
        {
            return Err(Refusal {
                rule: Rule::Denied(e.text.clone()),
                why: format!(
                    "{name} resolves to {a}, which deniedDomains entry \"{}\" names",
                    e.text
                ),
            });
        }
        if !is_public(a) && !grants(rules).any(|(e, _)| e.names_address(a, port)) {
            return Err(Refusal {
                rule: Rule::ResolvedPrivate(a),
                why: format!("{name} resolves to {a}, a private or local address; only an IP entry naming it opens it"),
            });
        }
    }
    Ok(())
}
