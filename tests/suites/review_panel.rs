//! The review panel (the diff view, prefix `g`, with the tab's reviews by
//! agents) driven through tmux as a person would: a reviewer at work shows
//! as such; once it posts (a shell stands in for the reviewer agent and
//! runs `nerdr post-review`, as in `reviews`), its summary is on top and
//! each comment stands under its line, or its file's header when the diff
//! does not show the line; `s` sends the selected one to the author's
//! agent and `c` on it asks a question, both read back from the author's
//! tab (it runs `cat`) with `nerdr read`.

use crate::support::git::git;
use crate::support::local::Local;
use crate::support::tmux::{have_tmux, Tmux};

const CONFIG: &str = "[agents.cat]\ncommand = [\"cat\"]\n\
    [agents.rev]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n\
    [review]\nagent = \"rev\"\n";

fn status(s: &[String]) -> String {
    s.last().cloned().unwrap_or_default()
}

/// The screen of `tab` without its line breaks and spaces: a message
/// wraps at the terminal's width.
fn squeezed(l: &Local, tab: &str) -> String {
    l.ok(&["read", tab]).split_whitespace().collect()
}

#[test]
fn review_comments_show_in_place_and_go_to_the_author() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config(CONFIG);
    let lines: Vec<String> = (1..=12).map(|n| format!("line {n}")).collect();
    l.repo_with(&[("notes.txt", &(lines.join("\n") + "\n"))], "first");
    let author = l.ok(&["agent", "cat"]);
    let wt = l.worktree_of(&author);
    let mut changed = lines.clone();
    changed[1] = "line 2 needle".into();
    std::fs::write(wt.join("notes.txt"), changed.join("\n") + "\n").unwrap();
    git(&wt, &["commit", "-q", "-am", "work"]);
    let reviewer = l.ok(&["request-review", &author]);

    let t = Tmux::start(&l, 110, 40, "nerdr");
    t.keys(&["C-b", "1"]);
    t.wait("tab 1 shown", |s: &[String]| status(s).contains("1:cat-1*"));
    // The reviewer is at work: the panel says so, with the diff.
    t.keys(&["C-b", "g"]);
    t.wait_text(&format!("requested: rev (tab {reviewer})"));
    t.wait_text("+line 2 needle");
    t.text("q");

    // It posts: one comment on a line of the diff, one on a line the diff
    // does not show.
    l.ok(&[
        "send",
        &reviewer,
        "printf 'summary: one question\\nnotes.txt:2: warning: say why it changed\\n\
         notes.txt:11: note: far from the change\\n' | \"$NERDR_BIN\" post-review; \
         echo posted-$?",
    ]);
    l.wait_screen(&reviewer, "posted-0");

    t.wait("the tab again", |s: &[String]| {
        status(s).contains("1:cat-1*")
    });
    t.keys(&["C-b", "g"]);
    let s = t.wait_text("** notes.txt:2 warning from rev (review 1): say why it changed");
    let page = s.join("\n");
    let row = |needle: &str| {
        s.iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle:?} missing:\n{page}"))
    };
    assert!(page.contains("summary: one question"), "{page}");
    assert!(!page.contains("requested: rev"), "{page}");
    assert_eq!(
        row("** notes.txt:2 warning") - 1,
        row("+line 2 needle"),
        "under its line:\n{page}"
    );
    assert_eq!(
        row("** notes.txt:11 note from rev (review 1): far from the change") - 1,
        row("notes.txt  (modified"),
        "under its file's header:\n{page}"
    );
    assert!(
        status(&s).contains(">/< review s send A send all"),
        "{page}"
    );

    // `>` twice: the comment at the header, then the one on line 2; `s`
    // sends it.
    t.text(">>sy");
    t.wait_text("sent review 1's comment 1 to tab 1 (cat-1) as one message");
    l.wait_screen(&author, "Review 1 by rev of");
    let screen = squeezed(&l, &author);
    assert!(
        screen.contains("notes.txt:2(warning):saywhyitchanged"),
        "{screen}"
    );
    assert!(
        !screen.contains("farfromthechange"),
        "only that one: {screen}"
    );

    // A question on it goes to the agent too.
    t.text("c");
    t.wait_text("question on the review comment at notes.txt:2:");
    t.text("is the needle needed?");
    t.keys(&["Enter"]);
    t.wait_text(">> question: is the needle needed?");
    t.text("Sy");
    t.wait_text("sent 1 comment to tab 1 (cat-1) as one message");
    l.wait_screen(&author, "is the needle needed?");
    let screen = squeezed(&l, &author);
    assert!(
        screen.contains("notes.txt:2:aquestiononreview1'scomment1(\"warning:saywhyitchanged\"):istheneedleneeded?"),
        "{screen}"
    );
}
