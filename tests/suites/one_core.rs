//! One core, always, against a real private `systemd --user`: with the
//! units installed and the sockets stopped, a command starts the sockets
//! through systemd (and says so) instead of a core of its own, so starting
//! the sockets again afterwards leaves exactly one core, nerdr.service's.

use crate::support::sysenv::SystemdEnv;

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Every `nerdr core` process of `env`'s user manager tree, with its cgroup.
pub fn cores(env: &SystemdEnv) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        let is_core = args.len() >= 2
            && args[0].ends_with(b"nerdr")
            && args[1] == b"core"
            && args[2..].iter().all(|a| a.is_empty());
        if !is_core {
            continue;
        }
        let Ok(cgroup) = std::fs::read_to_string(format!("/proc/{pid}/cgroup")) else {
            continue;
        };
        if cgroup.contains(&format!("/{}/", env.cgroup())) {
            found.push((pid, cgroup));
        }
    }
    found
}

fn doctor_check(env: &SystemdEnv, name: &str) -> serde_json::Value {
    let out = env.output(&["nerdr", "doctor", "--json"]);
    let checks: Vec<serde_json::Value> = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("doctor --json: {e}: {}", stdout(&out)));
    checks
        .into_iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no {name} check"))
}

#[test]
fn stopped_sockets_are_started_through_systemd_never_a_second_core() {
    let Some(env) = SystemdEnv::start() else {
        return;
    };
    env.run(&["nerdr", "service", "install"]);
    env.run(&["nerdr", "tabs"]);
    env.systemctl(&[
        "stop",
        "nerdr-hook.socket",
        "nerdr-client.socket",
        "nerdr.service",
    ]);
    assert!(cores(&env).is_empty(), "{:?}", cores(&env));

    // Doctor tells it as it is: nothing listens, no core runs.
    let client = doctor_check(&env, "client-socket");
    assert_eq!(client["status"], "fail", "{client}");
    assert!(
        client["detail"]
            .as_str()
            .unwrap()
            .contains("nothing listens"),
        "{client}"
    );
    let core = doctor_check(&env, "core-process");
    assert_eq!(core["detail"], "no core process running", "{core}");
    assert!(cores(&env).is_empty(), "doctor started a core");

    // A command starts the sockets through systemd and says so.
    let out = env.run(&["nerdr", "tabs", "--json"]);
    assert_eq!(stdout(&out).trim(), "[]");
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    // The person starts the sockets too, as the README of old told them.
    env.systemctl(&["start", "nerdr-hook.socket", "nerdr-client.socket"]);
    let again = env.run(&["nerdr", "tabs"]);
    assert!(again.stderr.is_empty(), "{again:?}");

    let running = cores(&env);
    assert_eq!(running.len(), 1, "one core: {running:#?}");
    assert_eq!(
        said.trim(),
        "nerdr: started nerdr-hook.socket nerdr-client.socket (they were stopped)"
    );
    let (pid, cgroup) = &running[0];
    assert!(
        cgroup.lines().any(|l| l.ends_with("/nerdr.service")),
        "the core runs outside nerdr.service: {cgroup}"
    );
    assert_eq!(env.unit_prop("nerdr.service", "MainPID"), pid.to_string());
    let core = doctor_check(&env, "core-process");
    assert_eq!(core["status"], "ok", "{core}");
    assert!(
        core["detail"].as_str().unwrap().contains(&format!(
            "pid {pid} answers on the client socket (nerdr.service's main process)"
        )),
        "{core}"
    );
}
