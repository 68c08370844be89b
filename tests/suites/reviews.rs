//! Reviews by agents (README.md, "Reviews") against a hand-started core,
//! with shells standing in for the author and the reviewer (their states
//! come from `nerdr hook` reports typed into them): `request-review`
//! starts the reviewer in its own worktree at the author's head with
//! `[review.args]`, `post-review` takes a review only from that tab and
//! once, refuses a malformed one by line, `reviews` lists it and `--send`
//! types it into the author's tab; `[review] automatic` asks once per new
//! head, or leaves why it could not on the author's tab; a sandboxed author gets only a sandboxed reviewer, or none and
//! the reason. The real claude as the reviewer is `reviews_claude`.

use std::time::Duration;

use serde_json::Value;

use crate::support::git::git;
use crate::support::local::Local;
use crate::support::wait_until;

const BASH: &str = "command = [\"bash\", \"--norc\", \"--noprofile\"]\n";

/// Commit a change to `file.txt` in tab `id`'s worktree; the new head.
fn commit(l: &Local, id: &str, line: &str) -> String {
    let wt = l.worktree_of(id);
    let text = std::fs::read_to_string(wt.join("file.txt")).unwrap();
    std::fs::write(wt.join("file.txt"), format!("{text}{line}\n")).unwrap();
    git(&wt, &["commit", "-q", "-am", line]);
    git(&wt, &["rev-parse", "HEAD"])
}

fn reviews(l: &Local, id: &str) -> Value {
    let all: Vec<Value> = serde_json::from_str(&l.ok(&["reviews", id, "--json"])).unwrap();
    assert_eq!(all.len(), 1, "{all:?}");
    all.into_iter().next().unwrap()
}

/// Type a command into a shell tab and wait for what it prints.
fn type_in(l: &Local, id: &str, command: &str, shows: &str) -> String {
    l.ok(&["send", id, command]);
    l.wait_screen(id, shows)
}

#[test]
fn a_review_is_requested_posted_listed_and_sent_to_the_author() {
    let mut l = Local::started();
    l.write_config(&format!(
        "[agents.sh]\n{BASH}[agents.rev]\n{BASH}[review]\nagent = \"rev\"\n\
         [review.args]\nrev = [\"-i\"]\n"
    ));
    let r = l.repo_with(&[("file.txt", "hello\n")], "first");
    let author = l.ok(&["agent", "sh"]);
    // Nothing committed yet: nothing to review, and no tab made.
    let err = l.fails(&["request-review", &author]);
    assert!(err.contains("no commits of its own"), "{err}");
    assert_eq!(l.tabs_json(&[]).len(), 1);

    let base = git(&r, &["rev-parse", "HEAD"]);
    let head = commit(&l, &author, "second");
    let out = l.run(&["request-review", &author]);
    assert!(out.status.success(), "{out:?}");
    let reviewer = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let t = l.tab(&reviewer);
    assert_eq!(t["agent"], "rev");
    // The agent's own command, then [review.args].
    assert_eq!(
        t["command"],
        serde_json::json!(["bash", "--norc", "--noprofile", "-i"])
    );
    let wt = l.worktree_of(&reviewer);
    assert_ne!(
        wt,
        l.worktree_of(&author),
        "the reviewer has a worktree of its own"
    );
    // Its base is the author's head on the author's branch: a reviewer that
    // changed nothing is merged there, so `nerdr clean` can take it later.
    let listed: Vec<serde_json::Value> =
        serde_json::from_str(&l.ok(&["worktrees", "--json"])).unwrap();
    let row = listed
        .iter()
        .find(|w| w["tab"] == reviewer.as_str())
        .expect("the reviewer's worktree is listed");
    assert_eq!(row["base"], head.as_str(), "{row}");
    assert_eq!(row["base_branch"], format!("nerdr/{author}"), "{row}");
    assert_eq!(row["merged"], true, "{row}");
    assert_eq!(
        git(&wt, &["rev-parse", "HEAD"]),
        head,
        "at the author's head"
    );
    assert_eq!(
        git(&r, &["rev-parse", &format!("nerdr/{reviewer}")]),
        head,
        "on a branch of its own"
    );
    let listed = reviews(&l, &author);
    assert_eq!(listed["requested"][0]["reviewer_tab"], reviewer.as_str());
    assert_eq!(listed["requested"][0]["base"], base.as_str());
    assert_eq!(listed["requested"][0]["head"], head.as_str());

    // Only the reviewer's tab posts: not the author's, not the person.
    let file = l.path("review.txt");
    std::fs::write(&file, "summary: mine\n").unwrap();
    let err = l.fails(&["post-review", "--file", file.to_str().unwrap()]);
    assert!(err.contains("run by a reviewer agent"), "{err}");
    type_in(
        &l,
        &author,
        "echo 'summary: mine' | \"$NERDR_BIN\" post-review; echo posted-$?",
        "posted-1",
    );
    assert!(
        l.ok(&["read", &author])
            .contains("is not reviewing anything"),
        "{}",
        l.ok(&["read", &author])
    );
    // A malformed review is refused by line, and nothing is kept.
    type_in(
        &l,
        &reviewer,
        "printf 'summary: ok\\nfile.txt:0: note: y\\n' | \"$NERDR_BIN\" post-review; echo bad-$?",
        "bad-1",
    );
    let screen = l.ok(&["read", &reviewer]);
    assert!(
        screen.contains("line 2: \"0\" is not a line number"),
        "{screen}"
    );
    assert!(reviews(&l, &author)["reviews"]
        .as_array()
        .unwrap()
        .is_empty());
    // The review, then a second post refused.
    type_in(
        &l,
        &reviewer,
        "printf 'summary: fine work\\nfile.txt:2: warning: say why\\nfile.txt:1: note: keep\\n' \
         | \"$NERDR_BIN\" post-review; echo good-$?",
        "good-0",
    );
    type_in(
        &l,
        &reviewer,
        "echo 'summary: again' | \"$NERDR_BIN\" post-review; echo again-$?",
        "again-1",
    );
    assert!(l
        .ok(&["read", &reviewer])
        .contains("posted its review already"));
    let listed = reviews(&l, &author);
    let review = &listed["reviews"][0];
    assert_eq!(review["number"], 1);
    assert_eq!(review["reviewer_tab"], reviewer.as_str());
    assert_eq!(review["written_in_sandbox"], false);
    assert_eq!(review["summary"], "fine work");
    assert_eq!(
        review["comments"][0],
        serde_json::json!({"file": "file.txt", "line": 2, "severity": "warning", "text": "say why"})
    );
    assert!(listed["requested"].as_array().unwrap().is_empty());
    let text = l.ok(&["reviews", &author]);
    assert!(text.contains("1. file.txt:2 warning: say why"), "{text}");

    // Comment 1 goes to the author's agent as one message.
    l.ok(&["reviews", &author, "--send", "1"]);
    l.wait_screen(&author, "Review 1 by rev of");
    // The screen wraps at 80 columns (a space at the wrap is trimmed).
    let screen: String = l.ok(&["read", &author]).split_whitespace().collect();
    assert!(screen.contains("file.txt:2(warning):saywhy"), "{screen}");
    assert!(!screen.contains("keep"), "only comment 1: {screen}");
    let err = l.fails(&["reviews", &author, "--send", "3"]);
    assert!(err.contains("there is no comment 3"), "{err}");
    let err = l.fails(&["reviews", &author, "--send", "two"]);
    assert!(err.contains("\"two\" is neither"), "{err}");

    // The review is kept with the author's tab across a core restart.
    l.stop_core();
    l.start_core();
    let listed = reviews(&l, &author);
    assert_eq!(listed["reviews"][0]["summary"], "fine work", "{listed}");
}

#[test]
fn an_automatic_review_comes_once_per_new_head() {
    let l = Local::started();
    l.write_config(&format!(
        "[agents.sh]\n{BASH}[agents.rev]\n{BASH}[review]\nagent = \"rev\"\nautomatic = true\n"
    ));
    l.repo_with(&[("file.txt", "hello\n")], "first");
    let author = l.ok(&["agent", "sh"]);
    let turn = |n: u32| {
        type_in(
            &l,
            &author,
            &format!(
                "\"$NERDR_BIN\" hook UserPromptSubmit </dev/null; sleep 1; \
                 \"$NERDR_BIN\" hook Stop </dev/null; echo turn-$((100+{n}))"
            ),
            &format!("turn-{}", 100 + n),
        );
    };
    let requested = || reviews(&l, &author)["requested"].as_array().unwrap().len();
    // A turn with no commit of its own: no review.
    turn(1);
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(requested(), 0);
    // A turn that ends with a new commit: one review.
    let head = commit(&l, &author, "second");
    turn(2);
    wait_until("the automatic review", Duration::from_secs(30), || {
        requested() == 1
    });
    let listed = reviews(&l, &author);
    assert_eq!(listed["requested"][0]["head"], head.as_str());
    assert_eq!(listed["requested"][0]["automatic"], true);
    // Another turn at the same head: none more.
    turn(3);
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(requested(), 1, "a second review at the same head");
    // A new head while the first reviewer works: none more (one reviewer
    // at a time), and the head stays due.
    commit(&l, &author, "third");
    turn(4);
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(requested(), 1, "a second reviewer beside the first");
    // Once the first reviewer is gone, the next turn's end: one more.
    let first = listed["requested"][0]["reviewer_tab"]
        .as_str()
        .unwrap()
        .to_string();
    l.ok(&["close", &first]);
    turn(5);
    wait_until(
        "the second automatic review",
        Duration::from_secs(30),
        || requested() == 2,
    );
    // A review is recorded before its reviewer starts: its tab comes.
    wait_until("the second reviewer's tab", Duration::from_secs(30), || {
        l.tabs_json(&[]).len() == 2
    });
}

#[test]
fn a_sandboxed_author_gets_only_a_sandboxed_reviewer_or_none_and_why() {
    let l = Local::started();
    let config = |sb: bool| {
        format!(
            "[agents.sb]\n{BASH}sandboxed = {sb}\n[agents.rev]\n{BASH}[review]\nagent = \"rev\"\n"
        )
    };
    l.write_config(&config(true));
    l.repo_with(&[("file.txt", "hello\n")], "first");
    // With no sandbox around bash, its sandbox check refuses it; the tab
    // stays, sandboxed, with its worktree.
    let out = l.run(&["agent", "sb"]);
    let author = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert_eq!(l.tab(&author)["sandboxed"], true);
    commit(&l, &author, "second");

    // The configured reviewer runs outside every sandbox: replaced.
    let out = l.run(&["request-review", &author]);
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        said.contains("`rev` (`[review] agent`) runs outside every sandbox"),
        "{said}"
    );
    let reviewer = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let t = l.tab(&reviewer);
    assert_eq!(
        (t["agent"].as_str(), t["sandboxed"].as_bool()),
        (Some("sb"), Some(true))
    );

    // Asked for by name, an unsandboxed reviewer is refused.
    let tabs = l.tabs_json(&[]).len();
    let err = l.fails(&["request-review", &author, "--reviewer", "rev"]);
    assert!(
        err.contains("only a sandboxed agent may review it; name one that is: sb"),
        "{err}"
    );
    // No agent can run sandboxed any more: no review, and why.
    l.write_config(&config(false));
    let err = l.fails(&["request-review", &author]);
    assert!(err.contains("no agent can run sandboxed"), "{err}");
    assert_eq!(l.tabs_json(&[]).len(), tabs, "no reviewer tab was made");
}

#[test]
fn an_automatic_review_that_cannot_start_says_why_on_the_authors_tab() {
    let l = Local::started();
    // No [agents.bash]: the author's own agent cannot review.
    l.write_config("[review]\nautomatic = true\n");
    l.repo_with(&[("file.txt", "hello\n")], "first");
    let author = l.ok(&["agent", "--", "bash", "--norc", "--noprofile"]);
    commit(&l, &author, "second");
    type_in(
        &l,
        &author,
        "\"$NERDR_BIN\" hook UserPromptSubmit </dev/null; sleep 1; \
         \"$NERDR_BIN\" hook Stop </dev/null; echo turn-$((100+1))",
        "turn-101",
    );
    let mut warning = String::new();
    let told = crate::support::poll(Duration::from_secs(30), || {
        warning = l.tab(&author)["warning"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        !warning.is_empty()
    });
    assert!(told, "no warning on the author's tab");
    assert!(
        warning.starts_with("automatic review: no review of tab")
            && warning.contains("no agent `bash` (the author's own agent)"),
        "{warning}"
    );
    assert_eq!(l.tabs_json(&[]).len(), 1, "no reviewer started");
}
