//! The real codex under `nerdr sandbox` (nerdr gives it `--no-daemon`).

use std::path::PathBuf;

use super::Turns;
use crate::support::agent_home::{self, CodexAsks};
use crate::support::fake_model::Turn;

fn setup() -> Option<Turns> {
    setup_asking(CodexAsks::Never)
}

fn setup_asking(asks: CodexAsks) -> Option<Turns> {
    Turns::setup("codex", |url, home| {
        agent_home::codex(url, home, &[&home.join("proj")], asks)
    })
}

/// Start codex, have the model run `command` through `exec_command` on
/// `marker`, wait for the turn's end, and quit. The tab's id.
fn one_turn(t: &Turns, marker: &str, command: &str) -> String {
    t.one_turn(marker, command, "/quit")
}

#[test]
fn codex_asks_before_an_escalated_commit_and_runs_it_once_enter_approves() {
    let Some(t) = setup_asking(CodexAsks::OnEscalation) else {
        return;
    };
    t.model.when_user_says(
        "COMMIT-ASKING",
        Turn::Run {
            command: "echo asked > asked.txt && git add asked.txt && git commit -q -m asked".into(),
            escalate: true,
        },
    );
    let tab = t.start();
    t.wait_idle(&tab);
    let since = t.prompt(&tab, "Please COMMIT-ASKING");
    let approved = t.wait_tool_result(&tab, since);
    assert_eq!(approved, 1, "codex asked {approved} times");
    t.wait_closing_answer(&tab);
    t.exit(&tab, "/quit");
    t.wait_commit(&tab, "asked");
}

/// codex's session files (`~/.codex/sessions/**/rollout-*.jsonl`).
fn rollouts(t: &Turns) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![t.home_file(".codex/sessions")];
    while let Some(dir) = todo.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                found.push(p);
            }
        }
    }
    found
}

/// codex with a custom provider and an `env_key` has no sign-in to keep
/// (it writes no `auth.json`): what it keeps is its sessions and its own
/// additions to `config.toml`, and no sign-in screen may come back.
#[test]
fn the_real_codex_commits_on_its_branch_and_comes_back_signed_in_after_a_restart() {
    let Some(t) = setup() else { return };
    let config = t.home_file(".codex/config.toml");
    let prepared = std::fs::read_to_string(&config).unwrap();
    let tab = one_turn(
        &t,
        "COMMIT-NOW",
        "echo from-codex > codex.txt && git add codex.txt && git commit -q -m from-codex",
    );
    t.wait_commit(&tab, "from-codex");
    t.assert_reached_through_the_proxy();

    // Its session, written in its config folder inside the sandbox, is on
    // the host.
    let kept = rollouts(&t);
    assert!(
        kept.iter()
            .any(|f| std::fs::read_to_string(f).unwrap().contains("COMMIT-NOW")),
        "no session file of codex's holds the turn: {kept:?}"
    );
    // codex notes what it has shown (its `[tui]` table) in its config.
    let written = std::fs::read_to_string(&config).unwrap();
    assert!(
        written != prepared && written.contains("[model_providers.fake]"),
        "codex's own additions to its config.toml are not on the host:\n{written}"
    );

    // Started again: no sign-in dialog, and another turn works.
    t.restart_and_say_hello_again(&tab);
    for f in &kept {
        assert!(f.is_file(), "{} is gone after the restart", f.display());
    }
    t.exit(&tab, "/quit");
}

/// What the model has codex run to plant config that would start a program
/// on the host: `notify` (run after each turn) and an MCP server, in
/// `~/.codex/config.toml`. `notify` must come before the first table.
const PLANT: &str = r#"c=~/.codex/config.toml && { echo 'notify = ["/bin/sh", "-c", "echo planted"]'; cat "$c"; printf '\n[mcp_servers.planted]\ncommand = "/bin/sh"\nargs = ["-c", "echo planted"]\n'; } > /tmp/planted.toml && cat /tmp/planted.toml > "$c" && echo PLANTED"#;

#[test]
fn codex_config_writes_that_start_programs_do_not_survive_the_run() {
    let Some(t) = setup() else { return };
    one_turn(&t, "PLANT-CONFIG", PLANT);
    let tried = t.a_tool_result_holds("PLANTED");
    eprintln!("the planting command reported success inside: {tried}");
    let path = t.home_file(".codex/config.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let config: toml::Table = text
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()));
    let mut survived = Vec::new();
    if config.contains_key("notify") {
        survived.push("notify");
    }
    if config
        .get("mcp_servers")
        .and_then(|m| m.get("planted"))
        .is_some()
    {
        survived.push("mcp_servers.planted");
    }
    assert!(
        survived.is_empty(),
        "config the sandboxed codex wrote survived in {}: {survived:?}\n{text}",
        path.display()
    );
}
