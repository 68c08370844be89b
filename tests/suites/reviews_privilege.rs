//! The review requests' privilege rows end to end, as `privilege` runs the
//! matrix: a sandboxed agent (bash inside bubblewrap, in a private
//! `systemd --user`) uses the real CLI from inside its tab. It may ask for
//! a review of its own tab (which then fails on the facts: no worktree),
//! never of an agent outside every sandbox (which reads as no such tab,
//! for its reviews too), and cannot post a review it was not asked for.

use std::time::Duration;

use crate::support::sysenv::SystemdEnv;

/// Each review request, through the real CLI from inside a tab.
const OPS: &str = r#"#!/bin/sh
out=$1 agent=$2
mkdir -p "$out"
op() { name=$1; shift; "$NERDR_BIN" "$@" > "$out/$name.txt" 2>&1 < "$out/review"; echo $? > "$out/$name.rc"; }
printf 'summary: planted\n' > "$out/review"
op review-other request-review "$agent"
op reviews-other reviews "$agent"
op review-own request-review
op post post-review
echo "review-ops-done"
"#;

#[test]
fn a_sandboxed_agent_asks_only_for_its_own_review_and_posts_none_unasked() {
    let Some(env) = SystemdEnv::start() else {
        return;
    };
    env.run(&["nerdr", "service", "install"]);
    let work = env.home().join("work");
    env.write_user_file("work/ops.sh", OPS);
    env.write_user_file(".config/nerdr/config.toml", env.sh_and_boxed_agents(&work));
    let nerdr = |args: &[&str]| env.nerdr_ok_in(&work, args);
    let plain = nerdr(&["agent", "sh"]);
    let sandboxed = nerdr(&["agent", "boxed"]);
    let out = work.join("review-ops");
    nerdr(&[
        "send",
        &sandboxed,
        &format!("sh ops.sh {} {plain}", out.display()),
    ]);
    let mut screen = String::new();
    let done = crate::support::poll(Duration::from_secs(30), || {
        screen = nerdr(&["read", &sandboxed]);
        screen.contains("review-ops-done")
    });
    assert!(done, "the ops never finished:\n{screen}");
    let rc = |op: &str| -> i32 {
        std::fs::read_to_string(out.join(format!("{op}.rc")))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let text = |op: &str| std::fs::read_to_string(out.join(format!("{op}.txt"))).unwrap();
    for op in ["review-other", "reviews-other", "review-own", "post"] {
        assert_ne!(rc(op), 0, "{op}: {}", text(op));
    }
    // An agent outside every sandbox reads as no tab at all.
    for op in ["review-other", "reviews-other"] {
        assert!(
            text(op).contains(&format!("no tab `{plain}`")),
            "{op}: {}",
            text(op)
        );
    }
    // Its own review passes the matrix, and fails on the facts.
    assert!(
        text("review-own").contains("has no worktree of its own"),
        "{}",
        text("review-own")
    );
    // No review was asked of it: nothing is taken.
    assert!(
        text("post").contains("is not reviewing anything"),
        "{}",
        text("post")
    );
    // Nothing started.
    let tabs: Vec<serde_json::Value> = serde_json::from_str(&nerdr(&["tabs", "--json"])).unwrap();
    assert_eq!(tabs.len(), 2, "{tabs:?}");
}
