//! The window's connection to the core, and getting it back when it drops
//! (the core restarted, was upgraded, crashed; over ssh, the link went)
//! or when the window moves to another session. Owns the connection's
//! reader and writer tasks and the reconnect attempts; when to try again
//! or give up is `backoff`'s (pure).
//!
//! What carries the connection is the [`Dial`]: this machine's client
//! socket, or `ssh HOST nerdr bridge` (`ssh_conn`). Either gives the
//! window the same [`Conn`], so the window above is one window, and only
//! the client protocol crosses the network: the window renders locally,
//! and the core's frame skipping (`core::painting`) paces a slow link as
//! it paces a slow terminal, since the window acknowledges the paint it
//! drew (`protocol::acks`) and the core holds the next frame while too
//! much of it is unacknowledged, wherever it waits.
//!
//! A window never starts a core or a socket itself when it reconnects:
//! under systemd the manager brings the core back (socket activation,
//! `Restart=on-failure`), and a window running an older build than the
//! new core would start the wrong one. Over ssh the bridge there connects
//! as any command there does.

use tokio::net::UnixStream;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::backoff::Failure;
pub use super::conn::Conn;
use super::conn::Ender;
use crate::client::{HandshakeError, Reopen, Welcome};
use crate::paths::Paths;
use crate::protocol::frame::{read_frame, write_frame, Frame};
use crate::protocol::quiet;
use crate::remote::target::Target;

/// How long a connected core may take to greet: a core just activated
/// greets once it has re-attached its programs.
pub const GREETING: std::time::Duration = std::time::Duration::from_secs(20);

/// ssh's options for a window's link, before the user's config (each
/// overrides it for this channel only): keepalive, so a link that died
/// silently (a suspended laptop, a network that changed under a NAT) is
/// noticed within about a minute (up to 15 s of quiet, then three
/// unanswered probes 15 s apart) rather than when TCP gives up, many
/// minutes later. nerdr itself runs no timer while connected.
pub const SSH_WINDOW_OPTIONS: &[&str] = &["-oServerAliveInterval=15", "-oServerAliveCountMax=3"];

/// And for a reconnect, while the window owns the terminal: no question
/// at the terminal (`BatchMode`: a passphrase prompt would land in the
/// middle of the window; a key in the agent or without a passphrase logs
/// in, anything else is shown as the reason and tried again), and a
/// network that does not answer is a failed attempt within 10 s.
pub const SSH_RECONNECT_OPTIONS: &[&str] = &[
    "-oServerAliveInterval=15",
    "-oServerAliveCountMax=3",
    "-oBatchMode=yes",
    "-oConnectTimeout=10",
];

/// Where the window's connection goes, each time it is opened.
#[derive(Clone)]
pub enum Dial {
    /// This machine's client socket.
    Local(Paths),
    /// The core on another host, through ssh and `nerdr bridge` there.
    Ssh(Target),
}

impl Dial {
    pub fn carrier(&self) -> super::backoff::Carrier {
        match self {
            Dial::Local(_) => super::backoff::Carrier::Local,
            Dial::Ssh(_) => super::backoff::Carrier::Ssh,
        }
    }
}

/// How much of the core's frames the window reads at once.
const READ_BUFFER: usize = 64 * 1024;

/// Split a welcomed connection into a writer task and a reader task;
/// `ack_every` is its core's offer of paint acknowledgements.
pub fn split(stream: UnixStream, ack_every: Option<u64>) -> std::io::Result<Conn> {
    // Watched for reading only (`protocol::quiet`): the core reading a
    // keystroke does not wake the window.
    let (read, mut write) = quiet::split(stream)?;
    // A frame's length and body in one read, and a burst of frames in a
    // few, not two reads each.
    let mut read = tokio::io::BufReader::with_capacity(READ_BUFFER, read);
    let (out, mut out_rx) = mpsc::channel::<Frame>(super::conn::TO_CORE_AHEAD);
    tokio::spawn(async move {
        while let Some(f) = out_rx.recv().await {
            if write_frame(&mut write, &f).await.is_err() {
                break;
            }
        }
    });
    let (frames_tx, frames) = mpsc::channel(super::conn::FRAMES_AHEAD);
    tokio::spawn(async move {
        loop {
            let f = read_frame(&mut read).await.map_err(|e| e.to_string());
            let end = f.is_err();
            if frames_tx.send(f).await.is_err() || end {
                break;
            }
        }
    });
    Ok(Conn {
        out,
        frames,
        ender: None,
        ack_every,
        // This machine's core paces its own frames (`core::painting`).
        waiting: None,
    })
}

/// Where the connection stands.
pub enum Link {
    /// Connected: the core's frames, and, over ssh, what ends ssh when
    /// this connection is replaced (held for its `Drop` alone) and the
    /// count of the frames' bytes.
    Up(
        mpsc::Receiver<Result<Frame, String>>,
        #[allow(dead_code)] Option<Ender>,
        Option<std::sync::Arc<super::conn::Waiting>>,
    ),
    /// The connection ended (seen while taking frames that were ready).
    Broken(String),
    /// An attempt is running.
    Opening(JoinHandle<Result<Conn, Failure>>),
    /// Waiting until the next attempt.
    Waiting(Instant),
}

pub enum Event {
    Frame(Frame),
    Lost(String),
    Opened(Conn),
    Failed(Failure),
    /// Time for the next attempt.
    Due,
}

impl Link {
    pub fn up(conn: Conn) -> (mpsc::Sender<Frame>, Link) {
        (conn.out, Link::Up(conn.frames, conn.ender, conn.waiting))
    }

    /// Start an attempt to connect and pass the handshake.
    pub fn open(dial: &Dial) -> Link {
        let dial = dial.clone();
        Link::Opening(tokio::spawn(async move { attempt(&dial).await }))
    }

    /// The next thing that happens to the connection. Cancel-safe: the
    /// window's loop polls it alongside keys and signals.
    pub async fn next(&mut self) -> Event {
        match self {
            Link::Up(frames, _, waiting) => match frames.recv().await {
                Some(Ok(f)) => Event::Frame(taken(waiting, f)),
                Some(Err(why)) => Event::Lost(why),
                None => Event::Lost("connection closed".into()),
            },
            Link::Broken(why) => Event::Lost(std::mem::take(why)),
            Link::Opening(task) => match task.await {
                Ok(Ok(conn)) => Event::Opened(conn),
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
        let Link::Up(frames, _, waiting) = self else {
            return None;
        };
        match frames.try_recv() {
            Ok(Ok(f)) => Some(taken(waiting, f)),
            Ok(Err(why)) => {
                *self = Link::Broken(why);
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

/// Frame `f`, taken: its bytes no longer wait (`conn::Waiting`).
fn taken(waiting: &Option<std::sync::Arc<super::conn::Waiting>>, f: Frame) -> Frame {
    if let Some(w) = waiting {
        w.took(f.body.len());
    }
    f
}

/// One attempt over `dial`, as far as a connection the window can use.
async fn attempt(dial: &Dial) -> Result<Conn, Failure> {
    match dial {
        Dial::Local(paths) => {
            let (stream, welcome) = local_attempt(paths).await?;
            split(stream, welcome.ack_every).map_err(|e| Failure::Down(e.to_string()))
        }
        Dial::Ssh(target) => {
            let target = target.clone();
            // An attempt dropped while it waits (the window detached or
            // switched) ends its ssh; once greeted, the slot lets it go and
            // the guard's end touches nothing.
            let slot = crate::client::child_slot::ChildSlot::default();
            let _guard = EndOnDrop(slot.clone());
            let opened = tokio::task::spawn_blocking(move || {
                crate::client::ssh_link::open_without_terminal(target, SSH_RECONNECT_OPTIONS, &slot)
            })
            .await
            .map_err(|e| Failure::Down(e.to_string()))?;
            match opened {
                Ok(link) => {
                    // The bridge's environment, for agents started from
                    // the window: that of a command run there now.
                    crate::client::over_ssh::set_env(link.greeting.env.clone());
                    Ok(super::ssh_conn::split(link.into_stream()))
                }
                Err(e) => Err(match e.downcast_ref::<crate::client::ssh_link::Refusal>() {
                    Some(_) => Failure::Refused(format!("{e:#}")),
                    None => Failure::Down(format!("{e:#}")),
                }),
            }
        }
    }
}

/// Ends the attempt's ssh when dropped before the attempt finished.
struct EndOnDrop(crate::client::child_slot::ChildSlot);

impl Drop for EndOnDrop {
    fn drop(&mut self) {
        self.0.end();
    }
}

/// One attempt at this machine's core: connect without starting
/// anything, then the handshake.
async fn local_attempt(paths: &Paths) -> Result<(UnixStream, Welcome), Failure> {
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
