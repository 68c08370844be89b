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

/// The reviewer stand-in: it takes its first prompt as one line (so the
/// prompt nerdr types cannot reach a shell), then is a shell a test types
/// `nerdr post-review` into.
const REVIEWED: &str = "[agents.cat]\ncommand = [\"cat\"]\n\
    [agents.rev]\ncommand = [\"sh\", \"-c\", \"printf ready; read line; echo took-prompt; \
    exec bash --norc --noprofile\"]\n\
    [review]\nagent = \"rev\"\n";

/// Start a reviewer on `author` and have it post a review; its tab.
fn posted_review(l: &Local, author: &str, summary: &str) -> String {
    let reviewer = l.ok(&["request-review", author]);
    l.wait_screen(&reviewer, "took-prompt");
    l.ok(&[
        "send",
        &reviewer,
        &format!(
            "printf 'summary: {summary}\\nnotes.txt:2: note: looked\\n' | \
             \"$NERDR_BIN\" post-review; echo posted-$?"
        ),
    ]);
    l.wait_screen(&reviewer, "posted-0");
    reviewer
}

fn unread(l: &Local, tab: &str) -> u64 {
    let tabs = l.tabs_json(&[]);
    let t = tabs.iter().find(|t| t["id"] == tab).expect("the tab");
    t["unread_reviews"]
        .as_u64()
        .unwrap_or_else(|| panic!("no unread_reviews in {t}"))
}

#[test]
fn a_posted_review_marks_its_tab_until_the_person_reads_it() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config(REVIEWED);
    let (author, _) = author_with_a_commit(&l);
    let t = Tmux::start(&l, 110, 30, "nerdr");
    t.keys(&["C-b", "1"]);
    t.wait("tab 1 shown", |s: &[String]| status(s).contains("1:cat-1*"));

    let reviewer = posted_review(&l, &author, "first look");
    assert_eq!(unread(&l, &author), 1);
    assert_eq!(unread(&l, &reviewer), 0, "the reviewer has no reviews");
    let table = l.ok(&["tabs"]);
    assert!(table.contains("cat-1 @1"), "{table}");
    assert!(
        table.contains(&format!(
            "{author}: 1 unread review: nerdr reviews {author}"
        )),
        "{table}"
    );
    // The window marks the tab, without a key pressed.
    t.wait("the review mark", |s: &[String]| {
        status(s).contains("1:cat-1*@1")
    });

    // The author's own agent (any tab) listing its reviews reads nothing
    // for the person.
    l.ok(&[
        "send",
        &reviewer,
        &format!("\"$NERDR_BIN\" reviews {author} >/dev/null; echo listed-$?"),
    ]);
    l.wait_screen(&reviewer, "listed-0");
    assert_eq!(unread(&l, &author), 1, "an agent's listing is no reading");

    // The review panel shows it: read, the mark goes.
    t.keys(&["C-b", "g"]);
    t.wait_text("summary: first look");
    t.text("q");
    t.wait("the mark gone", |s: &[String]| {
        let st = status(s);
        st.contains("1:cat-1*") && !st.contains("@1")
    });
    assert_eq!(unread(&l, &author), 0);
    assert!(!l.ok(&["tabs"]).contains("unread review"));

    // Another review: `--json` is for scripts and leaves it unread;
    // `nerdr reviews TAB` printed for the person reads it.
    posted_review(&l, &author, "second look");
    t.wait("the new mark", |s: &[String]| {
        status(s).contains("1:cat-1*@1")
    });
    l.ok(&["reviews", &author, "--json"]);
    assert_eq!(unread(&l, &author), 1);
    let text = l.ok(&["reviews", &author]);
    assert!(text.contains("second look"), "{text}");
    assert_eq!(unread(&l, &author), 0);
    t.wait("the mark gone again", |s: &[String]| {
        !status(s).contains("@1")
    });
}

#[test]
fn unsent_diff_comments_outlive_the_view_and_the_window_and_follow_their_lines() {
    use std::os::unix::fs::PermissionsExt;
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config("[agents.cat]\ncommand = [\"cat\"]\n");
    let r = l.work();
    git(&r, &["init", "-q"]);
    std::fs::write(r.join("notes.txt"), "alpha\nbeta\ngamma\n").unwrap();
    git(&r, &["add", "."]);
    git(&r, &["commit", "-q", "-m", "first"]);
    let tab = l.ok(&["agent", "cat"]);
    let wt = worktree(&l, &tab);
    std::fs::write(wt.join("notes.txt"), "alpha\nbeta needle\ngamma\n").unwrap();
    git(&wt, &["commit", "-q", "-am", "work"]);

    // Wide: the view's notes are read whole in its status line.
    let t = Tmux::start(&l, 220, 30, "nerdr");
    t.wait("tab 1 shown", |s: &[String]| status(s).contains("1:cat-1*"));
    t.keys(&["C-b", "g"]);
    t.wait_text("+beta needle");
    // One comment on the changed line, one on the context line under it.
    t.text("/needle");
    t.keys(&["Enter"]);
    t.text("ckeep me");
    t.keys(&["Enter"]);
    t.wait_text(">> notes.txt:2: keep me");
    t.text("/gamma");
    t.keys(&["Enter"]);
    t.text("cgoes away");
    t.keys(&["Enter"]);
    t.wait_text(">> notes.txt:3: goes away");

    // Closing the view keeps them, says so, and writes them down, 0600.
    t.text("q");
    t.wait_text("2 unsent comments kept (C-b g to see them)");
    let file = l.path(&format!("state/nerdr/drafts/{tab}.json"));
    let mode = std::fs::metadata(&file)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "{}", file.display());
    // Back in the same window.
    t.keys(&["C-b", "g"]);
    t.wait_text(">> notes.txt:3: goes away");
    t.text("q");
    t.wait_text("2 unsent comments kept");

    // Detaching says so on the way out.
    t.keys(&["C-b", "d"]);
    t.wait_text("[detached] 2 unsent comments kept (C-b g to see them)");

    // Meanwhile a line above both, and the context line rewritten.
    std::fs::write(wt.join("notes.txt"), "top\nalpha\nbeta needle\nGAMMA\n").unwrap();

    // A new window: the one whose line is there follows it (line 3 now);
    // the other is dropped, saying which and what it said.
    t.respawn(&l, "nerdr");
    t.wait("tab 1 shown again", |s: &[String]| {
        status(s).contains("1:cat-1*")
    });
    t.keys(&["C-b", "g"]);
    let s = t.wait_text(">> notes.txt:3: keep me");
    let page = s.join("\n");
    assert!(
        status(&s)
            .contains("an unsent comment was dropped, its line is gone: notes.txt:3 \"goes away\""),
        "{page}"
    );
    assert!(!page.contains(">> notes.txt:3: goes away"), "{page}");
    let at = s.iter().position(|x| x.contains("+beta needle")).unwrap();
    assert!(s[at + 1].contains(">> notes.txt:3: keep me"), "{page}");

    // Sent, it is no draft any more.
    t.text("Sy");
    t.wait_text("sent 1 comment to tab 1 (cat-1) as one message");
    l.wait_screen(&tab, "notes.txt:3: keep me");
    assert!(!file.exists(), "{} left after sending", file.display());
    t.text("q");
    t.keys(&["C-b", "d"]);
    let s = t.wait_text("[detached]");
    assert!(
        !s.join("\n").contains("unsent"),
        "nothing kept: {}",
        s.join("\n")
    );
}
