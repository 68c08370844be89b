//! Adversarial review of reviews by agents (issue 18): the reviewer's
//! attacks with the real binary against a hand-started core, each now a
//! test that the hole stays closed, and what held (the store, bad input).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use crate::support::git::git;
use crate::support::local::Local;

const BASH: &str = "command = [\"bash\", \"--norc\", \"--noprofile\"]\n";

fn exe(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A reviewer agent whose command's first word is relative (a wrapper kept
/// in the repository). A normal launch resolves it in the session folder
/// and the sandbox check refuses it as agent-writable. The review path
/// resolved it in the *author's* worktree, which the check did not count
/// as writable, so the file the sandboxed author wrote ran on the host;
/// it now resolves it as a launch does, and the planted file never runs.
#[test]
fn rev18b_a_sandboxed_authors_file_never_runs_as_its_reviewers_wrapper() {
    let l = Local::started();
    let marker = l.path("planted-ran");
    l.write_config(&format!(
        "[agents.sb]\n{BASH}sandboxed = true\n\
         [agents.bash]\ncommand = [\"tools/wrap\", \"bash\", \"--norc\", \"--noprofile\"]\n\
         sandboxed = true\n[review]\nagent = \"bash\"\n"
    ));
    let r = l.repo_with(&[("file.txt", "hello\n")], "first");
    // The person's wrapper, in the repository.
    exe(
        &r.join("tools/wrap"),
        "#!/bin/sh\nexec bwrap --ro-bind / / -- \"$@\"\n",
    );
    git(&r, &["add", "."]);
    git(&r, &["commit", "-q", "-m", "wrapper"]);
    // A normal launch of that agent: refused, the wrapper is agent-writable.
    let out = l.run(&["agent", "bash"]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains("which the agent may write"), "{said}");

    // The sandboxed author (its check refuses plain bash: the tab stays,
    // sandboxed, with its worktree, which is the agent's to write).
    let out = l.run(&["agent", "sb"]);
    let author = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert_eq!(l.tab(&author)["sandboxed"], true);
    let wt = l.worktree_of(&author);
    // What the sandboxed agent writes in its worktree.
    exe(
        &wt.join("tools/wrap"),
        &format!(
            "#!/bin/sh\necho \"outside every sandbox: $(id -u) $*\" > {}\nexit 1\n",
            marker.display()
        ),
    );
    git(&wt, &["commit", "-q", "-am", "innocent change"]);

    // The person (or `[review] automatic`) asks for its review.
    let out = l.run(&["request-review", &author]);
    eprintln!(
        "request-review: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let ran = crate::support::poll(Duration::from_secs(10), || marker.exists());
    assert!(
        !ran,
        "the author's wrapper ran on the host: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
}

/// `nerdr reviews TAB --send all` of a review with no comments types
/// `Review N by AGENT of B..H: SUMMARY` and Enter: into an author whose
/// agent is a shell (`nerdr agent -- bash`), the summary's `; cmd` ran.
/// Review text is now never typed into a tab that runs a program.
#[test]
fn rev18b_a_summary_is_never_typed_into_a_program_author() {
    let l = Local::started();
    l.write_config(&format!("[agents.rev]\n{BASH}"));
    l.repo_with(&[("file.txt", "hello\n")], "first");
    let marker = l.path("summary-ran");
    let author = l.ok(&["agent", "--", "bash", "--norc", "--noprofile"]);
    let wt = l.worktree_of(&author);
    std::fs::write(wt.join("file.txt"), "hello\nmore\n").unwrap();
    git(&wt, &["commit", "-q", "-am", "second"]);
    let reviewer = l.ok(&["request-review", &author, "--reviewer", "rev"]);
    l.wait_screen(&reviewer, "bash-");
    let review = l.path("review.txt");
    std::fs::write(
        &review,
        format!("summary: fine work; touch {}\n", marker.display()),
    )
    .unwrap();
    l.ok(&[
        "send",
        &reviewer,
        &format!(
            "\"$NERDR_BIN\" post-review --file {}; echo posted-$?",
            review.display()
        ),
    ]);
    l.wait_screen(&reviewer, "posted-0");
    assert!(!marker.exists());
    let err = l.fails(&["reviews", &author, "--send", "all"]);
    assert!(err.contains("runs a program (bash)"), "{err}");
    let ran = crate::support::poll(Duration::from_secs(5), || marker.exists());
    assert!(!ran, "the summary ran in the author's shell");
}

/// `[review] automatic`: each new head at a turn's end started one more
/// reviewer, with no bound on how many were at work at once. Now one
/// reviewer at a time per author: a loop of commits starts one.
#[test]
fn rev18b_an_author_in_a_loop_starts_one_reviewer_at_a_time() {
    let l = Local::started();
    l.write_config(&format!(
        "[agents.sh]\n{BASH}[agents.rev]\n{BASH}[review]\nagent = \"rev\"\nautomatic = true\n"
    ));
    l.repo_with(&[("file.txt", "hello\n")], "first");
    let author = l.ok(&["agent", "sh"]);
    let n = 6;
    l.ok(&[
        "send",
        &author,
        &format!(
            "for i in $(seq {n}); do git -c user.name=a -c user.email=a@b commit -q --allow-empty -m s$i; \
             \"$NERDR_BIN\" hook UserPromptSubmit </dev/null; sleep 1; \
             \"$NERDR_BIN\" hook Stop </dev/null; sleep 1; done; echo loop-$((40+2))"
        ),
    ]);
    l.wait_screen_within(&author, "loop-42", Duration::from_secs(60));
    let mut count = 0;
    crate::support::poll(Duration::from_secs(10), || {
        count = l.tabs_json(&[]).len() - 1;
        count > 1
    });
    assert_eq!(
        count, 1,
        "reviewers started by one author's loop of {n} commits"
    );
}

/// `reviews.json`: its mode, a corrupt file (named, kept, nothing started),
/// and a post that is not UTF-8.
#[test]
fn rev18b_the_store_and_bad_input() {
    use std::os::unix::fs::MetadataExt;
    let l = Local::started();
    l.write_config(&format!("[agents.sh]\n{BASH}[agents.rev]\n{BASH}"));
    l.repo_with(&[("file.txt", "hello\n")], "first");
    let author = l.ok(&["agent", "sh"]);
    let wt = l.worktree_of(&author);
    std::fs::write(wt.join("file.txt"), "hello\nmore\n").unwrap();
    git(&wt, &["commit", "-q", "-am", "second"]);
    let reviewer = l.ok(&["request-review", &author, "--reviewer", "rev"]);
    l.wait_screen(&reviewer, "bash-");
    let store = l.path("state/nerdr/reviews.json");
    eprintln!(
        "mode {:o}",
        std::fs::metadata(&store).unwrap().mode() & 0o777
    );
    // Bad UTF-8 on stdin, and a line number past u32.
    l.ok(&[
        "send",
        &reviewer,
        "printf 'summary: \\377\\376\\n' | \"$NERDR_BIN\" post-review; echo bad-$((0+1))$?",
    ]);
    let s = l.wait_screen(&reviewer, "bad-1");
    eprintln!("bad utf-8:\n{s}");
    l.ok(&[
        "send",
        &reviewer,
        "printf 'summary: s\\nnope.rs:4294967295: note: x\\n../../x:1: note: y\\n' | \"$NERDR_BIN\" post-review; echo big-$((0+1))$?",
    ]);
    let s = l.wait_screen(&reviewer, "big-1");
    eprintln!("past range:\n{s}");
    // Corrupt store.
    let before = std::fs::read(&store).unwrap();
    std::fs::write(&store, "{\"pending\": 5").unwrap();
    let err = l.fails(&["reviews", &author]);
    eprintln!("reviews on a corrupt store: {err}");
    let tabs = l.tabs_json(&[]).len();
    let err = l.fails(&["request-review", &author, "--reviewer", "rev"]);
    eprintln!("request-review on a corrupt store: {err}");
    assert_eq!(l.tabs_json(&[]).len(), tabs);
    assert_eq!(std::fs::read_to_string(&store).unwrap(), "{\"pending\": 5");
    std::fs::write(&store, before).unwrap();
    // The same head again, while its reviewer runs: refused, no new tab.
    let tabs = l.tabs_json(&[]).len();
    for _ in 0..3 {
        let err = l.fails(&["request-review", &author, "--reviewer", "rev"]);
        assert!(err.contains("being reviewed already"), "{err}");
    }
    assert_eq!(l.tabs_json(&[]).len(), tabs);
}
