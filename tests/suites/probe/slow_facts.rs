//! A sandbox check whose facts are slow to gather holds up its own launch
//! only: the core gathers them off its async workers, so every other tab
//! still answers.

use std::io::Write;
use std::process::{Child, Stdio};

use super::*;

#[test]
fn checks_whose_facts_hang_hold_up_no_other_tab() {
    let Some(s) = Setup::start() else { return };
    // A running tab to read and send to while the checks wait.
    let (ok, answer) = s.agent("plain");
    assert!(ok, "{answer}");
    let plain = s.tab_of("plain")["id"].as_str().unwrap().to_string();
    s.wait_screen(&plain, "AGENT-STARTED");
    // The holder's pid file, one of the facts, made a FIFO: reading it
    // blocks until someone writes it.
    let record = s.env.home().join(".local/state/nerdr/holder.pid");
    let saved = std::fs::read(&record).unwrap();
    std::fs::remove_file(&record).unwrap();
    s.ok(&["mkfifo", "-m", "600", record.to_str().unwrap()]);
    // As many checks as the core has async workers (two), both waiting.
    // The second starts once the first waits: two launches at once in one
    // repository can race on git's worktree lock, and one then fails
    // before its check (seen under CI's load).
    let core = s.env.unit_prop("nerdr.service", "MainPID");
    // A thread blocked opening a FIFO waits in the kernel's
    // `wait_for_partner`.
    let readers = || {
        std::fs::read_dir(format!("/proc/{core}/task"))
            .map(|tasks| {
                tasks
                    .flatten()
                    .filter(|t| {
                        std::fs::read_to_string(t.path().join("wchan"))
                            .is_ok_and(|w| w.trim() == "wait_for_partner")
                    })
                    .count()
            })
            .unwrap_or(0)
    };
    let launch = || {
        let mut c = s.env.user_cmd(&["nerdr", "agent", "fine"]);
        c.current_dir(&s.repo)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c.spawn().unwrap()
    };
    let mut launches: Vec<Child> = Vec::new();
    for waiting in 1..=2 {
        launches.push(launch());
        let all = crate::support::poll(Duration::from_secs(60), || readers() == waiting);
        if !all {
            let outs: Vec<String> = launches
                .drain(..)
                .map(|mut c| {
                    let _ = c.kill();
                    let out = c.wait_with_output().unwrap();
                    format!("{}{}", text(&out.stdout), text(&out.stderr))
                })
                .collect();
            panic!(
                "{waiting} checks never waited for the holder's pid file ({} did); the \
                 launches said: {outs:?}\n{}",
                readers(),
                s.core_log()
            );
        }
    }
    // Meanwhile the other tab answers, each within a second.
    for args in [
        vec!["nerdr", "tabs"],
        vec!["nerdr", "read", &plain],
        vec!["nerdr", "send", &plain, "hello"],
    ] {
        let took = answered_within(&s, &args, Duration::from_secs(5));
        assert!(
            took < Duration::from_secs(1),
            "{args:?} took {took:?} while two sandbox checks waited for their facts"
        );
    }
    // Let the facts come: each launch then goes on, checked.
    let mut fifo = std::fs::OpenOptions::new()
        .write(true)
        .open(&record)
        .unwrap();
    let back = record.with_extension("back");
    std::fs::write(&back, &saved).unwrap();
    std::fs::rename(&back, &record).unwrap();
    fifo.write_all(&saved).unwrap();
    drop(fifo);
    for launch in launches {
        let out = launch.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "a launch whose facts came late failed: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
    }
}

/// Run `args` as the user and say how long it took to answer (successfully);
/// fail if it has not answered within `limit` (the process is then ended).
fn answered_within(s: &Setup, args: &[&str], limit: Duration) -> Duration {
    let started = Instant::now();
    let mut c = s.env.user_cmd(args);
    c.current_dir(&s.repo)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let done = crate::support::poll(limit, || child.try_wait().unwrap().is_some());
    let took = started.elapsed();
    if !done {
        child.kill().unwrap();
        child.wait().unwrap();
        panic!("{args:?} did not answer within {limit:?}\n{}", s.core_log());
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        text(&out.stderr)
    );
    took
}
