//! The proxy's upstream stream: counts the bytes each way for the audit
//! trail, and notes activity for the idle timeout.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use super::idle::Activity;

/// An upstream stream that counts the bytes it carries each way and
/// notes when it last carried any (every byte of a tunnel or exchange
/// passes it, one way or the other).
pub(super) struct Counted {
    pub inner: TcpStream,
    pub up: u64,
    pub down: u64,
    pub activity: Activity,
}

impl Counted {
    pub fn new(inner: TcpStream) -> Counted {
        Counted {
            inner,
            up: 0,
            down: 0,
            activity: Activity::new(),
        }
    }
}

impl AsyncRead for Counted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        let n = (buf.filled().len() - before) as u64;
        if n > 0 {
            self.down += n;
            self.activity.touch();
        }
        r
    }
}

impl AsyncWrite for Counted {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = r {
            if n > 0 {
                self.up += n as u64;
                self.activity.touch();
            }
        }
        r
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
