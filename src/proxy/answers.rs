//! What the person's answer to a network question does to a sandbox run's
//! rules. Pure: the proxy hands in the question (a host on neither list,
//! see [`policy::Verdict::Ask`]) and what became of it; asking and waiting
//! live in `asking`.
//!
//! - "once" opens this request only; the next one to the same host is
//!   asked again;
//! - "this session" opens the host and port for the rest of this sandbox
//!   run (never written anywhere: the next run asks again);
//! - "deny" refuses this request and the same host and port for the rest
//!   of the run, so a program that retries in a loop cannot put the same
//!   question to the person again and again;
//! - no answer in time, or no one to ask (no window attached, no nerdr
//!   tab): this request is refused with the policy's own refusal, and the
//!   next one asks again.
//!
//! Answers are remembered per normalised host and port: `Example.COM.` and
//! `example.com` are one host, port 443 and 80 are two questions. A
//! "deny" of this machine (`localhost`, any loopback address) holds for
//! every other spelling of it at that port (`127.0.0.2`, `[::1]`, ...):
//! 2^24 loopback addresses must not be 2^24 more questions after a no.
//!
//! [`policy::Verdict::Ask`]: super::policy::Verdict::Ask

use std::collections::BTreeSet;

use super::policy::{Host, Refusal, Rule};

/// The person's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Once,
    Session,
    Deny,
}

/// What became of a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Answered(Answer),
    /// Asked, and no one answered within this many seconds.
    NoAnswer {
        secs: u64,
    },
    /// Not asked, and why (no window attached, outside any nerdr tab, the
    /// queue full, the core unreachable).
    NotAsked(String),
}

impl Outcome {
    /// A short word for the audit trail.
    pub fn word(&self) -> String {
        match self {
            Outcome::Answered(Answer::Once) => "allowed once".into(),
            Outcome::Answered(Answer::Session) => "allowed for this run".into(),
            Outcome::Answered(Answer::Deny) => "denied".into(),
            Outcome::NoAnswer { secs } => format!("no answer within {secs} s"),
            Outcome::NotAsked(_) => "not asked".into(),
        }
    }
}

/// How a request on neither list ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settled {
    Allow(Rule),
    Deny(Refusal),
}

/// The answers that last for the rest of a sandbox run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionAnswers {
    allowed: BTreeSet<(String, u16)>,
    denied: BTreeSet<(String, u16)>,
}

/// The key a "deny" is remembered under: this machine's loopback, however
/// spelt, is one host.
fn denied_key(host: &Host, port: u16) -> (String, u16) {
    let local = match host {
        Host::Localhost => true,
        Host::Ip(a) => a.is_loopback(),
        Host::Name(_) => false,
    };
    if local {
        ("(this machine)".to_string(), port)
    } else {
        (host.to_string(), port)
    }
}

impl SessionAnswers {
    /// An earlier answer that still holds for `host:port`; `None`: ask.
    pub fn recall(&self, host: &Host, port: u16) -> Option<Settled> {
        let key = (host.to_string(), port);
        if self.denied.contains(&denied_key(host, port)) {
            return Some(Settled::Deny(Refusal {
                rule: Rule::PersonDenied,
                why: format!("{host}:{port}: the user denied it earlier in this sandbox run"),
            }));
        }
        if self.allowed.contains(&key) {
            return Some(Settled::Allow(Rule::PersonSession));
        }
        None
    }

    /// How the request ends, remembering a "this session" or "deny"
    /// answer; `refusal` is the policy's own, for when no one said yes.
    pub fn settle(
        &mut self,
        host: &Host,
        port: u16,
        refusal: &Refusal,
        outcome: &Outcome,
    ) -> Settled {
        let key = (host.to_string(), port);
        match outcome {
            Outcome::Answered(Answer::Once) => Settled::Allow(Rule::PersonOnce),
            Outcome::Answered(Answer::Session) => {
                self.allowed.insert(key);
                Settled::Allow(Rule::PersonSession)
            }
            Outcome::Answered(Answer::Deny) => {
                self.denied.insert(denied_key(host, port));
                Settled::Deny(Refusal {
                    rule: Rule::PersonDenied,
                    why: format!(
                        "{host}:{port}: the user denied it (for the rest of this sandbox run)"
                    ),
                })
            }
            Outcome::NoAnswer { secs } => Settled::Deny(Refusal {
                rule: refusal.rule.clone(),
                why: format!(
                    "{}; the user was asked and did not answer within {secs} s",
                    refusal.why
                ),
            }),
            Outcome::NotAsked(why) => Settled::Deny(Refusal {
                rule: refusal.rule.clone(),
                why: format!("{}; the user was not asked: {why}", refusal.why),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(n: &str) -> Host {
        Host::Name(n.into())
    }

    fn unlisted(host: &Host, port: u16) -> Refusal {
        Refusal {
            rule: Rule::Unlisted,
            why: format!("{host}:{port} is not in allowedDomains"),
        }
    }

    fn short(s: &Option<Settled>) -> String {
        match s {
            None => "ask".into(),
            Some(Settled::Allow(r)) => format!("allow {r}"),
            Some(Settled::Deny(r)) => format!("deny {}: {}", r.rule, r.why),
        }
    }

    /// Each outcome, then what the same request and its neighbours get.
    #[test]
    fn answers_follow_the_table() {
        let h = name("api.test");
        let no_answer = Outcome::NoAnswer { secs: 2 };
        let not_asked = Outcome::NotAsked("no window is attached".into());
        #[rustfmt::skip]
        let table: &[(&str, Outcome, &str, &str, &str, &str)] = &[
            // (row, outcome, this request, same host and port after, other port after, other host after)
            ("once", Outcome::Answered(Answer::Once), "allow allowed once by the user", "ask", "ask", "ask"),
            ("session", Outcome::Answered(Answer::Session), "allow allowed for this sandbox run by the user", "allow allowed for this sandbox run by the user", "ask", "ask"),
            ("deny", Outcome::Answered(Answer::Deny), "deny denied by the user: api.test:443: the user denied it (for the rest of this sandbox run)", "deny denied by the user: api.test:443: the user denied it earlier in this sandbox run", "ask", "ask"),
            ("no answer", no_answer, "deny not in allowedDomains: api.test:443 is not in allowedDomains; the user was asked and did not answer within 2 s", "ask", "ask", "ask"),
            ("not asked", not_asked, "deny not in allowedDomains: api.test:443 is not in allowedDomains; the user was not asked: no window is attached", "ask", "ask", "ask"),
        ];
        let mut failures = Vec::new();
        for (row, outcome, now, same, port, other) in table {
            let mut s = SessionAnswers::default();
            assert_eq!(s.recall(&h, 443), None, "{row}: a fresh run asks");
            let got = [
                short(&Some(s.settle(&h, 443, &unlisted(&h, 443), outcome))),
                short(&s.recall(&h, 443)),
                short(&s.recall(&h, 80)),
                short(&s.recall(&name("other.test"), 443)),
            ];
            for (got, want) in got.iter().zip([now, same, port, other]) {
                if got != want {
                    failures.push(format!("{row}: want {want:?}, got {got:?}"));
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn a_later_answer_for_the_same_host_replaces_nothing_already_denied() {
        // Deny wins within a run, as it does in the settings.
        let h = name("api.test");
        let mut s = SessionAnswers::default();
        let r = unlisted(&h, 443);
        s.settle(&h, 443, &r, &Outcome::Answered(Answer::Deny));
        s.settle(&h, 443, &r, &Outcome::Answered(Answer::Session));
        assert!(matches!(s.recall(&h, 443), Some(Settled::Deny(_))));
    }

    #[test]
    fn loopback_and_addresses_are_remembered_by_their_normal_form() {
        let mut s = SessionAnswers::default();
        let lo = Host::Localhost;
        let ip = Host::Ip("::1".parse().unwrap());
        let r = unlisted(&lo, 8080);
        s.settle(&lo, 8080, &r, &Outcome::Answered(Answer::Session));
        assert_eq!(short(&s.recall(&lo, 8080)).split(' ').next(), Some("allow"));
        // `localhost` and `[::1]` are separate questions, as in the settings.
        assert_eq!(s.recall(&ip, 8080), None);
        s.settle(&ip, 8080, &r, &Outcome::Answered(Answer::Once));
        assert_eq!(s.recall(&ip, 8080), None);
    }

    #[test]
    fn a_deny_of_this_machine_holds_for_every_spelling_of_it() {
        let ip = |s: &str| Host::Ip(s.parse().unwrap());
        // (denied, then asked, what the second gets)
        #[rustfmt::skip]
        let table: &[(Host, u16, Host, u16, &str)] = &[
            (Host::Localhost, 5432, ip("127.0.0.1"), 5432, "deny"),
            (Host::Localhost, 5432, ip("127.0.0.2"), 5432, "deny"),
            (Host::Localhost, 5432, ip("::1"), 5432, "deny"),
            (ip("127.9.9.9"), 5432, Host::Localhost, 5432, "deny"),
            (Host::Localhost, 5432, ip("127.0.0.1"), 5433, "ask"),
            (Host::Localhost, 5432, ip("10.0.0.1"), 5432, "ask"),
            (Host::Localhost, 5432, name("localhost.test"), 5432, "ask"),
            (name("api.test"), 443, name("www.api.test"), 443, "ask"),
        ];
        for (denied, dport, asked, aport, want) in table {
            let mut s = SessionAnswers::default();
            s.settle(
                denied,
                *dport,
                &unlisted(denied, *dport),
                &Outcome::Answered(Answer::Deny),
            );
            let got = short(&s.recall(asked, *aport));
            assert!(
                got.starts_with(want),
                "{denied}:{dport} then {asked}:{aport}: {got}"
            );
        }
        // A yes stays as narrow as the question.
        let mut s = SessionAnswers::default();
        let lo = Host::Localhost;
        s.settle(
            &lo,
            8080,
            &unlisted(&lo, 8080),
            &Outcome::Answered(Answer::Session),
        );
        assert_eq!(s.recall(&ip("127.0.0.1"), 8080), None);
    }

    #[test]
    fn outcome_words_are_distinct() {
        let words: BTreeSet<String> = [
            Outcome::Answered(Answer::Once),
            Outcome::Answered(Answer::Session),
            Outcome::Answered(Answer::Deny),
            Outcome::NoAnswer { secs: 1 },
            Outcome::NotAsked("x".into()),
        ]
        .iter()
        .map(Outcome::word)
        .collect();
        assert_eq!(words.len(), 5);
    }
}
