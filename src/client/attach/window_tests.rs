use super::*;
use crate::protocol::api::TabInfo;

pub(super) fn tab(id: &str) -> TabInfo {
    serde_json::from_value(serde_json::json!({
        "id": id, "agent": "sh", "folder": "/a", "command": ["sh"], "sandboxed": false,
        "state": "running", "pid": null, "exit_code": null,
    }))
    .unwrap()
}

fn selects(rx: &mut mpsc::Receiver<Frame>) -> Vec<String> {
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
    let (mut w, mut rx) = super::test_window();
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
fn requests(rx: &mut mpsc::Receiver<Frame>) -> Vec<(u64, crate::protocol::api::Request)> {
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

/// The view asks for the tab's reviews first: answer `value`.
fn reviews_of(w: &mut Window, rx: &mut mpsc::Receiver<Frame>, tab: &str, value: serde_json::Value) {
    use crate::protocol::api::{ListReviews, Request};
    let asked = requests(rx);
    let [(id, Request::Reviews(ListReviews { tab: Some(t), .. }))] = asked.as_slice() else {
        panic!("{asked:?}");
    };
    assert_eq!(t, tab);
    reply(w, *id, value);
}

fn no_reviews(w: &mut Window, rx: &mut mpsc::Receiver<Frame>) {
    reviews_of(w, rx, "t1", serde_json::json!([]));
}

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
    let (mut w, mut rx) = super::test_window();
    w.on_tabs(vec![tab("t1")]);
    w.view.redraw("t1", 23, 80);
    w.on_keys(b"\x02g/needle\rcfix it\r");
    no_reviews(&mut w, &mut rx);
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
    w.on_keys(b"Sy");
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
    let (mut w, mut rx) = super::test_window();
    w.on_tabs(vec![tab("t1")]);
    w.view.redraw("t1", 23, 80);
    w.on_keys(b"\x02g");
    no_reviews(&mut w, &mut rx);
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
    no_reviews(&mut w, &mut rx);
    let (id, _) = requests(&mut rx).remove(0);
    reply(&mut w, id, a_diff("t1"));
    w.on_keys(b"Gcmine\rSy");
    let (id, req) = requests(&mut rx).remove(0);
    assert!(matches!(req, Request::Send(_)));
    refuse(&mut w, id, "tab t1 has no running program to type into");
    let Mode::Diff(v) = &w.mode else {
        panic!("the view closed: {:?}", w.mode);
    };
    assert_eq!(v.comments.len(), 1);
    assert_eq!(
        v.note,
        "1 comment not sent: tab t1 has no running program to type into"
    );
    // The core lost: the view stays with its comments.
    w.lost("gone".into(), std::time::Duration::from_millis(50));
    assert!(matches!(&w.mode, Mode::Diff(v) if v.comments.len() == 1));
}

/// `r` in the diff view asks for the diff again; the comments and the
/// keys typed after it are the new view's, none reaches the tab.
#[test]
fn r_reloads_the_diff_with_its_comments() {
    use crate::protocol::api::Request;
    let (mut w, mut rx) = super::test_window();
    w.on_tabs(vec![tab("t1")]);
    w.view.redraw("t1", 23, 80);
    w.on_keys(b"\x02g");
    no_reviews(&mut w, &mut rx);
    let (id, _) = requests(&mut rx).remove(0);
    reply(&mut w, id, a_diff("t1"));
    w.on_keys(b"Gckeep me\rrG");
    // The reviews again first, then the diff.
    no_reviews(&mut w, &mut rx);
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

fn a_review(tab: &str, sandboxed: bool) -> serde_json::Value {
    serde_json::json!([{
        "tab": tab, "name": "sh-1",
        "reviews": [{
            "number": 1, "reviewer_tab": "r1", "agent": "rev",
            "written_in_sandbox": sandboxed,
            "base": "0123456789abcdef", "head": "fedcba9876543210",
            "summary": "Mostly fine.",
            "comments": [
                {"file": "a.rs", "line": 2, "severity": "warning", "text": "why needle?"},
                {"file": "gone.rs", "line": 7, "severity": "error", "text": "not here"},
            ],
        }],
        "requested": [{
            "reviewer_tab": "r2", "agent": "other", "base": "0123456789abcdef",
            "head": "fedcba9876543210", "automatic": true,
        }],
    }])
}

/// The review panel: the reviews come with the diff; `>` selects a
/// review comment, `s` sends it in `review::message`'s words through
/// `send`, `A` all of the review's comments; `c` on it is a question
/// that `S` sends with the person's comments.
#[test]
fn review_comments_show_in_the_diff_view_and_go_to_the_agent() {
    use crate::protocol::api::{Request, SendText};
    let (mut w, mut rx) = super::test_window();
    w.on_tabs(vec![tab("t1")]);
    w.view.redraw("t1", 23, 80);
    // Keys typed before either reply are the view's.
    w.on_keys(b"\x02g>");
    reviews_of(&mut w, &mut rx, "t1", a_review("t1", true));
    let (id, _) = requests(&mut rx).remove(0);
    reply(&mut w, id, a_diff("t1"));
    let Mode::Diff(v) = &w.mode else {
        panic!("no diff view: {:?}", w.mode);
    };
    let texts: Vec<&str> = v.rows().iter().map(|r| r.text.as_str()).collect();
    assert!(texts.iter().any(|t| t.contains("summary: Mostly fine.")));
    assert!(texts
        .iter()
        .any(|t| t.contains("requested: other (tab r2)")));
    assert!(v.status().contains("s send A send all"), "{}", v.status());
    // The view opens on the first file; `>` went on to the comment under
    // its line 2. The one on a file the diff does not have is with the
    // summary, above.
    assert!(
        v.rows()[v.sel].text.contains("a.rs:2 warning from rev"),
        "{texts:#?}"
    );
    w.on_keys(b"sy");
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
        &format!(
            "{} Review 1 by rev of 0123456789ab..fedcba987654: a.rs:2 (warning): why needle?",
            crate::review::SANDBOX_NOTE
        )
    );
    reply(&mut w, *id, serde_json::json!({}));
    let Mode::Diff(v) = &w.mode else {
        panic!("the view closed: {:?}", w.mode);
    };
    assert_eq!(
        v.note,
        "sent review 1's comment 1 to tab 1 () as one message"
    );
    // A: every comment of the review.
    w.on_keys(b"Ay");
    let sent = requests(&mut rx);
    let [(_, Request::Send(SendText { text, .. }))] = sent.as_slice() else {
        panic!("{sent:?}");
    };
    assert!(
        text.ends_with("a.rs:2 (warning): why needle?; gone.rs:7 (error): not here"),
        "{text}"
    );
    // A question on the review comment, sent with S.
    w.on_keys(b"cwhy not?\rSy");
    let sent = requests(&mut rx);
    let [(_, Request::Send(SendText { text, .. }))] = sent.as_slice() else {
        panic!("{sent:?}");
    };
    assert_eq!(
        text,
        "A comment on your changes (file:line: comment):\n\
         a.rs:2: a question on review 1's comment 1 (\"warning: why needle?\"): why not?"
    );
}

/// Reviews that cannot be read leave the diff to show, and say why.
#[test]
fn refused_reviews_still_show_the_diff() {
    use crate::protocol::api::Request;
    let (mut w, mut rx) = super::test_window();
    w.on_tabs(vec![tab("t1")]);
    w.view.redraw("t1", 23, 80);
    w.on_keys(b"\x02g");
    let (id, req) = requests(&mut rx).remove(0);
    assert!(matches!(req, Request::Reviews(_)), "{req:?}");
    refuse(&mut w, id, "no reviews here");
    let (id, req) = requests(&mut rx).remove(0);
    assert!(matches!(req, Request::Diff(_)), "{req:?}");
    reply(&mut w, id, a_diff("t1"));
    let Mode::Diff(v) = &w.mode else {
        panic!("no diff view: {:?}", w.mode);
    };
    assert!(v
        .rows()
        .iter()
        .any(|r| r.text == "The reviews could not be read: no reviews here"));
    assert!(v.rows().iter().any(|r| r.text.contains("+needle")));
}

/// The prefix works in the diff view as outside it: `C-b d` detaches
/// (it paged up before, `C-b` being less's page up), the comments kept;
/// `C-b n` shows the next tab, the view closed; the prefix twice is the
/// view's own `C-b`; a key bound to nothing is dropped.
#[test]
fn the_prefix_works_in_the_diff_view() {
    let (mut w, mut rx) = super::test_window();
    w.on_tabs(vec![tab("t1"), tab("t2")]);
    w.view.redraw("t1", 23, 80);
    let open = |w: &mut Window, rx: &mut mpsc::Receiver<Frame>| {
        w.on_keys(b"\x02g");
        no_reviews(w, rx);
        let (id, _) = requests(rx).remove(0);
        reply(w, id, a_diff("t1"));
        assert!(matches!(w.mode, Mode::Diff(_)), "{:?}", w.mode);
    };
    open(&mut w, &mut rx);
    w.on_keys(b"Gcmine\r");
    // Split across reads, as a person types it.
    w.on_keys(b"\x02");
    assert!(matches!(&w.mode, Mode::Diff(v) if v.comments.len() == 1));
    w.on_keys(b"Z");
    assert!(matches!(w.mode, Mode::Diff(_)), "an unbound key is dropped");
    w.on_keys(b"G\x02\x02");
    let Mode::Diff(v) = &w.mode else {
        panic!("the prefix twice closed the view: {:?}", w.mode);
    };
    assert!(v.sel + 1 < v.rows().len(), "the view's own C-b paged up");
    assert!(w.done.is_none());
    w.on_keys(b"\x02n");
    assert!(matches!(w.mode, Mode::Normal), "{:?}", w.mode);
    assert_eq!(selects(&mut rx), vec!["t2".to_string()]);
    assert_eq!(w.drafts.get("t1").map(Vec::len), Some(1), "kept");
    w.view.redraw("t1", 23, 80);
    open(&mut w, &mut rx);
    w.on_keys(b"\x02d");
    assert_eq!(w.done.as_deref(), Some("[detached]"));
    assert_eq!(
        w.leaving().as_deref(),
        Some("1 unsent comment kept (C-b g to see it)")
    );
}

/// `C-b ?` over the diff view shows the help and returns to the view as
/// it was (it closed the view before, as the other prefix commands do),
/// as tmux's help returns to copy mode; the key that closes the help is
/// the help's; a window leaving under the help keeps the view's comments.
#[test]
fn the_help_over_the_diff_view_returns_to_it() {
    let (mut w, mut rx) = super::test_window();
    w.on_tabs(vec![tab("t1"), tab("t2")]);
    w.view.redraw("t1", 23, 80);
    w.on_keys(b"\x02g");
    no_reviews(&mut w, &mut rx);
    let (id, _) = requests(&mut rx).remove(0);
    reply(&mut w, id, a_diff("t1"));
    w.on_keys(b"Gcmine\r");
    let Mode::Diff(v) = &w.mode else {
        panic!("no diff view: {:?}", w.mode);
    };
    let sel = v.sel;
    w.on_keys(b"\x02?");
    assert!(
        matches!(&w.mode, Mode::Help { over: Some(v) } if v.comments.len() == 1),
        "{:?}",
        w.mode
    );
    // `g` closes the help only: not the view's top.
    w.on_keys(b"g");
    let Mode::Diff(v) = &w.mode else {
        panic!("the help did not return to the view: {:?}", w.mode);
    };
    assert_eq!((v.sel, v.comments.len()), (sel, 1), "the view as it was");
    assert!(w.drafts.is_empty(), "no draft: the view is still open");
    w.on_keys(b"\x02?");
    assert_eq!(
        w.leaving().as_deref(),
        Some("1 unsent comment kept (C-b g to see it)")
    );
}

/// A newcomer's trial: `nerdr clean` removed a closed tab's drafts, a
/// comment on another tab was sent, yet the status line and the detach
/// went on saying `1 unsent comment kept`. The count follows the drafts
/// actually kept: a file gone is a draft gone, and a view closing with
/// none says nothing stale.
#[test]
fn the_kept_count_follows_the_drafts_actually_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (mut w, mut rx) = super::test_window();
    w.drafts_dir = Some(dir.path().join("drafts"));
    w.on_tabs(vec![tab("t1"), tab("t2")]);
    w.view.redraw("t1", 23, 80);
    w.on_keys(b"\x02g");
    no_reviews(&mut w, &mut rx);
    let (id, _) = requests(&mut rx).remove(0);
    reply(&mut w, id, a_diff("t1"));
    w.on_keys(b"Gcmine\rq");
    assert_eq!(w.note, "1 unsent comment kept (C-b g to see it)");
    let file = dir.path().join("drafts/t1.json");
    assert!(file.exists());
    // `nerdr clean`, in another process, once t1 is closed.
    std::fs::remove_file(&file).unwrap();
    // t2's view opens and closes with nothing unsent.
    w.view.redraw("t2", 23, 80);
    w.on_keys(b"\x02g");
    reviews_of(&mut w, &mut rx, "t2", serde_json::json!([]));
    let (id, _) = requests(&mut rx).remove(0);
    reply(&mut w, id, a_diff("t2"));
    w.on_keys(b"q");
    assert_eq!(w.note, "", "no stale count once t2's view closes");
    assert_eq!(w.leaving(), None, "t1's drafts went with their file");
    assert!(w.drafts.is_empty());
}

/// The kept note answers the view closing, and goes with the next key.
#[test]
fn the_kept_note_goes_with_the_next_key() {
    let (mut w, mut rx) = super::test_window();
    w.on_tabs(vec![tab("t1")]);
    w.view.redraw("t1", 23, 80);
    w.on_keys(b"\x02g");
    no_reviews(&mut w, &mut rx);
    let (id, _) = requests(&mut rx).remove(0);
    reply(&mut w, id, a_diff("t1"));
    w.on_keys(b"Gcmine\rq");
    assert_eq!(w.note, "1 unsent comment kept (C-b g to see it)");
    w.on_keys(b"x");
    assert_eq!(w.note, "");
    assert_eq!(
        w.leaving().as_deref(),
        Some("1 unsent comment kept (C-b g to see it)"),
        "kept in this window (no drafts folder), so still counted"
    );
}

/// A newcomer's trial: `C-b A` to an agent for which no handoff can be
/// built (the old agent's conversation does not read) ended in the
/// core's refusal, cut off in the status line. Now the window asks to
/// switch without one, and `y` asks the core so; `n` leaves the tab be.
#[test]
fn a_switch_with_no_handoff_to_be_had_asks_to_go_without() {
    use crate::protocol::api::{Request, SwitchTab};
    let (out, mut rx) = mpsc::channel(super::conn::TO_CORE_AHEAD);
    let mut w = Window::new("/a".into(), (24, 120), 2, "C-b".into(), String::new(), out);
    let mut t1 = tab("t1");
    t1.kind = crate::protocol::api::TabKind::Agent;
    w.on_tabs(vec![t1]);
    w.view.redraw("t1", 23, 120);
    let ask = |w: &mut Window, rx: &mut mpsc::Receiver<Frame>| {
        w.on_keys(b"\x02A");
        let (id, _) = requests(rx).remove(0);
        reply(w, id, serde_json::json!({"agents": ["sh", "revbot"]}));
        assert!(matches!(&w.mode, Mode::Picker { agents, .. } if agents == &["revbot"]));
        w.on_keys(b"\r");
        let asked = requests(rx);
        let [(
            id,
            Request::Switch(SwitchTab {
                agent,
                no_handoff: false,
                ..
            }),
        )] = asked.as_slice()
        else {
            panic!("{asked:?}");
        };
        assert_eq!(agent, "revbot");
        let message = crate::switch::rules::refusal(&crate::switch::rules::Facts {
            tab: "t1",
            from: "sh",
            to: "revbot",
            terminal: false,
            sandboxed: false,
            to_sandboxed: false,
            handoff: crate::switch::rules::Handoff::Unreadable,
        })
        .unwrap();
        refuse(w, *id, &message);
    };
    ask(&mut w, &mut rx);
    let Mode::Confirm { question, .. } = &w.mode else {
        panic!("no question: {:?} {}", w.mode, w.note);
    };
    assert_eq!(
        question,
        "sh's conversation gives no handoff: switch tab 1 to revbot without one? y/n"
    );
    w.on_keys(b"y");
    let asked = requests(&mut rx);
    assert!(
        matches!(asked.as_slice(), [(_, Request::Switch(SwitchTab { agent, no_handoff: true, .. }))] if agent == "revbot"),
        "{asked:?}"
    );
    // `n`: nothing asked.
    ask(&mut w, &mut rx);
    w.on_keys(b"n");
    assert!(matches!(w.mode, Mode::Normal));
    assert!(requests(&mut rx).is_empty());
}
