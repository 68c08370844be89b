//! Deliberately weakened sandboxes, so a test can show that nerdr's probe
//! notices each missing protection. Honoured only by debug builds (the
//! hidden `nerdr sandbox --weaken LIST` flag is refused by release builds),
//! and only from the command line of `nerdr sandbox` itself: that command
//! line comes from the user's config, which the sandbox keeps read-only, and
//! nothing the sandboxed program sets (its environment, its files) is read.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weakening {
    /// Share the host's PID namespace (other processes visible).
    NoPidNs,
    /// Share the host's network namespace.
    NoNetNs,
    /// Leave `$XDG_RUNTIME_DIR`, nerdr's client socket folder and the
    /// system's sockets (system bus, journal) visible.
    RuntimeVisible,
    /// `.git/hooks` writable.
    HooksWritable,
    /// `.git/config` writable.
    GitConfigWritable,
    /// Credential stores visible.
    CredsVisible,
    /// nerdr's config and state dirs writable.
    NerdrWritable,
    /// No seccomp filter (TIOCSTI allowed).
    NoSeccomp,
    /// Nested user namespaces allowed.
    UsernsAllowed,
    /// The whole home folder writable.
    HomeWritable,
}

impl Weakening {
    pub const ALL: [Weakening; 10] = [
        Weakening::NoPidNs,
        Weakening::NoNetNs,
        Weakening::RuntimeVisible,
        Weakening::HooksWritable,
        Weakening::GitConfigWritable,
        Weakening::CredsVisible,
        Weakening::NerdrWritable,
        Weakening::NoSeccomp,
        Weakening::UsernsAllowed,
        Weakening::HomeWritable,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Weakening::NoPidNs => "no-pid-ns",
            Weakening::NoNetNs => "no-net-ns",
            Weakening::RuntimeVisible => "runtime-visible",
            Weakening::HooksWritable => "hooks-writable",
            Weakening::GitConfigWritable => "git-config-writable",
            Weakening::CredsVisible => "creds-visible",
            Weakening::NerdrWritable => "nerdr-writable",
            Weakening::NoSeccomp => "no-seccomp",
            Weakening::UsernsAllowed => "userns-allowed",
            Weakening::HomeWritable => "home-writable",
        }
    }
}

/// A set of weakenings (empty: the real sandbox).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Weaken(Vec<Weakening>);

impl Weaken {
    pub fn none() -> Self {
        Weaken(Vec::new())
    }
    pub fn has(&self, w: Weakening) -> bool {
        self.0.contains(&w)
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn names(&self) -> Vec<&'static str> {
        self.0.iter().map(|w| w.name()).collect()
    }

    /// `no-pid-ns,hooks-writable`.
    pub fn parse(list: &str) -> Result<Self, String> {
        let mut out = Vec::new();
        for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let w = Weakening::ALL
                .into_iter()
                .find(|w| w.name() == word)
                .ok_or_else(|| {
                    let valid: Vec<_> = Weakening::ALL.iter().map(|w| w.name()).collect();
                    format!("unknown weakening `{word}`; valid: {}", valid.join(", "))
                })?;
            if !out.contains(&w) {
                out.push(w);
            }
        }
        Ok(Weaken(out))
    }
}

impl fmt::Display for Weaken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.names().join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_back() {
        for w in Weakening::ALL {
            assert_eq!(Weaken::parse(w.name()).unwrap(), Weaken(vec![w]));
        }
        assert_eq!(
            Weaken::parse("no-pid-ns, hooks-writable,no-pid-ns")
                .unwrap()
                .names(),
            ["no-pid-ns", "hooks-writable"]
        );
        assert_eq!(Weaken::parse("").unwrap(), Weaken::none());
        let e = Weaken::parse("no-pid-ns,everything").unwrap_err();
        assert!(
            e.starts_with("unknown weakening `everything`; valid: no-pid-ns,"),
            "{e}"
        );
    }
}
