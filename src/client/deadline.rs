//! A blocking reader that gives up at a deadline: `--host` reads ssh's
//! stdout blocking (a command asks, then waits), and a remote that took
//! the connection and then stalls (a hung core there, a link that went
//! silent) must not hang a one-shot command forever. Each read first
//! waits for the descriptor with `poll(2)` until the deadline, so there
//! is no timer thread and nothing to kill; without a deadline (the
//! window's stream, which may rightly be quiet for hours) it is a plain
//! read.

use std::io::{self, Read};
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

pub struct Deadlined<R> {
    inner: R,
    /// When reads stop waiting; `None`: they wait as long as it takes.
    pub deadline: Option<Instant>,
}

impl<R> Deadlined<R> {
    pub fn new(inner: R) -> Self {
        Deadlined {
            inner,
            deadline: None,
        }
    }

    /// Reads from now on give up `within` from now.
    pub fn within(&mut self, within: Duration) {
        self.deadline = Some(Instant::now() + within);
    }

    pub fn into_inner(self) -> R {
        self.inner
    }
}

impl<R: Read + AsFd> Read for Deadlined<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(at) = self.deadline {
            wait_readable(&self.inner, at)?;
        }
        self.inner.read(buf)
    }
}

/// Wait for our own `child` to end, at most `grace`; then end it (by its
/// handle) and reap it. A far end that keeps the channel open after
/// answering, or a login's background job holding it, would otherwise
/// keep a command waiting for ssh forever. Watched through a pidfd, which
/// turns readable when the process ends: no timer, no polling. Where
/// there is no pidfd (an old kernel, not Linux) it waits as `wait` does.
pub fn wait_child_at_most(
    child: &mut std::process::Child,
    grace: Duration,
) -> io::Result<std::process::ExitStatus> {
    if let Some(status) = child.try_wait()? {
        return Ok(status);
    }
    if let Some(pidfd) = pidfd(child.id()) {
        if wait_readable(&pidfd, Instant::now() + grace).is_err() {
            let _ = child.kill();
        }
    }
    child.wait()
}

#[cfg(target_os = "linux")]
pub(super) fn pidfd(pid: u32) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1.
    // The pid is our own child's, not reaped yet, so it names that child.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    // SAFETY: a fresh descriptor that nothing else owns.
    (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
}

#[cfg(not(target_os = "linux"))]
pub(super) fn pidfd(_pid: u32) -> Option<std::os::fd::OwnedFd> {
    None
}

/// Wait until `fd` has something to read (or its writer closed it), or
/// fail with `TimedOut` at `at`.
fn wait_readable(fd: &impl AsFd, at: Instant) -> io::Result<()> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    loop {
        let left = at.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "no answer in time"));
        }
        // poll takes milliseconds in an i32; a longer wait comes round again.
        let ms = left.as_millis().clamp(1, i32::MAX as u128) as i32;
        let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLIN)];
        match poll(
            &mut fds,
            PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX),
        ) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => continue,
            Ok(_) => return Ok(()),
            Err(e) => return Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::net::UnixStream;

    #[test]
    fn a_child_that_does_not_end_is_ended_after_the_grace() {
        let mut quick = std::process::Command::new("true").spawn().unwrap();
        let status = wait_child_at_most(&mut quick, Duration::from_secs(30)).unwrap();
        assert!(status.success());
        let mut stuck = std::process::Command::new("sleep")
            .arg("600")
            .spawn()
            .unwrap();
        let t = Instant::now();
        let status = wait_child_at_most(&mut stuck, Duration::from_millis(200)).unwrap();
        assert!(!status.success(), "{status:?}");
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "waited {:?}",
            t.elapsed()
        );
    }

    #[test]
    fn a_silent_peer_times_out_and_a_talking_one_is_read() {
        let (mut a, b) = UnixStream::pair().unwrap();
        let mut r = Deadlined::new(b);
        r.within(Duration::from_millis(50));
        let started = Instant::now();
        let mut buf = [0u8; 4];
        let e = r.read(&mut buf).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        assert!(started.elapsed() >= Duration::from_millis(50));
        a.write_all(b"hi").unwrap();
        r.within(Duration::from_secs(5));
        assert_eq!(r.read(&mut buf).unwrap(), 2);
        // No deadline: a plain read (the peer closing ends it).
        r.deadline = None;
        drop(a);
        assert_eq!(r.read(&mut buf).unwrap(), 0);
    }
}
