//! A review's status and the reviewer's lot, as a non-root user under a
//! real `systemd --user`: a sandboxed reviewer (bash inside bubblewrap)
//! whose sandbox hides nerdr's state folder, and with it the hook socket,
//! cannot post, and `nerdr reviews` says so and what to do; reviewer tabs
//! are named after their author; a reviewer its sandbox check refused gets
//! its first prompt once `nerdr restart` starts it.

use std::time::Duration;

use serde_json::Value;

use crate::support::repo_session::{boxed_shell, RepoSession, SH};

/// A repository with one commit in `~/work/r`.
fn setup(config: &str) -> Option<RepoSession> {
    RepoSession::start(
        config,
        &[
            (".gitconfig", "[user]\n\tname = t\n\temail = t@e\n"),
            ("work/r/file.txt", "one\n"),
        ],
    )
}

/// What only these tests ask of a session.
trait Reviews {
    fn author_with_a_commit(&self) -> String;
    fn requested_when(&self, author: &str, done: impl Fn(&Value) -> bool) -> Value;
}

impl Reviews for RepoSession {
    /// An author tab of agent `sh` with one commit of its own.
    fn author_with_a_commit(&self) -> String {
        let author = self.tab("sh");
        let wt = self.worktree_of(&author);
        std::fs::write(wt.join("file.txt"), "one\ntwo\n").unwrap();
        self.git(&wt, &["commit", "-q", "-am", "second"]);
        author
    }

    /// The one review `nerdr request-review` asked of `author`, once
    /// `done` holds for it.
    fn requested_when(&self, author: &str, done: impl Fn(&Value) -> bool) -> Value {
        let mut last = Value::Null;
        let ok = crate::support::poll(Duration::from_secs(60), || {
            let all: Vec<Value> =
                serde_json::from_str(&self.ok(&["reviews", author, "--json"])).unwrap();
            last = all[0]["requested"][0].clone();
            done(&last)
        });
        assert!(ok, "the review's status never came: {last:#}");
        last
    }
}

/// An author with a commit, and its review asked of `cutoff`, a sandboxed
/// agent whose sandbox hides nerdr's state folder: (session, author,
/// reviewer).
fn cut_off_reviewer() -> Option<(RepoSession, String, String)> {
    let s = setup(&format!("{SH}{}", boxed_shell("cutoff", true)))?;
    let author = s.author_with_a_commit();
    let reviewer = s
        .ok(&["request-review", &author, "--reviewer", "cutoff"])
        .trim_end()
        .to_string();
    Some((s, author, reviewer))
}

#[test]
fn a_reviewer_whose_sandbox_hides_nerdr_is_shown_unable_to_post() {
    let Some((s, author, reviewer)) = cut_off_reviewer() else {
        return;
    };
    // Named after its author, name and id (a name another tab may take
    // once the author closes), not as the agent's next tab; its row names
    // the author by its whole id.
    let author_name = s.tab_row(&author)["name"].as_str().unwrap().to_string();
    assert_eq!(
        s.tab_row(&reviewer)["name"],
        format!("review-{author_name}-{}", &author[..4]).as_str()
    );
    assert_eq!(s.tab_row(&reviewer)["reviews"], author.as_str());
    let requested = s.requested_when(&author, |r| r["state"] == "cannot_reach_nerdr");
    let status = requested["status"].as_str().unwrap();
    let socket = s.env.home().join(".local/state/nerdr/nerdr.sock");
    assert!(
        status.starts_with("cannot post: its sandbox blocks it from reaching nerdr")
            && status.contains(&format!("the hook socket {}", socket.display()))
            && status.contains("agent `cutoff`")
            && status.contains(&format!("`nerdr restart {reviewer}`"))
            && status.contains(&format!("`nerdr read {reviewer}`")),
        "{status}"
    );
    let text = s.ok(&["reviews", &author]);
    assert!(
        text.contains(&format!("(tab {reviewer})")) && text.contains("cannot post: its sandbox"),
        "{text}"
    );
    // It is so: the reviewer's own post does not reach nerdr.
    s.ok(&[
        "send",
        &reviewer,
        "echo 'summary: fine' | \"$NERDR_BIN\" post-review; echo posted-$((100+$?))",
    ]);
    let screen = s.screen_shows(&reviewer, "posted-1", Duration::from_secs(60));
    assert!(!screen.contains("posted-100"), "{screen}");
    let all: Vec<Value> = serde_json::from_str(&s.ok(&["reviews", &author, "--json"])).unwrap();
    assert!(all[0]["reviews"].as_array().unwrap().is_empty(), "{all:?}");

    // It exits without a review: its status says so, with the exit code.
    s.ok(&["send", &reviewer, "exit 7"]);
    let ended = s.requested_when(&author, |r| r["state"] == "ended");
    assert_eq!(ended["status"], "ended without a review (exit code 7)");
}

/// What the check found is kept with the tab's record: a core restarted
/// (the tabs go on in the holder, no check runs again) still says the
/// reviewer cannot post.
#[test]
fn a_reviewer_that_cannot_reach_nerdr_is_still_shown_so_after_a_core_restart() {
    let Some((s, author, reviewer)) = cut_off_reviewer() else {
        return;
    };
    s.requested_when(&author, |r| r["state"] == "cannot_reach_nerdr");
    let cannot_post = |text: &str| {
        text.contains(&format!("(tab {reviewer})")) && text.contains("cannot post: its sandbox")
    };
    let text = s.ok(&["reviews", &author]);
    assert!(cannot_post(&text), "before the restart: {text}");
    let reviewer_pid = s.tab_row(&reviewer)["pid"].clone();

    let core = s.env.unit_prop("nerdr.service", "MainPID");
    s.env.systemctl(&["restart", "nerdr.service"]);
    assert_ne!(s.env.unit_prop("nerdr.service", "MainPID"), core);
    // The same reviewer, found again in the holder, not started anew.
    assert_eq!(s.tab_row(&reviewer)["pid"], reviewer_pid);
    let requested = s.requested_when(&author, |r| r["state"] != Value::Null);
    assert_eq!(requested["state"], "cannot_reach_nerdr", "{requested:#}");
    let text = s.ok(&["reviews", &author]);
    assert!(cannot_post(&text), "after the restart: {text}");
}

#[test]
fn a_refused_reviewer_gets_its_first_prompt_once_restarted() {
    // `rev` claims a sandbox but runs bash bare: its check refuses it.
    let bare =
        "[agents.rev]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\nsandboxed = true\n";
    let Some(s) = setup(&format!("{SH}{bare}")) else {
        return;
    };
    let author = s.author_with_a_commit();
    let (_, out, err) = s.nerdr(&["request-review", &author, "--reviewer", "rev"]);
    let reviewer = out.trim().to_string();
    assert!(!reviewer.is_empty(), "{out}{err}");
    assert_eq!(s.tab_row(&reviewer)["state"], "refused");
    let refused = s.requested_when(&author, |r| r["state"] == "refused");
    assert!(
        refused["status"]
            .as_str()
            .unwrap()
            .contains(&format!("`nerdr restart {reviewer}`")),
        "{refused}"
    );
    // The sandbox fixed, it starts and is asked for its review.
    s.env.write_user_file(
        ".config/nerdr/config.toml",
        format!("{SH}{}", boxed_shell("rev", false)),
    );
    s.ok(&["restart", &reviewer]);
    // The prompt is typed once the reviewer waits at its prompt: bash
    // says so as an agent's hooks do.
    s.screen_shows(&reviewer, "bash", Duration::from_secs(60));
    s.ok(&[
        "send",
        &reviewer,
        "\"$NERDR_BIN\" hook Stop </dev/null; echo stopped-$((100+$?))",
    ]);
    s.screen_shows(&reviewer, "stopped-100", Duration::from_secs(60));
    s.screen_shows(
        &reviewer,
        "Please review the commits",
        Duration::from_secs(60),
    );
    let at_work = s.requested_when(&author, |r| r["state"] == "at_work");
    assert_eq!(at_work["status"], "reviewer at work");
}
