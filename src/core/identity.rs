//! Who a hook-socket caller is, from the kernel: a request naming tab T
//! (by its secret) is T's only if the connecting process is T's program or
//! descends from it (T's program still has the start time recorded at
//! launch, so a reused PID does not count) and, where scopes exist, runs in
//! T's scope, in T's program's user and PID namespaces (a process inside
//! a sandbox under T's program, `nerdr sandbox -- CMD` in a tab, is not
//! T's program's equal). Otherwise the caller is treated as sandboxed, and
//! refused outright if T is not sandboxed (docs/ARCHITECTURE.md, "The
//! privilege model").
//! Pure: the connection and `/proc` hand in the facts.

/// What is known of the tab the secret names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabFacts {
    pub sandboxed: bool,
    pub pid: Option<u32>,
    pub start_recorded: Option<u64>,
    pub start_now: Option<u64>,
    /// The cgroup of the tab's program when it is a nerdr scope.
    pub scope: Option<String>,
    /// The user and PID namespaces of the tab's program.
    pub namespaces: Option<(u64, u64)>,
}

/// What the kernel says of the connecting process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerFacts {
    /// Its PID and its ancestors', nearest first (empty: unknown).
    pub ancestry: Vec<u32>,
    pub cgroup: Option<String>,
    pub namespaces: Option<(u64, u64)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    /// The tab's own program or one of its descendants.
    Verified,
    /// Not provably the tab's: it gets a sandboxed caller's powers.
    TreatedAsSandboxed,
    Refused(String),
}

pub fn identify(tab_id: &str, tab: &TabFacts, peer: &PeerFacts) -> Identity {
    let descends = match (tab.pid, tab.start_recorded, tab.start_now) {
        (Some(pid), Some(then), Some(now)) => then == now && peer.ancestry.contains(&pid),
        _ => false,
    };
    let in_scope = match &tab.scope {
        Some(scope) => peer.cgroup.as_deref() == Some(scope.as_str()),
        None => true,
    };
    let inside = descends && in_scope && !same_namespaces(tab, peer);
    match (descends && in_scope && !inside, tab.sandboxed) {
        (true, _) => Identity::Verified,
        (false, true) => Identity::TreatedAsSandboxed,
        (false, false) if inside => Identity::Refused(format!(
            "this connection comes from inside a sandbox (other user or PID namespaces) under \
             the program of tab {tab_id}, which is not marked sandboxed: a program in a sandbox \
             gets no unsandboxed tab's powers (mark the agent `sandboxed = true` to give it a \
             sandboxed agent's)"
        )),
        (false, false) => Identity::Refused(format!(
            "this connection is not from a program of tab {tab_id} (checked by the kernel's \
             record of the caller), and tab {tab_id} is not sandboxed: only its own programs \
             may use its NERDR_TAB"
        )),
    }
}

/// The caller shares the tab's program's namespaces (unknown on both
/// sides, where the platform has none, counts as shared; unknown on one
/// side does not).
fn same_namespaces(tab: &TabFacts, peer: &PeerFacts) -> bool {
    match (tab.namespaces, peer.namespaces) {
        (Some(a), Some(b)) => a == b,
        (None, None) => true,
        _ => false,
    }
}

/// Whether the caller is the tab's program itself (the process nerdr
/// started, still the same one, in its scope), not a process under it.
/// `nerdr sandbox` is its tab's program, and everything inside its
/// sandbox runs under it: this is what tells the two apart.
pub fn is_program(tab: &TabFacts, peer: &PeerFacts) -> bool {
    let same = match (tab.pid, tab.start_recorded, tab.start_now) {
        (Some(pid), Some(then), Some(now)) => then == now && peer.ancestry.first() == Some(&pid),
        _ => false,
    };
    let in_scope = match &tab.scope {
        Some(scope) => peer.cgroup.as_deref() == Some(scope.as_str()),
        None => true,
    };
    same && in_scope && same_namespaces(tab, peer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tab(
        sandboxed: bool,
        pid: Option<u32>,
        start_now: Option<u64>,
        scope: Option<&str>,
    ) -> TabFacts {
        TabFacts {
            sandboxed,
            pid,
            start_recorded: Some(7),
            start_now,
            scope: scope.map(String::from),
            namespaces: Some(HOST_NS),
        }
    }

    /// The namespaces of the tab's program, and a sandbox's under it.
    const HOST_NS: (u64, u64) = (4026531837, 4026531836);
    const SANDBOX_NS: (u64, u64) = (4026532500, 4026532501);

    fn peer(ancestry: &[u32], cgroup: Option<&str>) -> PeerFacts {
        PeerFacts {
            ancestry: ancestry.to_vec(),
            cgroup: cgroup.map(String::from),
            namespaces: Some(HOST_NS),
        }
    }

    fn in_ns(mut p: PeerFacts, ns: Option<(u64, u64)>) -> PeerFacts {
        p.namespaces = ns;
        p
    }

    #[test]
    fn every_row() {
        let sc = Some("/u/nerdr.slice/nerdr-agent-ab.scope");
        let other = Some("/u/nerdr.slice/nerdr-agent-cd.scope");
        use Identity::*;
        let refused = |i: &Identity| matches!(i, Refused(_));
        type Row = (&'static str, TabFacts, PeerFacts, fn(&Identity) -> bool);
        let rows: Vec<Row> = vec![
            (
                "the program itself",
                tab(false, Some(10), Some(7), None),
                peer(&[10, 1], None),
                |i| *i == Verified,
            ),
            (
                "a descendant",
                tab(false, Some(10), Some(7), None),
                peer(&[30, 20, 10, 1], None),
                |i| *i == Verified,
            ),
            (
                "in its scope",
                tab(false, Some(10), Some(7), sc),
                peer(&[30, 10], sc),
                |i| *i == Verified,
            ),
            (
                "descendant moved to another scope",
                tab(false, Some(10), Some(7), sc),
                peer(&[30, 10], other),
                refused,
            ),
            (
                "a stranger, unsandboxed tab",
                tab(false, Some(10), Some(7), None),
                peer(&[99, 1], None),
                refused,
            ),
            (
                "a stranger, sandboxed tab",
                tab(true, Some(10), Some(7), None),
                peer(&[99, 1], None),
                |i| *i == TreatedAsSandboxed,
            ),
            (
                "reused pid",
                tab(false, Some(10), Some(8), None),
                peer(&[10, 1], None),
                refused,
            ),
            (
                "program gone",
                tab(false, Some(10), None, None),
                peer(&[10, 1], None),
                refused,
            ),
            (
                "never started",
                tab(false, None, None, None),
                peer(&[10, 1], None),
                refused,
            ),
            (
                "unknown peer, sandboxed tab",
                tab(true, Some(10), Some(7), None),
                peer(&[], None),
                |i| *i == TreatedAsSandboxed,
            ),
            (
                "unknown peer, unsandboxed tab",
                tab(false, Some(10), Some(7), None),
                peer(&[], None),
                refused,
            ),
            (
                "inside a sandbox under an unsandboxed tab's program",
                tab(false, Some(10), Some(7), sc),
                in_ns(peer(&[40, 30, 10], sc), Some(SANDBOX_NS)),
                |i| matches!(i, Refused(w) if w.contains("inside a sandbox")),
            ),
            (
                "inside a sandbox under a sandboxed tab's program",
                tab(true, Some(10), Some(7), sc),
                in_ns(peer(&[40, 30, 10], sc), Some(SANDBOX_NS)),
                |i| *i == TreatedAsSandboxed,
            ),
            (
                "namespaces unreadable for the caller, unsandboxed tab",
                tab(false, Some(10), Some(7), None),
                in_ns(peer(&[30, 10], None), None),
                refused,
            ),
            (
                "no namespaces on either side (no such platform facts)",
                TabFacts {
                    namespaces: None,
                    ..tab(false, Some(10), Some(7), None)
                },
                in_ns(peer(&[30, 10], None), None),
                |i| *i == Verified,
            ),
        ];
        for (name, t, p, want) in rows {
            let got = identify("ab", &t, &p);
            assert!(want(&got), "{name}: {got:?}");
        }
    }

    #[test]
    fn only_the_program_itself_is_the_program() {
        let sc = Some("/u/nerdr.slice/nerdr-agent-ab.scope");
        let other = Some("/u/nerdr.slice/nerdr-agent-cd.scope");
        #[rustfmt::skip]
        let rows: &[(&str, TabFacts, PeerFacts, bool)] = &[
            ("the program itself", tab(true, Some(10), Some(7), None), peer(&[10, 1], None), true),
            ("itself, in its scope", tab(true, Some(10), Some(7), sc), peer(&[10, 1], sc), true),
            ("a process under it (inside its sandbox)", tab(true, Some(10), Some(7), sc), peer(&[30, 20, 10, 1], sc), false),
            ("its parent", tab(true, Some(10), Some(7), None), peer(&[5, 1], None), false),
            ("itself, moved to another scope", tab(true, Some(10), Some(7), sc), peer(&[10, 1], other), false),
            ("a reused pid", tab(true, Some(10), Some(8), None), peer(&[10, 1], None), false),
            ("program gone", tab(true, Some(10), None, None), peer(&[10, 1], None), false),
            ("never started", tab(true, None, None, None), peer(&[10, 1], None), false),
            ("unknown peer", tab(true, Some(10), Some(7), None), peer(&[], None), false),
            ("an unsandboxed tab's program", tab(false, Some(10), Some(7), None), peer(&[10, 1], None), true),
            ("its pid seen from other namespaces", tab(true, Some(10), Some(7), None), in_ns(peer(&[10, 1], None), Some(SANDBOX_NS)), false),
        ];
        for (name, t, p, want) in rows {
            assert_eq!(is_program(t, p), *want, "{name}");
        }
    }
}
