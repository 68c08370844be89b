//! The window's side of its connection: attaching it to the session,
//! moving to another session ([`Window::switch_to`]), losing the core and
//! getting it back, with the tab it showed. The connection itself (tasks,
//! attempts, when to give up) is `link`'s.

use std::path::PathBuf;

use tokio::sync::mpsc;

use super::link;
use super::overlay::Mode;
use super::Window;
use crate::protocol::frame::Frame;
use crate::protocol::handshake::ClientMsg;

/// A window's connection trouble, from the moment it dropped.
pub struct Outage {
    pub since: tokio::time::Instant,
    /// The wait before the attempt that runs or comes next.
    pub delay: std::time::Duration,
    pub why: String,
}

impl Window {
    /// Leave this session and show `folder`'s in the same terminal: the
    /// loop opens a fresh connection and attaches it there (see
    /// [`Window::connected`]); the old screen stays until the new
    /// session's first redraw replaces it. Keys typed in between are
    /// dropped: they were meant for a tab of the session being left.
    /// The session picker (prefix `s`) calls it.
    pub fn switch_to(&mut self, folder: PathBuf) {
        self.disconnect();
        self.folder = folder;
        self.tabs.clear();
        self.marks = Default::default();
        self.warned.clear();
        self.restore = None;
        self.asked = None;
        self.offered_picker = false;
        self.mode = Mode::Normal;
        self.view.invalidate();
        self.reattach = true;
    }

    /// Drop the connection: closing our end tells the core this window
    /// left, and anything sent until the next connection goes nowhere.
    fn disconnect(&mut self) {
        self.out = mpsc::unbounded_channel().0;
        self.pending.clear();
        self.connected = false;
        self.asked = None;
    }

    /// Attach the connection to the window's session.
    pub(super) fn attach(&mut self) {
        let (rows, cols) = self.view.term;
        self.send(ClientMsg::Attach {
            folder: self.folder.clone(),
            rows: rows.saturating_sub(1).max(2),
            cols,
            env: crate::client::own_env(),
        });
    }

    /// A fresh connection passed the handshake: attach it, and after an
    /// outage come back to the tab that was shown.
    pub(super) fn connected(&mut self, out: mpsc::UnboundedSender<Frame>) {
        self.out = out;
        self.pending.clear();
        self.connected = true;
        // Attaching sends a whole screen; nothing of the old connection's
        // paint holds.
        self.view.expect_whole();
        if self.outage.take().is_some() {
            self.restore = self.view.tab.clone();
            self.note = "reconnected to the core".into();
            self.note_for_a_key = true;
        }
        self.attach();
    }

    /// The connection dropped: keep the last screen and say so.
    pub(super) fn lost(&mut self, why: String) {
        self.disconnect();
        // An open question or list would be answered to a core that is gone.
        // The diff view stays, with the comments in it (unsent: `S` again
        // once back).
        if self.sending.is_some() {
            self.not_sent(format!("lost the core ({why})"));
        }
        self.diff_asked = None;
        self.reviews_asked = None;
        match std::mem::replace(&mut self.mode, Mode::Normal) {
            keep @ (Mode::Normal | Mode::Scroll(_) | Mode::Diff(_)) => self.mode = keep,
            // The help over the diff view closes back to the view.
            Mode::Help { over: Some(v) } => self.mode = Mode::Diff(v),
            _ => self.view.invalidate(),
        }
        self.note = format!("lost the core ({why}): reconnecting...");
        self.note_for_a_key = false;
        self.outage = Some(Outage {
            since: tokio::time::Instant::now(),
            delay: link::FIRST_DELAY,
            why,
        });
    }

    /// An attempt to connect failed: when to try again, or to give up.
    pub(super) fn failed(&mut self, failure: link::Failure) -> link::Step {
        let now = tokio::time::Instant::now();
        let outage = self.outage.get_or_insert_with(|| Outage {
            since: now,
            delay: link::FIRST_DELAY,
            why: String::new(),
        });
        let elapsed = now - outage.since;
        let step = link::step(elapsed, outage.delay, &failure);
        if let link::Step::RetryIn(d) = step {
            outage.delay = d;
        }
        outage.why = match failure {
            link::Failure::Down(w) | link::Failure::Stopped(w) | link::Failure::Refused(w) => w,
        };
        self.note = format!(
            "reconnecting to the core ({} s): {}",
            elapsed.as_secs(),
            outage.why
        );
        self.note_for_a_key = false;
        step
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::api::TabInfo;
    use crate::protocol::handshake::CoreMsg;
    use crate::protocol::holder::split_data;

    fn window() -> (Window, mpsc::UnboundedReceiver<Frame>) {
        let (out, rx) = mpsc::unbounded_channel();
        let w = Window::new("/a".into(), (24, 80), 2, "C-b".into(), String::new(), out);
        (w, rx)
    }

    fn tab(id: &str) -> TabInfo {
        serde_json::from_value(serde_json::json!({
            "id": id, "agent": "sh", "folder": "/a", "command": ["sh"], "sandboxed": false,
            "state": "running", "pid": null, "exit_code": null,
        }))
        .unwrap()
    }

    fn sent(rx: &mut mpsc::UnboundedReceiver<Frame>) -> Vec<Frame> {
        std::iter::from_fn(|| rx.try_recv().ok()).collect()
    }

    /// The tabs each `Select` the window sent asks for, in order.
    fn selected(rx: &mut mpsc::UnboundedReceiver<Frame>) -> Vec<String> {
        sent(rx)
            .into_iter()
            .filter_map(|f| match f.decode_control::<ClientMsg>() {
                Ok(ClientMsg::Select { tab }) => Some(tab),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn tab_keys_typed_faster_than_the_core_redraws_each_move_once() {
        let (mut w, mut rx) = window();
        w.on_tabs(vec![tab("aaaa0001"), tab("aaaa0002"), tab("aaaa0003")]);
        let redraw = |w: &mut Window, tab: &str| {
            w.on_frame(Frame::control(&CoreMsg::Redraw {
                tab: tab.into(),
                rows: 23,
                cols: 80,
            }))
            .unwrap()
        };
        redraw(&mut w, "aaaa0001");
        w.on_keys(b"\x023");
        redraw(&mut w, "aaaa0003");
        sent(&mut rx);
        // Two `C-b p` before the core redraws either: the second counts
        // from the tab the first asked for, not from the one still shown.
        w.on_keys(b"\x02p");
        w.on_keys(b"\x02p");
        assert_eq!(selected(&mut rx), ["aaaa0002", "aaaa0001"]);
        // Once the core shows a tab, moves count from it again.
        redraw(&mut w, "aaaa0002");
        redraw(&mut w, "aaaa0001");
        w.on_keys(b"\x02n");
        assert_eq!(selected(&mut rx), ["aaaa0002"]);
    }

    #[test]
    fn switching_sessions_forgets_the_old_one_and_attaches_afresh() {
        let (mut w, mut old) = window();
        w.on_tabs(vec![tab("aaaa0001"), tab("aaaa0002")]);
        w.view.redraw("aaaa0002", 23, 80);
        w.note = "tab aaaa0001: a warning".into();
        sent(&mut old);

        w.switch_to("/b".into());
        assert_eq!(w.folder, PathBuf::from("/b"));
        assert!(w.tabs.is_empty());
        assert!(w.reattach, "the loop opens a fresh connection");
        assert!(!w.connected);
        // Keys typed before the new session arrives reach no tab.
        w.on_keys(b"ls\r");
        assert!(sent(&mut old).is_empty());
        assert!(old.try_recv().is_err(), "the old connection is closed");

        let (out, mut new) = mpsc::unbounded_channel();
        w.connected(out);
        let frames = sent(&mut new);
        assert_eq!(frames.len(), 1);
        match frames[0].decode_control::<ClientMsg>().unwrap() {
            ClientMsg::Attach {
                folder, rows, cols, ..
            } => {
                assert_eq!((folder, rows, cols), (PathBuf::from("/b"), 23, 80))
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(w.restore, None, "a switch shows the new session's own tab");
    }

    #[test]
    fn after_a_reconnect_the_same_tab_comes_back() {
        let (mut w, _old) = window();
        w.on_tabs(vec![tab("aaaa0001"), tab("aaaa0002")]);
        w.view.redraw("aaaa0002", 23, 80);
        w.lost("connection closed".into());
        assert!(w.note.contains("reconnecting"), "{}", w.note);
        w.on_keys(b"x");
        assert!(w.note.contains("dropped"), "{}", w.note);

        let (out, mut new) = mpsc::unbounded_channel();
        w.connected(out);
        assert!(w.outage.is_none());
        sent(&mut new);
        // The core shows a fresh window the first tab; the window asks
        // for the one it showed and ignores the other's redraw.
        w.on_tabs(vec![tab("aaaa0001"), tab("aaaa0002")]);
        let asked: Vec<ClientMsg> = sent(&mut new)
            .iter()
            .map(|f| f.decode_control().unwrap())
            .collect();
        assert_eq!(
            asked,
            vec![ClientMsg::Select {
                tab: "aaaa0002".into()
            }]
        );
        let redraw = |tab: &str| {
            Frame::control(&CoreMsg::Redraw {
                tab: tab.into(),
                rows: 23,
                cols: 80,
            })
        };
        w.on_frame(redraw("aaaa0001")).unwrap();
        assert_eq!(w.view.tab.as_deref(), Some("aaaa0002"));
        w.on_frame(redraw("aaaa0002")).unwrap();
        assert_eq!(w.restore, None);
        // Typing reaches the shown tab again.
        w.on_keys(b"y");
        let typed = sent(&mut new);
        assert_eq!(typed.len(), 1);
        assert_eq!(split_data(&typed[0].body), Some(("aaaa0002", &b"y"[..])));
    }
}
