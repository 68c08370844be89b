//! `nerdr agent` as a newcomer uses it, as a non-root user under a real
//! `systemd --user`: any program on the spot (`nerdr agent -- CMD ARGS`,
//! no config), the hint when a name is no agent, and a custom sandboxed
//! agent (`nerdr sandbox -- bash` under another section name) refused in
//! one line that says the fix, its id still printed, then running once the
//! config names its `program`.

use std::process::Output;
use std::time::Duration;

use crate::support::sysenv::SystemdEnv;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `nerdr ARGS` in `~/work` (made first), as the test user.
fn nerdr(env: &SystemdEnv, args: &[&str]) -> Output {
    let work = env.home().join("work");
    if !work.exists() {
        env.write_user_file("work/.keep", "");
    }
    let mut cmd = env.user_cmd(&[&["nerdr"], args].concat());
    cmd.current_dir(work);
    crate::support::sysenv::output_of(&mut cmd)
}

fn ok(env: &SystemdEnv, args: &[&str]) -> String {
    let out = nerdr(env, args);
    assert!(
        out.status.success(),
        "nerdr {args:?}: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout).trim_end().to_string()
}

fn tab(env: &SystemdEnv, id: &str) -> serde_json::Value {
    let tabs: Vec<serde_json::Value> =
        serde_json::from_str(&ok(env, &["tabs", "--all", "--json"])).unwrap();
    tabs.into_iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("tab {id} not listed"))
}

fn screen_shows(env: &SystemdEnv, tab: &str, needle: &str) -> String {
    let mut last = String::new();
    let shown = crate::support::poll(Duration::from_secs(20), || {
        last = ok(env, &["read", tab]);
        last.contains(needle)
    });
    assert!(shown, "tab {tab} never showed {needle:?}:\n{last}");
    last
}

#[test]
fn any_program_starts_on_the_spot_without_config() {
    let Some(env) = SystemdEnv::start() else {
        return;
    };
    env.run(&["nerdr", "service", "install"]);
    assert!(!env.home().join(".config/nerdr/config.toml").exists());

    // bash, typed into and read back, as a plain unsandboxed program.
    let id = ok(&env, &["agent", "--", "bash", "--norc", "--noprofile"]);
    assert!(
        id.len() == 8 && id.bytes().all(|b| b.is_ascii_hexdigit()),
        "{id:?}"
    );
    ok(&env, &["send", &id, "echo typed-$((6*7))"]);
    screen_shows(&env, &id, "typed-42");
    let t = tab(&env, &id);
    assert_eq!(t["agent"], "bash", "{t}");
    assert_eq!(t["name"], "bash-1", "{t}");
    assert_eq!(t["sandboxed"], false, "{t}");
    assert_eq!(t["state"], "running", "{t}");
    // Its handle works like any tab's.
    ok(&env, &["send", "bash-1", "echo by-name"]);
    screen_shows(&env, &id, "\nby-name");
    // Ended, it starts again as it was, with no config.
    ok(&env, &["send", &id, "exit 4"]);
    let ended = crate::support::poll(Duration::from_secs(10), || tab(&env, &id)["exit_code"] == 4);
    assert!(ended, "{}", tab(&env, &id));
    ok(&env, &["restart", &id]);
    ok(&env, &["send", &id, "echo again-$((2+3))"]);
    screen_shows(&env, &id, "again-5");
    assert_eq!(
        tab(&env, &id)["command"],
        serde_json::json!(["bash", "--norc", "--noprofile"])
    );

    // A program with its arguments: sh -x traces what it runs.
    let sh = ok(&env, &["agent", "--", "sh", "-x"]);
    ok(&env, &["send", &sh, "echo traced"]);
    screen_shows(&env, &sh, "+ echo traced");
    assert_eq!(tab(&env, &sh)["name"], "sh-1");

    // A name that is no agent: one line, with the way to run it.
    let out = nerdr(&env, &["agent", "bash"]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "unknown agent \"bash\"; to run a program that is not an agent: nerdr agent -- bash"
        ),
        "{err}"
    );
    assert!(err.contains("claude, ") && err.contains("codex"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert_eq!(text(&out.stdout), "", "no id for a start that never was");

    // A handoff's agent has to be an agent: no advice to run it as a program.
    let out = nerdr(
        &env,
        &[
            "handoff",
            "--from",
            &sh,
            "--to",
            "bash",
            "done; next: tests",
        ],
    );
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("unknown agent \"bash\""), "{err}");
    assert!(!err.contains("nerdr agent --"), "{err}");
}

#[test]
fn a_custom_sandboxed_agent_is_refused_in_one_line_naming_program_then_runs() {
    let Some(env) = super::sandbox::setup() else {
        return;
    };
    env.run(&["nerdr", "service", "install"]);
    let config = env.write_user_file(
        ".config/nerdr/config.toml",
        "[agents.sbsh]\ncommand = [\"nerdr\", \"sandbox\", \"--\", \"bash\"]\n\
         args = [\"--norc\", \"--noprofile\"]\nsandboxed = true\n",
    );
    let proj = |args: &[&str]| {
        let mut cmd = env.user_cmd(&[&["nerdr"], args].concat());
        cmd.current_dir(env.home().join("proj"));
        crate::support::sysenv::output_of(&mut cmd)
    };

    // Refused: the id on stdout (for `ID=$(nerdr agent ...)`), the fix in
    // one line on stderr, a failure.
    let out = proj(&["agent", "sbsh"]);
    assert!(!out.status.success(), "{}", text(&out.stderr));
    let id = text(&out.stdout).trim().to_string();
    assert!(
        id.len() == 8 && id.bytes().all(|b| b.is_ascii_hexdigit()),
        "stdout is the id: {id:?}"
    );
    let fix = format!(
        "agent \"sbsh\" runs bash inside the sandbox: add program = \"bash\" to [agents.sbsh] \
         in {} (or name the section after the program)",
        config.display()
    );
    let err = text(&out.stderr);
    assert!(err.contains(&fix), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    // The refused tab stays, its reason in `tabs` and `explain`.
    let t = tab(&env, &id);
    assert_eq!(t["state"], "refused", "{t}");
    assert!(
        t["reason"].as_str().unwrap_or_default().contains(&fix),
        "{t}"
    );
    let explained = text(&proj(&["explain", &id]).stdout);
    assert!(explained.contains("program = \"bash\""), "{explained}");

    // Fixed as the line says: the refused tab starts on restart, and a new
    // one starts, both inside the sandbox.
    env.write_user_file(
        ".config/nerdr/config.toml",
        "[agents.sbsh]\ncommand = [\"nerdr\", \"sandbox\", \"--\", \"bash\"]\n\
         args = [\"--norc\", \"--noprofile\"]\nsandboxed = true\nprogram = \"bash\"\n",
    );
    let out = proj(&["restart", &id]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = proj(&["agent", "sbsh"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let fresh = text(&out.stdout).trim().to_string();
    for tab_id in [&id, &fresh] {
        let t = tab(&env, tab_id);
        assert_eq!(t["state"], "running", "{t}");
        assert_eq!(t["sandboxed"], true, "{t}");
        // Inside: the runtime dir (the client socket and its key) is not
        // there, as the sandbox check proved.
        let runtime = env.runtime_dir().display().to_string();
        ok(
            &env,
            &[
                "send",
                tab_id,
                &format!("ls {runtime}/nerdr/client.sock; echo inside-rc-$?"),
            ],
        );
        let screen = screen_shows(&env, tab_id, "inside-rc-");
        assert!(!screen.contains("inside-rc-0"), "{screen}");
    }
    let log = ok(&env, &["log", "--probe"]);
    assert!(log.contains(&fix), "the refusal is in the probe log: {log}");
}
