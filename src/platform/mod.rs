//! What nerdr needs from the operating system beyond std, behind identical
//! signatures per platform.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub use linux::*;

#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
pub use macos::*;

/// What the kernel says of a socket's peer, read so that a peer which exits
/// meanwhile (its PID then free for another process) yields nothing rather
/// than a stranger's facts: the connecting process is held by a pidfd where
/// the kernel offers one, else by its start time, before and after reading.
pub struct PeerProcess {
    /// The peer's PID, then its ancestors' (nearest first).
    pub ancestry: Vec<u32>,
    pub cgroup: Option<String>,
    pub session: Option<u32>,
    /// Its user and PID namespaces (see [`namespaces`]).
    pub namespaces: Option<(u64, u64)>,
}

pub fn peer_process(sock: &impl std::os::fd::AsFd) -> Option<PeerProcess> {
    let pid = peer_pid(sock).ok()?;
    let pidfd = peer_pidfd(sock);
    let started = proc_start_time(pid).ok()?;
    let facts = PeerProcess {
        ancestry: ancestry(pid),
        cgroup: cgroup_path(pid),
        session: session_id(pid).ok(),
        namespaces: namespaces(pid),
    };
    let same = match &pidfd {
        Some(fd) => pidfd_alive(fd),
        None => true,
    } && proc_start_time(pid).ok() == Some(started);
    same.then_some(facts)
}

/// `pid` and its ancestors up to PID 1, nearest first. Stops early at a
/// process that is gone or unreadable.
pub fn ancestry(pid: u32) -> Vec<u32> {
    let mut chain = vec![pid];
    let mut cur = pid;
    while cur > 1 && chain.len() < 4096 {
        match parent_pid(cur) {
            Ok(p) if p != 0 && !chain.contains(&p) => {
                chain.push(p);
                cur = p;
            }
            _ => break,
        }
    }
    chain
}

#[cfg(all(test, target_os = "linux"))]
mod peer_tests {
    use super::*;
    use std::os::unix::net::UnixListener;

    #[test]
    fn a_live_peer_is_described_and_a_gone_one_is_not() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        let me = peer_process(&a).expect("our own end");
        assert_eq!(me.ancestry[0], std::process::id());

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let listener = UnixListener::bind(&path).unwrap();
        let mut child = std::process::Command::new("python3")
            .args([
                "-c",
                "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])",
            ])
            .arg(&path)
            .spawn()
            .unwrap();
        let (conn, _) = listener.accept().unwrap();
        child.wait().unwrap();
        // The connecting process is gone: its PID may name anyone now.
        assert!(peer_process(&conn).is_none());
    }
}
