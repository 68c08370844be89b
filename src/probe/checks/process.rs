//! The probe's attempts on nerdr's processes: reading their `/proc`
//! entries, taking a descriptor through a pidfd, attaching with ptrace;
//! each first makes sure the PID here is the process the core meant.

use std::fs::File;
use std::io::Read;

use super::{errno, Got};
use crate::probe::plan::ProcWay;

#[cfg(target_os = "linux")]
pub(super) fn attempt(pid: u32, start_time: u64, way: ProcWay) -> Result<Got, String> {
    use crate::platform::proc_start_time;
    let by_proc = || -> Result<(), String> {
        match proc_start_time(pid) {
            Ok(t) if t == start_time => Ok(()),
            Ok(_) => Err(format!("pid {pid} here is another process")),
            Err(e) => Err(format!("/proc/{pid}: {e}")),
        }
    };
    match way {
        ProcWay::Environ => {
            by_proc()?;
            let mut f = File::open(format!("/proc/{pid}/environ")).map_err(errno)?;
            let mut b = [0u8; 16];
            f.read(&mut b).map_err(errno)?;
            Ok((true, "read".into()))
        }
        ProcWay::Fd => {
            by_proc()?;
            std::fs::read_dir(format!("/proc/{pid}/fd")).map_err(errno)?;
            Ok((true, "listed".into()))
        }
        ProcWay::Mem => {
            by_proc()?;
            File::open(format!("/proc/{pid}/mem")).map_err(errno)?;
            Ok((true, "opened".into()))
        }
        ProcWay::PidfdGetfd => {
            let pidfd = Pidfd::open(pid, start_time)?;
            // Any descriptor will do; the core and the holder always have
            // their standard ones and sockets among the first few.
            for target in 0..64 {
                match pidfd.getfd(target) {
                    Ok(fd) => {
                        drop(fd);
                        return Ok((true, format!("took its descriptor {target}")));
                    }
                    Err(e) if e.raw_os_error() == Some(libc::EBADF) => continue,
                    Err(e) => return Err(errno(e)),
                }
            }
            Err("no descriptor could be taken".into())
        }
        ProcWay::Ptrace => {
            // The pidfd pins the process while its identity is checked.
            let _pidfd = Pidfd::open(pid, start_time)?;
            ptrace_attach_detach(pid)
        }
    }
}

#[cfg(not(target_os = "linux"))]
pub(super) fn attempt(_pid: u32, _start_time: u64, _way: ProcWay) -> Result<Got, String> {
    Err("not tried on this system".into())
}

#[cfg(target_os = "linux")]
struct Pidfd(std::os::fd::OwnedFd);

#[cfg(target_os = "linux")]
impl Pidfd {
    /// A pidfd for `pid` as this sandbox numbers processes, if it is the
    /// process the core meant. A PID namespace of the sandbox's own numbers
    /// its processes afresh: the same number there is another process.
    fn open(pid: u32, start_time: u64) -> Result<Pidfd, String> {
        use std::os::fd::FromRawFd;
        // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
        if fd < 0 {
            return Err(errno(std::io::Error::last_os_error()));
        }
        // SAFETY: a fresh descriptor that nothing else owns.
        let pidfd = Pidfd(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) });
        match pidfd.identity() {
            // Unverifiable (no /proc here): count it as the real one, so a
            // sandbox without /proc cannot hide a reachable process.
            None => Ok(pidfd),
            Some(t) if t == start_time => Ok(pidfd),
            Some(_) => Err(format!("pid {pid} here is another process")),
        }
    }

    /// The start time of the process the pidfd refers to, read through the
    /// pidfd's own `Pid:` in /proc/self/fdinfo (numbered as this /proc
    /// numbers processes).
    fn identity(&self) -> Option<u64> {
        use std::os::fd::AsRawFd;
        let info =
            std::fs::read_to_string(format!("/proc/self/fdinfo/{}", self.0.as_raw_fd())).ok()?;
        let pid: i64 = info
            .lines()
            .find_map(|l| l.strip_prefix("Pid:"))?
            .trim()
            .parse()
            .ok()?;
        if pid <= 0 {
            // Not in this /proc's namespace: another process than ours.
            return Some(u64::MAX);
        }
        crate::platform::proc_start_time(pid as u32).ok()
    }

    fn getfd(&self, target: i32) -> std::io::Result<std::os::fd::OwnedFd> {
        use std::os::fd::{AsRawFd, FromRawFd};
        // SAFETY: pidfd_getfd takes a pidfd, a target fd number and flags;
        // it returns a new fd or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_getfd, self.0.as_raw_fd(), target, 0) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor that nothing else owns.
        Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
    }
}

/// Attach with `PTRACE_SEIZE` (which does not stop the process), then stop
/// it for an instant with `PTRACE_INTERRUPT` only so it can be detached
/// (the kernel detaches only a stopped tracee). A signal it was about to
/// receive is handed back on detach.
#[cfg(target_os = "linux")]
fn ptrace_attach_detach(pid: u32) -> Result<Got, String> {
    use nix::sys::ptrace;
    let target = nix::unistd::Pid::from_raw(pid as i32);
    ptrace::seize(target, ptrace::Options::empty()).map_err(|e| errno(std::io::Error::from(e)))?;
    if ptrace::interrupt(target).is_err() {
        // Exiting detaches as well; the probe exits right after.
        return Ok((true, "attached (left to detach on exit)".into()));
    }
    // The wait and the detach stay raw: the signal held back may be a
    // real-time one, which nix's `Signal` (and so its `WaitStatus` and
    // `detach`) cannot carry, and it must reach the process all the same.
    let pid = pid as libc::pid_t;
    let null = std::ptr::null_mut::<libc::c_void>();
    let mut status = 0;
    // SAFETY: waits for the tracee's stop; status is a valid out-pointer.
    let waited = unsafe { libc::waitpid(pid, &mut status, libc::__WALL) };
    let signal = if waited == pid
        && libc::WIFSTOPPED(status)
        && (status >> 16) == 0
        && libc::WSTOPSIG(status) != libc::SIGTRAP
    {
        // A signal-delivery stop: deliver the signal after all.
        libc::WSTOPSIG(status) as usize
    } else {
        0
    };
    // SAFETY: detach, passing on any signal held back.
    unsafe { libc::ptrace(libc::PTRACE_DETACH, pid, null, signal as *mut libc::c_void) };
    Ok((true, "attached and detached".into()))
}
