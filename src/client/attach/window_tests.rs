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
