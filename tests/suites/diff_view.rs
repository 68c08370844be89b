//! The window's diff view (prefix `g`) driven through tmux as a person
//! would: a tab whose worktree has a commit and an uncommitted change
//! shows its files and lines; a comment put on a line arrives in the tab
//! as one message (the tab runs `cat`, so `nerdr read` shows the text it
//! was typed); a tab with no worktree, and one with no changes, say so.

use crate::support::git::git;
use crate::support::local::Local;
use crate::support::tmux::{have_tmux, Tmux};

const CAT: &str = "[agents.cat]\ncommand = [\"cat\"]\n";

fn status(s: &[String]) -> String {
    s.last().cloned().unwrap_or_default()
}

#[test]
fn a_comment_on_a_line_of_the_diff_reaches_the_tab_as_one_message() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config(CAT);
    l.repo_with(&[("notes.txt", "alpha\nbeta\ngamma\n")], "first");
    let tab = l.ok(&["agent", "cat"]);
    let wt = l.worktree_of(&tab);
    // A commit on the tab's branch, and work not committed yet.
    std::fs::write(wt.join("notes.txt"), "alpha\nbeta needle\ngamma\n").unwrap();
    std::fs::write(wt.join("fresh.txt"), "new file\n").unwrap();
    git(&wt, &["add", "."]);
    git(&wt, &["commit", "-q", "-m", "work"]);
    std::fs::write(wt.join("notes.txt"), "alpha\nbeta needle\ngamma\ndelta\n").unwrap();

    let t = Tmux::start(&l, 100, 30, "nerdr");
    t.wait("tab 1 shown", |s: &[String]| status(s).contains("1:cat-1*"));
    t.keys(&["C-b", "g"]);
    let s = t.wait_text("+beta needle");
    let page = s.join("\n");
    for want in [
        "diff of tab 1 (cat-1): ",
        "2 files changed, +3 -1",
        "notes.txt  (modified, +2 -1, uncommitted)",
        "fresh.txt  (added, +1)",
        "-beta",
        "+delta",
        "+new file",
    ] {
        assert!(page.contains(want), "{want:?} missing:\n{page}");
    }
    // The old and new line numbers stand before each line.
    let row = |s: &[String], needle: &str| s.iter().position(|l| l.contains(needle));
    let needle = &s[row(&s, "+beta needle").unwrap()];
    assert!(
        needle.trim_start().starts_with("2 +beta needle"),
        "{needle:?}"
    );

    // A search selects the line; `c` writes a comment under it.
    t.text("/needle");
    t.keys(&["Enter"]);
    t.text("c");
    t.wait_text("comment on notes.txt:2:");
    t.text("say why it changed");
    t.keys(&["Enter"]);
    let s = t.wait_text(">> notes.txt:2: say why it changed");
    let at = row(&s, "+beta needle").unwrap();
    assert!(
        s[at + 1].contains(">> notes.txt:2: say why it changed"),
        "{}",
        s.join("\n")
    );
    // A second one, on the file as a whole.
    t.text("g}");
    t.text("cwelcome");
    t.keys(&["Enter"]);
    t.wait_text(">> fresh.txt: welcome");

    t.text("Sy");
    t.wait_text("sent 2 comments to tab 1 (cat-1) as one message");
    // Typed into the tab whole: the header line and each comment.
    let screen = l.wait_screen(&tab, "fresh.txt: welcome");
    for want in [
        "2 comments on your changes (file:line: comment):",
        "notes.txt:2: say why it changed",
    ] {
        assert!(screen.contains(want), "{want:?} missing:\n{screen}");
    }
    // Sent comments leave the view; closing it shows the tab again.
    let s = t.wait("the comments gone", |s: &[String]| {
        !s.iter().any(|l| l.contains(">> notes.txt"))
    });
    assert!(
        s.iter().any(|l| l.contains("+beta needle")),
        "{}",
        s.join("\n")
    );
    t.text("q");
    t.wait("the tab again", |s: &[String]| {
        status(s).contains("1:cat-1*") && s.iter().any(|l| l.contains("fresh.txt: welcome"))
    });
}

#[test]
fn no_worktree_no_changes_and_unsent_comments_say_so() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config(CAT);
    l.repo_with(&[("notes.txt", "alpha\nbeta\ngamma\n")], "first");
    l.ok(&["agent", "cat", "--no-worktree"]);
    let clean = l.ok(&["agent", "cat"]);
    let t = Tmux::start(&l, 100, 30, "nerdr");
    t.wait("tab 1 shown", |s: &[String]| status(s).contains("1:cat-1*"));
    t.keys(&["C-b", "g"]);
    t.wait_text("no worktree of its own");
    t.text("q");
    t.keys(&["C-b", "2"]);
    t.wait("tab 2 shown", |s: &[String]| status(s).contains("2:cat-2*"));
    t.keys(&["C-b", "g"]);
    t.wait_text("No changes: nerdr/");
    t.text("q");
    // A comment left unsent waits for the view to open again.
    std::fs::write(l.worktree_of(&clean).join("notes.txt"), "alpha\n").unwrap();
    t.keys(&["C-b", "g"]);
    t.wait_text("-gamma");
    // A smaller window: drawn again at its size, the status line last.
    t.resize(60, 12);
    t.wait("the view at 60x12", |s: &[String]| {
        s.len() == 12 && status(s).starts_with(" diff ") && s.iter().any(|l| l.contains("-gamma"))
    });
    t.text("Gclater");
    t.keys(&["Enter"]);
    t.wait_text(">> notes.txt:3 (a removed line): later");
    t.text("q");
    t.resize(100, 30);
    t.wait_text("1 unsent comment kept (C-b g to see it)");
    t.keys(&["C-b", "g"]);
    t.wait_text(">> notes.txt:3 (a removed line): later");
}
