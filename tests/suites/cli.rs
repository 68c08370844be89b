//! The CLI against a hand-started core: agents on real PTYs, send/read,
//! tabs, close, quit, the environment programs see, and the hook socket.

use std::time::Duration;

use crate::support::local::{pid_alive, Local};
use crate::support::wait_until;

const SHELL_AGENT: &str = r#"
[agents.sh]
command = ["bash", "--norc", "--noprofile"]
"#;

#[test]
fn agent_send_read_tabs_close() {
    let l = Local::started();
    l.write_config(SHELL_AGENT);
    let tab = l.ok(&["agent", "sh"]);
    assert_eq!(tab.len(), 8, "tab id alone on stdout: {tab:?}");

    l.ok(&["send", &tab, "echo answer-$((6*7))"]);
    l.wait_screen(&tab, "answer-42");

    let tabs = l.tabs_json(&[]);
    assert_eq!(tabs.len(), 1, "{tabs:?}");
    let t = &tabs[0];
    assert_eq!(t["id"], tab.as_str());
    assert_eq!(t["agent"], "sh");
    assert_eq!(t["state"], "running");
    assert_eq!(t["sandboxed"], false);
    assert_eq!(t["exit_code"], serde_json::Value::Null);
    assert_eq!(
        t["folder"],
        l.work().canonicalize().unwrap().to_str().unwrap()
    );
    let pid = t["pid"].as_u64().unwrap() as u32;
    assert!(pid_alive(pid));

    l.ok(&["close", &tab]);
    assert!(!pid_alive(pid), "pid {pid} survived close");
    assert!(l.tabs_json(&[]).is_empty());
    let err = l.fails(&["read", &tab]);
    assert!(err.contains(&format!("no tab `{tab}`")), "{err}");
}

#[test]
fn send_without_enter_then_enter() {
    let l = Local::started();
    l.write_config(SHELL_AGENT);
    let tab = l.ok(&["agent", "sh"]);
    l.ok(&["send", "--no-enter", &tab, "echo part"]);
    l.wait_screen(&tab, "echo part");
    assert!(!l.ok(&["read", &tab]).contains("\npart"));
    l.ok(&["send", &tab, "ial"]);
    l.wait_screen(&tab, "\npartial");
}

/// Typing into a tab whose program ended fails and says so: the holder
/// would take the bytes, and nobody would ever read them.
#[test]
fn send_to_an_ended_program_fails_and_names_the_restart() {
    let l = Local::started();
    l.write_config(SHELL_AGENT);
    let tab = l.ok(&["agent", "sh"]);
    l.ok(&["send", &tab, "exit 3"]);
    wait_until("the tab to show as exited", Duration::from_secs(20), || {
        l.tabs_json(&[])
            .first()
            .is_some_and(|t| t["state"] == "exited")
    });
    let err = l.fails(&["send", &tab, "hello"]);
    assert!(err.contains("exited with code 3"), "{err}");
    assert!(err.contains(&format!("nerdr restart {tab}")), "{err}");
}

/// `-` and `--file` type text no argument could hold (an argument stops
/// at 128 KiB), with the file's last newline dropped so the Enter after it
/// is the only one.
#[test]
fn send_types_standard_input_or_a_file() {
    use std::io::Write;
    let l = Local::started();
    l.write_config(SHELL_AGENT);
    let tab = l.ok(&["agent", "sh"]);
    // 200 KiB on standard input, into `wc -c`, in lines of 100 bytes (a
    // terminal's line holds 4 KiB): the last newline is the Enter's.
    l.ok(&["send", &tab, "wc -c"]);
    let mut child = l
        .cmd(&["send", &tab, "-"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let text = format!("{}\n", "x".repeat(99)).repeat(2048);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(text.as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    l.ok(&["send", "--no-enter", &tab, "\x04"]);
    l.wait_screen(&tab, "\n204800\n");

    let file = l.path("prompt.txt");
    std::fs::write(&file, "echo from-a-$((1+1))-file\n").unwrap();
    l.ok(&["send", &tab, "--file", file.to_str().unwrap()]);
    let screen = l.wait_screen(&tab, "from-a-2-file");
    assert!(!screen.contains("file\n\n$"), "two Enters: {screen}");

    let err = l.fails(&["send", &tab, "--file", "/nonexistent/prompt.txt"]);
    assert!(err.contains("/nonexistent/prompt.txt"), "{err}");
}

/// Text and its Enter reach the program in two reads, as a person types
/// them: codex takes an Enter that arrives with a burst of text for part
/// of a paste (a new line in its prompt, which then never goes).
#[test]
fn send_types_the_enter_after_the_text() {
    let l = Local::started();
    let script = l.path("chunks.py");
    std::fs::write(
        &script,
        "import os, tty\ntty.setraw(0)\nos.write(1, b'ready\\r\\n')\nwhile True:\n    \
         os.write(1, (repr(os.read(0, 4096)) + '\\r\\n').encode())\n",
    )
    .unwrap();
    l.write_config(&format!(
        "[agents.chunks]\ncommand = [\"python3\", {:?}]\n",
        script.to_str().unwrap()
    ));
    let tab = l.ok(&["agent", "chunks"]);
    l.wait_screen(&tab, "ready");
    l.ok(&["send", &tab, "hello"]);
    let screen = l.wait_screen(&tab, "b'\\r'");
    assert!(screen.contains("b'hello'\n"), "{screen}");
    assert!(!screen.contains("hello\\r"), "{screen}");
    // Text without Enter is one write as ever, whatever it holds.
    l.ok(&["send", "--no-enter", &tab, "x\r"]);
    l.wait_screen(&tab, "b'x\\r'");
}

#[test]
fn read_follows_full_screen_programs_and_lines_tails() {
    let l = Local::started();
    l.write_config(SHELL_AGENT);
    let tab = l.ok(&["agent", "sh"]);
    // Clear, then draw at row 5, column 10, the way a TUI positions text.
    // The word is split in the command so only the output shows it whole.
    l.ok(&[
        "send",
        &tab,
        r"clear; printf '\033[5;10H%s%s\033[24;1H' cen tered",
    ]);
    let screen = l.wait_screen(&tab, "centered");
    let lines: Vec<&str> = screen.lines().collect();
    assert_eq!(
        lines.get(4).copied(),
        Some("         centered"),
        "screen:\n{screen}"
    );
    l.ok(&["send", &tab, "clear; echo a; echo b; echo c"]);
    wait_until("the last lines", Duration::from_secs(10), || {
        l.ok(&["read", &tab, "--lines", "2"]).starts_with("c\n")
    });
}

#[test]
fn exited_programs_keep_their_exit_code() {
    let l = Local::started();
    l.write_config("[agents.quick]\ncommand = [\"sh\", \"-c\", \"echo bye; exit 3\"]\n");
    let tab = l.ok(&["agent", "quick"]);
    wait_until("the tab to show exited", Duration::from_secs(10), || {
        l.tabs_json(&[])[0]["state"] == "exited"
    });
    let t = &l.tabs_json(&[])[0];
    assert_eq!(t["exit_code"], 3);
    assert!(l.ok(&["read", &tab]).contains("bye"));
}

#[test]
fn extra_args_come_last_and_folder_selects_the_session() {
    let l = Local::started();
    l.write_config("[agents.echo]\ncommand = [\"sh\", \"-c\", \"echo \\\"$@\\\"; sleep 30\", \"sh\"]\nargs = [\"configured\"]\n");
    let other = l.path("other");
    std::fs::create_dir(&other).unwrap();
    let tab = l.ok(&[
        "agent",
        "echo",
        "--folder",
        other.to_str().unwrap(),
        "--",
        "extra",
    ]);
    l.wait_screen(&tab, "configured extra");
    assert!(
        l.tabs_json(&[]).is_empty(),
        "the work folder's session has no tabs"
    );
    let there = l.tabs_json(&["--folder", other.to_str().unwrap()]);
    assert_eq!(there.len(), 1);
    assert_eq!(l.tabs_json(&["--all"]).len(), 1);
}

#[test]
fn quit_stops_every_program_of_the_session_only() {
    let l = Local::started();
    l.write_config(SHELL_AGENT);
    let a = l.ok(&["agent", "sh"]);
    let b = l.ok(&["agent", "sh"]);
    let other = l.path("other");
    std::fs::create_dir(&other).unwrap();
    let c = l.ok(&["agent", "sh", "--folder", other.to_str().unwrap()]);
    let all = l.tabs_json(&["--all"]);
    assert_eq!(all.len(), 3);
    let pid_of = |id: &str| {
        let t = all.iter().find(|t| t["id"] == id).unwrap();
        t["pid"].as_u64().unwrap() as u32
    };
    let pids = [pid_of(&a), pid_of(&b), pid_of(&c)];
    // A background job in its own process group must go too.
    l.ok(&["send", &a, "sleep 1000 &"]);
    l.wait_screen(&a, "[1]");
    l.ok(&["quit"]);
    let left = l.tabs_json(&["--all"]);
    assert_eq!(left.len(), 1);
    assert_eq!(left[0]["id"], c.as_str());
    for (id, pid) in [(&a, pids[0]), (&b, pids[1])] {
        assert!(!pid_alive(pid), "tab {id} pid {pid} survived quit");
    }
    assert!(pid_alive(pids[2]));
}

#[test]
fn programs_see_the_nerdr_environment_not_the_outer_terminal() {
    let l = Local::started();
    l.write_config(
        "[agents.env]\ncommand = [\"sh\", \"-c\", \"env > env.txt; sleep 60\"]\nenv = { FROM_CONFIG = \"yes\" }\n",
    );
    let out = l
        .cmd(&["agent", "env"])
        .env("TMUX", "/tmp/tmux-1/default,1,0")
        .env("CLAUDECODE", "1")
        .env("TERM_PROGRAM", "iTerm.app")
        .env("FOO", "from-client")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let file = l.work().join("env.txt");
    wait_until(
        "the program to write env.txt",
        Duration::from_secs(10),
        || std::fs::read_to_string(&file).is_ok_and(|s| s.contains("PATH=")),
    );
    let env = std::fs::read_to_string(&file).unwrap();
    let has = |line: &str| env.lines().any(|l| l == line);
    let var = |name: &str| {
        env.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}=")))
    };
    assert!(has("FOO=from-client"), "{env}");
    assert!(has("FROM_CONFIG=yes"), "{env}");
    assert!(has("TERM_PROGRAM=nerdr"), "{env}");
    assert!(has("TERM=xterm-256color"), "{env}");
    assert_eq!(var("NERDR_SOCKET"), Some(l.hook_socket().to_str().unwrap()));
    assert_eq!(
        var("NERDR_BIN").map(std::path::PathBuf::from),
        Some(std::fs::canonicalize(crate::support::local::BIN).unwrap())
    );
    assert_eq!(var("NERDR_TAB").map(str::len), Some(64));
    assert!(var("NERDR_SANDBOXED").is_none());
    for gone in ["TMUX", "CLAUDECODE", "LISTEN_FDS", "NOTIFY_SOCKET"] {
        assert!(var(gone).is_none(), "{gone} reached the program:\n{env}");
    }
}

#[test]
fn commands_inside_a_tab_use_the_hook_socket() {
    let l = Local::started();
    l.write_config(SHELL_AGENT);
    let tab = l.ok(&["agent", "sh"]);
    // From inside the tab, `nerdr tabs` goes through NERDR_SOCKET with the
    // tab's secret, and works.
    l.ok(&[
        "send",
        &tab,
        r#""$NERDR_BIN" tabs --json > inside.json; echo done-$?"#,
    ]);
    l.wait_screen(&tab, "done-0");
    let inside: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(l.work().join("inside.json")).unwrap())
            .unwrap();
    assert_eq!(inside[0]["id"], tab.as_str());
    // Posing as the user's window from inside a tab is refused by the core.
    l.ok(&[
        "send",
        &tab,
        r#"env -u NERDR_TAB "$NERDR_BIN" tabs 2> refused.txt; echo rc-$?"#,
    ]);
    l.wait_screen(&tab, "rc-1");
    let refused = std::fs::read_to_string(l.work().join("refused.txt")).unwrap();
    assert!(
        refused.contains(&format!("runs inside tab {tab}")),
        "{refused}"
    );
    // Leaving the parent behind (`cmd & exit`) does not escape the check:
    // the session is still the tab's.
    l.ok(&["send", &tab, r#"sh -c 'env -u NERDR_TAB "$NERDR_BIN" tabs 2> orphan.txt; echo rc-$? >> orphan.txt' & sleep 1; echo orphan-done"#]);
    l.wait_screen(&tab, "orphan-done");
    wait_until("the orphan's answer", Duration::from_secs(10), || {
        std::fs::read_to_string(l.work().join("orphan.txt")).is_ok_and(|s| s.contains("rc-"))
    });
    let orphan = std::fs::read_to_string(l.work().join("orphan.txt")).unwrap();
    assert!(
        orphan.contains("runs inside tab") && orphan.contains("rc-1"),
        "{orphan}"
    );
    // A made-up secret gets nothing from the hook socket.
    let out = l
        .cmd(&["tabs"])
        .env("NERDR_TAB", "0".repeat(64))
        .env("NERDR_SOCKET", l.hook_socket())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("NERDR_TAB is missing or names no open tab")
    );
}

#[test]
fn the_first_command_starts_a_core_when_none_runs() {
    let l = Local::empty();
    l.write_config(SHELL_AGENT);
    assert!(l.tabs_json(&[]).is_empty());
    let pid: u32 = l.recorded_core_pid();
    wait_until("the core's ready line", Duration::from_secs(10), || {
        l.core_log().contains("activated=false")
    });
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    wait_until("the started core to stop", Duration::from_secs(10), || {
        !pid_alive(pid)
    });
    assert!(
        !l.client_socket().exists(),
        "a hand-bound socket is removed on exit"
    );
}

#[test]
fn a_raw_hook_request_resizes_the_terminal_and_screen() {
    let l = Local::started();
    l.write_config(SHELL_AGENT);
    let tab = l.ok(&["agent", "sh"]);
    // Speak the hook protocol by hand from inside the tab, as an agent's
    // hook script would: one JSON line in, one JSON line out.
    let req = format!(
        r#"{{"id":"r1","tab":"$NERDR_TAB","method":"resize","params":{{"tab":"{tab}","rows":30,"cols":100}}}}"#
    );
    let line = format!(
        r#"printf '%s\n' "{}" | python3 -c 'import socket,sys,os; s=socket.socket(socket.AF_UNIX); s.connect(os.environ["NERDR_SOCKET"]); s.sendall(sys.stdin.buffer.read()); print(s.makefile().readline().strip())' > reply.json; stty size"#,
        req.replace('"', "\\\"")
    );
    l.ok(&["send", &tab, &line]);
    l.wait_screen(&tab, "30 100");
    let reply: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(l.work().join("reply.json")).unwrap())
            .unwrap();
    assert_eq!(reply["id"], "r1");
    assert_eq!(reply["result"], serde_json::json!({}));
    // The screen model follows: a line of 100 characters is not wrapped.
    l.ok(&["send", &tab, "printf '%0100d\\n' 0"]);
    let zeros = "0".repeat(100);
    l.wait_screen(&tab, &zeros);
}

#[test]
fn an_agents_hooks_report_its_session_from_inside_its_tab() {
    let l = Local::started();
    l.write_config(SHELL_AGENT);
    let tab = l.ok(&["agent", "sh"]);
    // What claude's SessionStart hook would run, with its JSON on stdin.
    l.ok(&[
        "send",
        &tab,
        r#"echo '{"session_id":"0b6f8c2e-4d1a"}' | "$NERDR_BIN" hook SessionStart; echo hook-$?"#,
    ]);
    l.wait_screen(&tab, "hook-0");
    wait_until("the session id recorded", Duration::from_secs(10), || {
        l.tabs_json(&[])[0]["session_id"] == "0b6f8c2e-4d1a"
    });
    // An id that would be a flag on the next command line is refused.
    l.ok(&["send", &tab, r#"echo '{"session_id":"--yolo"}' | "$NERDR_BIN" hook SessionStart 2> bad.txt; echo bad-$?"#]);
    l.wait_screen(&tab, "bad-0");
    assert!(std::fs::read_to_string(l.work().join("bad.txt"))
        .unwrap()
        .contains("not a plain word"));
    assert_eq!(l.tabs_json(&[])[0]["session_id"], "0b6f8c2e-4d1a");
    // The same from outside every tab does nothing and says nothing.
    let out = l.run(&["hook", "SessionStart"]);
    assert!(
        out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
        "{out:?}"
    );
    // A resume command report from inside the tab is accepted for itself only.
    l.ok(&[
        "send",
        &tab,
        &format!(r#""$NERDR_BIN" pane report-agent {tab} -- bash --resume X; echo rep-$?"#),
    ]);
    l.wait_screen(&tab, "rep-0");
    l.ok(&[
        "send",
        &tab,
        r#""$NERDR_BIN" pane report-agent 00000000 -- bash; echo other-$?"#,
    ]);
    l.wait_screen(&tab, "other-1");
}

#[test]
fn a_tab_secret_read_from_proc_does_not_make_a_stranger_that_tab() {
    let l = Local::started();
    // A sandboxed agent starts only in a sandbox that passes nerdr's check:
    // bash in bwrap, nerdr's runtime dir hidden, its own PID namespace.
    l.write_config(&format!(
        "{SHELL_AGENT}[agents.bash]\ncommand = [\"bwrap\", \"--ro-bind\", \"/\", \"/\", \
         \"--dev\", \"/dev\", \"--proc\", \"/proc\", \"--unshare-pid\", \"--die-with-parent\", \
         \"--tmpfs\", \"{}\", \"--\", \"bash\", \"--norc\"]\nsandboxed = true\n",
        l.path("run").display()
    ));
    let steal = |tab: &str| {
        let t = l
            .tabs_json(&[])
            .into_iter()
            .find(|t| t["id"] == tab)
            .unwrap();
        let environ = std::fs::read(format!("/proc/{}/environ", t["pid"])).unwrap();
        environ
            .split(|b| *b == 0)
            .find_map(|v| v.strip_prefix(b"NERDR_TAB="))
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .unwrap()
    };
    let plain = l.ok(&["agent", "sh"]);
    let boxed = l.ok(&["agent", "bash"]);
    // Any process of the user can read an agent's environment; the kernel's
    // record of who connected decides.
    let out = l
        .cmd(&["tabs"])
        .env("NERDR_TAB", steal(&plain))
        .env("NERDR_SOCKET", l.hook_socket())
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "a stranger acted as an unsandboxed tab"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains(&format!("not from a program of tab {plain}")),
        "{out:?}"
    );
    // A sandboxed tab's secret gives no more than that tab has.
    let out = l
        .cmd(&["tabs"])
        .env("NERDR_TAB", steal(&boxed))
        .env("NERDR_SOCKET", l.hook_socket())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

/// SECURITY.md: every refusal is a journal entry, "the same one at most
/// once a second". A program that sends requests naming no open tab as
/// fast as it can gets each one refused, but leaves one audit entry a
/// second, not one a request (each is a journal entry and two file
/// appends on the user's disk).
#[test]
fn refusals_of_a_tab_that_does_not_exist_are_journaled_once_a_second() {
    use std::io::{BufRead, Write};
    let l = Local::started();
    let mut s = std::os::unix::net::UnixStream::connect(l.hook_socket()).unwrap();
    let bogus = "0".repeat(64);
    let mut lines = String::new();
    for i in 0..50 {
        lines.push_str(&format!(
            r#"{{"id":"r{i}","tab":"{bogus}","method":"status"}}"#
        ));
        lines.push('\n');
    }
    let started = std::time::Instant::now();
    s.write_all(lines.as_bytes()).unwrap();
    let mut replies = std::io::BufReader::new(s.try_clone().unwrap());
    for _ in 0..50 {
        let mut reply = String::new();
        replies.read_line(&mut reply).unwrap();
        assert!(reply.contains("names no open tab"), "{reply}");
    }
    let took = started.elapsed();
    assert!(
        took < Duration::from_millis(900),
        "the requests took {took:?}: the test needs them within one second"
    );
    let audit = std::fs::read_to_string(l.path("state/nerdr/audit.jsonl")).unwrap_or_default();
    let entries = audit
        .lines()
        .filter(|l| l.contains("NERDR_TAB names no open tab"))
        .count();
    assert_eq!(
        entries, 1,
        "50 refusals within a second left {entries} audit entries"
    );
}
