//! `nerdr search` end to end with the real binary and the real CLIs
//! (`$NERDR_AGENT_CLIS`) against the fake model, in a private `systemd
//! --user` (issue 20, acceptance 5):
//! - a fixture corpus of claude and codex logs (the recorded logs of real
//!   turns, `tests/fixtures/handoff/`, with their requests and session ids
//!   changed) comes back ranked: all words first, then the most
//!   occurrences, then the most recent;
//! - a real claude turn is found by a word only its answer holds, with
//!   the tab's session id and worktree; `--open` starts a new tab whose
//!   command line carries `--resume <id>`, and the resumed claude's next
//!   request to the model carries the earlier conversation;
//! - codex's turn likewise, resumed with `resume <id>`;
//! - a sandboxed agent's search (the real CLI from inside bubblewrap)
//!   covers its own tab's conversation only: claude's is not found, even
//!   under claude's session id claimed as its own, a log of its id run in
//!   its folder is; and the core refuses it `--open`.

use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::suites::agent_turns::Turns;
use crate::suites::handoff::{both, log_holds};
use crate::support::fake_model::{Logged, Turn};
use crate::support::poll;

const START: Duration = Duration::from_secs(150);

const CLAUDE: &str = include_str!("../fixtures/handoff/claude-session.jsonl");
const CODEX: &str = include_str!("../fixtures/handoff/codex-rollout.jsonl");
const CLAUDE_ID: &str = "11111111-2222-4333-8444-555555555555";
const CODEX_ID: &str = "01a236e9-60bc-7b00-96ce-f4b2605f7753";
/// The request both recorded logs hold.
const ASKED: &str = "Please look at the parser and say hello";

/// One log of the corpus: a recorded log whose request is `request`,
/// under session `id`, last written `age` hours ago.
fn corpus_log(t: &Turns, codex: bool, id: &str, request: &str, age: u64) {
    let (recorded, recorded_id) = match codex {
        true => (CODEX, CODEX_ID),
        false => (CLAUDE, CLAUDE_ID),
    };
    let text = recorded.replace(ASKED, request).replace(recorded_id, id);
    let rel = match codex {
        true => format!(".codex/sessions/2026/11/30/rollout-2026-11-30T10-00-00-{id}.jsonl"),
        false => format!(".claude/projects/-tmp-i19h-rec-proj/{id}.jsonl"),
    };
    let path = t.env.write_user_file(&rel, text);
    let when = SystemTime::now() - Duration::from_secs(age * 3600);
    std::fs::File::options()
        .append(true)
        .open(&path)
        .unwrap()
        .set_modified(when)
        .unwrap();
}

fn search(t: &Turns, args: &[&str]) -> serde_json::Value {
    let out = t.ok(&[&["search", "--json"], args].concat());
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// The first model request after `since` whose user text holds `marker`.
fn asked_after(t: &Turns, since: usize, marker: &str) -> Logged {
    t.model.wait_for("the resumed turn's request", START, |r| {
        r.asked
            .as_ref()
            .is_some_and(|a| a.user_text.contains(marker))
    });
    t.model.log()[since..]
        .iter()
        .find(|r| {
            r.asked
                .as_ref()
                .is_some_and(|a| a.user_text.contains(marker))
        })
        .cloned()
        .unwrap()
}

#[test]
fn the_corpus_ranks_and_a_claude_conversation_is_found_and_resumed() {
    let Some(t) = Turns::setup_with_hooks("claude", both) else {
        return;
    };
    #[rustfmt::skip]
    let corpus: &[(bool, &str, &str, u64)] = &[
        (false, "c0000000-0000-4000-8000-000000000001", "zircon then quasar, zircon and quasar", 50),
        (true, "x0000000-0000-7000-8000-000000000002", "Is ZIRCON next to quasar?", 40),
        (false, "c0000000-0000-4000-8000-000000000003", "zircon zircon zircon zircon zircon zircon", 1),
        (false, "c0000000-0000-4000-8000-000000000004", "only quasar here", 2),
        (true, "x0000000-0000-7000-8000-000000000005", "only quasar there", 30),
        (false, "c0000000-0000-4000-8000-000000000006", "nothing of the kind", 0),
    ];
    for (codex, id, request, age) in corpus {
        corpus_log(&t, *codex, id, request, *age);
    }
    let found = search(&t, &["zircon", "quasar"]);
    let order: Vec<(&str, &str, u64)> = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap(),
                r["source"].as_str().unwrap(),
                r["terms"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        order,
        [
            ("c0000000-0000-4000-8000-000000000001", "claude", 2),
            ("x0000000-0000-7000-8000-000000000002", "codex", 2),
            ("c0000000-0000-4000-8000-000000000003", "claude", 1),
            ("c0000000-0000-4000-8000-000000000004", "claude", 1),
            ("x0000000-0000-7000-8000-000000000005", "codex", 1),
        ],
        "{found:#}"
    );
    let first = &found["results"][0];
    assert_eq!(first["folder"], "/tmp/i19h-rec/proj");
    assert_eq!(first["count"], 4);
    assert_eq!(first["lines"][0]["request"], true);
    assert_eq!(
        first["lines"][0]["text"],
        "zircon then quasar, zircon and quasar"
    );
    // --agent keeps one agent's; --limit cuts, and the text says so.
    let codex = search(&t, &["zircon", "quasar", "--agent", "codex"]);
    assert_eq!(codex["results"].as_array().unwrap().len(), 2, "{codex:#}");
    let text = t.ok(&["search", "zircon", "quasar", "--limit", "2"]);
    assert!(
        text.starts_with("1. claude c0000000-0000-4000-8000-000000000001  "),
        "{text}"
    );
    assert!(
        text.contains("> zircon then quasar, zircon and quasar"),
        "{text}"
    );
    assert!(
        text.ends_with("3 more result(s): --limit 5 shows them"),
        "{text}"
    );

    // A real claude turn, found by the word only its answer holds.
    const WORD: &str = "PERIWINKLE-7";
    t.model.when_user_says(
        "SEARCH-TURN",
        Turn::Say(format!(
            "The migration is written; its code name is {WORD}."
        )),
    );
    let claude = t.ok(&["agent", "claude"]);
    t.wait_idle(&claude);
    t.prompt(&claude, "SEARCH-TURN: write the migration");
    t.wait_screen(&claude, "claude's answer", START, |s| s.contains(WORD));
    t.wait_idle(&claude);
    let logged = poll(START, || {
        log_holds(&t.env.home().join(".claude/projects"), WORD)
    });
    assert!(logged, "claude's log never held its answer");
    let tab = t.tab_json(&claude);
    let session = tab["session_id"].as_str().expect("claude's session id");
    let found = search(&t, &[WORD]);
    assert_eq!(found["total"], 1, "{found:#}");
    let hit = &found["results"][0];
    assert_eq!(hit["source"], "claude");
    assert_eq!(hit["id"], session);
    assert_eq!(hit["tab"], claude.as_str(), "the open tab it is: {hit:#}");
    assert_eq!(hit["folder"], tab["worktree"], "{hit:#}\n{tab:#}");
    assert!(
        hit["lines"][0]["text"]
            .as_str()
            .unwrap()
            .contains(&format!("its code name is {WORD}")),
        "{hit:#}"
    );

    // Not while claude's tab has it open: two programs would write one log.
    let out = t.nerdr(&["search", WORD, "--open", "1"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && said.contains(&format!("tab {claude} (claude-1) has conversation")),
        "{said}"
    );
    t.ok(&["close", &claude]);

    // --open: a new tab of this session, run in that folder, resuming that
    // conversation.
    let resumed = t.ok(&["search", WORD, "--open", "1"]);
    assert_ne!(resumed, claude);
    assert!(
        t.ok(&["tabs"]).contains(&resumed[..8.min(resumed.len())]),
        "the resumed tab is not in this folder's session: {}",
        t.ok(&["tabs"])
    );
    // It runs in claude's closed tab's worktree: `nerdr clean` keeps it.
    let cleaned = t.ok(&["clean", "--json"]);
    assert!(
        std::path::Path::new(tab["worktree"].as_str().unwrap()).exists(),
        "clean removed the worktree a running tab works in: {cleaned}"
    );
    let row = t.tab_json(&resumed);
    let command: Vec<&str> = row["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert_eq!(
        command[command.len() - 2..],
        ["--resume", session],
        "{row:#}"
    );
    assert_eq!(row["session_id"], session);
    assert_eq!(
        row["worktree"],
        serde_json::Value::Null,
        "no worktree of its own: {row:#}"
    );
    t.wait_idle(&resumed);
    let since = t.model.log().len();
    t.prompt(&resumed, "RESUMED-TURN: and the code name please");
    let asked = asked_after(&t, since, "RESUMED-TURN");
    assert!(
        asked.body.contains("SEARCH-TURN: write the migration") && asked.body.contains(WORD),
        "the resumed claude's request lacks the earlier conversation:\n{}",
        asked.body
    );

    // --open of a result that is no conversation, or is not there.
    let out = t.nerdr(&["search", WORD, "--open", "2"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && said.contains("--open 2: this search has 1 result"),
        "{said}"
    );

    // A sandboxed agent's search: its own tab's conversation only. Not
    // claude's, even when it claims claude's session id as its own (the
    // log says it ran elsewhere); a log of its id, run in its folder, is
    // found; and it cannot resume one in a new tab (the core refuses).
    let (sandboxed, work) = boxed_agent(&t);
    let w = work.display().to_string();
    let claim = |id: &str| {
        t.ok(&[
            "send",
            &sandboxed,
            &format!(
            "echo '{{\"session_id\":\"{id}\"}}' | \"$NERDR_BIN\" hook SessionStart; echo claimed-$?"
        ),
        ]);
        let claimed = poll(START, || t.tab_json_in(&w, &sandboxed)["session_id"] == id);
        assert!(claimed, "{:#}", t.tab_json_in(&w, &sandboxed));
    };
    claim(session);
    let own = boxed_search(&t, &sandboxed, &work, WORD, "1");
    assert_eq!(own["own_tab_only"], true, "{own:#}");
    assert_eq!(
        (own["total"].as_u64(), own["files"].as_u64()),
        (Some(0), Some(1)),
        "{own:#}"
    );
    let mine = "b0000000-0000-4000-8000-000000000007";
    let text = CLAUDE
        .replace(ASKED, "where did the ZEBRA-BOX go")
        .replace(CLAUDE_ID, mine)
        .replace("/tmp/i19h-rec/proj", &w);
    t.env
        .write_user_file(format!(".claude/projects/-work/{mine}.jsonl"), text);
    claim(mine);
    let own = boxed_search(&t, &sandboxed, &work, "zebra-box", "2");
    assert_eq!(own["total"], 1, "{own:#}");
    assert_eq!(own["results"][0]["id"], mine, "{own:#}");
    // Were claude a sandboxed agent, the start itself would be allowed:
    // the resume is what is refused.
    let config = t.env.home().join(".config/nerdr/config.toml");
    let boxed = std::fs::read_to_string(&config).unwrap();
    t.env.write_user_file(
        ".config/nerdr/config.toml",
        format!("{boxed}\n[agents.claude]\nsandboxed = true\n"),
    );
    t.ok(&[
        "send",
        &sandboxed,
        &format!("{SEARCH} zebra-box --open 1 > o.out 2>&1; echo o-rc=$?"),
    ]);
    let screen = t.wait_screen(&sandboxed, "the --open's answer", START, |s| {
        s.lines().any(|l| l.starts_with("o-rc="))
    });
    let said = std::fs::read_to_string(work.join("o.out")).unwrap_or_default();
    assert!(screen.lines().any(|l| l == "o-rc=1"), "{said}\n{screen}");
    assert!(said.contains("cannot resume a past conversation"), "{said}");
}

/// `nerdr search WORD --json` typed into the sandboxed tab; its answer.
fn boxed_search(t: &Turns, tab: &str, work: &Path, word: &str, n: &str) -> serde_json::Value {
    t.ok(&[
        "send",
        tab,
        &format!("{SEARCH} {word} --json > s{n}.out 2>&1; echo s{n}-rc=$?"),
    ]);
    let done = format!("s{n}-rc=");
    let screen = t.wait_screen(tab, "the search's answer", START, |s| {
        s.lines().any(|l| l.starts_with(&done))
    });
    let out = std::fs::read_to_string(work.join(format!("s{n}.out"))).unwrap_or_default();
    assert!(
        screen.lines().any(|l| l == format!("s{n}-rc=0")),
        "{out}\n{screen}"
    );
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// The real CLI, from inside the sandbox.
const SEARCH: &str = "\"$NERDR_BIN\" search";

/// A sandboxed agent (bash in bubblewrap) in a folder of its own: its tab
/// and that folder.
pub(crate) fn boxed_agent(t: &Turns) -> (String, std::path::PathBuf) {
    let boxed = t
        .env
        .write_user_file("bin/boxed", "#!/bin/sh\nexec bash --norc --noprofile\n");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&boxed, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let runtime = t.env.runtime_dir().display().to_string();
    let work = t.env.write_user_file("work/.keep", "");
    let work = work.parent().unwrap().to_path_buf();
    let w = work.display().to_string();
    let boxed = boxed.display().to_string();
    #[rustfmt::skip]
    let words = [
        "bwrap", "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc",
        "--tmpfs", &runtime, "--bind", &w, &w, "--unshare-pid", "--die-with-parent", "--", &boxed,
    ]
    .iter()
    .map(|w| format!("{w:?}"))
    .collect::<Vec<_>>()
    .join(", ");
    t.env.write_user_file(
        ".config/nerdr/config.toml",
        format!("[agents.boxed]\ncommand = [{words}]\nsandboxed = true\n"),
    );
    let tab = t.ok(&["agent", "boxed", "--folder", &w]);
    (tab, work)
}

#[test]
fn a_codex_conversation_is_found_and_resumed_with_its_id() {
    let Some(t) = Turns::setup_with_hooks("codex", both) else {
        return;
    };
    const WORD: &str = "TANGERINE-9";
    t.model.when_user_says(
        "SEARCH-TURN",
        Turn::Say(format!("The lexer is written; its code name is {WORD}.")),
    );
    let codex = t.ok(&["agent", "codex"]);
    t.wait_idle(&codex);
    t.prompt(&codex, "SEARCH-TURN: write the lexer");
    t.wait_screen(&codex, "codex's answer", START, |s| s.contains(WORD));
    t.wait_idle(&codex);
    let sessions = t.env.home().join(".codex/sessions");
    let found = poll(START, || {
        search(&t, &[WORD, "--agent", "codex"])["total"] == 1
    });
    assert!(
        found,
        "codex's log never held its answer: {}",
        sessions.display()
    );
    let found = search(&t, &[WORD]);
    let hit = &found["results"][0];
    assert_eq!(hit["source"], "codex", "{found:#}");
    let tab = t.tab_json(&codex);
    let id = hit["id"].as_str().unwrap();
    // The id codex files the log by (and `codex resume` takes). Not
    // necessarily the tab's `session_id`: codex 0.171's hooks report
    // another id than its log's (see the closing note of issue 20).
    let logs = walk(&sessions);
    assert_eq!(logs.len(), 1, "{logs:?}");
    let name = logs[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.ends_with(&format!("-{id}.jsonl")), "{name} {id}");
    assert_eq!(hit["folder"], tab["worktree"], "{hit:#}\n{tab:#}");
    // A past conversation: codex holds a conversation open in one
    // program at a time.
    t.ok(&["close", &codex]);
    let resumed = t.ok(&["search", WORD, "--open", "1"]);
    // A tab of this folder's session, run in the closed tab's worktree.
    let row = t.tab_json(&resumed);
    assert_eq!(row["worktree"], serde_json::Value::Null, "{row:#}");
    let command: Vec<&str> = row["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    let at = command
        .iter()
        .position(|w| *w == "resume")
        .expect("codex resume");
    assert_eq!(command.last(), Some(&id), "{row:#}");
    assert!(
        command[at + 1..]
            .iter()
            .all(|w| *w == id || w.starts_with("--")),
        "{row:#}"
    );
    t.wait_idle(&resumed);
    let since = t.model.log().len();
    t.prompt(&resumed, "RESUMED-TURN: and the code name please");
    let asked = asked_after(&t, since, "RESUMED-TURN");
    assert!(
        asked.body.contains("SEARCH-TURN: write the lexer") && asked.body.contains(WORD),
        "the resumed codex's request lacks the earlier conversation:\n{}",
        asked.body
    );
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// What a sandboxed agent can leave in the history folders it writes
/// (`~/.claude/projects` stays writable in `nerdr sandbox`): a FIFO and a
/// link to `/dev/zero` under log names. The person's search must neither
/// wait on the one nor read the other without end; it finds the rest.
#[test]
fn a_fifo_or_dev_zero_among_the_logs_hangs_no_search() {
    let Some(st) = crate::support::repo_session::RepoSession::on_main("") else {
        return;
    };
    let log = st.env.write_user_file(
        ".claude/projects/-p/aaaaaaaa-2222-4333-8444-555555555555.jsonl",
        CLAUDE
            .replace(ASKED, "say plumbago please")
            .replace(CLAUDE_ID, "aaaaaaaa-2222-4333-8444-555555555555"),
    );
    let dir = log.parent().unwrap().display().to_string();
    st.sh(&format!(
        "mkfifo {dir}/bbbbbbbb-2222-4333-8444-555555555555.jsonl && \
         ln -s /dev/zero {dir}/cccccccc-2222-4333-8444-555555555555.jsonl"
    ));
    let out = st
        .env
        .output(&["timeout", "30", "nerdr", "search", "--json", "plumbago"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the search did not come back: {out:?}"
    );
    assert!(text.contains("aaaaaaaa-2222"), "{text}");
}
