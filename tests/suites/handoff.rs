//! `nerdr handoff` end to end with the real CLIs (`$NERDR_AGENT_CLIS`)
//! against the fake model, in a private `systemd --user`:
//! - claude does a turn whose answer holds a word nothing else says; the
//!   person hands its conversation to codex; codex starts in claude's
//!   worktree and its first request to the model carries the handoff nerdr
//!   built from claude's conversation log (issue 19, acceptance 2), and the
//!   shared worktree is not removed by closing claude's tab;
//! - a sandboxed agent (bash in bubblewrap, using the real CLI from its
//!   tab) hands off to codex, outside every sandbox: nothing starts until
//!   the person approves, then codex's first request carries the text
//!   with the sandbox note (acceptance 4, the handoff row).

use std::path::Path;
use std::time::Duration;

use crate::suites::agent_states::{claude_home, ClaudeDialogs};
use crate::suites::agent_turns::Turns;
use crate::support::agent_home::{self, AgentHome, CodexAsks};
use crate::support::fake_model::{Logged, Turn};
use crate::support::poll;

/// A node program's start on a loaded machine, then a turn.
const START: Duration = Duration::from_secs(150);

/// The word claude's answer holds, and so its log, and nothing else.
const WORD: &str = "BLUEBERRY-42";

/// claude's and codex's HOME together, both against `url`.
pub(crate) fn both(url: &str, home: &Path) -> AgentHome {
    let mut h = claude_home(url, home, ClaudeDialogs::none());
    let codex = agent_home::codex(url, home, &[&home.join("proj")], CodexAsks::Never);
    h.files.extend(codex.files);
    h.env.extend(codex.env);
    h
}

/// A request codex made (the Responses API) whose user text holds all of
/// `needles`.
pub(crate) fn codex_asked(r: &Logged, needles: &[&str]) -> bool {
    r.path.ends_with("/responses")
        && r.asked
            .as_ref()
            .is_some_and(|a| needles.iter().all(|n| a.user_text.contains(n)))
}

#[test]
fn claude_hands_its_conversation_to_codex_in_the_same_worktree() {
    let Some(t) = Turns::setup_with_hooks("claude", both) else {
        return;
    };
    t.model.when_user_says(
        "PLAN-TURN",
        Turn::Say(format!(
            "The parser is done and its tests pass; the password is {WORD}. Should the lexer \
             go next?"
        )),
    );
    let claude = t.ok(&["agent", "claude"]);
    t.wait_idle(&claude);
    t.prompt(&claude, "PLAN-TURN: write the parser");
    t.wait_screen(&claude, "claude's answer", START, |s| s.contains(WORD));
    t.wait_idle(&claude);
    // claude writes its log as the turn goes; the answer's line is there
    // once the answer shows, give or take a write.
    let logged = poll(START, || {
        log_holds(&t.env.home().join(".claude/projects"), WORD)
    });
    assert!(logged, "claude's log never held its answer");

    let codex = t.ok(&["handoff", "--from", &claude, "--to", "codex"]);
    let (from, to) = (t.tab_json(&claude), t.tab_json(&codex));
    assert_eq!(to["agent"], "codex");
    assert_eq!(to["worktree"], from["worktree"], "the same worktree");
    assert!(from["worktree"].is_string(), "{from}");

    let needles = [
        "Handoff from tab",
        // Its source named: the handoff is built from claude's words.
        "The agent claude hands this work over to you",
        "PLAN-TURN: write the parser",
        WORD,
        "Should the lexer go next?",
    ];
    t.model
        .wait_for("codex's first request, with the handoff", START, |r| {
            codex_asked(r, &needles)
        });
    // No sandbox in the way: no note.
    let first = t
        .model
        .log()
        .into_iter()
        .find(|r| codex_asked(r, &needles))
        .unwrap();
    assert!(
        !first
            .asked
            .unwrap()
            .user_text
            .contains("written in a sandbox"),
        "an unsandboxed handoff carries no sandbox note"
    );

    // The worktree is claude's first, and codex works in it: closing
    // claude's tab does not remove it.
    let out = t.nerdr(&["close", "--remove-worktree", &claude]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "removed a worktree codex works in");
    assert!(said.contains(&format!("also tab {codex}'s")), "{said}");
    let wt = from["worktree"].as_str().unwrap();
    assert!(Path::new(wt).is_dir(), "{wt} is gone");
}

/// Whether a `.jsonl` under `dir` (one folder down) holds `needle`.
pub(crate) fn log_holds(dir: &Path, needle: &str) -> bool {
    let Ok(folders) = std::fs::read_dir(dir) else {
        return false;
    };
    folders.flatten().any(|f| {
        std::fs::read_dir(f.path()).is_ok_and(|files| {
            files
                .flatten()
                .any(|l| std::fs::read_to_string(l.path()).is_ok_and(|s| s.contains(needle)))
        })
    })
}

/// A sandboxed agent's handoff, typed into its tab: the real CLI from
/// inside bubblewrap.
const HANDOFF: &str = "\"$NERDR_BIN\" handoff --to codex 'SANDBOXED-TURN done: the lexer; next: \
                       the printer' > handoff.out 2>&1; echo handoff-rc=$?";

#[test]
fn a_sandboxed_agent_s_handoff_to_codex_waits_for_approval_and_carries_the_note() {
    let Some(t) = Turns::setup_with_hooks("claude", both) else {
        return;
    };
    let boxed = t
        .env
        .write_user_file("bin/boxed", "#!/bin/sh\nexec bash --norc --noprofile\n");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&boxed, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let runtime = t.env.runtime_dir().display().to_string();
    // A folder of its own, in no repository (no worktree to check), the
    // only one it may write.
    let work = t.env.write_user_file("work/.keep", "");
    let work = work.parent().unwrap().to_path_buf();
    let w = work.display().to_string();
    let boxed = boxed.display().to_string();
    let words = [
        "bwrap",
        "--ro-bind",
        "/",
        "/",
        "--dev-bind",
        "/dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        &runtime,
        "--bind",
        &w,
        &w,
        "--unshare-pid",
        "--die-with-parent",
        "--",
        &boxed,
    ]
    .iter()
    .map(|w| format!("{w:?}"))
    .collect::<Vec<_>>()
    .join(", ");
    t.env.write_user_file(
        ".config/nerdr/config.toml",
        format!("[agents.boxed]\ncommand = [{words}]\nsandboxed = true\n"),
    );
    let sandboxed = t.ok(&["agent", "boxed", "--folder", &w]);
    t.ok(&["send", &sandboxed, HANDOFF]);
    // The echo's line, not the command's (which names it too).
    let screen = t.wait_screen(&sandboxed, "the handoff's answer", START, |s| {
        s.lines().any(|l| l.starts_with("handoff-rc="))
    });
    let out = std::fs::read_to_string(work.join("handoff.out")).unwrap_or_default();
    assert!(
        screen.lines().any(|l| l == "handoff-rc=0"),
        "the queued handoff failed: {out}\n{}",
        t.screen(&sandboxed)
    );
    assert!(out.contains("waits for the user's approval"), "{out}");

    // Nothing started yet; the question names codex and shows the text.
    let tabs: Vec<serde_json::Value> =
        serde_json::from_str(&t.ok(&["tabs", "--json", "--folder", &w])).unwrap();
    assert_eq!(tabs.len(), 1, "{tabs:?}");
    let listed: serde_json::Value = serde_json::from_str(&t.ok(&["approvals", "--json"])).unwrap();
    let q = &listed[0];
    assert_eq!(q["kind"], "handoff", "{listed}");
    assert_eq!(q["agent"], "codex", "{listed}");
    let question = q["question"].as_str().unwrap();
    assert!(question.contains("SANDBOXED-TURN done"), "{question}");
    assert!(question.contains("outside every sandbox"), "{question}");
    // The person is told whose files the agent starts among.
    assert!(
        question.contains("the sandboxed agent's worktree") && question.contains("hooks"),
        "{question}"
    );

    t.ok(&["approvals", "approve", q["id"].as_str().unwrap()]);
    let needles = [
        crate_note(),
        "SANDBOXED-TURN done: the lexer; next: the printer",
    ];
    t.model
        .wait_for("codex's first request, with the note", START, |r| {
            codex_asked(r, &needles)
        });
    let tabs: Vec<serde_json::Value> =
        serde_json::from_str(&t.ok(&["tabs", "--json", "--folder", &w])).unwrap();
    let codex = tabs
        .iter()
        .find(|t| t["agent"] == "codex")
        .expect("codex started");
    assert_eq!(codex["sandboxed"], false, "{codex}");

    // To the person it goes at once, with the note; the list is the
    // person's alone.
    t.ok(&["send", &sandboxed, TO_ME]);
    let screen = t.wait_screen(&sandboxed, "the list's answer", START, |s| {
        s.lines().any(|l| l.starts_with("list-rc="))
    });
    let read = |f: &str| std::fs::read_to_string(work.join(f)).unwrap_or_default();
    assert!(
        screen.lines().any(|l| l == "tome-rc=0"),
        "{}
{screen}",
        read("tome.out")
    );
    assert!(
        screen.lines().any(|l| l == "list-rc=1"),
        "{}
{screen}",
        read("list.out")
    );
    assert!(
        read("list.out").contains("refused `nerdr handoffs`"),
        "{}",
        read("list.out")
    );
    let kept: Vec<serde_json::Value> =
        serde_json::from_str(&t.ok(&["handoffs", "--json", "--folder", &w])).unwrap();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(kept[0]["tab"], sandboxed.as_str());
    assert_eq!(kept[0]["note"], crate_note());
    let at = kept[0]["at"].as_str().expect("at in RFC 3339");
    assert!(at.ends_with('Z') && at.contains('T'), "{at}");
    assert!(kept[0]["text"]
        .as_str()
        .unwrap()
        .contains("TO-ME: the printer is left"));
    let row = t.ok(&["tabs", "--json", "--folder", &w]);
    assert!(
        row.contains("`nerdr handoffs` shows it"),
        "the tab is not marked: {row}"
    );
}

/// Its handoff to the person, and a look at the person's list.
const TO_ME: &str = "\"$NERDR_BIN\" handoff --to-me 'TO-ME: the printer is left' > tome.out 2>&1; \
                     echo tome-rc=$?; \"$NERDR_BIN\" handoffs > list.out 2>&1; echo list-rc=$?";

/// The review's note, as nerdr writes it.
fn crate_note() -> &'static str {
    "[written in a sandbox: it may carry that agent's instructions]"
}
