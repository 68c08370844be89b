//! The real claude under `nerdr sandbox`.

use serde_json::Value;

use super::Turns;
use crate::support::agent_home;

fn setup() -> Option<Turns> {
    Turns::setup("claude", agent_home::claude)
}

fn claude_json(t: &Turns) -> Value {
    let text = std::fs::read_to_string(t.home_file(".claude.json")).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("~/.claude.json: {e}:\n{text}"))
}

/// Start claude, have the model run `command` through its `Bash` tool on
/// `marker`, wait for the turn's end, and `/exit`. The tab's id.
fn one_turn(t: &Turns, marker: &str, command: &str) -> String {
    t.one_turn(marker, command, "/exit")
}

/// claude's transcripts (`~/.claude/projects/*/<session>.jsonl`) on the host.
fn transcript(t: &Turns, session: &str) -> Option<String> {
    let projects = std::fs::read_dir(t.home_file(".claude/projects")).ok()?;
    projects
        .flatten()
        .map(|p| p.path().join(format!("{session}.jsonl")))
        .find(|f| f.is_file())
        .map(|f| std::fs::read_to_string(f).unwrap())
}

#[test]
fn the_real_claude_commits_on_its_branch_and_resumes_signed_in_after_a_restart() {
    let Some(t) = setup() else { return };
    let tab = one_turn(
        &t,
        "COMMIT-NOW",
        "echo from-claude > claude.txt && git add claude.txt && git commit -q -m from-claude",
    );
    t.wait_commit(&tab, "from-claude");
    t.assert_reached_through_the_proxy();

    // Its conversation, written in its config folder inside the sandbox,
    // is on the host.
    let session = t.tab_json(&tab)["session_id"]
        .as_str()
        .expect("claude has a session id")
        .to_string();
    let kept = transcript(&t, &session)
        .unwrap_or_else(|| panic!("no transcript of session {session} under ~/.claude/projects"));
    assert!(kept.contains("COMMIT-NOW"), "{kept}");

    // Started again: no sign-in or key dialog, the conversation resumed
    // from that transcript, and another turn works.
    let second = t.restart_and_say_hello_again(&tab);
    assert!(
        second.body.contains("COMMIT-NOW"),
        "the restarted claude did not resume its conversation:\n{}",
        second.body
    );
    assert!(
        claude_json(&t)["customApiKeyResponses"]["approved"]
            .as_array()
            .is_some_and(|a| !a.is_empty()),
        "the key's approval is gone: {:#}",
        claude_json(&t)
    );
    t.exit(&tab, "/exit");
}

/// Outside any sandbox, claude's first run adds its `userID` (and
/// `firstStartTime`, migrations...) to `~/.claude.json`; its account after
/// `/login` goes there too. Under `nerdr sandbox` those writes must reach
/// the host, or the next start is a first start again. Claude Code 2.1.197
/// saves the file under a lock folder `~/.claude.json.lock` and through a
/// temporary file beside it, both in the read-only HOME; its debug log
/// (`--debug-file`) says "EROFS ... mkdir '~/.claude.json.lock'", then
/// "Config fallback write also failed; continuing without persisting".
#[test]
fn what_claude_writes_to_its_claude_json_in_the_sandbox_is_kept() {
    let Some(t) = setup() else { return };
    let written = claude_json(&t);
    assert!(written.get("userID").is_none(), "{written:#}");
    one_turn(&t, "SAY-PWD", "pwd");
    let after = claude_json(&t);
    assert!(
        after["userID"].is_string(),
        "claude's writes to ~/.claude.json were lost; on the host:\n{after:#}"
    );
}

/// What the model has claude run to plant config that would start a
/// program on the host: an MCP server in `~/.claude.json` and a plugin in
/// `~/.claude/plugins`. It prints what it managed.
const PLANT: &str = r#"python3 -c 'import json, os; p = os.path.expanduser("~/.claude.json"); d = json.load(open(p)); d["mcpServers"] = {"planted": {"type": "stdio", "command": "/bin/sh", "args": ["-c", "echo planted"]}}; open(p, "w").write(json.dumps(d))' && echo PLANTED-MCP; mkdir -p ~/.claude/plugins/planted/.claude-plugin && echo '{"name": "planted"}' > ~/.claude/plugins/planted/.claude-plugin/plugin.json && echo PLANTED-PLUGIN"#;

#[test]
fn claude_config_writes_that_start_programs_do_not_survive_the_run() {
    let Some(t) = setup() else { return };
    one_turn(&t, "PLANT-CONFIG", PLANT);
    let tried = t.a_tool_result_holds("PLANTED-");
    eprintln!("the planting command reported success inside: {tried}");
    let after = claude_json(&t);
    let mut servers = vec![after["mcpServers"].clone()];
    if let Some(projects) = after["projects"].as_object() {
        servers.extend(projects.values().map(|p| p["mcpServers"].clone()));
    }
    let mut survived = Vec::new();
    if servers.iter().any(|s| s.get("planted").is_some()) {
        survived.push("the MCP server in ~/.claude.json".to_string());
    }
    let plugin = t.home_file(".claude/plugins/planted");
    if plugin.exists() {
        survived.push(format!("the plugin {}", plugin.display()));
    }
    assert!(
        survived.is_empty(),
        "config the sandboxed claude wrote survived: {survived:?}\n~/.claude.json:\n{after:#}"
    );
}

/// `install = "worktree"` with `nerdr sandbox --worktree-only` (issue 20,
/// item 2): the real claude, whose sandbox cannot reach nerdr's socket,
/// has nerdr's worktree skill in its context, its hooks in the worktree
/// report its turns through the worktree's file, and a reason it gives
/// with `nerdr why add` reaches nerdr the same way.
#[test]
fn the_real_claude_in_a_worktree_only_sandbox_reports_through_its_worktree() {
    let Some(t) = setup() else { return };
    t.env.write_user_file(
        ".config/nerdr/config.toml",
        "[agents.claude]\n\
         command = [\"nerdr\", \"sandbox\", \"--worktree-only\", \"--\", \"claude\"]\n\
         sandboxed = true\ninstall = \"worktree\"\n",
    );
    let tab = one_turn(
        &t,
        "SAY-WHY",
        "echo more >> README && \"$NERDR_BIN\" why add --file README --lines 2 'WHY-FROM-CLAUDE'",
    );
    assert!(
        t.a_tool_result_holds("reports.jsonl"),
        "why add did not write to the reports file:\n{}",
        t.model.dump()
    );
    assert!(
        t.model.log().iter().any(|r| r
            .body
            .contains("from a sandbox that reaches only this worktree")),
        "the worktree's skill is not in claude's context:\n{}",
        t.model.dump()
    );
    let wt = t.tab_json(&tab)["worktree"]
        .as_str()
        .expect("a worktree")
        .to_string();
    // Its hooks fired in the sandbox and wrote their lines.
    let reports = std::fs::read_to_string(format!("{wt}/.nerdr/reports.jsonl")).unwrap();
    for event in ["UserPromptSubmit", "Stop"] {
        assert!(
            reports.contains(&format!("\"event\":\"{event}\"")),
            "no {event} line from claude's hooks:\n{reports}"
        );
    }
    // And nerdr took them: the tab's session is the one the hooks named,
    // and nothing was refused.
    let session = t.tab_json(&tab)["session_id"]
        .as_str()
        .expect("claude has a session id")
        .to_string();
    assert!(reports.contains(&session), "{session} not in:\n{reports}");
    let refused = t.ok(&["log", "--hook"]);
    assert!(!refused.contains("reports.jsonl"), "{refused}");
    let shown = t.ok(&["why", "--folder", &wt, "README:2"]);
    assert!(shown.contains("WHY-FROM-CLAUDE"), "{shown}");
    assert!(shown.contains("written in a sandbox"), "{shown}");
    // Nothing nerdr put in the worktree shows in git.
    let status = super::user_git(
        &t.env,
        std::path::Path::new(&wt),
        &["status", "--porcelain"],
    );
    assert_eq!(status.trim(), "M README", "{status}");
}
