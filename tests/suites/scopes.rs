//! The holder and transient scopes against a real private `systemd --user`
//! as a non-root user: programs in their own scopes from their first
//! instruction, surviving restarts, kills and stops of the core, and gone
//! without a trace after `nerdr quit`.

use std::time::Duration;

use crate::support::sysenv::{wait_until, SystemdEnv};

fn text(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).trim_end().to_string()
}

/// An installed nerdr with two agents configured and a work folder.
fn installed() -> Option<SystemdEnv> {
    let env = SystemdEnv::start()?;
    env.run(&["nerdr", "service", "install"]);
    env.write_user_file(
        ".config/nerdr/config.toml",
        concat!(
            "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n",
            // Its first act is to print its own cgroup.
            "[agents.cg]\ncommand = [\"sh\", \"-c\", \"cat /proc/self/cgroup; exec sleep 1000\"]\n",
            // Prints the signals it was started with ignored.
            "[agents.sig]\ncommand = [\"sh\", \"-c\", \"grep SigIgn /proc/self/status; exec sleep 1000\"]\n",
        ),
    );
    env.write_user_file("work/.keep", "");
    Some(env)
}

fn nerdr(env: &SystemdEnv, args: &[&str]) -> String {
    let work = env.home().join("work");
    let mut cmd = env.user_cmd(&[&["nerdr"], args].concat());
    cmd.current_dir(&work);
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "nerdr {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        env.root_run(&["journalctl", "--no-pager", "-n", "40"])
            .stdout
            .escape_ascii()
    );
    text(&out)
}

fn wait_screen(env: &SystemdEnv, tab: &str, needle: &str) -> String {
    let mut last = String::new();
    let ok = crate::support::poll(Duration::from_secs(15), || {
        last = nerdr(env, &["read", tab]);
        last.contains(needle)
    });
    assert!(ok, "screen of {tab} never showed {needle:?}:\n{last}");
    last
}

fn tab_pid(env: &SystemdEnv, tab: &str) -> u32 {
    let tabs: Vec<serde_json::Value> =
        serde_json::from_str(&nerdr(env, &["tabs", "--json"])).unwrap();
    let t = tabs
        .iter()
        .find(|t| t["id"] == tab)
        .unwrap_or_else(|| panic!("no {tab} in {tabs:?}"));
    t["pid"].as_u64().unwrap() as u32
}

fn alive(pid: u32) -> bool {
    crate::support::local::pid_alive(pid)
}

fn scopes(env: &SystemdEnv) -> String {
    env.systemctl(&[
        "list-units",
        "--all",
        "--plain",
        "--no-legend",
        "nerdr-*.scope",
    ])
}

#[test]
fn a_program_runs_in_its_scope_from_its_first_instruction() {
    let Some(env) = installed() else { return };
    let tab = nerdr(&env, &["agent", "cg"]);
    let scope = format!("nerdr-agent-{tab}.scope");
    let screen = wait_screen(&env, &tab, "nerdr-agent-");
    assert!(
        screen
            .lines()
            .any(|l| l.ends_with(&format!("nerdr.slice/{scope}"))),
        "the program's first view of its cgroup is not its scope:\n{screen}"
    );
    let pid = tab_pid(&env, &tab);
    let cgroup = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
    assert!(cgroup.contains(&scope), "{cgroup}");
    let status = env.systemctl(&["status", "--no-pager", &scope]);
    assert!(status.contains(&pid.to_string()), "{status}");
    // Not tied to the core: no PartOf/BindsTo on nerdr.service.
    for prop in ["PartOf", "BindsTo"] {
        assert!(
            !env.unit_prop(&scope, prop).contains("nerdr.service"),
            "{prop}"
        );
    }
    // A terminal opened in the tab gets a scope of its own.
    let term = nerdr(&env, &["terminal", &tab]);
    let term_pid = tab_pid(&env, &term);
    let cgroup = std::fs::read_to_string(format!("/proc/{term_pid}/cgroup")).unwrap();
    assert!(
        cgroup.contains(&format!("nerdr.slice/nerdr-term-{tab}-1.scope")),
        "{cgroup}"
    );
    nerdr(&env, &["quit"]);
    let left = scopes(&env);
    assert!(left.trim().is_empty(), "scopes left after quit:\n{left}");
}

#[test]
fn programs_survive_restart_kill_and_stop_of_the_core() {
    let Some(env) = installed() else { return };
    let tab = nerdr(&env, &["agent", "sh"]);
    nerdr(&env, &["send", &tab, "echo one-$((0+1))"]);
    wait_screen(&env, &tab, "one-1");
    let pid = tab_pid(&env, &tab);

    // 1. A restart of the service.
    let core1 = env.unit_prop("nerdr.service", "MainPID");
    env.systemctl(&["restart", "nerdr.service"]);
    let core2 = env.unit_prop("nerdr.service", "MainPID");
    assert_ne!(core1, core2, "the core did not restart");
    assert!(alive(pid), "the program died with the restart");
    assert!(
        nerdr(&env, &["read", &tab]).contains("one-1"),
        "screen lost in the restart"
    );
    nerdr(&env, &["send", &tab, "echo two-$((1+1))"]);
    wait_screen(&env, &tab, "two-2");

    // 2. kill -9 of the core: systemd restarts it (Restart=on-failure).
    env.run(&["kill", "-9", &core2]);
    wait_until(
        "systemd to restart the killed core",
        Duration::from_secs(20),
        || {
            let p = env.unit_prop("nerdr.service", "MainPID");
            p != core2 && p != "0" && env.unit_prop("nerdr.service", "ActiveState") == "active"
        },
    );
    assert!(alive(pid), "the program died with the killed core");
    assert!(
        nerdr(&env, &["read", &tab]).contains("two-2"),
        "screen lost in the kill"
    );
    nerdr(&env, &["send", &tab, "echo three-$((1+2))"]);
    wait_screen(&env, &tab, "three-3");

    // 3. A stop leaves the program; the next command activates a core that
    // lists it.
    env.systemctl(&["stop", "nerdr.service"]);
    assert_eq!(env.unit_prop("nerdr.service", "ActiveState"), "inactive");
    assert!(alive(pid));
    assert_eq!(tab_pid(&env, &tab), pid);
    assert_eq!(env.unit_prop("nerdr.service", "ActiveState"), "active");

    // 4. quit ends it all: no scope, no process of the session.
    nerdr(&env, &["quit"]);
    assert!(!alive(pid), "the program survived quit");
    let left = scopes(&env);
    assert!(left.trim().is_empty(), "scopes left after quit:\n{left}");
}

#[test]
fn close_stops_the_whole_scope_even_programs_that_ignore_sighup() {
    let Some(env) = installed() else { return };
    let tab = nerdr(&env, &["agent", "sh"]);
    // A stubborn child in another session and process group: only the
    // scope still knows it belongs to the tab.
    nerdr(
        &env,
        &[
            "send",
            &tab,
            "setsid sh -c 'trap \"\" HUP TERM; echo $$ > stubborn.pid; exec sleep 1000' &",
        ],
    );
    let pidfile = env.home().join("work/stubborn.pid");
    // The file exists a moment before the PID is in it.
    let read_pid = || {
        std::fs::read_to_string(&pidfile)
            .ok()?
            .trim()
            .parse::<u32>()
            .ok()
    };
    wait_until("the stubborn child", Duration::from_secs(10), || {
        read_pid().is_some()
    });
    let stubborn: u32 = read_pid().unwrap();
    let shell = tab_pid(&env, &tab);
    nerdr(&env, &["close", &tab]);
    assert!(!alive(shell));
    wait_until(
        "the stubborn child to be killed",
        Duration::from_secs(10),
        || !alive(stubborn),
    );
    let left = scopes(&env);
    assert!(left.trim().is_empty(), "scopes left after close:\n{left}");
}

#[test]
fn each_program_builds_on_the_environment_of_its_own_client() {
    let Some(env) = installed() else { return };
    env.write_user_file(
        ".config/nerdr/config.toml",
        "[agents.env]\ncommand = [\"sleep\", \"1000\"]\n",
    );
    let work = env.home().join("work");
    let mut tabs = Vec::new();
    for foo in ["first", "second"] {
        let mut cmd = env.user_cmd(&["nerdr", "agent", "env"]);
        cmd.current_dir(&work)
            .env("FOO", foo)
            .env("TMUX", "/tmp/tmux-1/default,1,0")
            .env("CLAUDECODE", "1");
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        tabs.push((text(&out), foo));
    }
    // Each program's environment, read from the kernel.
    for (tab, foo) in &tabs {
        let pid = tab_pid(&env, tab);
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
        let vars: Vec<String> = environ
            .split(|b| *b == 0)
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .collect();
        assert!(vars.contains(&format!("FOO={foo}")), "tab {tab}: {vars:?}");
        for gone in [
            "TMUX=",
            "CLAUDECODE=",
            "LISTEN_FDS=",
            "NOTIFY_SOCKET=",
            "INVOCATION_ID=",
            "WATCHDOG_USEC=",
        ] {
            assert!(
                !vars.iter().any(|v| v.starts_with(gone)),
                "{gone} reached tab {tab}"
            );
        }
        assert!(vars.contains(&"TERM_PROGRAM=nerdr".to_string()));
    }
    nerdr(&env, &["quit"]);
}

/// Resident memory of a process, in KiB.
fn rss_kib(pid: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

#[test]
fn a_hundred_tabs_start_list_and_close() {
    let Some(env) = installed() else { return };
    nerdr(&env, &["tabs"]);
    let core = env.unit_prop("nerdr.service", "MainPID");
    let holder = env.unit_prop("nerdr-holder.service", "MainPID");
    let before = (rss_kib(&core), rss_kib(&holder));
    let tabs: Vec<String> = (0..100).map(|_| nerdr(&env, &["agent", "sh"])).collect();
    let listed: Vec<serde_json::Value> =
        serde_json::from_str(&nerdr(&env, &["tabs", "--json"])).unwrap();
    assert_eq!(listed.len(), 100);
    assert!(listed.iter().all(|t| t["state"] == "running"));
    let with = (rss_kib(&core), rss_kib(&holder));
    let pids: Vec<u32> = listed
        .iter()
        .map(|t| t["pid"].as_u64().unwrap() as u32)
        .collect();
    for t in &tabs {
        nerdr(&env, &["close", t]);
    }
    assert!(pids.iter().all(|p| !alive(*p)));
    let left = scopes(&env);
    assert!(left.trim().is_empty(), "scopes left:\n{left}");
    let after = (rss_kib(&core), rss_kib(&holder));
    // Figures for the record (the closing note quotes them).
    eprintln!(
        "MEMORY core rss KiB: {} idle, {} with 100 tabs, {} after closing; holder: {} idle, {} with 100 tabs, {} after",
        before.0, with.0, after.0, before.1, with.1, after.1
    );
}

#[test]
fn programs_start_with_default_signal_dispositions() {
    let Some(env) = installed() else { return };
    // Regression: the shim (Rust) ignored SIGPIPE and exec kept it ignored,
    // so `yes | head -1` in a tab complained of a broken pipe.
    let tab = nerdr(&env, &["agent", "sig"]);
    let screen = wait_screen(&env, &tab, "SigIgn:");
    let mask = screen
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .map(|m| u64::from_str_radix(m.trim(), 16).unwrap())
        .unwrap();
    assert_eq!(
        mask & (1 << (13 - 1)),
        0,
        "SIGPIPE is ignored in the program: {screen}"
    );
    nerdr(&env, &["quit"]);
}

#[test]
fn terminal_numbers_are_not_reused_while_terminals_live() {
    let Some(env) = installed() else { return };
    let tab = nerdr(&env, &["agent", "sh"]);
    let t1 = nerdr(&env, &["terminal", &tab]);
    let t2 = nerdr(&env, &["terminal", &tab]);
    nerdr(&env, &["close", &t1]);
    // Regression: the third terminal was numbered 2 again and its scope
    // already existed.
    let t3 = nerdr(&env, &["terminal", &tab]);
    for (t, n) in [(&t2, 2), (&t3, 3)] {
        let pid = tab_pid(&env, t);
        let cgroup = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
        assert!(
            cgroup.contains(&format!("nerdr-term-{tab}-{n}.scope")),
            "{cgroup}"
        );
    }
    nerdr(&env, &["quit"]);
}
