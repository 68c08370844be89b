use super::*;
use crate::protocol::api::TabInfo;

fn tab(id: &str) -> TabInfo {
    serde_json::from_value(serde_json::json!({
        "id": id, "agent": "sh", "folder": "/a", "command": ["sh"], "sandboxed": false,
        "state": "running", "pid": null, "exit_code": null,
    }))
    .unwrap()
}

fn selects(rx: &mut mpsc::UnboundedReceiver<Frame>) -> Vec<String> {
    std::iter::from_fn(|| rx.try_recv().ok())
        .filter_map(|f| match f.decode_control::<ClientMsg>() {
            Ok(ClientMsg::Select { tab }) => Some(tab),
            _ => None,
        })
        .collect()
}

#[test]
fn a_config_error_names_the_file_short_so_the_error_shows() {
    let file = std::path::Path::new("/home/ann/.config/nerdr/config.toml");
    let note = config_note(
        "/home/ann/.config/nerdr/config.toml:8:1: not valid TOML: invalid table header",
        file,
    );
    assert_eq!(
        note,
        "config error (see nerdr doctor): config.toml:8:1: not valid TOML: invalid table header"
    );
    let tabs = vec![tab("a")];
    let line = status::plain(
        &status::status_line(&tabs, Some("a"), &Default::default(), &note, 80),
        80,
    );
    assert!(line.contains("config.toml:8:1: not valid TOML"), "{line:?}");
}

/// `C-b 1 C-b n C-b n` in one write: tab 3, though the core has not
/// redrawn tab 1 yet when the first `n` comes.
#[test]
fn next_and_previous_count_from_the_tab_just_asked_for() {
    let (out, mut rx) = mpsc::unbounded_channel();
    let mut w = Window::new("/a".into(), (24, 80), 2, "C-b".into(), String::new(), out);
    w.on_tabs((1..=5).map(|i| tab(&format!("t{i}"))).collect());
    w.view.redraw("t5", 23, 80);
    selects(&mut rx);
    w.on_keys(b"\x021\x02n\x02n");
    assert_eq!(selects(&mut rx), ["t1", "t2", "t3"]);
    w.on_keys(b"\x02p");
    assert_eq!(selects(&mut rx), ["t2"]);
    // Once the asked tab is shown, counting goes on from it.
    w.view.redraw("t2", 23, 80);
    w.asked = None;
    w.on_keys(b"\x02n");
    assert_eq!(selects(&mut rx), ["t3"]);
}

#[test]
fn a_lost_core_says_why_and_how_to_come_back() {
    let text = lost_core("no core came back within 60 s: connection refused");
    assert_eq!(
        text,
        "[lost the core: no core came back within 60 s: connection refused] \
         run `nerdr` to attach again"
    );
    assert!(text.starts_with(LOST_CORE));
}

/// The requests the window sent, with their ids.
fn requests(rx: &mut mpsc::UnboundedReceiver<Frame>) -> Vec<(u64, crate::protocol::api::Request)> {
    std::iter::from_fn(|| rx.try_recv().ok())
        .filter_map(|f| match f.decode_control::<ClientMsg>() {
            Ok(ClientMsg::Request { id, request }) => Some((id, request)),
            _ => None,
        })
        .collect()
}

fn reply(w: &mut Window, id: u64, value: serde_json::Value) {
    w.on_reply(id, crate::protocol::handshake::Outcome::Result(value));
}

fn refuse(w: &mut Window, id: u64, message: &str) {
    let e =
        crate::protocol::api::ApiError::new(crate::protocol::api::ErrorCode::BadRequest, message);
    w.on_reply(id, crate::protocol::handshake::Outcome::Error(e));
}

const PATCH: &str = "diff --git a/a.rs b/a.rs\n--- a/a.rs\n+++ b/a.rs\n\
    @@ -1,2 +1,2 @@\n one\n-two\n+needle\n";

fn a_diff(tab: &str) -> serde_json::Value {
    serde_json::json!({
        "tab": tab, "worktree": "/w/t1", "repo": "/a", "branch": "nerdr/t1",
        "base": "0123456789abcdef", "base_branch": "main", "base_recorded": true,
        "patch": PATCH,
    })
}

/// `C-b g` asks the core for the diff, the keys typed before the reply
/// are the view's; a comment goes out as one `send` of the tab's, and
/// leaves the view once the core says it was typed.
#[test]
fn the_diff_view_asks_for_the_patch_and_sends_comments_as_one_message() {
    use crate::protocol::api::{DiffTab, Request, SendText};
    let (out, mut rx) = mpsc::unbounded_channel();
    let mut w = Window::new("/a".into(), (24, 80), 2, "C-b".into(), String::new(), out);
    w.on_tabs(vec![tab("t1")]);
    w.view.redraw("t1", 23, 80);
    w.on_keys(b"\x02g/needle\rcfix it\r");
    let asked = requests(&mut rx);
    let [(
        id,
        Request::Diff(DiffTab {
            tab, stat: false, ..
        }),
    )] = asked.as_slice()
    else {
        panic!("{asked:?}");
    };
    assert_eq!(tab, "t1");
    assert!(matches!(w.mode, Mode::Normal), "no view before the reply");
    reply(&mut w, *id, a_diff("t1"));
    let Mode::Diff(v) = &w.mode else {
        panic!("no diff view: {:?}", w.mode);
    };
    assert_eq!(v.comments.len(), 1, "the keys typed before the reply");
    w.on_keys(b"S");
    let sent = requests(&mut rx);
    let [(
        id,
        Request::Send(SendText {
            tab,
            text,
            enter: true,
            ..
        }),
    )] = sent.as_slice()
    else {
        panic!("{sent:?}");
    };
    assert_eq!(tab, "t1");
    assert_eq!(
        text,
        "A comment on your changes (file:line: comment):\na.rs:2: fix it"
    );
    // Closed before the core answers: kept as a draft until it does.
    w.on_keys(b"q");
    assert!(matches!(w.mode, Mode::Normal));
    assert_eq!(w.drafts["t1"].len(), 1);
    reply(&mut w, *id, serde_json::json!({}));
    assert!(w.drafts.is_empty());
    assert!(w.note.starts_with("sent 1 comment to tab 1"), "{}", w.note);
}

/// A refused `send` keeps the comments in the view and says why; a
/// refused `diff` (no worktree) opens the view with the core's reason.
#[test]
fn refusals_show_in_the_diff_view() {
    use crate::protocol::api::Request;
    let (out, mut rx) = mpsc::unbounded_channel();
    let mut w = Window::new("/a".into(), (24, 80), 2, "C-b".into(), String::new(), out);
    w.on_tabs(vec![tab("t1")]);
    w.view.redraw("t1", 23, 80);
    w.on_keys(b"\x02g");
    let (id, _) = requests(&mut rx).remove(0);
    refuse(&mut w, id, "tab t1 has no worktree of its own");
    let Mode::Diff(v) = &w.mode else {
        panic!("no diff view: {:?}", w.mode);
    };
    assert!(v
        .rows()
        .iter()
        .any(|r| r.text == "tab t1 has no worktree of its own"));
    w.on_keys(b"q\x02g");
    let (id, _) = requests(&mut rx).remove(0);
    reply(&mut w, id, a_diff("t1"));
    w.on_keys(b"Gcmine\rS");
    let (id, req) = requests(&mut rx).remove(0);
    assert!(matches!(req, Request::Send(_)));
    refuse(&mut w, id, "tab t1 has no running program to type into");
    let Mode::Diff(v) = &w.mode else {
        panic!("the view closed: {:?}", w.mode);
    };
    assert_eq!(v.comments.len(), 1);
    assert_eq!(
        v.note,
        "comments not sent: tab t1 has no running program to type into"
    );
    // The core lost: the view stays with its comments.
    w.lost("gone".into());
    assert!(matches!(&w.mode, Mode::Diff(v) if v.comments.len() == 1));
}

/// `r` in the diff view asks for the diff again; the comments and the
/// keys typed after it are the new view's, none reaches the tab.
#[test]
fn r_reloads_the_diff_with_its_comments() {
    use crate::protocol::api::Request;
    let (out, mut rx) = mpsc::unbounded_channel();
    let mut w = Window::new("/a".into(), (24, 80), 2, "C-b".into(), String::new(), out);
    w.on_tabs(vec![tab("t1")]);
    w.view.redraw("t1", 23, 80);
    w.on_keys(b"\x02g");
    let (id, _) = requests(&mut rx).remove(0);
    reply(&mut w, id, a_diff("t1"));
    w.on_keys(b"Gckeep me\rrG");
    let asked: Vec<_> = std::iter::from_fn(|| rx.try_recv().ok()).collect();
    let again: Vec<_> = asked
        .iter()
        .filter_map(|f| match f.decode_control::<ClientMsg>() {
            Ok(ClientMsg::Request { id, request }) => Some((id, request)),
            _ => None,
        })
        .collect();
    assert!(
        matches!(again.as_slice(), [(_, Request::Diff(_))]),
        "{again:?}"
    );
    assert!(
        asked
            .iter()
            .all(|f| f.kind != crate::protocol::frame::Kind::Data),
        "keys reached the tab"
    );
    reply(&mut w, again[0].0, a_diff("t1"));
    let Mode::Diff(v) = &w.mode else {
        panic!("no diff view: {:?}", w.mode);
    };
    assert_eq!(v.comments.len(), 1);
    assert_eq!(v.sel, v.rows().len() - 1, "the G typed after r");
}
