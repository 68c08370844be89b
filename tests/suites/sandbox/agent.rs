//! `nerdr sandbox` as an agent's wrapper: nerdr's own sandbox check passes
//! it and the agent works (its sign-in state in its own config folder, its
//! commits in its worktree), while each weakened variant is refused; and
//! the filtering proxy is the sandbox's one way out.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

use super::{audit_lines, setup, text};
use crate::support::sysenv::{wait_until, SystemdEnv};

/// A stand-in for claude: keeps its sign-in state in `~/.claude`, commits
/// in its worktree, then waits.
const CLAUDE: &str = "#!/bin/sh\n\
    case \"$1\" in --help) echo 'Usage: claude [options]'; exit 0;; esac\n\
    mkdir -p \"$HOME/.claude\" && echo signed-in >> \"$HOME/.claude/state\"\n\
    echo work > from-agent.txt && git add from-agent.txt && git commit -q -m from-agent\n\
    echo AGENT-DONE-$?\n\
    exec sleep 1000\n";

/// `nerdr ARGS` in the repository, with the stand-in agent on PATH.
fn nerdr(env: &SystemdEnv, args: &[&str]) -> std::process::Output {
    let mut cmd = env.user_cmd(&[&["nerdr"], args].concat());
    let path = format!(
        "{}:{}:/usr/local/bin:/usr/bin:/bin",
        env.home().join("bin").display(),
        env.nerdr().parent().unwrap().display()
    );
    cmd.current_dir(env.home().join("proj")).env("PATH", path);
    crate::support::sysenv::output_of(&mut cmd)
}

fn installed(wrapper: &str) -> Option<SystemdEnv> {
    let env = setup()?;
    env.run(&["nerdr", "service", "install"]);
    let claude = env.write_user_file("bin/claude", CLAUDE);
    std::fs::set_permissions(&claude, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    env.write_user_file(
        ".config/nerdr/config.toml",
        format!("[agents.claude]\ncommand = [{wrapper}]\nsandboxed = true\n"),
    );
    Some(env)
}

fn tab_state(env: &SystemdEnv, tab: &str) -> serde_json::Value {
    let out = nerdr(env, &["tabs", "--json"]);
    let tabs: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    tabs.into_iter()
        .find(|t| t["id"] == tab)
        .unwrap_or_else(|| panic!("no tab {tab}"))
}

/// Start the agent `claude` and wait until its screen shows `marker`;
/// its tab id and that screen.
fn start_claude_until(env: &SystemdEnv, marker: &str) -> (String, String) {
    let out = nerdr(env, &["agent", "claude"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let tab = text(&out.stdout).trim().to_string();
    let mut screen = String::new();
    let done = crate::support::poll(Duration::from_secs(30), || {
        screen = text(&nerdr(env, &["read", &tab]).stdout);
        screen.contains(marker)
    });
    assert!(done, "the agent never got going:\n{screen}");
    (tab, screen)
}

#[test]
fn the_sandbox_check_passes_nerdr_sandbox_and_the_agent_works_in_it() {
    let Some(env) = installed("\"nerdr\", \"sandbox\", \"--\", \"claude\"") else {
        return;
    };
    // Signed in before: the file is the real one inside (a file the agent
    // makes at the top of ~/.claude comes out when its run ends).
    env.write_user_file(".claude/state", "");
    let (tab, screen) = start_claude_until(&env, "AGENT-DONE-");
    assert!(
        screen.contains("AGENT-DONE-0"),
        "its commit failed:\n{screen}"
    );
    assert_eq!(tab_state(&env, &tab)["state"], "running");
    // Its sign-in state stays in its own folder; its commit is on its branch.
    let state = std::fs::read_to_string(env.home().join(".claude/state")).unwrap();
    assert_eq!(state, "signed-in\n");
    // The branch comes home while the agent runs (inotify, then host git):
    // wait for it rather than race it.
    let mut log = String::new();
    let home = crate::support::poll(Duration::from_secs(30), || {
        log = super::user_git(
            &env,
            &env.home().join("proj"),
            &["log", "--format=%s", &format!("nerdr/{tab}")],
        );
        log.starts_with("from-agent")
    });
    assert!(
        home,
        "the agent's commit never came home to its branch: {log}"
    );
    // The check passed, on the record.
    let passed = env.journal(&["MESSAGE_ID=6f3c1e2a9b7d4c58a1e0f2b3c4d5e604"]);
    assert!(
        passed.iter().any(|e| e["NERDR_TAB"] == tab.as_str()),
        "{passed:?}"
    );
}

#[test]
fn each_weakened_nerdr_sandbox_is_refused() {
    // (weakening, something the check must name)
    let rows = [
        ("no-pid-ns", "(pid "),
        ("runtime-visible", "client socket"),
        ("hooks-writable", "git hooks folder"),
        ("git-config-writable", "git config"),
        ("nerdr-writable", "state folder"),
    ];
    for (weakening, named) in rows {
        let Some(env) = installed(&format!(
            "\"nerdr\", \"sandbox\", \"--weaken\", \"{weakening}\", \"--\", \"claude\""
        )) else {
            return;
        };
        let out = nerdr(&env, &["agent", "claude"]);
        let said = text(&out.stderr);
        assert!(!out.status.success(), "{weakening}: the agent started");
        assert!(
            said.contains(named),
            "{weakening}: the refusal does not name {named}: {said}"
        );
        assert!(
            !env.home().join(".claude/state").exists(),
            "{weakening}: the agent ran"
        );
    }
}

/// A loopback HTTP server answering every request with `hello`.
fn origin() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let mut conn = conn;
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            let _ = conn.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
            );
        }
    });
    port
}

#[test]
fn the_proxy_is_the_only_way_out_and_every_decision_is_audited() {
    let Some(env) = setup() else { return };
    let port = origin();
    // The user's own settings may open a loopback service by its IP entry.
    let settings = env.write_user_file(
        "sandbox-settings.json",
        format!(
            "{{\"sandbox\": {{\"network\": {{\"allowedDomains\": [\"127.0.0.1:{port}\"], \
             \"deniedDomains\": [\"*.denied.test\"]}}}}}}"
        ),
    );
    let script = format!(
        "curl -s -m 10 http://127.0.0.1:{port}/; echo; \
         curl -s -m 10 -o /dev/null -w 'denied=%{{http_code}}\\n' http://x.denied.test/; \
         curl -s -m 10 -w '\\n' http://x.denied.test/ | head -1; \
         curl -s -m 10 --socks5-hostname 127.0.0.1:3128 -o /dev/null -w 'socks=%{{http_code}}\\n' \
           http://127.0.0.1:{port}/; \
         curl -s -m 3 --noproxy '*' -o /dev/null -w 'direct=%{{http_code}}\\n' \
           http://127.0.0.1:{port}/ || true"
    );
    let proj = env.home().join("proj");
    let mut v = vec!["nerdr", "sandbox", "--settings"];
    let settings = settings.display().to_string();
    v.push(&settings);
    v.extend(["--", "sh", "-c", &script]);
    let mut c = env.user_cmd(&v);
    c.current_dir(&proj);
    let out = crate::support::sysenv::output_of(&mut c);
    let said = text(&out.stdout);
    assert!(
        said.starts_with("hello\n"),
        "allowed by its IP entry: {said}\n{}",
        text(&out.stderr)
    );
    assert!(said.contains("denied=403"), "{said}");
    assert!(
        said.contains("Blocked by nerdr network policy: x.denied.test"),
        "{said}"
    );
    assert!(said.contains("socks=200"), "{said}");
    assert!(said.contains("direct=000"), "no direct connection: {said}");

    // A line when an allowed connection opens and one when it closes, one
    // per refusal (the repeat merged into a counted line), all before the
    // exit line and mirrored to the journal.
    let mut lines = Vec::new();
    wait_until("the exit line", Duration::from_secs(5), || {
        lines = audit_lines(&env);
        lines.iter().any(|l| l["event"] == "exit")
    });
    let exit_at = lines.iter().position(|l| l["event"] == "exit").unwrap();
    let net: Vec<_> = lines[..exit_at]
        .iter()
        .filter(|l| l["event"] == "net")
        .collect();
    let phase = |p: &str| net.iter().filter(|l| l["phase"] == p).collect::<Vec<_>>();
    let (opened, closed) = (phase("opened"), phase("closed"));
    assert_eq!((opened.len(), closed.len()), (2, 2), "{net:#?}");
    assert!(
        closed
            .iter()
            .all(|c| opened.iter().any(|o| o["connection"] == c["connection"])),
        "{net:#?}"
    );
    let refused = phase("refused");
    assert_eq!(
        refused
            .iter()
            .map(|l| l["count"].as_u64().unwrap())
            .sum::<u64>(),
        2,
        "{net:#?}"
    );
    assert!(refused
        .iter()
        .all(|l| l["host"] == "x.denied.test"
            && l["rule"].as_str().unwrap().contains("*.denied.test")));
    assert_eq!(net.len(), 4 + refused.len(), "{net:#?}");
    // The journal has the same decisions.
    let want = net.len();
    wait_until(
        "the decisions in the journal",
        Duration::from_secs(10),
        || {
            env.journal(&["MESSAGE_ID=6f3c1e2a9b7d4c58a1e0f2b3c4d5e607"])
                .iter()
                .filter(|e| {
                    e["MESSAGE"]
                        .as_str()
                        .is_some_and(|m| m.contains(": allowed ") || m.contains(": denied "))
                })
                .count()
                == want
        },
    );
}

/// The real Claude Code as a sandboxed agent: `nerdr agent claude` with
/// `command = ["nerdr", "sandbox", "--", "claude"]` passes the check and
/// shows claude's first screen in its tab. Needs the npm CLIs
/// (`NERDR_AGENT_CLIS`, as `.ci/run` sets).
#[test]
fn the_real_claude_runs_as_a_sandboxed_agent_in_nerdr_sandbox() {
    let Some(clis) = std::env::var_os("NERDR_AGENT_CLIS") else {
        crate::support::sysenv::skip(
            "NERDR_AGENT_CLIS is not set (see tests/suites/agent_clis.rs)",
        );
        return;
    };
    let Some(env) = setup() else { return };
    env.run(&["nerdr", "service", "install"]);
    env.write_user_file(
        ".config/nerdr/config.toml",
        "[agents.claude]\ncommand = [\"nerdr\", \"sandbox\", \"--\", \"claude\"]\nsandboxed = true\n",
    );
    let path = format!(
        "{}:{}:/usr/local/bin:/usr/bin:/bin",
        env.nerdr().parent().unwrap().display(),
        std::path::Path::new(&clis).display()
    );
    let run = |args: &[&str]| {
        let mut cmd = env.user_cmd(&[&["nerdr"], args].concat());
        cmd.current_dir(env.home().join("proj"))
            .env("PATH", &path)
            .env("TERM", "xterm-256color");
        crate::support::sysenv::output_of(&mut cmd)
    };
    let out = run(&["agent", "claude"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let tab = text(&out.stdout).trim().to_string();
    let mut screen = String::new();
    let shown = crate::support::poll(Duration::from_secs(90), || {
        screen = text(&run(&["read", &tab]).stdout);
        screen.contains("Welcome") || screen.contains("trust")
    });
    assert!(shown, "claude's first screen never showed:\n{screen}");
    assert!(env.home().join(".claude.json").is_file());
}

/// A stand-in for claude that looks for other tabs' ids where nerdr keeps
/// its state (the tab list, its log, its audit file), in the cgroup tree
/// (each tab's scope) and in the journal, then waits.
const SNOOP: &str = "#!/bin/sh\n\
    case \"$1\" in --help) echo 'Usage: claude [options]'; exit 0;; esac\n\
    s=\"${XDG_STATE_HOME:-$HOME/.local/state}/nerdr\"\n\
    { ls -a \"$s\"; cat \"$s\"/*.json \"$s\"/*.jsonl \"$s\"/*.log; \
      find /sys/fs/cgroup -name 'nerdr-*'; journalctl --no-pager -o json; \
      journalctl --user --no-pager -o json; } > snooped.txt 2>&1\n\
    \"$NERDR_BIN\" tabs --json > tabs-inside.txt 2>&1\n\
    echo SNOOP-DONE\n\
    exec sleep 1000\n";

/// A sandboxed agent cannot tell whether a tab it may not act on exists
/// (SECURITY.md): nor may it read their ids from nerdr's own files or the
/// cgroup tree or the journal. The state folder is hidden inside `nerdr
/// sandbox`, but for the hook socket and this session's proxy socket, and
/// so are the cgroup tree and the journal's files.
#[test]
fn nerdr_sandbox_hides_the_tab_list_and_logs_in_nerdrs_state() {
    let Some(env) = installed("\"nerdr\", \"sandbox\", \"--\", \"claude\"") else {
        return;
    };
    env.write_user_file("bin/claude", SNOOP);
    env.write_user_file(
        ".config/nerdr/config.toml",
        "[agents.claude]\ncommand = [\"nerdr\", \"sandbox\", \"--\", \"claude\"]\n\
         sandboxed = true\n[agents.sh]\ncommand = [\"sleep\", \"1000\"]\n",
    );
    env.write_user_file("other/x", "x\n");
    let other = env.home().join("other");
    let out = nerdr(&env, &["agent", "sh", "--folder", other.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let secret_tab = text(&out.stdout).trim().to_string();
    let (tab, _) = start_claude_until(&env, "SNOOP-DONE");
    let wt = tab_state(&env, &tab)["worktree"]
        .as_str()
        .expect("a worktree")
        .to_string();
    let seen = std::fs::read_to_string(Path::new(&wt).join("snooped.txt")).unwrap();
    assert!(
        !seen.contains(&secret_tab),
        "the sandboxed agent read tab {secret_tab}'s id in nerdr's state:\n{seen}"
    );
    assert!(!seen.contains("tabs.json"), "{seen}");
    // The hook socket is still there: nerdr commands work inside.
    assert!(seen.contains("nerdr.sock"), "{seen}");
    let tabs = std::fs::read_to_string(Path::new(&wt).join("tabs-inside.txt")).unwrap();
    // (An answer, whatever it lists: the core was reached.)
    assert!(tabs.trim_start().starts_with('['), "{tabs}");
    assert!(!tabs.contains(&secret_tab), "{tabs}");
}
