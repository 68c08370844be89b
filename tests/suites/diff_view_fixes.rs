//! Newcomers' findings in the window's diff view (issue 18), each a test
//! through tmux as a person drives it: comments (questions quoting a
//! reviewer among them) are never typed into a tab that runs a program.

use std::time::Duration;

use crate::support::local::Local;
use crate::support::tmux::{have_tmux, Tmux};

fn status(s: &[String]) -> String {
    s.last().cloned().unwrap_or_default()
}

/// `S` into a tab running bash typed the comments as commands; a
/// question on a review comment quoted the reviewer's words there too.
/// Now `S` refuses, says why, and the comments stay as drafts.
#[test]
fn comments_are_never_typed_into_a_tab_that_runs_a_program() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.repo_with(&[("notes.txt", "alpha\nbeta\n")], "first");
    let marker = l.path("comment-ran");
    let tab = l.ok(&["agent", "--", "bash", "--norc", "--noprofile"]);
    let wt = l.worktree_of(&tab);
    std::fs::write(wt.join("notes.txt"), "alpha\nbeta needle\n").unwrap();

    let t = Tmux::start(&l, 220, 30, "nerdr");
    t.wait("tab 1 shown", |s: &[String]| status(s).contains("1:"));
    t.keys(&["C-b", "g"]);
    t.wait_text("+beta needle");
    t.text("/needle");
    t.keys(&["Enter"]);
    t.text("c");
    t.wait_text("comment on notes.txt:2:");
    t.text(&format!("why; touch {}", marker.display()));
    t.keys(&["Enter"]);
    t.wait_text(">> notes.txt:2: why; touch");
    t.text("S");
    let s = t.wait_text("they stay as drafts");
    assert!(
        status(&s).contains("runs a program (bash), not an agent"),
        "{}",
        status(&s)
    );
    let ran = crate::support::poll(Duration::from_secs(3), || marker.exists());
    assert!(!ran, "the comment ran in the tab's shell");
    assert!(s.iter().any(|l| l.contains(">> notes.txt:2: why; touch")));
}
