//! The service against a real private `systemd --user` as a non-root user:
//! install, activation on first use, STATUS=, socket modes, the journal,
//! uninstall leaving nothing behind.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use crate::support::sysenv::{wait_until, SystemdEnv};

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn install_activate_status_journal_uninstall() {
    let Some(env) = SystemdEnv::start() else {
        return;
    };
    let out = env.run(&["nerdr", "service", "install"]);
    let said = format!("{}{}", stdout(&out), String::from_utf8_lossy(&out.stderr));
    assert!(
        said.to_lowercase().contains("linger"),
        "install says nothing about lingering:\n{said}"
    );
    for unit in ["nerdr.service", "nerdr-hook.socket", "nerdr-client.socket"] {
        assert!(
            env.home().join(".config/systemd/user").join(unit).is_file(),
            "{unit} not written"
        );
    }
    // Activation, not install, starts the core.
    assert_eq!(env.unit_prop("nerdr.service", "ActiveState"), "inactive");
    for sock in ["nerdr-hook.socket", "nerdr-client.socket"] {
        assert_eq!(env.unit_prop(sock, "ActiveState"), "active", "{sock}");
    }
    // Both sockets where docs/ARCHITECTURE.md ("Paths") puts them, private.
    let hook = env.home().join(".local/state/nerdr/nerdr.sock");
    let client = env.ns_path(env.runtime_dir().join("nerdr/client.sock"));
    for (sock, what) in [(&hook, "hook"), (&client, "client")] {
        let mode = std::fs::metadata(sock)
            .unwrap_or_else(|e| panic!("{what} socket {}: {e}", sock.display()))
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{what} socket mode");
        let dir = std::fs::metadata(sock.parent().unwrap())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dir & 0o777, 0o700, "{what} socket folder mode");
    }

    // The first command activates the core.
    let out = env.run(&["nerdr", "tabs", "--json"]);
    assert_eq!(stdout(&out).trim(), "[]");
    assert_eq!(env.unit_prop("nerdr.service", "ActiveState"), "active");
    let status = env.unit_prop("nerdr.service", "StatusText");
    assert!(
        status.contains("0 agents running"),
        "StatusText: {status:?}"
    );
    let main_pid: u32 = env.unit_prop("nerdr.service", "MainPID").parse().unwrap();
    assert!(main_pid > 0);

    // STATUS= follows the agents.
    env.write_user_file(
        ".config/nerdr/config.toml",
        "[agents.sh]\ncommand = [\"bash\", \"--norc\"]\n",
    );
    env.write_user_file("work/.keep", "");
    let work = env.home().join("work");
    let tab = stdout(&env.run(&["nerdr", "agent", "sh", "--folder", work.to_str().unwrap()]));
    let tab = tab.trim();
    wait_until(
        "STATUS= to count the agent",
        Duration::from_secs(10),
        || {
            env.unit_prop("nerdr.service", "StatusText")
                .starts_with("1 agent running")
        },
    );

    // Log lines reach the journal, structured, as `nerdr`.
    wait_until(
        "the core's journal entries",
        Duration::from_secs(10),
        || {
            env.journal(&["SYSLOG_IDENTIFIER=nerdr"])
                .iter()
                .any(|e| e["MESSAGE"] == "started agent")
        },
    );
    let entries = env.journal(&["SYSLOG_IDENTIFIER=nerdr"]);
    let ready = entries
        .iter()
        .find(|e| e["MESSAGE"] == "core ready")
        .expect("core ready");
    assert_eq!(ready["NERDR_ACTIVATED"], "true", "{ready}");
    let started = entries
        .iter()
        .find(|e| e["MESSAGE"] == "started agent")
        .unwrap();
    assert_eq!(started["NERDR_TAB"], tab, "{started}");
    assert_eq!(started["_PID"], main_pid.to_string(), "{started}");

    env.run(&["nerdr", "close", tab]);
    env.run(&["nerdr", "service", "uninstall"]);
    let units = env.home().join(".config/systemd/user");
    let left: Vec<_> = std::fs::read_dir(&units)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left in {}: {left:?}", units.display());
    assert!(!hook.exists(), "hook socket left behind");
    assert!(!client.exists(), "client socket left behind");
    for unit in ["nerdr.service", "nerdr-hook.socket", "nerdr-client.socket"] {
        assert_eq!(
            env.unit_prop(unit, "LoadState"),
            "not-found",
            "{unit} still loaded"
        );
    }
}

#[test]
fn doctor_reports_the_installation() {
    let Some(env) = SystemdEnv::start() else {
        return;
    };
    let before = env.output(&["nerdr", "doctor", "--json"]);
    assert_eq!(
        before.status.code(),
        Some(2),
        "doctor before install: {}",
        stdout(&before)
    );
    let before: Vec<serde_json::Value> = serde_json::from_str(&stdout(&before)).unwrap();
    assert!(
        before.iter().all(|c| c["name"] != "programs"),
        "doctor asked a core with nothing listening (that starts one by hand): {before:?}"
    );
    env.run(&["nerdr", "service", "install"]);
    // A command first, so the core has started its holder.
    env.run(&["nerdr", "tabs"]);
    let after = env.output(&["nerdr", "doctor", "--json"]);
    let checks: Vec<serde_json::Value> = serde_json::from_str(&stdout(&after)).unwrap();
    let check = |name: &str| {
        checks
            .iter()
            .find(|c| c["name"].as_str().is_some_and(|n| n.contains(name)))
            .unwrap_or_else(|| panic!("no check named like {name}: {checks:?}"))
    };
    let status = |name: &str| check(name)["status"].as_str().unwrap().to_string();
    for c in &checks {
        assert!(
            c["remedy"].is_string() || c["status"] == "ok",
            "a problem without a remedy: {c}"
        );
    }
    assert_eq!(status("unit"), "ok");
    assert_eq!(status("socket"), "ok");
    assert_eq!(status("programs"), "ok", "{}", check("programs"));
    let detail = check("programs")["detail"].as_str().unwrap();
    assert!(detail.contains("systemd scope"), "{detail}");
    assert_ne!(after.status.code(), Some(2), "{}", stdout(&after));
}
