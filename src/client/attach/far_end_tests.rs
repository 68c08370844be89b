//! What a far end's core (over `--host`) can make the window do, and
//! what the window says of it: acknowledgements that never pile up, a
//! refusal said to be that host's, no scroll mode nobody asked for.

use super::*;
use crate::protocol::frame::Frame;

/// An acknowledgement waits while an earlier frame is still unwritten (a
/// far end that stops reading gets no queue of them), and the next one
/// then says the whole total.
#[test]
fn acknowledgements_wait_for_the_link_to_take_what_waits() {
    use crate::protocol::handshake::ClientMsg;
    let (mut w, mut rx) = test_window();
    w.acks = paint_acks::PaintAcks::offered(Some(0));
    let acks = |rx: &mut tokio::sync::mpsc::Receiver<Frame>| -> Vec<u64> {
        std::iter::from_fn(|| rx.try_recv().ok())
            .filter_map(|f| match f.decode_control::<ClientMsg>() {
                Ok(ClientMsg::Ack { bytes }) => Some(bytes),
                _ => None,
            })
            .collect()
    };
    w.acks.received(10);
    w.acknowledge();
    // Unwritten: the link took nothing yet.
    for n in [20, 30, 40] {
        w.acks.received(10);
        w.acknowledge();
        assert_eq!(w.out.max_capacity() - w.out.capacity(), 1, "at {n}");
    }
    assert_eq!(acks(&mut rx), vec![10]);
    // Taken: the next says all that was drawn.
    w.acks.received(10);
    w.acknowledge();
    assert_eq!(acks(&mut rx), vec![50]);
}

/// A core's refusal is shown as said, and over --host says whose core.
#[test]
fn another_hosts_refusal_says_which_host() {
    use crate::protocol::api::{ApiError, ErrorCode};
    use crate::protocol::handshake::Outcome;
    for (remote, want) in [
        (None, "`claude` is not an executable on PATH"),
        (
            Some("devbox"),
            "on devbox: `claude` is not an executable on PATH",
        ),
    ] {
        let (mut w, _rx) = test_window();
        w.remote = remote.map(str::to_owned);
        let refused = ApiError::new(
            ErrorCode::LaunchFailed,
            "`claude` is not an executable on PATH",
        );
        w.on_reply(7, Outcome::Error(refused));
        assert_eq!(w.note, want);
    }
}

/// Scroll mode opens on the history the window asked for, never on one
/// that comes unasked (a far end that is no core could hold the person
/// there).
#[test]
fn a_history_nobody_asked_for_opens_nothing() {
    use crate::protocol::handshake::CoreMsg;
    let (mut w, _rx) = test_window();
    w.on_tabs(vec![super::tests::tab("t1")]);
    let history = || {
        Frame::control(&CoreMsg::History {
            tab: "t1".into(),
            lines: vec!["old".into()],
        })
    };
    w.on_frame(history()).unwrap();
    assert!(matches!(w.mode, Mode::Normal), "unasked");
    w.view.redraw("t1", 23, 80);
    w.command(keys::Cmd::Scroll);
    w.on_frame(history()).unwrap();
    assert!(matches!(w.mode, Mode::Scroll(_)), "asked");
    w.mode = Mode::Normal;
    w.on_frame(history()).unwrap();
    assert!(matches!(w.mode, Mode::Normal), "once per asking");
}

/// A window the core closed (over --host: a `[hosts]` folder that is none
/// there) says whose core and exits 1, as a lost core does; a detach
/// exits 0.
#[test]
fn a_window_the_core_closed_says_whose_and_fails() {
    use crate::protocol::handshake::CoreMsg;
    let (mut w, _rx) = test_window();
    w.remote = Some("devbox".into());
    let closing = CoreMsg::Closing {
        message: "folder /h/nope does not exist or is not a folder".into(),
    };
    w.on_frame(Frame::control(&closing)).unwrap();
    let bye = w.done.take().unwrap();
    assert_eq!(
        bye,
        "[the core on devbox closed the window: folder /h/nope does not exist or is not a folder]"
    );
    assert_eq!(exit_code(&bye), std::process::ExitCode::FAILURE);
    assert_eq!(
        exit_code(&lost_core("gone")),
        std::process::ExitCode::FAILURE
    );
    assert_eq!(exit_code("[detached]"), std::process::ExitCode::SUCCESS);
}
