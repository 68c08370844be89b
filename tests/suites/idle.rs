//! Idle means no CPU: a core with a running tab and nothing happening does
//! not wake up (no polling timers), nor does one whose agent tabs went
//! quiet (the agent-state timer sleeps until output brings a deadline). Counted, not timed: the kernel's count
//! of the times the core's threads went to sleep and were woken again.

use std::time::Duration;

use crate::support::local::Local;

const SHELL_AGENT: &str = "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n";

/// Voluntary context switches of every thread of `pid` so far.
pub fn wakeups(pid: u32) -> u64 {
    let mut n = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let status =
            std::fs::read_to_string(task.unwrap().path().join("status")).unwrap_or_default();
        n += status
            .lines()
            .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0);
    }
    n
}

#[test]
fn an_idle_core_with_a_running_tab_does_not_wake_up() {
    let mut l = Local::empty();
    l.write_config(SHELL_AGENT);
    l.start_core();
    let tab = l.ok(&["agent", "sh"]);
    l.ok(&["send", &tab, "echo ready"]);
    l.wait_screen(&tab, "\nready");
    // Let the launch's last messages settle.
    std::thread::sleep(Duration::from_secs(1));
    let pid = l.core_pid();
    let before = wakeups(pid);
    std::thread::sleep(Duration::from_secs(3));
    let woke = wakeups(pid) - before;
    // A stray wake-up (the runtime parking a thread) is not polling; a
    // 50 ms timer would be 60 here, a 1 s one 3 per thread.
    assert!(woke <= 2, "the idle core woke {woke} times in 3 s");
}

/// Agent tabs whose states settled (rules read them as idle) leave no timer
/// behind: the state timer runs only while a tab has a deadline.
#[test]
fn an_idle_core_with_quiet_agent_tabs_does_not_wake_up() {
    let mut l = Local::empty();
    l.write_config(
        "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n\
         env = { PS1 = \"READY> \" }\ndetect = \"quiet\"\n",
    );
    let dir = l.path("config/nerdr/detect");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("quiet.toml"),
        "agent = \"quiet\"\nquiet_ms = 200\nverified_with = [\"bash in a nerdr test\"]\n\n\
         [[rule]]\nname = \"prompt\"\nstate = \"idle\"\npriority = 1\n\
         region = \"last_lines\"\nlines = 1\ncontains = \"READY>\"\nverified = true\n",
    )
    .unwrap();
    l.start_core();
    let tabs: Vec<String> = (0..3).map(|_| l.ok(&["agent", "sh"])).collect();
    for tab in &tabs {
        l.ok(&["send", tab, "echo ready"]);
        l.wait_screen(tab, "\nready");
    }
    let settled = crate::support::poll(Duration::from_secs(20), || {
        l.tabs_json(&[]).iter().all(|t| t["agent_state"] == "idle")
    });
    assert!(settled, "tabs never idle: {:?}", l.tabs_json(&[]));
    std::thread::sleep(Duration::from_secs(1));
    let pid = l.core_pid();
    let before = wakeups(pid);
    std::thread::sleep(Duration::from_secs(3));
    let woke = wakeups(pid) - before;
    assert!(
        woke <= 2,
        "the idle core with quiet agent tabs woke {woke} times in 3 s"
    );
}
