//! macOS: process facts from `proc_pidinfo`, peer PIDs from `LOCAL_PEERPID`.
//! Same signatures as `linux.rs`.

use std::io;
use std::os::fd::AsFd;

fn bsdinfo(pid: u32) -> io::Result<libc::proc_bsdinfo> {
    // SAFETY: proc_bsdinfo is plain data; proc_pidinfo writes at most
    // `size` bytes into it and returns how many it wrote.
    unsafe {
        let mut info: libc::proc_bsdinfo = std::mem::zeroed();
        let size = std::mem::size_of::<libc::proc_bsdinfo>() as libc::c_int;
        let n = libc::proc_pidinfo(
            pid as libc::c_int,
            libc::PROC_PIDTBSDINFO,
            0,
            &mut info as *mut _ as *mut libc::c_void,
            size,
        );
        if n != size {
            return Err(io::Error::last_os_error());
        }
        Ok(info)
    }
}

/// Start time in microseconds since the epoch: with the PID it names one
/// process.
pub fn proc_start_time(pid: u32) -> io::Result<u64> {
    let i = bsdinfo(pid)?;
    Ok(i.pbi_start_tvsec * 1_000_000 + i.pbi_start_tvusec)
}

pub fn session_id(pid: u32) -> io::Result<u32> {
    let sid = nix::unistd::getsid(Some(nix::unistd::Pid::from_raw(pid as i32)))?;
    Ok(sid.as_raw() as u32)
}

pub fn parent_pid(pid: u32) -> io::Result<u32> {
    Ok(bsdinfo(pid)?.pbi_ppid)
}

/// macOS has no pidfd: the start-time check alone guards against reuse.
pub fn peer_pidfd(_sock: &impl AsFd) -> Option<std::os::fd::OwnedFd> {
    None
}

pub fn pidfd_alive(_pidfd: &impl AsFd) -> bool {
    true
}

pub fn peer_pid(sock: &impl AsFd) -> io::Result<u32> {
    use nix::sys::socket::{getsockopt, sockopt::LocalPeerPid};
    Ok(getsockopt(sock, LocalPeerPid)? as u32)
}

/// macOS has no cgroups.
/// No namespaces on macOS.
pub fn namespaces(_pid: u32) -> Option<(u64, u64)> {
    None
}

pub fn cgroup_path(_pid: u32) -> Option<String> {
    None
}

/// macOS has no abstract sockets: a socket file in the per-user `$TMPDIR`
/// (`/var/folders/...`, 0700) stands in, mode 0600, replaced when stale.
fn named_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("{name}.sock"))
}

pub fn abstract_listener(name: &str) -> io::Result<std::os::unix::net::UnixListener> {
    use std::os::unix::fs::PermissionsExt;
    let path = named_path(name);
    if std::os::unix::net::UnixStream::connect(&path).is_err() {
        let _ = std::fs::remove_file(&path);
    }
    let l = std::os::unix::net::UnixListener::bind(&path)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
    Ok(l)
}

/// Whether `listener` is the one [`abstract_listener`] made for `name`.
pub fn listens_as(listener: &std::os::unix::net::UnixListener, name: &str) -> bool {
    listener
        .local_addr()
        .is_ok_and(|a| a.as_pathname() == Some(named_path(name).as_path()))
}

pub fn abstract_connect(name: &str) -> io::Result<std::os::unix::net::UnixStream> {
    std::os::unix::net::UnixStream::connect(named_path(name))
}

/// The executable file process `pid` runs, open (by the path the kernel
/// reports for it; macOS has no handle on the running image itself).
pub fn open_exe(pid: u32) -> io::Result<std::fs::File> {
    use std::os::unix::ffi::OsStrExt;
    // PROC_PIDPATHINFO_MAXSIZE.
    let mut buf = vec![0u8; 4096];
    // SAFETY: proc_pidpath writes at most `buf.len()` bytes into `buf` and
    // returns how many.
    let n = unsafe {
        libc::proc_pidpath(
            pid as libc::c_int,
            buf.as_mut_ptr().cast(),
            buf.len() as u32,
        )
    };
    if n <= 0 {
        return Err(io::Error::last_os_error());
    }
    buf.truncate(n as usize);
    std::fs::File::open(std::ffi::OsStr::from_bytes(&buf))
}

/// A private file for a hand-over's state: macOS has no anonymous file, so
/// one created 0600 in `dir` (the state dir) and unlinked at once.
pub fn private_file(dir: &std::path::Path, name: &str) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = dir.join(format!("{name}.{}", std::process::id()));
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    let _ = std::fs::remove_file(&path);
    Ok(f)
}
