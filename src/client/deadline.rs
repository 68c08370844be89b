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
