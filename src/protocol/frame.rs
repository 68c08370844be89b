//! Client-socket framing: a 4-byte big-endian length, then that many bytes,
//! whose first byte says what the rest is. Control messages are JSON;
//! terminal bytes (attach, a later issue) travel raw so a screenful of output
//! costs no encoding.

use serde::{de::DeserializeOwned, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::MAX_FRAME;

/// What a frame carries. Numbers are part of the protocol: never reuse one.
/// The framing (length, kind 1 = control) also carries the frozen holder
/// hand-over (`protocol::handover`), so it must never change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// A serde-JSON control message.
    Control = 1,
    /// Raw terminal bytes.
    Data = 2,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub kind: Kind,
    pub body: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("connection closed")]
    Closed,
    #[error("connection closed in the middle of a frame")]
    Truncated,
    #[error("frame of {0} bytes is larger than the limit of {1} bytes")]
    TooLarge(usize, usize),
    #[error("empty frame (no kind byte)")]
    Empty,
    #[error("unknown frame kind {0}")]
    UnknownKind(u8),
    #[error("malformed control message: {0}")]
    Json(#[from] serde_json::Error),
    #[error("expected a control frame, got terminal data")]
    NotControl,
    #[error(transparent)]
    Io(std::io::Error),
}

impl Frame {
    pub fn control<T: Serialize>(msg: &T) -> Self {
        Frame {
            kind: Kind::Control,
            body: serde_json::to_vec(msg).expect("control messages always serialize"),
        }
    }

    pub fn decode_control<T: DeserializeOwned>(&self) -> Result<T, FrameError> {
        match self.kind {
            Kind::Control => Ok(serde_json::from_slice(&self.body)?),
            Kind::Data => Err(FrameError::NotControl),
        }
    }

    /// The bytes on the wire.
    pub fn encode(&self) -> Vec<u8> {
        let len = self.body.len() + 1;
        let mut out = Vec::with_capacity(4 + len);
        out.extend_from_slice(&(len as u32).to_be_bytes());
        out.push(self.kind as u8);
        out.extend_from_slice(&self.body);
        out
    }
}

/// Read one frame. The length is checked before anything is allocated, so a
/// hostile length cannot make the core reserve memory.
pub async fn read_frame<R: AsyncRead + Unpin>(r: &mut R) -> Result<Frame, FrameError> {
    read_frame_within(r, MAX_FRAME).await
}

/// [`read_frame`] of a frame of at most `max` bytes: what a client sends
/// the core is bounded by [`super::MAX_REQUEST`], far below what the core
/// sends a window.
pub async fn read_frame_within<R: AsyncRead + Unpin>(
    r: &mut R,
    max: usize,
) -> Result<Frame, FrameError> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(FrameError::Closed),
        Err(e) => return Err(FrameError::Io(e)),
    }
    let mut buf = vec![0u8; body_len(len, max)?];
    r.read_exact(&mut buf).await.map_err(cut_short)?;
    from_body(buf)
}

/// [`read_frame_within`] on a blocking reader: `nerdr --host`'s pipe from
/// ssh, `nerdr bridge`'s own stdio.
pub fn read_frame_blocking<R: std::io::Read>(r: &mut R, max: usize) -> Result<Frame, FrameError> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(FrameError::Closed),
        Err(e) => return Err(FrameError::Io(e)),
    }
    let mut buf = vec![0u8; body_len(len, max)?];
    r.read_exact(&mut buf).map_err(cut_short)?;
    from_body(buf)
}

/// The body's length from the 4 bytes before it, checked against `max`
/// before anything is allocated.
fn body_len(header: [u8; 4], max: usize) -> Result<usize, FrameError> {
    let len = u32::from_be_bytes(header) as usize;
    if len == 0 {
        return Err(FrameError::Empty);
    }
    if len > max {
        return Err(FrameError::TooLarge(len, max));
    }
    Ok(len)
}

fn cut_short(e: std::io::Error) -> FrameError {
    match e.kind() {
        std::io::ErrorKind::UnexpectedEof => FrameError::Truncated,
        _ => FrameError::Io(e),
    }
}

/// A frame from its body: the kind byte, then the rest.
fn from_body(mut buf: Vec<u8>) -> Result<Frame, FrameError> {
    let kind = match buf[0] {
        1 => Kind::Control,
        2 => Kind::Data,
        k => return Err(FrameError::UnknownKind(k)),
    };
    buf.remove(0);
    Ok(Frame { kind, body: buf })
}

pub async fn write_frame<W: AsyncWrite + Unpin>(w: &mut W, f: &Frame) -> std::io::Result<()> {
    w.write_all(&checked(f)?.encode()).await?;
    w.flush().await
}

/// [`write_frame`] on a blocking writer.
pub fn write_frame_blocking<W: std::io::Write>(w: &mut W, f: &Frame) -> std::io::Result<()> {
    w.write_all(&checked(f)?.encode())?;
    w.flush()
}

fn checked(f: &Frame) -> std::io::Result<&Frame> {
    if f.body.len() + 1 > MAX_FRAME {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            FrameError::TooLarge(f.body.len() + 1, MAX_FRAME).to_string(),
        ));
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn decode(bytes: &[u8]) -> Result<Frame, FrameError> {
        let mut r = bytes;
        read_frame(&mut r).await
    }

    #[tokio::test]
    async fn a_frame_round_trips() {
        let f = Frame::control(&serde_json::json!({"a": 1}));
        let got = decode(&f.encode()).await.unwrap();
        assert_eq!(got, f);
        let v: serde_json::Value = got.decode_control().unwrap();
        assert_eq!(v["a"], 1);
    }

    /// The blocking reader reads what the async one reads, and fails alike.
    #[tokio::test]
    async fn the_blocking_twin_reads_the_same() {
        let f = Frame {
            kind: Kind::Data,
            body: b"abc".to_vec(),
        };
        let mut wire = Vec::new();
        write_frame_blocking(&mut wire, &f).unwrap();
        assert_eq!(read_frame_blocking(&mut &wire[..], MAX_FRAME).unwrap(), f);
        for bytes in [
            &[][..],
            &[0, 0, 0, 0],
            &[0, 0, 0, 9, 1, b'{'],
            &[0, 0, 0, 1, 7],
        ] {
            assert_eq!(
                read_frame_blocking(&mut &bytes[..], MAX_FRAME)
                    .unwrap_err()
                    .to_string(),
                decode(bytes).await.unwrap_err().to_string()
            );
        }
    }

    #[tokio::test]
    async fn bad_frames_are_named() {
        let cases: Vec<(&str, Vec<u8>, &str)> = vec![
            ("nothing", vec![], "connection closed"),
            ("half a length", vec![0, 0], "connection closed"),
            ("zero length", vec![0, 0, 0, 0], "empty frame"),
            (
                "oversized",
                (MAX_FRAME as u32 + 1).to_be_bytes().to_vec(),
                "larger than the limit",
            ),
            (
                "cut short",
                vec![0, 0, 0, 9, 1, b'{'],
                "in the middle of a frame",
            ),
            ("unknown kind", vec![0, 0, 0, 1, 7], "unknown frame kind 7"),
        ];
        for (name, bytes, want) in cases {
            let err = decode(&bytes).await.unwrap_err().to_string();
            assert!(err.contains(want), "{name}: got {err:?}, want {want:?}");
        }
    }

    #[tokio::test]
    async fn malformed_json_is_an_error_not_a_panic() {
        let f = Frame {
            kind: Kind::Control,
            body: b"{nope".to_vec(),
        };
        let got = decode(&f.encode()).await.unwrap();
        assert!(got.decode_control::<serde_json::Value>().is_err());
    }
}
