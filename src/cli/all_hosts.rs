//! `nerdr tabs --all-hosts`, the edge: every host asked at once by a
//! `nerdr` child of its own, the answers gathered until the deadline, a
//! host still silent then ended and marked. What is asked and what the
//! answers mean is `remote::all_hosts` (pure).
//!
//! Each child starts a session of its own (`setsid`), for two reasons:
//! its process group is then exactly that child and the ssh it runs, so a
//! stalled host is ended whole by one `killpg` (our own child's group,
//! never a name); and it has no terminal, so no ssh of it asks for a
//! passphrase or a host key where several would ask at once: a host that
//! needs one fails at once, saying why (ssh's agent, or `nerdr --host
//! NAME tabs` alone, answers it). Being in other sessions, the children
//! do not get the terminal's ^C; this process does, and ends them
//! ([`ended_by_signal`]).
//!
//! Nothing polls: each child's output is read on a thread that sends it
//! on a channel, and the main thread waits on that channel until the
//! deadline.

use std::io::{IsTerminal, Read};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::Context;
use nix::sys::signal::{killpg, SigSet, SigmaskHow, Signal};
use nix::unistd::Pid;

use crate::remote::all_hosts::{self, Answer, Ended, Query};

/// The most a child's stdout is read (its tab list; the frames it came
/// in are bounded far below this): past it the answer is cut, so it does
/// not parse, and the host is marked.
const MAX_ANSWER: u64 = 64 << 20;

/// `nerdr tabs --all-hosts`: this machine and every `[hosts]` host asked
/// at once, the answers printed as one table (or JSON).
pub fn run(
    all: bool,
    json: bool,
    timeout: Option<u64>,
    folder: &super::Folder,
) -> anyhow::Result<ExitCode> {
    if crate::client::over_ssh::is_open() {
        anyhow::bail!("--all-hosts asks every host in your config itself; drop --host");
    }
    if let Some(dir) = folder.given() {
        anyhow::bail!(
            "--folder {}: --all-hosts shows each host's own session (the current folder here, \
             the [hosts] folder or the home there); drop --folder, or add --all for every session",
            dir.display()
        );
    }
    if std::env::var("NERDR_TAB").is_ok_and(|s| !s.is_empty()) {
        anyhow::bail!(
            "--all-hosts: not from inside a nerdr tab: a tab's program has its tab's powers on \
             this host's core, and nerdr does not lend it yours on other hosts'; run it from \
             your own shell"
        );
    }
    let paths = crate::paths::Paths::from_process()?;
    let config = crate::config::load(&paths.config_file())?;
    if config.hosts.is_empty() {
        eprintln!(
            "no [hosts.NAME] in {}: only this machine's tabs (README.md, \"Other machines\")",
            paths.config_file().display()
        );
    }
    let queries = all_hosts::queries(&config.hosts, all);
    let exe = std::env::current_exe().context("cannot find this nerdr's own program")?;
    let deadline = timeout.map_or(all_hosts::DEADLINE, std::time::Duration::from_secs);
    let answers = ask(&exe, &queries, deadline);
    if json {
        println!("{}", crate::printable::json(&all_hosts::json(&answers))?);
    } else {
        print!(
            "{}",
            across_table(&answers, all, std::io::stdout().is_terminal())
        );
    }
    Ok(status(&answers))
}

/// The answering hosts' rows as one table, HOST first, then a line for
/// each host that has no tab to show or did not answer, in host order.
fn across_table(answers: &[(String, Answer)], with_folder: bool, colour: bool) -> String {
    use crate::protocol::api::{decode, ListTabs};
    let mut tabs = Vec::new();
    let mut hosts = Vec::new();
    let mut silent = String::new();
    for (host, answer) in answers {
        match answer {
            // Answered, so not marked; said, so not taken for left out.
            Answer::Tabs(rows) if rows.is_empty() => silent.push_str(&format!("{host}: no tabs\n")),
            Answer::Tabs(rows) => {
                // Checked to read as tabs when the answer came.
                let rows =
                    decode::<ListTabs>(serde_json::Value::Array(rows.clone())).unwrap_or_default();
                hosts.extend(rows.iter().map(|_| host.clone()));
                tabs.extend(rows);
            }
            Answer::NoAnswer(why) => silent.push_str(&format!("{host}: no answer: {why}\n")),
        }
    }
    let mut out = if tabs.is_empty() {
        String::new()
    } else {
        super::tabs::table_on(&tabs, Some(&hosts), with_folder, colour)
    };
    out.push_str(&silent);
    out
}

/// What the main thread hears: a child's whole output, or a signal.
enum Heard {
    Output {
        index: usize,
        stdout: Vec<u8>,
        stderr: Vec<u8>,
    },
    Signal(Signal),
}

/// The signals that end the wait (and the children) early.
fn ending_signals() -> SigSet {
    let mut set = SigSet::empty();
    for s in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        set.add(s);
    }
    set
}

/// Ask every host in `queries` with `exe`; each host's answer, in the
/// queries' order.
fn ask(exe: &std::path::Path, queries: &[Query], deadline: Duration) -> Vec<(String, Answer)> {
    let (tx, rx) = mpsc::channel();
    // Blocked here (threads spawned after inherit it) and taken by one
    // thread with sigwait, so ^C reaches the loop below as a message.
    let signals = ending_signals();
    let _ = signals.thread_block();
    {
        let tx = tx.clone();
        std::thread::spawn(move || {
            if let Ok(s) = signals.wait() {
                let _ = tx.send(Heard::Signal(s));
            }
        });
    }
    let started = Instant::now();
    let mut children: Vec<Option<Child>> = Vec::new();
    let mut ended: Vec<Option<Answer>> = Vec::new();
    for (index, q) in queries.iter().enumerate() {
        match spawn(exe, &q.args) {
            Ok(mut child) => {
                let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
                let tx = tx.clone();
                std::thread::spawn(move || {
                    let (stdout, stderr) = read_both(stdout, stderr);
                    let _ = tx.send(Heard::Output {
                        index,
                        stdout,
                        stderr,
                    });
                });
                children.push(Some(child));
                ended.push(None);
            }
            Err(e) => {
                children.push(None);
                let why = format!("cannot run {}: {e}", exe.display());
                ended.push(Some(all_hosts::answer(Ended::NotRun(why))));
            }
        }
    }
    drop(tx);
    let mut interrupted = None;
    while children.iter().any(Option::is_some) {
        let left = deadline.saturating_sub(started.elapsed());
        match rx.recv_timeout(left) {
            Ok(Heard::Output {
                index,
                stdout,
                stderr,
            }) => {
                // Its pipes are closed: it is ending; reaped here, so its
                // PID (and group) cannot be another's while we hold it.
                let Some(mut child) = children[index].take() else {
                    continue;
                };
                let success = child.wait().is_ok_and(|s| s.success());
                ended[index] = Some(all_hosts::answer(Ended::Exited {
                    success,
                    stdout: &stdout,
                    stderr: &stderr,
                }));
            }
            Ok(Heard::Signal(s)) => {
                interrupted = Some(s);
                break;
            }
            Err(_) => break,
        }
    }
    // Still running: ended, its ssh with it (the group is the child's own
    // session; the child is not reaped yet, so the group is still ours).
    for (index, child) in children.iter_mut().enumerate() {
        if let Some(mut child) = child.take() {
            let _ = killpg(Pid::from_raw(child.id() as i32), Signal::SIGKILL);
            let _ = child.wait();
            ended[index] = Some(all_hosts::answer(Ended::TimedOut(deadline)));
        }
    }
    if let Some(s) = interrupted {
        ended_by_signal(s);
    }
    // ^C ends this process again, as usual, while it prints.
    let _ = ending_signals().thread_unblock();
    queries
        .iter()
        .zip(ended)
        .map(|(q, a)| (q.host.clone(), a.expect("every child ended")))
        .collect()
}

/// After the children are ended: end as the signal would have ended us.
fn ended_by_signal(s: Signal) -> ! {
    let _ = ending_signals().thread_unblock();
    let _ = nix::sys::signal::raise(s);
    std::process::exit(128 + s as i32)
}

/// `exe ARGS` in a session of its own, its output piped to us.
fn spawn(exe: &std::path::Path, args: &[String]) -> std::io::Result<Child> {
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: sigprocmask and setsid are async-signal-safe, as pre_exec
    // requires. The child must not inherit the signals blocked above, or
    // a ^C meant for it would wait forever.
    unsafe {
        cmd.pre_exec(|| {
            nix::sys::signal::sigprocmask(SigmaskHow::SIG_UNBLOCK, Some(&ending_signals()), None)?;
            nix::unistd::setsid()?;
            Ok(())
        });
    }
    cmd.spawn()
}

/// A child's stdout and stderr, each read to its end (stderr on a thread
/// of its own, so neither pipe can fill and stall the child).
fn read_both(
    stdout: Option<std::process::ChildStdout>,
    stderr: Option<std::process::ChildStderr>,
) -> (Vec<u8>, Vec<u8>) {
    let err = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(e) = stderr {
            let _ = e.take(MAX_ANSWER).read_to_end(&mut buf);
        }
        buf
    });
    let mut out = Vec::new();
    if let Some(o) = stdout {
        let _ = o.take(MAX_ANSWER).read_to_end(&mut out);
    }
    (out, err.join().unwrap_or_default())
}

/// The exit status for these answers.
fn status(answers: &[(String, Answer)]) -> ExitCode {
    if all_hosts::all_failed(answers) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real children: one answers, one fails saying why, one stalls with a
    /// child of its own (as nerdr stalls with its ssh). The stalled one is
    /// marked at the deadline, and ended whole: its child too.
    #[test]
    fn a_stalled_host_is_ended_with_what_it_started_and_marked() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("grandchild");
        let query = |host: &str, script: String| Query {
            host: host.into(),
            args: vec!["-c".into(), script],
        };
        let queries = [
            query("up", "echo '[]'".into()),
            query(
                "down",
                "echo 'nerdr: \u{1b}]0;x\u{7}boom' >&2; exit 3".into(),
            ),
            query(
                "stall",
                format!("sleep 300 & echo $! > {}; wait", pid_file.display()),
            ),
        ];
        let answers = ask(
            std::path::Path::new("/bin/sh"),
            &queries,
            Duration::from_secs(2),
        );
        let got: Vec<(&str, &Answer)> = answers.iter().map(|(h, a)| (h.as_str(), a)).collect();
        assert_eq!(
            got,
            [
                ("up", &Answer::Tabs(vec![])),
                ("down", &Answer::NoAnswer("boom".into())),
                (
                    "stall",
                    &Answer::NoAnswer(
                        "nothing within 2 s (the host, ssh or nerdr there stalled)".into()
                    )
                ),
            ]
        );
        assert!(matches!(status(&answers), ExitCode::SUCCESS));
        // The stalled child's own child was in its group: ended with it
        // (gone, or a zombie until init reaps it).
        // A SIGKILL sent is not yet a process gone on a loaded machine:
        // give it a moment.
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        let ended =
            |stat: &std::io::Result<String>| stat.as_deref().map_or(true, |s| s.contains(") Z "));
        let started = std::time::Instant::now();
        let mut stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()));
        while !ended(&stat) && started.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
            stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()));
        }
        assert!(ended(&stat), "sleep {pid} left running: {stat:?}");
    }

    #[test]
    fn a_program_that_cannot_run_is_a_host_with_no_answer() {
        let queries = [Query {
            host: "h".into(),
            args: vec![],
        }];
        let answers = ask(
            std::path::Path::new("/nonexistent/nerdr"),
            &queries,
            Duration::from_secs(2),
        );
        assert!(
            matches!(&answers[0].1, Answer::NoAnswer(w) if w.starts_with("cannot run /nonexistent/nerdr")),
            "{answers:?}"
        );
        assert!(matches!(status(&answers), ExitCode::FAILURE));
    }

    /// `--all-hosts`: HOST first on every line, the columns lined up
    /// across hosts, lines about a tab after its host, and a line for
    /// each host that did not answer.
    #[test]
    fn across_hosts_each_row_names_its_host_and_silent_hosts_are_marked() {
        use crate::remote::all_hosts::Answer;
        let row = |id: &str, n: u32, pid: u32| {
            serde_json::json!({"id": id, "name": format!("bash-{n}"), "number": n,
                "folder": "/w", "agent": "bash", "command": ["bash"], "sandboxed": false,
                "state": "running", "pid": pid, "exit_code": null})
        };
        let mut warned = row("dd44dd44", 3, 9);
        warned["warning"] = "rules not used".into();
        warned["unread_reviews"] = 1.into();
        let answers = vec![
            (
                "local".to_owned(),
                Answer::Tabs(vec![row("aa11aa11", 1, 7)]),
            ),
            (
                "gone".to_owned(),
                Answer::NoAnswer("ssh: Connection refused".into()),
            ),
            (
                "devbox-long".to_owned(),
                Answer::Tabs(vec![row("bb22bb22", 2, 12345), warned]),
            ),
        ];
        let text = across_table(&answers, false, false);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 7, "{text}");
        let words = |l: &str| l.split_whitespace().take(3).collect::<Vec<_>>().join(" ");
        assert_eq!(words(lines[0]), "HOST # TAB", "{text}");
        assert_eq!(words(lines[1]), "local 1 aa11aa11", "{text}");
        assert_eq!(words(lines[2]), "devbox-long 2 bb22bb22", "{text}");
        assert_eq!(words(lines[3]), "devbox-long 3 dd44dd44", "{text}");
        // Lined up: every id, every PID's end where the header's are.
        let tab_at = lines[0].find("TAB").unwrap();
        let pid_end = lines[0].find("PID").unwrap() + 3;
        for l in &lines[1..4] {
            assert_eq!(
                &l[tab_at..tab_at + 2],
                &l[tab_at..tab_at + 2].to_lowercase()
            );
            assert!(
                l[tab_at..].starts_with(|c: char| c.is_ascii_hexdigit()),
                "{text}"
            );
            assert!(
                l[..pid_end].ends_with(|c: char| c.is_ascii_digit()),
                "{text}"
            );
        }
        assert_eq!(lines[4], "devbox-long dd44dd44: warning: rules not used");
        assert_eq!(
            lines[5],
            "devbox-long dd44dd44: 1 unread review: nerdr reviews dd44dd44 (or the window's prefix g)"
        );
        assert_eq!(lines[6], "gone: no answer: ssh: Connection refused");
        // No host has a tab: each says so, and the silent ones are marked.
        let none = vec![
            ("local".to_owned(), Answer::Tabs(vec![])),
            ("gone".to_owned(), Answer::NoAnswer("x".into())),
        ];
        assert_eq!(
            across_table(&none, false, false),
            "local: no tabs\ngone: no answer: x\n"
        );
    }
}
