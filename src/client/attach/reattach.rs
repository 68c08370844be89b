//! The window's side of its connection: attaching it to the session,
//! moving to another session ([`Window::switch_to`]), losing the core and
//! getting it back, with the tab it showed. The connection itself (tasks,
//! attempts) is `link`'s, when to try again `backoff`'s; what the status
//! line says meanwhile is [`outage_note`]'s (pure).

use std::path::PathBuf;

use tokio::sync::mpsc;

use super::backoff::{self, Carrier, Failure, Step};
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
        self.out = mpsc::channel(super::conn::TO_CORE_AHEAD).0;
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
            acks: self.acks.taken(),
        });
    }

    /// A fresh connection passed the handshake (its core offering paint
    /// acknowledgements every `ack_every` bytes, or not): attach it, and
    /// after an outage come back to the tab that was shown.
    pub(super) fn connected(&mut self, out: mpsc::Sender<Frame>, ack_every: Option<u64>) {
        self.out = out;
        self.acks = super::paint_acks::PaintAcks::offered(ack_every);
        self.pending.clear();
        self.connected = true;
        // Attaching sends a whole screen; nothing of the old connection's
        // paint holds.
        self.view.expect_whole();
        if self.outage.take().is_some() {
            self.restore = self.view.tab.clone();
            self.note = match &self.remote {
                Some(host) => format!("reconnected to {host}"),
                None => "reconnected to the core".into(),
            };
            self.note_for_a_key = true;
        }
        self.arrived();
        self.attach();
    }

    /// The connection dropped: keep the last screen and say so; the first
    /// attempt comes after `delay`.
    pub(super) fn lost(&mut self, why: String, delay: std::time::Duration) {
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
        self.note = outage_note(self.remote.as_deref(), None, &why);
        self.note_for_a_key = false;
        self.outage = Some(Outage {
            since: tokio::time::Instant::now(),
            delay,
            why,
        });
    }

    /// An attempt to connect failed: when to try again, or to give up.
    pub(super) fn failed(&mut self, carrier: Carrier, failure: Failure) -> Step {
        let now = tokio::time::Instant::now();
        let outage = self.outage.get_or_insert_with(|| Outage {
            since: now,
            delay: backoff::bounds(carrier).0,
            why: String::new(),
        });
        let elapsed = now - outage.since;
        let step = backoff::step(carrier, elapsed, outage.delay, &failure);
        if let Step::RetryIn(d) = step {
            outage.delay = d;
        }
        outage.why = failure.why().to_owned();
        self.note = outage_note(self.remote.as_deref(), Some(elapsed), &outage.why);
        self.note_for_a_key = false;
        step
    }
}

/// The status line while the connection is down, pure: to this machine's
/// core or to `remote`, how long it has been down once an attempt failed
/// (`elapsed`), and why. It always says "reconnecting": the window is
/// still there and comes back by itself.
pub fn outage_note(
    remote: Option<&str>,
    elapsed: Option<std::time::Duration>,
    why: &str,
) -> String {
    let to = match remote {
        Some(host) => host.to_owned(),
        None => "the core".to_owned(),
    };
    match (remote, elapsed) {
        (None, None) => format!("lost the core ({why}): reconnecting..."),
        (Some(_), None) => format!("{why}: reconnecting to {to}..."),
        (_, Some(e)) => format!(
            "reconnecting to {to} (down {} s): {}",
            e.as_secs(),
            in_brief(why)
        ),
    }
}

/// A failed attempt's why, for a status line: ssh's own words when the
/// message carries them (`remote::ssh_failure`: "... (ssh said: X); check
/// ..."), since the rest says what the first outage note said already.
fn in_brief(why: &str) -> &str {
    const SAID: &str = "(ssh said: ";
    let Some(start) = why.find(SAID) else {
        return why;
    };
    let said = &why[start + SAID.len()..];
    match said.find("); ").or_else(|| said.rfind(')')) {
        Some(end) => &said[..end],
        None => said,
    }
}

/// The status line when the tab shown before an outage is not among the
/// tabs after it, pure. Without a word the window would just show another
/// tab (or the agent picker) and the person would think it lost theirs.
pub fn gone_after_reconnect(tab: &str, remote: Option<&str>) -> String {
    let doctor = match remote {
        Some(host) => format!("`nerdr doctor` on {host} tells"),
        None => "`nerdr doctor` tells".to_owned(),
    };
    format!(
        "reconnected, but tab {tab} is gone: it ended while the window was away, or the core \
         now keeps another state folder ({doctor})"
    )
}

#[cfg(test)]
mod tests {
    use super::super::typing;
    use super::*;
    use crate::protocol::handshake::CoreMsg;
    use crate::protocol::holder::split_data;

    fn window() -> (Window, mpsc::Receiver<Frame>) {
        super::super::test_window()
    }

    use super::super::tests::tab;

    fn sent(rx: &mut mpsc::Receiver<Frame>) -> Vec<Frame> {
        std::iter::from_fn(|| rx.try_recv().ok()).collect()
    }

    /// The tabs each `Select` the window sent asks for, in order.
    fn selected(rx: &mut mpsc::Receiver<Frame>) -> Vec<String> {
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

        let (out, mut new) = mpsc::channel(super::super::conn::TO_CORE_AHEAD);
        w.connected(out, Some(16384));
        let frames = sent(&mut new);
        assert_eq!(frames.len(), 1);
        match frames[0].decode_control::<ClientMsg>().unwrap() {
            ClientMsg::Attach {
                folder,
                rows,
                cols,
                acks,
                ..
            } => {
                assert_eq!((folder, rows, cols), (PathBuf::from("/b"), 23, 80));
                assert!(acks, "its core offered acknowledgements");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(w.restore, None, "a switch shows the new session's own tab");
    }

    /// The window acknowledges the paint of its connection to a core that
    /// offered, and counts afresh on the next connection; to a core that
    /// did not (an earlier build), it says and sends nothing of them.
    #[test]
    fn paint_is_acknowledged_per_connection_to_a_core_that_offered() {
        let (mut w, _old) = window();
        let paint = |w: &mut Window, n: usize| {
            w.on_frame(crate::protocol::holder::data_frame(
                "aaaa0001",
                &vec![b'x'; n],
            ))
            .unwrap();
            w.acknowledge();
        };
        let acks = |frames: Vec<Frame>| -> Vec<u64> {
            frames
                .iter()
                .filter_map(|f| match f.decode_control::<ClientMsg>() {
                    Ok(ClientMsg::Ack { bytes }) => Some(bytes),
                    _ => None,
                })
                .collect()
        };
        let (out, mut rx) = mpsc::channel(super::super::conn::TO_CORE_AHEAD);
        w.connected(out, Some(100));
        sent(&mut rx);
        // A data frame's body: the tab id's length, the id, the paint.
        paint(&mut w, 50);
        assert!(acks(sent(&mut rx)).is_empty(), "59 bytes: not yet");
        paint(&mut w, 50);
        assert_eq!(acks(sent(&mut rx)), [118]);
        paint(&mut w, 91);
        assert_eq!(acks(sent(&mut rx)), [218]);

        let (out, mut rx) = mpsc::channel(super::super::conn::TO_CORE_AHEAD);
        w.connected(out, Some(100));
        sent(&mut rx);
        paint(&mut w, 91);
        assert_eq!(acks(sent(&mut rx)), [100], "counted afresh");

        let (out, mut rx) = mpsc::channel(super::super::conn::TO_CORE_AHEAD);
        w.connected(out, None);
        let attach = sent(&mut rx);
        assert!(matches!(
            attach[0].decode_control::<ClientMsg>().unwrap(),
            ClientMsg::Attach { acks: false, .. }
        ));
        paint(&mut w, 1 << 20);
        assert!(sent(&mut rx).is_empty(), "nothing to an earlier core");
    }

    #[test]
    fn the_status_line_says_reconnecting_to_what_and_why() {
        use std::time::Duration;
        #[rustfmt::skip]
        let rows: &[(Option<&str>, Option<Duration>, &str, &str)] = &[
            (None, None, "connection closed", "lost the core (connection closed): reconnecting..."),
            (None, Some(Duration::from_millis(2500)), "no core",
             "reconnecting to the core (down 2 s): no core"),
            (Some("devbox"), None, "the link to devbox ended: ssh was killed",
             "the link to devbox ended: ssh was killed: reconnecting to devbox..."),
            (Some("devbox"), Some(Duration::from_secs(70)), "ssh could not log in",
             "reconnecting to devbox (down 70 s): ssh could not log in"),
            (Some("devbox"), Some(Duration::from_secs(7)),
             "ssh could not connect or log in to devbox as `ssh devbox nerdr bridge` needs \
              (ssh said: ssh: connect to host 127.0.0.1 port 22: Connection refused); check that \
              `ssh devbox` works from this shell",
             "reconnecting to devbox (down 7 s): ssh: connect to host 127.0.0.1 port 22: \
              Connection refused"),
        ];
        for (remote, elapsed, why, want) in rows {
            assert_eq!(outage_note(*remote, *elapsed, why), *want);
        }
    }

    #[test]
    fn keys_typed_before_the_first_tab_shows_are_its() {
        let (mut w, mut rx) = window();
        w.on_keys(b"echo hi\r");
        assert!(sent(&mut rx).iter().all(|f| split_data(&f.body).is_none()));
        w.on_tabs(vec![tab("aaaa0001")]);
        sent(&mut rx);
        let redraw = Frame::control(&CoreMsg::Redraw {
            tab: "aaaa0001".into(),
            rows: 23,
            cols: 80,
        });
        w.on_frame(redraw).unwrap();
        let typed: Vec<(String, Vec<u8>)> = sent(&mut rx)
            .iter()
            .filter_map(|f| split_data(&f.body).map(|(t, b)| (t.to_owned(), b.to_vec())))
            .collect();
        assert_eq!(typed, vec![("aaaa0001".to_owned(), b"echo hi\r".to_vec())]);
        // Kept within bounds, and not given to a tab of a session that had none.
        let (mut w, mut rx) = window();
        w.on_keys(&vec![b'x'; 3 * typing::TYPEAHEAD_MAX]);
        assert_eq!(w.early.len(), typing::TYPEAHEAD_MAX);
        w.on_tabs(vec![]);
        assert!(w.early.is_empty());
        sent(&mut rx);
    }

    #[test]
    fn a_tab_gone_after_a_reconnect_is_named() {
        let (mut w, _old) = window();
        w.on_tabs(vec![tab("aaaa0001"), tab("aaaa0002")]);
        w.view.redraw("aaaa0002", 23, 80);
        w.lost(
            "connection closed".into(),
            std::time::Duration::from_millis(50),
        );
        let (out, _new) = mpsc::channel(super::super::conn::TO_CORE_AHEAD);
        w.connected(out, None);
        // Another core answers: none of the tabs of before.
        w.on_tabs(vec![]);
        assert!(
            w.note
                .contains("reconnected, but tab aaaa0002 is gone: it ended while the window was away, or the core now keeps another state folder (`nerdr doctor` tells)"),
            "{}",
            w.note
        );
        assert_eq!(w.restore, None);
        assert!(
            gone_after_reconnect("t", Some("devbox")).contains("`nerdr doctor` on devbox tells")
        );
    }

    #[test]
    fn after_a_reconnect_the_same_tab_comes_back() {
        let (mut w, _old) = window();
        w.on_tabs(vec![tab("aaaa0001"), tab("aaaa0002")]);
        w.view.redraw("aaaa0002", 23, 80);
        w.lost(
            "connection closed".into(),
            std::time::Duration::from_millis(50),
        );
        assert!(w.note.contains("reconnecting"), "{}", w.note);
        w.on_keys(b"x");
        assert!(w.note.contains("dropped"), "{}", w.note);

        let (out, mut new) = mpsc::channel(super::super::conn::TO_CORE_AHEAD);
        w.connected(out, None);
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
