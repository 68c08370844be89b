//! Who may talk to the holder, and who the holder is: decided from facts the
//! kernel and the state dir give, never from what a peer says.
//!
//! Each side records `PID START_TIME` in the state dir when it takes its
//! role (`core.pid`, `holder.pid`); a peer is accepted only if its
//! `SO_PEERCRED` PID is the recorded one, with the recorded start time (so a
//! reused PID does not pass), and its uid is ours.

use std::path::Path;

/// What was gathered about a peer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerFacts {
    pub uid: u32,
    pub pid: u32,
    /// The peer's start time now, if its /proc entry was readable.
    pub start_time: Option<u64>,
    /// The peer's cgroup path (unified hierarchy), if known.
    pub cgroup: Option<String>,
}

/// `PID START_TIME` as recorded in the state dir.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recorded {
    pub pid: u32,
    pub start_time: u64,
}

pub fn verdict(
    role: &str,
    our_uid: u32,
    peer: &PeerFacts,
    recorded: Option<Recorded>,
) -> Result<(), String> {
    if peer.uid != our_uid {
        return Err(format!(
            "{role} peer runs as uid {}, not ours ({our_uid})",
            peer.uid
        ));
    }
    if let Some(cg) = &peer.cgroup {
        // A program nerdr started is never the core or the holder.
        let unit = cg.rsplit('/').next().unwrap_or("");
        if unit.starts_with("nerdr-agent-") || unit.starts_with("nerdr-term-") {
            return Err(format!(
                "{role} peer pid {} runs in {unit}, a program's scope",
                peer.pid
            ));
        }
    }
    let Some(rec) = recorded else {
        return Err(format!("no {role} is recorded in the state dir"));
    };
    if peer.pid != rec.pid {
        return Err(format!(
            "{role} peer pid {} is not the recorded {role} (pid {})",
            peer.pid, rec.pid
        ));
    }
    match peer.start_time {
        Some(t) if t == rec.start_time => Ok(()),
        Some(_) => Err(format!(
            "{role} peer pid {} started at another time than the recorded {role}: the PID was reused",
            peer.pid
        )),
        None => Err(format!("{role} peer pid {} cannot be inspected", peer.pid)),
    }
}

pub fn parse_recorded(text: &str) -> Option<Recorded> {
    let mut it = text.split_whitespace();
    let pid = it.next()?.parse().ok()?;
    let start_time = it.next()?.parse().ok()?;
    Some(Recorded { pid, start_time })
}

pub fn read_recorded(path: &Path) -> Option<Recorded> {
    parse_recorded(&std::fs::read_to_string(path).ok()?)
}

/// Record this process as `path`'s role, atomically.
pub fn record_self(path: &Path) -> std::io::Result<()> {
    let me = std::process::id();
    let start = crate::platform::proc_start_time(me)?;
    let tmp = path.with_extension(format!("tmp{me}"));
    std::fs::write(&tmp, format!("{me} {start}\n"))?;
    std::fs::rename(&tmp, path)
}

/// Gather the facts about the process at the other end of `sock`.
pub fn gather(sock: &impl std::os::fd::AsFd) -> std::io::Result<PeerFacts> {
    use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
    let cred = getsockopt(sock, PeerCredentials).map_err(std::io::Error::from)?;
    let pid = cred.pid() as u32;
    Ok(PeerFacts {
        uid: cred.uid(),
        pid,
        start_time: crate::platform::proc_start_time(pid).ok(),
        cgroup: crate::platform::cgroup_path(pid),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(uid: u32, pid: u32, start: Option<u64>, cg: Option<&str>) -> PeerFacts {
        PeerFacts {
            uid,
            pid,
            start_time: start,
            cgroup: cg.map(String::from),
        }
    }

    type Row = (
        &'static str,
        PeerFacts,
        Option<Recorded>,
        Result<(), &'static str>,
    );

    #[test]
    fn every_row() {
        let rec = Some(Recorded {
            pid: 10,
            start_time: 99,
        });
        let svc = Some("/user.slice/user-1000.slice/user@1000.service/app.slice/nerdr.service");
        let scope = Some("/user.slice/user@1000.service/nerdr.slice/nerdr-agent-ab.scope");
        let rows: Vec<Row> = vec![
            (
                "the recorded core",
                peer(1000, 10, Some(99), svc),
                rec,
                Ok(()),
            ),
            (
                "no cgroup known",
                peer(1000, 10, Some(99), None),
                rec,
                Ok(()),
            ),
            (
                "another user",
                peer(0, 10, Some(99), svc),
                rec,
                Err("uid 0"),
            ),
            (
                "another pid",
                peer(1000, 11, Some(99), svc),
                rec,
                Err("not the recorded"),
            ),
            (
                "reused pid",
                peer(1000, 10, Some(100), svc),
                rec,
                Err("reused"),
            ),
            (
                "vanished",
                peer(1000, 10, None, svc),
                rec,
                Err("cannot be inspected"),
            ),
            (
                "nothing recorded",
                peer(1000, 10, Some(99), svc),
                None,
                Err("no core is recorded"),
            ),
            (
                "an agent's scope",
                peer(1000, 10, Some(99), scope),
                rec,
                Err("a program's scope"),
            ),
        ];
        for (name, p, r, want) in rows {
            let got = verdict("core", 1000, &p, r);
            match (got, want) {
                (Ok(()), Ok(())) => {}
                (Err(e), Err(w)) => assert!(e.contains(w), "{name}: {e}"),
                (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn recorded_lines_parse() {
        assert_eq!(
            parse_recorded("12 345\n"),
            Some(Recorded {
                pid: 12,
                start_time: 345
            })
        );
        assert_eq!(parse_recorded("12"), None);
        assert_eq!(parse_recorded("x y"), None);
    }
}
