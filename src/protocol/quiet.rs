//! A Unix stream split into a reader and a writer that the runtime watches
//! for reading only.
//!
//! Why: tokio registers a stream for both directions, edge-triggered, and
//! the kernel signals "writable" each time the peer takes bytes from the
//! socket. So every frame written woke the writing process once more, for
//! nothing, when the other side read it: a keystroke cost the window one
//! such wake-up, on a machine where each wake-up may wait for a CPU. Here
//! writes go straight to the socket; only when it is full is a watcher
//! for room registered, and it goes once a write fits again.

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};

/// The reading end; see the module doc.
pub struct Reader(Arc<AsyncFd<UnixStream>>);

/// The writing end; see the module doc.
pub struct Writer {
    sock: Arc<AsyncFd<UnixStream>>,
    /// A second descriptor of the socket, watched for room while a write
    /// does not fit.
    room: Option<AsyncFd<UnixStream>>,
}

/// Watch `s` for `interest` only.
fn watch(s: UnixStream, interest: Interest) -> io::Result<AsyncFd<UnixStream>> {
    s.set_nonblocking(true)?;
    // SAFETY: the `UnixStream` owns its descriptor and the `AsyncFd` owns
    // the stream until it drops: the descriptor stays open and the same
    // for as long as it is watched.
    unsafe { AsyncFd::register_with_interest(s, interest) }.map_err(|e| e.into_parts().1)
}

/// Split `stream` (a connected one, from the runtime) as the module doc
/// says. Must run inside the runtime.
pub fn split(stream: tokio::net::UnixStream) -> io::Result<(Reader, Writer)> {
    let sock = Arc::new(watch(stream.into_std()?, Interest::READABLE)?);
    Ok((Reader(sock.clone()), Writer { sock, room: None }))
}

impl Reader {
    /// Completes once the peer has closed its end, even with bytes it sent
    /// still unread (the kernel's `EPOLLRDHUP`); while it stays connected,
    /// unread bytes do not end it (`core::waiting::hung_up` for a stream
    /// tokio watches).
    pub async fn hung_up(&self) {
        use nix::sys::socket::{recv, MsgFlags};
        use std::os::fd::AsRawFd;
        loop {
            let Ok(mut guard) = self.0.readable().await else {
                return;
            };
            if guard.ready().is_read_closed() {
                return;
            }
            let mut byte = [0u8; 1];
            let fd = self.0.get_ref().as_raw_fd();
            // `try_io` clears the readiness on `WouldBlock`, so this does
            // not spin.
            let peeked = guard.try_io(|_| {
                recv(fd, &mut byte, MsgFlags::MSG_PEEK | MsgFlags::MSG_DONTWAIT)
                    .map_err(io::Error::from)
            });
            match peeked {
                Ok(Ok(0)) => return,
                // Bytes wait and the peer is still there: sleep until the
                // next event on the socket (more bytes, or the hang-up).
                Ok(Ok(_)) => guard.clear_ready(),
                Err(_would_block) => continue,
                Ok(Err(_)) => return,
            }
        }
    }
}

impl AsyncRead for Reader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            let mut guard = ready!(self.0.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            match guard.try_io(|s| s.get_ref().read(unfilled)) {
                Ok(Ok(n)) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                Err(_would_block) => continue,
            }
        }
    }
}

impl AsyncWrite for Writer {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        loop {
            if this.room.is_none() {
                match this.sock.get_ref().write(buf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        let again = this.sock.get_ref().try_clone()?;
                        this.room = Some(watch(again, Interest::WRITABLE)?);
                    }
                    done => return Poll::Ready(done),
                }
            }
            let room = this.room.as_ref().expect("watched just above");
            let mut guard = ready!(room.poll_write_ready(cx))?;
            match guard.try_io(|s| s.get_ref().write(buf)) {
                Ok(done) => {
                    drop(guard);
                    // Room again: stop watching, so reads by the peer
                    // wake nothing here.
                    this.room = None;
                    return Poll::Ready(done);
                }
                Err(_would_block) => continue,
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.sock.get_ref().shutdown(std::net::Shutdown::Write))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Both ways, and more than the socket holds: the writer waits for
    /// room and every byte arrives in order.
    #[tokio::test]
    async fn bytes_cross_both_ways_and_a_full_socket_waits_for_room() {
        let (a, b) = tokio::net::UnixStream::pair().unwrap();
        let (mut ar, mut aw) = split(a).unwrap();
        let (mut br, mut bw) = split(b).unwrap();
        let big: Vec<u8> = (0..4_000_000u32).map(|i| (i % 251) as u8).collect();
        let sent = big.clone();
        let writer = tokio::spawn(async move {
            aw.write_all(&sent).await.unwrap();
            aw.shutdown().await.unwrap();
        });
        let mut got = Vec::new();
        let read = br.read_to_end(&mut got);
        tokio::time::timeout(std::time::Duration::from_secs(20), read)
            .await
            .expect("the writer found room again")
            .unwrap();
        writer.await.unwrap();
        assert!(got == big, "{} of {} bytes, in order", got.len(), big.len());
        bw.write_all(b"back").await.unwrap();
        let mut four = [0u8; 4];
        ar.read_exact(&mut four).await.unwrap();
        assert_eq!(&four, b"back");
    }

    /// Unread bytes from a peer still there do not count as a hang-up; a
    /// close does, with or without bytes before it.
    #[tokio::test]
    async fn a_hang_up_is_seen_with_bytes_unread_and_only_then() {
        use std::time::Duration;
        for bytes_first in [false, true] {
            let (a, b) = tokio::net::UnixStream::pair().unwrap();
            let (ar, _aw) = split(a).unwrap();
            let (br, mut bw) = split(b).unwrap();
            if bytes_first {
                bw.write_all(b"more").await.unwrap();
                let early = tokio::time::timeout(Duration::from_millis(100), ar.hung_up()).await;
                assert!(early.is_err(), "bytes are no hang-up");
            }
            drop((br, bw));
            tokio::time::timeout(Duration::from_secs(5), ar.hung_up())
                .await
                .unwrap_or_else(|_| panic!("hang-up seen (bytes first: {bytes_first})"));
        }
    }
}
