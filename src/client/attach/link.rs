//! The window's connection to the core, and getting it back when it drops
//! (the core restarted, was upgraded, crashed) or when the window moves to
//! another session. Owns the connection's reader and writer tasks, the
//! reconnect attempts and when to give up ([`step`], pure).
//!
//! While disconnected the window tries again after 50 ms, doubling up to
//! 1 s between attempts; once connected no timer runs, so an idle window
//! costs no CPU. A window never starts a core or a socket itself: under
//! systemd the manager brings the core back (socket activation,
//! `Restart=on-failure`), and a window running an older build than the
//! new core would start the wrong one. It gives up after [`GIVE_UP`]
//! without a core, after [`STOPPED_GIVE_UP`] when the sockets were
//! stopped (that is deliberate: `systemctl --user stop`), and at once when
//! the core answers but refuses it (another protocol version after an
//! upgrade: retrying cannot help).

use std::time::Duration;

use tokio::net::UnixStream;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::client::{HandshakeError, Reopen};
use crate::paths::Paths;
use crate::protocol::frame::{read_frame, write_frame, Frame, FrameError};
use crate::protocol::quiet;

/// The first wait after the connection drops.
pub const FIRST_DELAY: Duration = Duration::from_millis(50);
/// The longest wait between two attempts.
pub const MAX_DELAY: Duration = Duration::from_secs(1);
/// How long a window waits for a core to come back before it gives up.
pub const GIVE_UP: Duration = Duration::from_secs(60);
/// How long it waits when the socket units were stopped: a reinstall
/// restarts them within a moment, a `systemctl --user stop` is for good.
pub const STOPPED_GIVE_UP: Duration = Duration::from_secs(5);
/// How long a connected core may take to greet: a core just activated
/// greets once it has re-attached its programs.
pub const GREETING: Duration = Duration::from_secs(20);

/// How much of the core's frames the window reads at once.
const READ_BUFFER: usize = 64 * 1024;

/// Why an attempt to reach the core failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// Nothing answers, or the connection broke: the core may come back.
    Down(String),
    /// The socket units are stopped (systemd units installed).
    Stopped(String),
    /// The core answered and refused this window: it will again.
    Refused(String),
}

/// What the window does after a failed attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    RetryIn(Duration),
    /// Stop trying; the window ends with this reason.
    GiveUp(String),
}

/// Pure: after an attempt failed with `failure`, `elapsed` into the outage,
/// having waited `delay` before it: try again (and when), or give up.
pub fn step(elapsed: Duration, delay: Duration, failure: &Failure) -> Step {
    let next = (delay * 2).clamp(FIRST_DELAY, MAX_DELAY);
    match failure {
        Failure::Refused(why) => Step::GiveUp(why.clone()),
        Failure::Stopped(why) if elapsed >= STOPPED_GIVE_UP => Step::GiveUp(why.clone()),
        Failure::Down(why) if elapsed >= GIVE_UP => Step::GiveUp(format!(
            "no core came back within {} s: {why}",
            GIVE_UP.as_secs()
        )),
        Failure::Stopped(_) | Failure::Down(_) => Step::RetryIn(next),
    }
}

/// A connection's ends, as the window uses them.
pub struct Conn {
    /// Frames to the core (a writer task sends them in order).
    pub out: mpsc::UnboundedSender<Frame>,
    frames: mpsc::UnboundedReceiver<Result<Frame, FrameError>>,
}

/// Split a welcomed connection into a writer task and a reader task.
pub fn split(stream: UnixStream) -> std::io::Result<Conn> {
    // Watched for reading only (`protocol::quiet`): the core reading a
    // keystroke does not wake the window.
    let (read, mut write) = quiet::split(stream)?;
    // A frame's length and body in one read, and a burst of frames in a
    // few, not two reads each.
    let mut read = tokio::io::BufReader::with_capacity(READ_BUFFER, read);
    let (out, mut out_rx) = mpsc::unbounded_channel::<Frame>();
    tokio::spawn(async move {
        while let Some(f) = out_rx.recv().await {
            if write_frame(&mut write, &f).await.is_err() {
                break;
            }
        }
    });
    let (frames_tx, frames) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        loop {
            let f = read_frame(&mut read).await;
            let end = f.is_err();
            if frames_tx.send(f).is_err() || end {
                break;
            }
        }
    });
    Ok(Conn { out, frames })
}

/// Where the connection stands.
pub enum Link {
    Up(mpsc::UnboundedReceiver<Result<Frame, FrameError>>),
    /// The connection ended (seen while taking frames that were ready).
    Broken(String),
    /// An attempt is running.
    Opening(JoinHandle<Result<UnixStream, Failure>>),
    /// Waiting until the next attempt.
    Waiting(Instant),
}

pub enum Event {
    Frame(Frame),
    Lost(String),
    Opened(UnixStream),
    Failed(Failure),
    /// Time for the next attempt.
    Due,
}

impl Link {
    pub fn up(conn_frames: Conn) -> (mpsc::UnboundedSender<Frame>, Link) {
        (conn_frames.out, Link::Up(conn_frames.frames))
    }

    /// Start an attempt to connect and pass the handshake.
    pub fn open(paths: &Paths) -> Link {
        let paths = paths.clone();
        Link::Opening(tokio::spawn(async move { attempt(&paths).await }))
    }

    /// The next thing that happens to the connection. Cancel-safe: the
    /// window's loop polls it alongside keys and signals.
    pub async fn next(&mut self) -> Event {
        match self {
            Link::Up(frames) => match frames.recv().await {
                Some(Ok(f)) => Event::Frame(f),
                Some(Err(e)) => Event::Lost(e.to_string()),
                None => Event::Lost("connection closed".into()),
            },
            Link::Broken(why) => Event::Lost(std::mem::take(why)),
            Link::Opening(task) => match task.await {
                Ok(Ok(stream)) => Event::Opened(stream),
                Ok(Err(f)) => Event::Failed(f),
                Err(e) => Event::Failed(Failure::Down(e.to_string())),
            },
            Link::Waiting(at) => {
                tokio::time::sleep_until(*at).await;
                Event::Due
            }
        }
    }

    /// A frame that has already arrived, if any, so a burst is painted once.
    pub fn ready(&mut self) -> Option<Frame> {
        let Link::Up(frames) = self else {
            return None;
        };
        match frames.try_recv() {
            Ok(Ok(f)) => Some(f),
            Ok(Err(e)) => {
                *self = Link::Broken(e.to_string());
                None
            }
            Err(mpsc::error::TryRecvError::Empty) => None,
            Err(mpsc::error::TryRecvError::Disconnected) => {
                *self = Link::Broken("connection closed".into());
                None
            }
        }
    }
}

/// One attempt: connect without starting anything, then the handshake.
async fn attempt(paths: &Paths) -> Result<UnixStream, Failure> {
    let stream = match crate::client::reopen(paths).await {
        Reopen::Connected(s) => s,
        Reopen::Down(why) => return Err(Failure::Down(why)),
        Reopen::Stopped(why) => return Err(Failure::Stopped(why)),
    };
    match tokio::time::timeout(GREETING, crate::client::handshake(stream, paths)).await {
        Err(_) => Err(Failure::Down(format!(
            "the core took the connection but did not greet within {} s",
            GREETING.as_secs()
        ))),
        Ok(Ok(s)) => Ok(s),
        Ok(Err(HandshakeError::Broken(why))) => Err(Failure::Down(why)),
        Ok(Err(HandshakeError::Refused(why))) => Err(Failure::Refused(why)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn every_failure_retries_with_a_bounded_backoff_or_gives_up() {
        let down = Failure::Down("connection refused".into());
        let stopped = Failure::Stopped("nerdr-client.socket is stopped".into());
        let refused = Failure::Refused("protocol 7 and 6".into());
        let rows: &[(&str, Duration, Duration, &Failure, Step)] = &[
            (
                "first retry doubles",
                ms(50),
                ms(50),
                &down,
                Step::RetryIn(ms(100)),
            ),
            ("doubling", ms(400), ms(200), &down, Step::RetryIn(ms(400))),
            (
                "capped at 1 s",
                ms(3000),
                ms(800),
                &down,
                Step::RetryIn(ms(1000)),
            ),
            (
                "stays capped",
                ms(30_000),
                ms(1000),
                &down,
                Step::RetryIn(ms(1000)),
            ),
            (
                "a zero delay starts at 50 ms",
                ms(0),
                ms(0),
                &down,
                Step::RetryIn(ms(50)),
            ),
            (
                "down for the whole minute",
                GIVE_UP,
                ms(1000),
                &down,
                Step::GiveUp("no core came back within 60 s: connection refused".into()),
            ),
            (
                "stopped, a moment",
                ms(1000),
                ms(400),
                &stopped,
                Step::RetryIn(ms(800)),
            ),
            (
                "stopped for good",
                STOPPED_GIVE_UP,
                ms(1000),
                &stopped,
                Step::GiveUp("nerdr-client.socket is stopped".into()),
            ),
            (
                "refused at once",
                ms(0),
                ms(50),
                &refused,
                Step::GiveUp("protocol 7 and 6".into()),
            ),
        ];
        for (case, elapsed, delay, failure, want) in rows {
            assert_eq!(step(*elapsed, *delay, failure), *want, "{case}");
        }
    }
}
