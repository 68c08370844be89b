//! The real claude (`$NERDR_AGENT_CLIS`) as the reviewer, offline against
//! the fake model: `nerdr request-review` starts it on a tab's commit,
//! nerdr types its first prompt once it is idle, the model's answer runs
//! `nerdr post-review` through claude's own shell tool, the review shows in
//! `nerdr reviews`, and `--send` types its comment into the author's tab;
//! in a real window (`nerdr` in the test user's tmux) the review panel
//! shows the comment under its line and `s` sends it to the author.

use std::path::PathBuf;
use std::time::Duration;

use crate::suites::agent_states::{claude_home, ClaudeDialogs};
use crate::suites::agent_turns::Turns;
use crate::suites::sandbox::user_git;
use crate::support::fake_model::Turn;
use crate::support::poll;
use crate::support::user_tmux::UserTmux;

/// claude's start behind a loaded machine, then a turn.
const START: Duration = Duration::from_secs(120);
const TURN: Duration = Duration::from_secs(120);

/// What the model has claude run: the review, in the text form.
const POST: &str = "printf 'summary: fine work\\nREADME:2: warning: say more\\n' \
                    | \"${NERDR_BIN:-nerdr}\" post-review";

/// The real claude, its hooks reporting to nerdr, against the fake model.
fn claude_with_hooks() -> Option<Turns> {
    Turns::setup_with_hooks("claude", |url, home| {
        claude_home(url, home, ClaudeDialogs::none())
    })
}

/// claude, asked by `nerdr request-review` to review the author's commit,
/// posts its review through its shell tool: it shows in `nerdr reviews`.
/// The author's tab.
fn claude_posts_a_review(t: &Turns) -> String {
    // The prompt nerdr types names `post-review`: the model answers it by
    // running the review through claude's shell tool.
    t.model.when_user_says("post-review", Turn::run(POST));
    // The author is a configured agent: review text is never typed into a
    // tab that runs a program (`nerdr agent -- CMD`).
    t.env.write_user_file(
        ".config/nerdr/config.toml",
        "[agents.author]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n",
    );
    let author = t.ok(&["agent", "author"]);
    let wt = PathBuf::from(
        t.tab_json(&author)["worktree"]
            .as_str()
            .expect("a worktree"),
    );
    let rel = wt.strip_prefix(t.env.home()).unwrap().join("README");
    t.env
        .write_user_file(rel.to_str().unwrap(), "hello\nmore\n");
    user_git(&t.env, &wt, &["commit", "-qam", "more"]);
    let head = user_git(&t.env, &wt, &["rev-parse", "HEAD"]);

    let reviewer = t.ok(&["request-review", &author, "--reviewer", "claude"]);
    assert_eq!(t.tab_json(&reviewer)["agent"], "claude");
    t.model.wait_for("the reviewer's first prompt", START, |r| {
        r.asked
            .as_ref()
            .is_some_and(|a| a.user_text.contains("post-review") && a.user_text.contains(&head))
    });
    let mut listed = serde_json::Value::Null;
    let posted = poll(TURN, || {
        let all: Vec<serde_json::Value> =
            serde_json::from_str(&t.ok(&["reviews", &author, "--json"])).unwrap();
        listed = all.into_iter().next().unwrap_or_default();
        listed["reviews"].as_array().is_some_and(|r| !r.is_empty())
    });
    assert!(
        posted,
        "no review posted: {listed}\nthe reviewer's screen:\n{}\nthe fake model's log:\n{}",
        t.screen(&reviewer),
        t.model.dump()
    );
    let review = &listed["reviews"][0];
    assert_eq!(review["agent"], "claude");
    assert_eq!(review["reviewer_tab"], reviewer.as_str());
    assert_eq!(review["head"], head.as_str());
    assert_eq!(review["summary"], "fine work");
    assert_eq!(
        review["comments"][0],
        serde_json::json!({"file": "README", "line": 2, "severity": "warning", "text": "say more"})
    );
    author
}

#[test]
fn claude_reviews_a_tabs_commit_and_its_comment_reaches_the_author() {
    let Some(t) = claude_with_hooks() else {
        return;
    };
    let author = claude_posts_a_review(&t);
    t.ok(&["reviews", &author, "--send", "all"]);
    // The screen wraps at 80 columns (a space at the wrap is trimmed).
    t.wait_screen(&author, "the comment in the author's tab", TURN, |s| {
        let words: String = s.split_whitespace().collect();
        words.contains("README:2(warning):saymore")
    });
}

/// The same review by the real claude, in a real window: the review panel
/// (prefix `g` on the author's tab) shows the posted comment under its
/// line, and `s` sends it to the author, read back with `nerdr read`.
#[test]
fn claudes_review_shows_in_the_panel_and_s_sends_its_comment() {
    let Some(t) = claude_with_hooks() else {
        return;
    };
    let author = claude_posts_a_review(&t);
    let w = UserTmux::start(&t.env, &t.proj(), 110, 40, "nerdr");
    w.keys(&["C-b", "1"]);
    w.wait_within("the author's tab shown", START, |s| {
        s.last().is_some_and(|l| l.contains("1:author-1*"))
    });
    w.keys(&["C-b", "g"]);
    let s = w.wait_text("** README:2 warning from claude (review 1): say more");
    let page = s.join("\n");
    let row = |needle: &str| {
        s.iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle:?} missing:\n{page}"))
    };
    assert!(page.contains("summary: fine work"), "{page}");
    assert_eq!(
        row("** README:2 warning") - 1,
        row("+more"),
        "under its line:\n{page}"
    );
    // Nothing has reached the author yet; `>` selects the comment, `s`
    // sends it.
    let words = |s: &str| s.split_whitespace().collect::<String>();
    assert!(!words(&t.screen(&author)).contains("saymore"));
    w.text(">sy");
    w.wait_text("sent review 1's comment 1 to tab 1 (author-1) as one message");
    // The screen wraps at the tab's width (a space at the wrap is trimmed).
    let screen = t.wait_screen(&author, "the comment in the author's tab", TURN, |s| {
        words(s).contains("README:2(warning):saymore")
    });
    assert!(screen.contains("Review 1 by claude of"), "{screen}");
}
