//! Linux: process facts from `/proc`, peer credentials from the kernel.

use std::io;
use std::os::fd::AsFd;

/// Field 22 of `/proc/PID/stat` (start time in clock ticks since boot):
/// with the PID it names one process for the life of the machine.
pub fn proc_start_time(pid: u32) -> io::Result<u64> {
    stat_field(pid, 22)
}

/// The session id (field 6 of `/proc/PID/stat`): every program nerdr starts
/// leads a session of its own, which its descendants keep unless they make
/// a new one.
pub fn session_id(pid: u32) -> io::Result<u32> {
    stat_field(pid, 6).map(|v| v as u32)
}

/// The parent PID (field 4 of `/proc/PID/stat`).
pub fn parent_pid(pid: u32) -> io::Result<u32> {
    stat_field(pid, 4).map(|v| v as u32)
}

fn stat_field(pid: u32, field: usize) -> io::Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    parse_stat_field(&stat, field).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("/proc/{pid}/stat has no field {field}"),
        )
    })
}

/// Fields are counted from 1 as in proc(5). The command name (field 2) may
/// hold spaces and parentheses, so counting starts after its last `)`.
pub fn parse_stat_field(stat: &str, field: usize) -> Option<u64> {
    if field < 3 {
        return None;
    }
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(field - 3)?.parse().ok()
}

/// The process at the other end of a Unix socket, held by a pidfd where
/// the kernel offers one (`SO_PEERPIDFD`, Linux 6.5), so that what `/proc`
/// said about its PID can be checked to still be about it.
pub fn peer_pidfd(sock: &impl AsFd) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::{AsRawFd, FromRawFd};
    // From the kernel's uapi; libc does not export it for every target.
    const SO_PEERPIDFD: libc::c_int = 77;
    let mut fd: libc::c_int = -1;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: SO_PEERPIDFD writes one int (a new fd we then own) into the
    // buffer we pass, and its length into `len`.
    let rc = unsafe {
        libc::getsockopt(
            sock.as_fd().as_raw_fd(),
            libc::SOL_SOCKET,
            SO_PEERPIDFD,
            (&mut fd as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    // SAFETY: on success the kernel handed us a fresh descriptor.
    (rc == 0 && fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

/// Whether the process a pidfd holds is still running (not yet reaped or
/// exited): only then does its PID still name it.
pub fn pidfd_alive(pidfd: &impl AsFd) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: signal 0 sends nothing; it only checks the process exists.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_fd().as_raw_fd(),
            0,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    // Only ESRCH says it is gone; EPERM means it exists but may not be
    // signalled, and any other error leaves the start-time check to decide.
    rc == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// The PID of the process at the other end of a Unix socket, as the kernel
/// recorded it at connect time.
pub fn peer_pid(sock: &impl AsFd) -> io::Result<u32> {
    use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
    let cred = getsockopt(sock, PeerCredentials).map_err(io::Error::from)?;
    Ok(cred.pid() as u32)
}

/// The process's cgroup in the unified hierarchy (`0::/path`), or in the
/// named systemd hierarchy on hybrid systems.
/// The inodes of `pid`'s user and PID namespaces: a process inside a
/// sandbox (bubblewrap, a container) has others than the program that
/// started it. `None` when they cannot be read.
pub fn namespaces(pid: u32) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let ino = |ns: &str| {
        std::fs::metadata(format!("/proc/{pid}/ns/{ns}"))
            .ok()
            .map(|m| m.ino())
    };
    Some((ino("user")?, ino("pid")?))
}

pub fn cgroup_path(pid: u32) -> Option<String> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    parse_cgroup(&text)
}

pub fn parse_cgroup(text: &str) -> Option<String> {
    let line = |prefix: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(prefix))
            .filter(|p| *p != "/")
            .map(String::from)
    };
    line("0::").or_else(|| line("1:name=systemd:")).or_else(|| {
        text.lines()
            .find_map(|l| l.split_once(":name=systemd:").map(|(_, p)| p.to_string()))
    })
}

/// A listener on an abstract socket: no file, gone with its process.
pub fn abstract_listener(name: &str) -> io::Result<std::os::unix::net::UnixListener> {
    use std::os::linux::net::SocketAddrExt;
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())?;
    std::os::unix::net::UnixListener::bind_addr(&addr)
}

pub fn abstract_connect(name: &str) -> io::Result<std::os::unix::net::UnixStream> {
    use std::os::linux::net::SocketAddrExt;
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())?;
    std::os::unix::net::UnixStream::connect_addr(&addr)
}

/// Whether `listener` is the one [`abstract_listener`] made for `name`: the
/// kernel lets one socket at a time hold an abstract name.
pub fn listens_as(listener: &std::os::unix::net::UnixListener, name: &str) -> bool {
    use std::os::linux::net::SocketAddrExt;
    listener
        .local_addr()
        .is_ok_and(|a| a.as_abstract_name() == Some(name.as_bytes()))
}

/// The executable file process `pid` runs, open: the running image, even
/// if its path was replaced or removed since.
pub fn open_exe(pid: u32) -> io::Result<std::fs::File> {
    std::fs::File::open(format!("/proc/{pid}/exe"))
}

/// A file that has no name anywhere, readable and writable through the
/// returned handle only (close-on-exec): a hand-over's state, which holds
/// every tab's screen, must never be openable by another process, not even
/// for the moment between creating and unlinking a named file.
pub fn private_file(_dir: &std::path::Path, name: &str) -> io::Result<std::fs::File> {
    use nix::sys::memfd::{memfd_create, MemFdCreateFlag};
    let name = std::ffi::CString::new(name).map_err(io::Error::other)?;
    let fd = memfd_create(&name, MemFdCreateFlag::MFD_CLOEXEC)?;
    Ok(std::fs::File::from(fd))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_survive_odd_command_names() {
        let stat = "42 (a) b (c)) S 7 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 12345 0";
        assert_eq!(parse_stat_field(stat, 4), Some(7));
        assert_eq!(parse_stat_field(stat, 22), Some(12345));
        assert_eq!(parse_stat_field(stat, 99), None);
        assert_eq!(parse_stat_field("garbage", 4), None);
    }

    #[test]
    fn cgroup_lines() {
        let hybrid = "9:name=systemd:/user.slice/a.scope\n0::/user.slice/a.scope\n";
        assert_eq!(parse_cgroup(hybrid).as_deref(), Some("/user.slice/a.scope"));
        let v1 = "4:memory:/x\n1:name=systemd:/nerdr.slice/nerdr-agent-1.scope\n0::/\n";
        assert_eq!(
            parse_cgroup(v1).as_deref(),
            Some("/nerdr.slice/nerdr-agent-1.scope")
        );
        let named9 = "9:name=systemd:/s.scope\n0::/\n";
        assert_eq!(parse_cgroup(named9).as_deref(), Some("/s.scope"));
        assert_eq!(parse_cgroup("0::/\n"), None);
    }

    /// The hand-over's file: close-on-exec (no program a tab runs gets
    /// every screen), nameless, and made without sealing, as before nix.
    #[test]
    fn the_private_file_is_a_close_on_exec_memfd() {
        use nix::fcntl::{fcntl, FcntlArg, FdFlag, SealFlag};
        use std::io::{Read, Seek, Write};
        use std::os::fd::AsRawFd;
        let mut f = private_file(std::path::Path::new("/nonexistent"), "nerdr-test").unwrap();
        let raw = f.as_raw_fd();
        let flags = FdFlag::from_bits_truncate(fcntl(raw, FcntlArg::F_GETFD).unwrap());
        assert!(flags.contains(FdFlag::FD_CLOEXEC));
        let seals = SealFlag::from_bits_truncate(fcntl(raw, FcntlArg::F_GET_SEALS).unwrap());
        assert_eq!(seals, SealFlag::F_SEAL_SEAL);
        let target = std::fs::read_link(format!("/proc/self/fd/{raw}")).unwrap();
        assert!(
            target.to_string_lossy().starts_with("/memfd:nerdr-test"),
            "{target:?}"
        );
        f.write_all(b"state").unwrap();
        f.rewind().unwrap();
        let mut back = String::new();
        f.read_to_string(&mut back).unwrap();
        assert_eq!(back, "state");
        assert!(private_file(std::path::Path::new("/"), "a\u{0}b").is_err());
    }

    #[test]
    fn our_own_process_is_readable() {
        let me = std::process::id();
        assert!(proc_start_time(me).unwrap() > 0);
        assert_eq!(
            parent_pid(me).unwrap(),
            nix::unistd::getppid().as_raw() as u32
        );
        assert_eq!(super::super::ancestry(me)[0], me);
        assert!(super::super::ancestry(me).len() >= 2);
    }
}
