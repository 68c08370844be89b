//! The text a refused client gets (the 403 body): the host, why, the rule,
//! what is allowed, and what the user can change to allow it, so that an
//! agent reading the body can tell the person exactly which setting to
//! edit. Pure over the rules.

use super::policy::{NetRules, Refusal, Rule};

/// Where the user's loosening settings live (`sources`: the files a
/// sandbox cannot change).
pub const SETTINGS_FILES: &str = "$XDG_CONFIG_HOME/nerdr/sandbox.json or ~/.claude/settings.json";
/// `allowedDomains` entries named one by one before the rest are counted.
const SHOWN_ENTRIES: usize = 10;

/// The whole body, one fact a line.
pub fn blocked_text(host: &str, port: u16, r: &Refusal, rules: &NetRules) -> String {
    let shown = show(host, port);
    let mut out = format!(
        "Blocked by nerdr network policy: {shown}\n{}\nrule: {}\nallowed: {}\n",
        r.why,
        r.rule,
        allowed_summary(rules)
    );
    if let Some(fix) = fix(&shown, host, port, &r.rule) {
        out.push_str(&format!("to allow it: {fix}\n"));
    }
    out
}

/// `host:port` as written in an authority (IPv6 in brackets), with control
/// characters made visible so a reply cannot be split by a hostile name.
fn show(host: &str, port: u16) -> String {
    let clean: String = host
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if clean.contains(':') {
        format!("[{clean}]:{port}")
    } else {
        format!("{clean}:{port}")
    }
}

/// The allowed entries as written, the first few by name, and how many
/// package-registry hosts the machine's configuration adds.
pub fn allowed_summary(rules: &NetRules) -> String {
    let mut parts: Vec<String> = rules
        .allowed
        .iter()
        .take(SHOWN_ENTRIES)
        .map(|e| e.text.clone())
        .collect();
    if rules.allowed.len() > SHOWN_ENTRIES {
        parts.push(format!(
            "and {} more allowedDomains entries",
            rules.allowed.len() - SHOWN_ENTRIES
        ));
    }
    if !rules.presets.is_empty() {
        parts.push(format!(
            "{} package-registry hosts from this machine's configuration",
            rules.presets.len()
        ));
    }
    let local = match (
        rules.allow_local_binding,
        rules.allow_local_ports.as_slice(),
    ) {
        (true, _) => "local services (allowLocalBinding)".to_string(),
        (false, []) => "no local services".to_string(),
        (false, ports) => format!(
            "local ports {}",
            ports
                .iter()
                .map(u16::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    parts.push(local);
    if rules.allowed.is_empty() && rules.presets.is_empty() {
        parts.insert(0, "no allowedDomains entries".into());
    }
    parts.join(", ")
}

/// What the user can change, for the rules a setting decides; `None`
/// where no setting opens it (nerdr's own ports, a malformed host).
fn fix(shown: &str, host: &str, port: u16, rule: &Rule) -> Option<String> {
    let name = shown.rsplit_once(':').map(|(h, _)| h).unwrap_or(shown);
    let add = |entry: String| {
        format!("add \"{entry}\" to sandbox.network.allowedDomains in {SETTINGS_FILES} and start the sandbox again")
    };
    let add_port = || {
        format!("add {port} to sandbox.network.allowLocalPorts in {SETTINGS_FILES} and start the sandbox again")
    };
    let ask = "; or run the sandbox in a nerdr tab with a window attached to be asked";
    Some(match rule {
        Rule::Unlisted => format!("{}{ask}", add(name.to_string())),
        // A service on this machine was asked about because local
        // services are closed: the port is what opens it, under every
        // spelling of this machine.
        Rule::PersonDenied if is_local(host) => {
            format!("{} (the user denied it for this run)", add_port())
        }
        Rule::PersonDenied => format!("{} (the user denied it for this run)", add(name.to_string())),
        Rule::LocalClosed => format!("{}{ask}", add_port()),
        Rule::PrivateAddress => add(shown.to_string()),
        Rule::ResolvedPrivate(a) => {
            let a = super::policy::Host::Ip(*a);
            format!(
                "{host} resolves to a private address; only an IP entry opens it: {}",
                add(format!("{a}:{port}"))
            )
        }
        Rule::Denied(entry) => format!(
            "remove \"{entry}\" from sandbox.network.deniedDomains (deny wins over every allowedDomains entry); \
             a project's own settings may have added it"
        ),
        Rule::Unspecified
        | Rule::Malformed
        | Rule::NerdrPort(_)
        | Rule::NoAddress
        | Rule::Allowed(_)
        | Rule::Preset { .. }
        | Rule::LocalOpen
        | Rule::LocalPort(_)
        | Rule::PersonOnce
        | Rule::PersonSession => return None,
    })
}

/// `host` names this machine (`localhost`, a loopback address).
fn is_local(host: &str) -> bool {
    match super::policy::normalise_host(host) {
        Ok(super::policy::Host::Localhost) => true,
        Ok(super::policy::Host::Ip(a)) => a.is_loopback(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::policy::{Entry, PresetHost};
    use super::*;

    fn rules(allowed: &[&str]) -> NetRules {
        NetRules {
            allowed: allowed.iter().map(|t| Entry::parse(t).unwrap()).collect(),
            ..NetRules::default()
        }
    }

    fn refusal(rule: Rule) -> Refusal {
        Refusal {
            rule,
            why: "why".into(),
        }
    }

    #[test]
    fn each_rule_says_what_to_change() {
        let r = rules(&["example.com"]);
        #[rustfmt::skip]
        let table: &[(Rule, &str, u16, Option<&str>)] = &[
            (Rule::Unlisted, "api.test", 443, Some("add \"api.test\" to sandbox.network.allowedDomains in $XDG_CONFIG_HOME/nerdr/sandbox.json or ~/.claude/settings.json and start the sandbox again; or run the sandbox in a nerdr tab with a window attached to be asked")),
            (Rule::PersonDenied, "api.test", 443, Some("add \"api.test\" to sandbox.network.allowedDomains in $XDG_CONFIG_HOME/nerdr/sandbox.json or ~/.claude/settings.json and start the sandbox again (the user denied it for this run)")),
            (Rule::PersonDenied, "localhost", 8080, Some("add 8080 to sandbox.network.allowLocalPorts in $XDG_CONFIG_HOME/nerdr/sandbox.json or ~/.claude/settings.json and start the sandbox again (the user denied it for this run)")),
            (Rule::PersonDenied, "127.0.0.2", 8080, Some("add 8080 to sandbox.network.allowLocalPorts")),
            (Rule::LocalClosed, "localhost", 8080, Some("add 8080 to sandbox.network.allowLocalPorts in $XDG_CONFIG_HOME/nerdr/sandbox.json or ~/.claude/settings.json and start the sandbox again; or run the sandbox in a nerdr tab with a window attached to be asked")),
            (Rule::PrivateAddress, "10.0.0.1", 80, Some("add \"10.0.0.1:80\" to sandbox.network.allowedDomains")),
            (Rule::ResolvedPrivate("10.0.0.2".parse().unwrap()), "intra.test", 80, Some("intra.test resolves to a private address; only an IP entry opens it: add \"10.0.0.2:80\"")),
            (Rule::Denied("*.evil.test".into()), "a.evil.test", 443, Some("remove \"*.evil.test\" from sandbox.network.deniedDomains")),
            (Rule::Malformed, "a@b", 443, None),
            (Rule::NerdrPort(3128), "localhost", 3128, None),
            (Rule::Unspecified, "0.0.0.0", 80, None),
            (Rule::NoAddress, "x.test", 80, None),
        ];
        let mut failures = Vec::new();
        for (rule, host, port, want) in table {
            let body = blocked_text(host, *port, &refusal(rule.clone()), &r);
            let fix = body
                .lines()
                .find_map(|l| l.strip_prefix("to allow it: "))
                .map(String::from);
            let ok = match (want, &fix) {
                (None, None) => true,
                (Some(w), Some(f)) => f.starts_with(w),
                _ => false,
            };
            if !ok {
                failures.push(format!("{rule}: want {want:?}, got {fix:?}"));
            }
            if !body.starts_with("Blocked by nerdr network policy: ")
                || !body.contains("\nallowed: example.com, local services (allowLocalBinding)\n")
            {
                failures.push(format!("{rule}: body {body:?}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn a_long_allowed_list_is_summarised() {
        let many: Vec<String> = (0..13).map(|i| format!("h{i}.test")).collect();
        let mut r = rules(&many.iter().map(String::as_str).collect::<Vec<_>>());
        r.presets = vec![PresetHost {
            entry: Entry::parse("index.crates.io").unwrap(),
            source: "cargo".into(),
        }];
        r.allow_local_binding = false;
        r.allow_local_ports = vec![5432, 6379];
        assert_eq!(
            allowed_summary(&r),
            "h0.test, h1.test, h2.test, h3.test, h4.test, h5.test, h6.test, h7.test, h8.test, \
             h9.test, and 3 more allowedDomains entries, 1 package-registry hosts from this \
             machine's configuration, local ports 5432, 6379"
        );
        let none = NetRules {
            allow_local_binding: false,
            ..NetRules::default()
        };
        assert_eq!(
            allowed_summary(&none),
            "no allowedDomains entries, no local services"
        );
    }

    #[test]
    fn a_hostile_host_cannot_split_the_body() {
        let body = blocked_text(
            "evil.test\r\nX-Injected: 1",
            80,
            &refusal(Rule::Malformed),
            &rules(&[]),
        );
        assert!(!body.contains("\r\nX-Injected"), "{body:?}");
    }
}
