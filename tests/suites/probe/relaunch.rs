//! Checking again on every launch: after a restart, without a holder,
//! and what a check costs.

use super::*;

#[test]
fn restarting_after_fixing_the_wrapper_checks_again() {
    let Some(s) = Setup::start() else { return };
    let (ok, _) = s.agent("rtvisible");
    assert!(!ok);
    let id = s.tab_of("rtvisible")["id"].as_str().unwrap().to_string();
    let config = s.env.home().join(".config/nerdr/config.toml");
    let broken = std::fs::read_to_string(&config).unwrap();
    let wrap_rt = s.bin.join("wrap-rt").display().to_string();
    let wrap_ok = s.bin.join("wrap-ok").display().to_string();
    s.env.write_user_file(
        ".config/nerdr/config.toml",
        broken.replace(&wrap_rt, &wrap_ok),
    );
    s.ok(&["nerdr", "restart", "--force", &id]);
    s.wait_screen(&id, "AGENT-STARTED");
    assert_eq!(s.tab_of("rtvisible")["state"], "running");
    assert_eq!(s.audit(PASSED_ID, &id).len(), 1);
    // Broken again: the next restart is checked too (nothing is cached).
    s.env.write_user_file(".config/nerdr/config.toml", broken);
    let out = s.output(&["nerdr", "restart", "--force", &id]);
    assert!(!out.status.success(), "restarted with a broken wrapper");
    assert!(
        text(&out.stderr).contains("the client key"),
        "{}",
        text(&out.stderr)
    );
    let t = s.tab_of("rtvisible");
    assert_eq!(t["state"], "refused", "{t}");
    assert_eq!(s.audit(REFUSED_ID, &id).len(), 2);
    // A refused tab closes like any other, worktree and all.
    s.ok(&["nerdr", "close", &id, "--remove-worktree"]);
    assert!(!s.tabs().iter().any(|t| t["id"] == id.as_str()));
}

#[test]
fn without_a_holder_the_check_runs_too() {
    let Some(s) = Setup::start() else { return };
    s.env.systemctl(&["set-environment", "NERDR_HOLDER=0"]);
    let (ok, answer) = s.agent("none");
    assert!(!ok, "{answer}");
    let id = s.tab_of("none")["id"].as_str().unwrap().to_string();
    let reached = values(&s.audit(REFUSED_ID, &id)[0]["NERDR_REACHED"]);
    assert!(
        reached.iter().any(|r| r.contains("the core (pid")),
        "{reached:#?}"
    );
    assert!(
        !reached.iter().any(|r| r.contains("holder")),
        "no holder to reach: {reached:#?}"
    );
    let status = text(&s.output(&["nerdr", "doctor"]).stdout);
    assert!(
        status.contains("NERDR_HOLDER=0"),
        "the core runs without a holder:\n{status}"
    );
    let (ok, answer) = s.agent("fine");
    assert!(ok, "{answer}");
    let id = s.tab_of("fine")["id"].as_str().unwrap().to_string();
    s.wait_screen(&id, "AGENT-STARTED");
}

/// What a sandbox check adds to a launch: the median of 20 launches of the
/// same bwrap wrapper and stand-in agent, sandboxed (checked) and not.
/// Run with `cargo test --test all suites::probe::time -- --ignored --nocapture`.
#[test]
#[ignore]
fn time_a_check_adds_to_a_launch() {
    let Some(s) = Setup::start() else { return };
    let median = |agent: &str| {
        let mut times: Vec<Duration> = (0..20)
            .map(|_| {
                let t = Instant::now();
                s.ok(&["nerdr", "agent", agent]);
                let took = t.elapsed();
                let id = s.tab_of(agent)["id"].as_str().unwrap().to_string();
                s.ok(&["nerdr", "close", &id, "--remove-worktree"]);
                took
            })
            .collect();
        times.sort();
        times[10]
    };
    let checked = median("fine");
    let unchecked = median("plain");
    eprintln!(
        "PROBE TIMING: median launch {checked:?} with the check, {unchecked:?} without: the check adds {:?}",
        checked.saturating_sub(unchecked)
    );
}
