//! Issue 19's marks and questions, seen as a person sees them: a tab whose
//! agent handed its work to the person (`nerdr handoff --to-me`) is marked
//! `&` in the window and `handed_to_you` in `nerdr tabs --json`, until
//! `nerdr handoffs --clear`.

use crate::support::local::Local;
use crate::support::tmux::have_tmux;
use crate::support::tmux::Tmux;

const SH: &str = "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n";

/// The status line's entries before the note.
fn entries(s: &[String]) -> Vec<String> {
    let line = s.last().cloned().unwrap_or_default();
    let tabs = line.split(" | ").next().unwrap_or("").to_string();
    tabs.split_whitespace().map(str::to_string).collect()
}

fn handed(l: &Local, id: &str) -> serde_json::Value {
    l.tabs_json(&[])
        .into_iter()
        .find(|t| t["id"] == id)
        .map(|t| t["handed_to_you"].clone())
        .unwrap_or(serde_json::Value::Null)
}

#[test]
fn a_handoff_to_the_person_marks_its_tab_until_cleared() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config(SH);
    let first = l.ok(&["agent", "sh"]);
    let second = l.ok(&["agent", "sh"]);
    assert_eq!(handed(&l, &second), false);
    let t = Tmux::start(&l, 100, 24, "nerdr");
    t.wait("both tabs", |s: &[String]| {
        entries(s).iter().any(|e| e.starts_with("2:sh-2"))
    });
    l.ok(&[
        "handoff",
        "--to-me",
        "--from",
        &second,
        "the parser is done; the printer is next",
    ]);
    let s = t.wait("the & mark", |s: &[String]| {
        entries(s)
            .iter()
            .any(|e| e.starts_with("2:sh-2") && e.ends_with('&'))
    });
    assert!(
        !entries(&s)
            .iter()
            .any(|e| e.starts_with("1:") && e.contains('&')),
        "{s:?}"
    );
    assert_eq!(handed(&l, &second), true);
    assert_eq!(handed(&l, &first), false);
    // The help lists the mark.
    t.keys(&["C-b", "?"]);
    t.wait_text("& work handed to you");
    t.keys(&["q"]);
    l.ok(&["handoffs", "--clear"]);
    t.wait("the mark gone", |s: &[String]| {
        entries(s)
            .iter()
            .any(|e| e.starts_with("2:sh-2") && !e.contains('&'))
    });
    assert_eq!(handed(&l, &second), false);
}
