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

/// A newcomer's trial: `c` on a blank row was refused and the words typed
/// after it ran as the view's keys, where `S` sent the comments. Now a
/// send asks `y` first and the refusal says the keys are the view's; the
/// status line's hints fit 80 columns whole; `C-b ?` over the view lists
/// its own keys.
#[test]
fn stray_typing_in_the_diff_view_never_sends() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config("[agents.cat]\ncommand = [\"cat\"]\n");
    l.repo_with(&[("notes.txt", "alpha\nbeta\n")], "first");
    let tab = l.ok(&["agent", "cat"]);
    std::fs::write(
        l.worktree_of(&tab).join("notes.txt"),
        "alpha\nbeta needle\n",
    )
    .unwrap();

    let t = Tmux::start(&l, 80, 24, "nerdr");
    t.wait("tab 1 shown", |s: &[String]| status(s).contains("1:cat-1*"));
    t.keys(&["C-b", "g"]);
    t.wait_text("+beta needle");
    t.text("/needle");
    t.keys(&["Enter"]);
    t.text("c");
    t.wait_text("comment on notes.txt:2:");
    t.text("say why");
    t.keys(&["Enter"]);
    let s = t.wait_text(">> notes.txt:2: say why");
    // The hints end whole at 80 columns: no key cut in two.
    let bar = status(&s);
    assert!(bar.contains("| q close S sends 1 c"), "{bar:?}");
    // `g`: the title, which takes no comment; then a sentence, a word of
    // which starts `Sy` (a send and its `y`, were they the view's keys).
    t.text("gc");
    t.wait_text("no comment on this row");
    t.text("Sydney Sent As");
    t.wait_text("no comment on this row: Sydney Sent As");
    t.keys(&["Enter"]);
    t.wait_text("nothing kept");
    let sent = crate::support::poll(Duration::from_secs(3), || {
        l.ok(&["read", &tab]).contains("say why")
    });
    assert!(!sent, "stray typing sent the comment");
    // `C-b ?`: the view's own keys.
    t.keys(&["C-b", "?"]);
    let s = t.wait_text("the diff view's keys");
    assert!(
        s.iter().any(|l| l.contains("asks y first")),
        "{}",
        s.join("\n")
    );
    t.text(" ");
    t.wait_text(">> notes.txt:2: say why");
    // `S` then `y` sends.
    t.text("S");
    t.wait_text("send 1 comment to the tab's agent? y/n");
    t.text("y");
    t.wait_text("sent 1 comment to tab 1 (cat-1)");
    l.wait_screen(&tab, "notes.txt:2: say why");
}
