//! What a newcomer tripped over in reviews and the diff view (issue 18's
//! trial), each proven on the real binary with a hand-started core:
//!
//! - a reviewer whose screen rules cannot say idle (a program, a shell)
//!   gets its first prompt once its screen settles, instead of never (the
//!   old wait ran out after 180 s and typed nothing);
//! - a review posted for a tab marks it in the window's status line and in
//!   `nerdr tabs` until the panel (or `nerdr reviews TAB`) shows it;
//! - comments not sent from the diff view outlive closing it, detaching,
//!   and a new window, and one whose line is gone is dropped, saying so.

use std::path::PathBuf;

use crate::support::git::git;
use crate::support::local::Local;
use crate::support::tmux::{have_tmux, Tmux};

fn status(s: &[String]) -> String {
    s.last().cloned().unwrap_or_default()
}

fn worktree(l: &Local, tab: &str) -> PathBuf {
    let tabs = l.tabs_json(&[]);
    let t = tabs.iter().find(|t| t["id"] == tab).expect("the tab");
    PathBuf::from(t["worktree"].as_str().expect("a worktree"))
}

/// A repository as the session's folder, an author tab (`cat`) and one
/// commit of its own on `notes.txt`'s second line.
fn author_with_a_commit(l: &Local) -> (String, PathBuf) {
    let r = l.work();
    git(&r, &["init", "-q"]);
    let lines: Vec<String> = (1..=12).map(|n| format!("line {n}")).collect();
    std::fs::write(r.join("notes.txt"), lines.join("\n") + "\n").unwrap();
    git(&r, &["add", "."]);
    git(&r, &["commit", "-q", "-m", "first"]);
    let author = l.ok(&["agent", "cat"]);
    let wt = worktree(l, &author);
    let mut changed = lines.clone();
    changed[1] = "line 2 needle".into();
    std::fs::write(wt.join("notes.txt"), changed.join("\n") + "\n").unwrap();
    git(&wt, &["commit", "-q", "-am", "work"]);
    (author, wt)
}

#[test]
fn a_reviewer_whose_screen_tells_no_idle_gets_its_first_prompt_once_it_settles() {
    let l = Local::started();
    // A program with no screen rules: its state never reads idle. It
    // draws a prompt, reads one line and shows what it got.
    l.write_config(
        "[agents.cat]\ncommand = [\"cat\"]\n\
         [agents.rev]\ncommand = [\"sh\", \"-c\", \"printf 'ready> '; read line; \
         echo \\\"got: $line\\\"; exec cat\"]\n\
         [review]\nagent = \"rev\"\n",
    );
    let (author, _) = author_with_a_commit(&l);
    let reviewer = l.ok(&["request-review", &author]);
    // Well within the 180 s an idle state was waited for before.
    let screen = l.wait_screen(&reviewer, "got: Please review the commits");
    assert!(screen.contains("post-review"), "{screen}");
    let tabs = l.tabs_json(&[]);
    let t = tabs.iter().find(|t| t["id"] == reviewer).unwrap();
    assert!(t.get("warning").is_none(), "no warning: {t}");
}
