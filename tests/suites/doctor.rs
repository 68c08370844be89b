//! `nerdr doctor` against a real private `systemd --user`: warnings exit 0,
//! a broken config.toml is named by file and line, a configured agent whose
//! program is missing is named, and two cores over one state dir are found.

use crate::support::sysenv::SystemdEnv;

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `nerdr doctor --json`: its exit code and checks.
fn doctor(env: &SystemdEnv) -> (Option<i32>, Vec<serde_json::Value>) {
    let out = env.output(&["nerdr", "doctor", "--json"]);
    let checks = serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| {
        panic!(
            "doctor --json: {e}: {}{}",
            stdout(&out),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), checks)
}

fn find<'a>(checks: &'a [serde_json::Value], name: &str) -> &'a serde_json::Value {
    checks
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no {name} check: {checks:#?}"))
}

/// Installed, a command run so the core serves: only lingering is off.
fn installed() -> Option<SystemdEnv> {
    let env = SystemdEnv::start()?;
    env.run(&["nerdr", "service", "install"]);
    env.run(&["nerdr", "tabs"]);
    Some(env)
}

#[test]
fn a_warning_alone_exits_0() {
    let Some(env) = installed() else {
        return;
    };
    let (code, checks) = doctor(&env);
    assert_eq!(find(&checks, "lingering")["status"], "warn", "{checks:#?}");
    assert!(checks.iter().all(|c| c["status"] != "fail"), "{checks:#?}");
    assert_eq!(code, Some(0), "{checks:#?}");
    // The process that serves is the unit's, and doctor names it.
    let main = env.unit_prop("nerdr.service", "MainPID");
    let core = find(&checks, "core-process");
    assert_eq!(core["status"], "ok", "{core}");
    assert!(
        core["detail"].as_str().unwrap().contains(&format!(
            "pid {main} answers on the client socket (nerdr.service's main process)"
        )),
        "{core}"
    );
}

#[test]
fn a_broken_config_is_named_by_file_and_line() {
    let Some(env) = installed() else {
        return;
    };
    let path = env.write_user_file(
        ".config/nerdr/config.toml",
        "[client]\nprefix = \"C-a\"\n[agents.claude]\nsandboxd = true\n",
    );
    let (code, checks) = doctor(&env);
    let config = find(&checks, "config");
    assert_eq!(config["status"], "fail", "{config}");
    let detail = config["detail"].as_str().unwrap();
    assert!(
        detail.contains(&format!("{}:4:", path.display())) && detail.contains("sandboxd"),
        "{config}"
    );
    assert_eq!(code, Some(2), "{checks:#?}");
}

#[test]
fn a_configured_agent_without_its_program_is_named() {
    let Some(env) = installed() else {
        return;
    };
    env.write_user_file(
        ".config/nerdr/config.toml",
        "[agents.mine]\ncommand = [\"no-such-agent-cli\", \"--go\"]\n",
    );
    let (code, checks) = doctor(&env);
    let agents = find(&checks, "agents");
    assert_eq!(agents["status"], "warn", "{agents}");
    assert!(
        agents["detail"]
            .as_str()
            .unwrap()
            .contains("configured but not on PATH: mine (no-such-agent-cli)"),
        "{agents}"
    );
    assert_eq!(find(&checks, "config")["status"], "ok", "{checks:#?}");
    assert_eq!(code, Some(0), "{checks:#?}");
}

#[test]
fn two_cores_over_one_state_dir_are_found() {
    let Some(env) = SystemdEnv::start() else {
        return;
    };
    env.run(&["nerdr", "service", "install"]);
    env.systemctl(&[
        "stop",
        "nerdr.service",
        "nerdr-hook.socket",
        "nerdr-client.socket",
    ]);
    // A core by hand, outside systemd, over the same state dir.
    let out = env.run(&[
        "bash",
        "-c",
        "nohup nerdr core >/dev/null 2>&1 </dev/null & echo $!",
    ]);
    let by_hand = stdout(&out).trim().to_string();
    // Connecting, not a command: a command would start the stopped
    // sockets through systemd before this core listens.
    let sock = env.ns_path(env.runtime_dir().join("nerdr/client.sock"));
    crate::support::sysenv::wait_until(
        "the hand-started core to listen",
        std::time::Duration::from_secs(20),
        || std::os::unix::net::UnixStream::connect(&sock).is_ok(),
    );
    // The sockets again: the next command starts nerdr.service beside it.
    env.systemctl(&["start", "nerdr-hook.socket", "nerdr-client.socket"]);
    env.run(&["nerdr", "tabs"]);
    let main = env.unit_prop("nerdr.service", "MainPID");
    let (code, checks) = doctor(&env);
    let _ = env.output(&["kill", &by_hand]);
    let core = find(&checks, "core-process");
    assert_eq!(core["status"], "fail", "{core}");
    let detail = core["detail"].as_str().unwrap();
    assert!(detail.contains("2 cores for this state dir"), "{core}");
    assert!(
        detail.contains(&format!("pid {main} serves"))
            && detail.contains(&format!("pid {by_hand} too")),
        "by hand {by_hand}, unit {main}: {core}"
    );
    assert_eq!(code, Some(2), "{checks:#?}");
}

#[test]
fn an_integration_whose_hooks_are_gone_is_named() {
    let Some(env) = installed() else {
        return;
    };
    env.run(&["nerdr", "integration", "install", "claude"]);
    let (_, checks) = doctor(&env);
    let integrations = find(&checks, "integrations");
    assert_eq!(integrations["status"], "ok", "{integrations}");
    assert!(
        integrations["detail"]
            .as_str()
            .unwrap()
            .contains("claude ("),
        "{integrations}"
    );
    // The user (or claude) rewrote its settings without nerdr's hooks.
    let settings = env.write_user_file(".claude/settings.json", "{}\n");
    let (code, checks) = doctor(&env);
    let integrations = find(&checks, "integrations");
    assert_eq!(integrations["status"], "warn", "{integrations}");
    let detail = integrations["detail"].as_str().unwrap();
    assert!(
        detail.contains(&format!(
            "hooks are gone from: claude ({})",
            settings.display()
        )),
        "{integrations}"
    );
    assert_eq!(code, Some(0), "{checks:#?}");
}

/// A process in another PID namespace (a sandboxed agent's, under
/// bubblewrap) that calls itself `nerdr core` for the same state dir is no
/// second core: doctor does not fail on it nor tell the person to kill it.
#[test]
fn a_sandboxed_process_named_nerdr_core_is_no_second_core() {
    let Some(env) = installed() else {
        return;
    };
    let fake = env.write_user_file("fake/core", "sleep 1000\n");
    let dir = fake.parent().unwrap().display().to_string();
    let out = env.run(&[
        "bash",
        "-c",
        &format!(
            "nohup bwrap --ro-bind / / --dev /dev --proc /proc --unshare-pid --chdir {dir} \
             -- bash -c 'exec -a nerdr bash core' >/dev/null 2>&1 </dev/null & echo $!"
        ),
    ]);
    let bwrap = stdout(&out).trim().to_string();
    // The fake, as doctor would find it: `nerdr core` in /proc.
    crate::support::sysenv::wait_until(
        "the fake core to run",
        std::time::Duration::from_secs(10),
        || {
            std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
                std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == b"nerdr\0core\0")
            })
        },
    );
    let (code, checks) = doctor(&env);
    let _ = env.output(&["kill", &bwrap]);
    let core = find(&checks, "core-process");
    assert_eq!(core["status"], "ok", "{core}");
    assert_eq!(code, Some(0), "{checks:#?}");
}

/// Where no user manager answers, the README's first command leaves a core
/// started by hand (its holder keeping each program in a session of its
/// own): doctor warns about the missing manager and checks no unit files
/// or lingering, and exits 0 (a newcomer's finding: it failed, naming
/// `nerdr service install`, which needs the manager that is not there).
#[test]
fn a_core_started_by_hand_without_a_user_manager_is_warned_not_failed() {
    let l = crate::support::local::Local::started();
    l.ok(&["tabs"]);
    let out = l.run(&["doctor", "--json"]);
    let checks: Vec<serde_json::Value> = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("doctor --json: {e}: {}", stdout(&out)));
    assert_eq!(out.status.code(), Some(0), "{checks:#?}");
    let manager = find(&checks, "user-manager");
    assert_eq!(manager["status"], "warn", "{manager}");
    assert!(
        manager["detail"]
            .as_str()
            .unwrap()
            .contains("`nerdr core` by hand"),
        "{manager}"
    );
    assert!(
        checks.iter().all(|c| c["name"] != "lingering"),
        "lingering is checked without a manager: {checks:#?}"
    );
    assert_eq!(find(&checks, "units")["status"], "info", "{checks:#?}");
}

/// No user manager and no core running yet (or any more, after a crash
/// or a reboot): the README's next command starts one, so doctor fails
/// nothing and asks for neither `nerdr service install` nor lingering (a
/// newcomer's finding: units and both sockets failed, exit 2). It starts
/// no core itself either.
#[test]
fn no_user_manager_and_no_core_yet_fails_nothing() {
    let l = crate::support::local::Local::empty();
    let out = l.run(&["doctor", "--json"]);
    let checks: Vec<serde_json::Value> = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("doctor --json: {e}: {}", stdout(&out)));
    assert_eq!(out.status.code(), Some(0), "{checks:#?}");
    assert!(checks.iter().all(|c| c["status"] != "fail"), "{checks:#?}");
    assert!(
        checks.iter().all(|c| c["name"] != "lingering"),
        "{checks:#?}"
    );
    for c in checks.iter().filter(|c| c["name"] != "user-manager") {
        assert!(
            !c["remedy"]
                .as_str()
                .unwrap_or("")
                .contains("nerdr service install"),
            "{c}"
        );
    }
    assert_eq!(find(&checks, "units")["status"], "info", "{checks:#?}");
    for name in ["hook-socket", "client-socket"] {
        let c = find(&checks, name);
        assert_eq!(c["status"], "info", "{c}");
        assert!(
            c["detail"]
                .as_str()
                .unwrap()
                .contains("the next nerdr command starts one"),
            "{c}"
        );
    }
    assert!(
        std::os::unix::net::UnixStream::connect(l.client_socket()).is_err(),
        "doctor started a core"
    );
}
