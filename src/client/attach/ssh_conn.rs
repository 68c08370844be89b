//! A window's connection over ssh (`nerdr --host HOST`): the client
//! protocol on the stdio of `ssh HOST nerdr bridge` (`client::ssh_link`,
//! already greeted), turned into the same [`Conn`] a local socket gives,
//! so the window above it is one window whatever carries it.
//!
//! Two threads, as the pipes are blocking: one writes the window's frames
//! to ssh's stdin, one reads the core's frames from its stdout. Each sleeps
//! in a read until something comes, so a connected, idle window costs
//! nothing (no timer; ssh's own keepalive finds a link that died
//! silently, see `link::SSH_WINDOW_OPTIONS`). A frame from the far end
//! that is control JSON loses escape sequences and control characters in
//! its strings first (`ssh_link::untrusted_text`): tab names and notes
//! from another machine reach the status line only as text.
//!
//! When the link ends (ssh killed, the network gone, the remote core
//! gone) the reader says why, from ssh's exit and the tail of its stderr,
//! and the window reconnects. Dropping the connection (a session switch,
//! the window leaving) ends ssh, our own child, by its handle.

use std::io::Write;
use std::process::Child;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use super::conn::Conn;
use crate::client::ssh_link::{shown, SshStream};
use crate::protocol::frame::{read_frame_blocking, write_frame_blocking, Frame, Kind};
use crate::protocol::MAX_FRAME;

/// Ends ssh when the connection is dropped before ssh ended by itself.
struct EndsSsh(Arc<Mutex<Option<Child>>>);

impl Drop for EndsSsh {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.lock().unwrap().take() {
            let _ = child.kill();
            // Reaped off the window's thread: a dying ssh takes a moment.
            std::thread::spawn(move || child.wait());
        }
    }
}

/// The window's ends of `stream`.
pub fn split(stream: SshStream) -> Conn {
    let SshStream {
        host,
        child,
        mut to,
        mut from,
        stderr,
        ack_every,
    } = stream;
    let child = Arc::new(Mutex::new(Some(child)));
    let (out, mut out_rx) = mpsc::channel::<Frame>(super::conn::TO_CORE_AHEAD);
    std::thread::spawn(move || {
        while let Some(f) = out_rx.blocking_recv() {
            if write_frame_blocking(&mut to, &f).is_err() {
                break;
            }
        }
        // Closing ssh's stdin ends the bridge there, which ends ssh.
        let _ = to.flush();
    });
    let (frames_tx, frames) = mpsc::channel(super::conn::FRAMES_AHEAD);
    let waiting = Arc::new(super::conn::Waiting::default());
    let reaped = Arc::clone(&child);
    let room = Arc::clone(&waiting);
    std::thread::spawn(move || {
        let why = loop {
            match read_frame_blocking(&mut from, MAX_FRAME) {
                Ok(f) => {
                    // Blocks while the window is behind: ssh's channel
                    // and the bridge fill, and the core paces its frames.
                    let f = as_text(f);
                    if !room.make_room(f.body.len(), || frames_tx.is_closed())
                        || frames_tx.blocking_send(Ok(f)).is_err()
                    {
                        return;
                    }
                }
                Err(e) => break e.to_string(),
            }
        };
        // ssh closed its stdout: it is ending; its exit and last words say
        // why (taken out of the lock, so dropping the connection meanwhile
        // does not wait for it).
        let taken = reaped.lock().unwrap().take();
        let code = taken.and_then(|mut c| c.wait().ok()).map(|s| s.code());
        let tail = String::from_utf8_lossy(&stderr.lock().unwrap()).into_owned();
        let _ = frames_tx.blocking_send(Err(lost_why(&host.name, &why, code, &tail)));
    });
    Conn {
        out,
        frames,
        ender: Some(Box::new(EndsSsh(child))),
        ack_every,
        waiting: Some(waiting),
    }
}

/// A control frame with its strings made text; data frames (the paint)
/// as they are.
fn as_text(f: Frame) -> Frame {
    if f.kind != Kind::Control {
        return f;
    }
    match f.decode_control::<serde_json::Value>() {
        Ok(mut v) => {
            crate::client::ssh_link::untrusted_text(&mut v);
            Frame::control(&v)
        }
        Err(_) => f,
    }
}

/// Why the link to `host` ended, for the status line, pure: ssh's last
/// line of stderr says most (`Connection reset`, `Broken pipe`); its exit
/// says whether ssh ended at all (`None`: killed, or still ending).
pub fn lost_why(host: &str, read: &str, code: Option<Option<i32>>, stderr: &str) -> String {
    let last = stderr
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .map(shown);
    let how = match code {
        // ssh passes on its command's status: the bridge there ended
        // cleanly, which it does when its core's connection closes.
        Some(Some(0)) => "nerdr there ended it (its core stopped or restarted)".to_owned(),
        Some(Some(c)) => format!("ssh exited with {c}"),
        Some(None) => "ssh was killed".to_owned(),
        None => read.to_owned(),
    };
    match last {
        Some(l) => format!("the link to {host} ended: {how}: {l}"),
        None => format!("the link to {host} ended: {how}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn why_a_link_ended_names_the_host_and_ssh_s_last_words_as_text() {
        #[rustfmt::skip]
        let rows: &[(Option<Option<i32>>, &str, &str)] = &[
            (Some(None), "", "the link to devbox ended: ssh was killed"),
            (Some(Some(0)), "",
             "the link to devbox ended: nerdr there ended it (its core stopped or restarted)"),
            (Some(Some(255)), "debug\nClient_loop: send disconnect: Broken pipe\n\n",
             "the link to devbox ended: ssh exited with 255: Client_loop: send disconnect: Broken pipe"),
            (None, "", "the link to devbox ended: connection closed"),
            (Some(Some(255)), "Connection to h closed by \x1b]52;c;eA==\x07remote host.\r\n",
             "the link to devbox ended: ssh exited with 255: Connection to h closed by remote host."),
        ];
        for (code, stderr, want) in rows {
            assert_eq!(
                lost_why("devbox", "connection closed", *code, stderr),
                *want,
                "{code:?} {stderr:?}"
            );
        }
    }

    #[test]
    fn a_remote_control_frame_loses_escapes_and_a_paint_keeps_them() {
        let name =
            Frame::control(&serde_json::json!({"type": "tabs", "name": "a\u{1b}]0;x\u{7}b"}));
        let v: serde_json::Value = as_text(name).decode_control().unwrap();
        assert_eq!(v["name"], "ab");
        let paint = crate::protocol::holder::data_frame("t1", b"\x1b[1mbold");
        assert_eq!(as_text(paint.clone()).body, paint.body);
    }
}
