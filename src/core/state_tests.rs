//! Tests of the core's state: tabs as saved and restored, and the
//! session and tab lists.

use super::*;

fn tab(id: &str) -> Tab {
    let saved = serde_json::from_value(serde_json::json!({
        "id": id, "folder": "/w", "agent": "sh", "command": ["sh"], "sandboxed": false,
        "state": "running", "pid": null, "start_time": null, "exit_code": null,
    }))
    .unwrap();
    Tab::from_saved(saved, 24, 80)
}

fn order(state: &State) -> Vec<&str> {
    let tabs = state.session_tabs(Path::new("/w"));
    tabs.iter().map(|t| t.id.as_str()).collect()
}

/// A restarted tab keeps its place (its number); a closed one gives it
/// up, and so does one that did not come back: the next new tab takes
/// the lowest number free.
#[test]
fn a_tab_started_again_keeps_its_place() {
    let mut state = State::default();
    for id in ["a", "b", "c"] {
        state.insert(tab(id));
    }
    let a = state.remove_keeping_place("a").unwrap();
    assert_eq!(order(&state), ["b", "c"]);
    state.insert(a);
    assert_eq!(order(&state), ["a", "b", "c"]);

    state.remove_keeping_place("b").unwrap();
    state.forget_place(Path::new("/w"), "b");
    state.insert(tab("d"));
    state.insert(tab("b"));
    // The number given up is the lowest free: a new tab takes it.
    assert_eq!(order(&state), ["a", "d", "c", "b"]);
    state.remove("d");

    // A tab that is back keeps its place whoever asks to forget it.
    state.forget_place(Path::new("/w"), "a");
    assert_eq!(order(&state), ["a", "c", "b"]);
    // c closes and comes back new: it takes 2, the lowest free.
    state.remove("c");
    state.insert(tab("c"));
    assert_eq!(order(&state), ["a", "c", "b"]);
}

/// Numbers stay with their tabs, as tmux's windows keep theirs: a
/// close leaves a gap the next new tab fills, a tab started again
/// keeps its number, a list from before numbers numbers its tabs in
/// order, and the session's order is the numbers'.
#[test]
fn tabs_keep_their_numbers() {
    let mut state = State::default();
    for id in ["a", "b", "c"] {
        state.insert(tab(id));
    }
    let numbers = |s: &State| -> Vec<(String, usize)> {
        s.session_tabs(Path::new("/w"))
            .iter()
            .map(|t| (t.id.clone(), t.number))
            .collect()
    };
    let want = |rows: &[(&str, usize)]| -> Vec<(String, usize)> {
        rows.iter().map(|(id, n)| (id.to_string(), *n)).collect()
    };
    assert_eq!(numbers(&state), want(&[("a", 1), ("b", 2), ("c", 3)]));
    state.remove("a");
    assert_eq!(numbers(&state), want(&[("b", 2), ("c", 3)]));
    // Started again: its number is kept while it is out.
    let b = state.remove_keeping_place("b").unwrap();
    state.insert(tab("d"));
    state.insert(b);
    assert_eq!(numbers(&state), want(&[("d", 1), ("b", 2), ("c", 3)]));
    state.remove("b");
    state.insert(tab("e"));
    assert_eq!(numbers(&state), want(&[("d", 1), ("e", 2), ("c", 3)]));
    // Written with its number, read back with it; a number another
    // tab has is not taken twice.
    let json = serde_json::to_value(state.tabs["c"].saved(false)).unwrap();
    assert_eq!(json["number"], 3);
    state.remove("c");
    state.insert(tab("f"));
    let mut back = Tab::from_saved(serde_json::from_value(json).unwrap(), 24, 80);
    assert_eq!(back.number, 3);
    back.id = "g".into();
    state.insert(back);
    assert_eq!(
        numbers(&state),
        want(&[("d", 1), ("e", 2), ("f", 3), ("g", 4)])
    );
}

/// A list written before tabs had names reads, and its tabs get their
/// defaults, per session and agent; a tab started again keeps its name.
#[test]
fn tabs_get_default_names_and_keep_them() {
    let mut state = State::default();
    for id in ["a", "b", "c"] {
        state.insert(tab(id));
    }
    let names = |s: &State| -> Vec<String> {
        s.session_tabs(Path::new("/w"))
            .iter()
            .map(|t| t.name.clone())
            .collect()
    };
    assert_eq!(names(&state), ["sh-1", "sh-2", "sh-3"]);
    state.tabs.get_mut("b").unwrap().name = "review".into();
    let b = state.remove_keeping_place("b").unwrap();
    state.insert(tab(&b.id));
    assert_eq!(names(&state), ["sh-1", "review", "sh-3"]);
    state.remove("a");
    state.insert(tab("d"));
    assert_eq!(names(&state), ["sh-1", "review", "sh-3"]);
    // Written with its name, read back with it.
    let saved = state.tabs["b"].saved(false);
    let json = serde_json::to_value(&saved).unwrap();
    assert_eq!(json["name"], "review");
    let back: Saved = serde_json::from_value(json).unwrap();
    assert_eq!(Tab::from_saved(back, 24, 80).name, "review");
}

/// What a sandboxed tab's check found out of its reach is written
/// with it and read back; a record from before it was kept (the
/// `tab` helper's) reads as nothing out of reach.
#[test]
fn what_of_nerdr_is_out_of_reach_survives_a_restart() {
    let mut t = tab("a");
    assert_eq!(t.nerdr_missing, None);
    assert!(serde_json::to_value(t.saved(true)).unwrap()["nerdr_missing"].is_null());
    t.nerdr_missing = Some("the hook socket /s: No such file or directory".into());
    let back: Saved =
        serde_json::from_value(serde_json::to_value(t.saved(false)).unwrap()).unwrap();
    assert_eq!(
        Tab::from_saved(back, 24, 80).nerdr_missing.as_deref(),
        Some("the hook socket /s: No such file or directory")
    );
}

/// A tab's line of starters is written with it and read back (a core
/// started again still holds a helper of an author as the author); a
/// record from before it was kept reads as the person's tab.
#[test]
fn the_line_of_starters_survives_a_restart() {
    let mut t = tab("h");
    assert!(t.started_by.is_empty());
    assert!(serde_json::to_value(t.saved(false)).unwrap()["started_by"].is_null());
    t.started_by = vec!["a".into(), "b".into()];
    for with_secret in [false, true] {
        let back: Saved =
            serde_json::from_value(serde_json::to_value(t.saved(with_secret)).unwrap()).unwrap();
        assert_eq!(Tab::from_saved(back, 24, 80).started_by, ["a", "b"]);
    }
}

/// Only live sessions hold folders: one whose tabs all closed holds
/// none, not even its own; one with tabs holds its subfolders and its
/// tabs' worktrees.
#[test]
fn folders_are_placed_in_live_sessions() {
    let mut state = State::default();
    state.insert(tab("a"));
    state.tabs.get_mut("a").unwrap().worktree = Some(Worktree {
        path: "/data/wt/a".into(),
        repo: "/w".into(),
        branch: "nerdr/a".into(),
        base: None,
        base_branch: None,
    });
    state.sessions.insert("/closed".into(), vec![]);
    let placed = |s: &State, d: &str| s.session_of(Path::new(d));
    assert_eq!(placed(&state, "/w/src"), Some("/w".into()));
    assert_eq!(placed(&state, "/data/wt/a/src"), Some("/w".into()));
    assert_eq!(placed(&state, "/closed"), None);
    assert_eq!(placed(&state, "/closed/x"), None);
    assert_eq!(state.live_sessions().collect::<Vec<_>>(), [Path::new("/w")]);
    state.remove("a");
    assert_eq!(placed(&state, "/w/src"), None);
    assert_eq!(placed(&state, "/data/wt/a"), None);
}

#[test]
fn status_lines() {
    use TabState::*;
    let rows: &[(&[TabState], usize, &str)] = &[
        (&[], 0, "0 agents running, 0 sessions"),
        (&[Running], 1, "1 agent running, 1 session"),
        (
            &[Running, Running, Exited, Refused, Starting],
            2,
            "2 agents running, 1 starting, 1 exited, 1 refused, 2 sessions",
        ),
    ];
    for (states, sessions, want) in rows {
        assert_eq!(status_text(states.iter().copied(), *sessions), *want);
    }
}
