//! Sandboxed agents stay in their session, and the hook and client sockets hold against programs in tabs.

use super::*;

#[test]
fn nerdr_inside_a_tab_is_refused_on_the_client_socket_even_with_the_key() {
    let Some(s) = Setup::new() else { return };
    let plain = s.ok(&["agent", "sh"]);
    s.screen_shows(&plain, "$");
    // Without NERDR_TAB the CLI goes to the client socket; the key file is
    // readable (same user), and the core still refuses: the caller descends
    // from a program nerdr started.
    s.ok(&[
        "send",
        &plain,
        "env -u NERDR_TAB -u NERDR_SOCKET \"$NERDR_BIN\" tabs > client.txt 2>&1; echo client-$?",
    ]);
    s.screen_shows(&plain, "client-1");
    let said = std::fs::read_to_string(s.work.join("client.txt")).unwrap();
    assert!(said.contains("a program nerdr started"), "{said}");
}

#[test]
fn a_sandboxed_agent_whose_reports_never_arrive_is_pointed_out_once() {
    let Some(s) = Setup::new() else { return };
    s.ok(&["integration", "install", "claude"]);
    // A stand-in for claude (whose integration is installed) in the same
    // sandbox: it reports through its hook as claude's would, but only in
    // the turns where it is told to `talk`.
    let script = s.env.write_user_file(
        "bin/claude",
        "#!/bin/bash\nwhile read -r line; do\n  [ \"$line\" = talk ] && echo '{}' | \"$NERDR_BIN\" hook Stop\n  echo \"did $line\"\ndone\n",
    );
    set_mode(&script, 0o755);
    let path = s.env.home().join(".config/nerdr/config.toml");
    let config = std::fs::read_to_string(&path).unwrap();
    let boxed = s.env.home().join("bin/boxed").display().to_string();
    let claude = script.display().to_string();
    let command = config
        .lines()
        .find(|l| l.starts_with("command = [\"bwrap\""))
        .unwrap()
        .replace(&boxed, &claude);
    s.env.write_user_file(
        ".config/nerdr/config.toml",
        format!("{config}[agents.claude]\n{command}\nsandboxed = true\n"),
    );
    let talker = s.ok(&["agent", "claude"]);
    let silent = s.ok(&["agent", "claude"]);
    s.ok(&["send", &talker, "talk"]);
    s.ok(&["send", &silent, "quiet"]);
    s.screen_shows(&talker, "did talk");
    s.screen_shows(&silent, "did quiet");
    let warning = |tab: &str| {
        s.tabs()
            .into_iter()
            .find(|t| t["id"] == tab)
            .and_then(|t| t["warning"].as_str().map(String::from))
    };
    wait_until(
        "the warning about the silent tab",
        Duration::from_secs(20),
        || warning(&silent).is_some(),
    );
    let w = warning(&silent).unwrap();
    let bin = s.env.nerdr().display().to_string();
    assert!(w.contains("no report from it reached nerdr"), "{w}");
    assert!(w.contains("nerdr.sock"), "names the socket: {w}");
    assert!(
        w.contains(&bin) || w.contains("/nerdr "),
        "names NERDR_BIN: {w}"
    );
    // The talker's turn ended as long ago: it reported, so nothing is said.
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(warning(&talker), None);
    // Once per tab: the journal of the core has one such line for it.
    s.ok(&["send", &silent, "again"]);
    s.screen_shows(&silent, "did again");
    std::thread::sleep(Duration::from_secs(6));
    let lines = s
        .env
        .journal_messages(&["SYSLOG_IDENTIFIER=nerdr"])
        .into_iter()
        .filter(|m| m.contains("no report from it reached nerdr"))
        .count();
    assert_eq!(lines, 1);
}

#[test]
fn a_sandboxed_agent_stays_in_its_own_session() {
    let Some(s) = Setup::new() else { return };
    let plain = s.ok(&["agent", "sh"]);
    let boxed = s.ok(&["agent", "boxed"]);
    // A sandboxed agent in another session (folder).
    let elsewhere = s.env.home().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    crate::support::sysenv::run_ok(std::process::Command::new("chown").args([
        &format!("{}:{}", s.env.uid(), s.env.gid()),
        elsewhere.to_str().unwrap(),
    ]));
    let other = s.ok(&["agent", "boxed", "--folder", elsewhere.to_str().unwrap()]);
    s.screen_shows(&boxed, "$");
    let tries = [
        (
            "foreign-folder",
            format!("agent boxed --folder {}", elsewhere.display()),
        ),
        ("no-worktree", "agent boxed --no-worktree".to_string()),
        ("other-session", format!("read {other}")),
        ("half-message", format!("send --no-enter {plain} 'rm -rf '")),
    ];
    let mut script = String::from("mkdir -p stay\n");
    for (name, args) in &tries {
        script.push_str(&format!(
            "\"$NERDR_BIN\" {args} > stay/{name}.txt 2>&1; echo $? > stay/{name}.rc\n"
        ));
    }
    script.push_str("echo stay-done\n");
    s.env.write_user_file("work/stay.sh", script);
    s.ok(&["send", &boxed, "sh stay.sh"]);
    s.screen_shows(&boxed, "stay-done");
    let r = Results(s.work.join("stay"));
    for (name, want) in [
        ("foreign-folder", "own session's folder"),
        ("no-worktree", "checkout the user works in"),
        // A tab of another session reads as one that does not exist.
        ("other-session", "no tab `"),
        ("half-message", "delivered whole"),
    ] {
        assert_ne!(r.rc(name), 0, "{name}: {}", r.text(name));
        assert!(r.text(name).contains(want), "{name}: {}", r.text(name));
    }
    // Nothing was started or queued.
    assert_eq!(s.tabs().len(), 2, "only this session's two tabs");
    assert!(s.ok(&["approvals"]).contains("nothing waits"));
    // What a tab asked goes with it when it closes.
    s.ok(&[
        "send",
        &boxed,
        &format!("\"$NERDR_BIN\" send {plain} 'echo hi'; echo q-$?"),
    ]);
    s.screen_shows(&boxed, "q-0");
    assert!(s
        .ok(&["approvals"])
        .contains(&format!("from sandboxed tab {boxed}")));
    s.ok(&["close", &boxed]);
    assert!(s.ok(&["approvals"]).contains("nothing waits"));
}

#[test]
fn one_program_cannot_take_every_hook_connection() {
    let Some(s) = Setup::new() else { return };
    let boxed = s.ok(&["agent", "boxed"]);
    s.screen_shows(&boxed, "$");
    // 70 connections from one tab's scope, kept open with blank lines: the
    // first 64 are served, the rest refused at once; blank lines do not keep
    // a connection past its idle time, but that takes a minute, so only
    // the cap is checked here.
    s.env.write_user_file(
        "work/hold.py",
        "import os, socket, time\n\
         conns = []\n\
         for i in range(70):\n\
         \x20   c = socket.socket(socket.AF_UNIX)\n\
         \x20   c.connect(os.environ['NERDR_SOCKET'])\n\
         \x20   c.sendall(b'\\n')\n\
         \x20   conns.append(c)\n\
         time.sleep(3)\n\
         held = refused = 0\n\
         for c in conns:\n\
         \x20   c.setblocking(False)\n\
         \x20   try:\n\
         \x20       refused += b'hook connections' in c.recv(4096)\n\
         \x20   except BlockingIOError:\n\
         \x20       held += 1\n\
         print('held', held, 'refused', refused, flush=True)\n",
    );
    s.ok(&["send", &boxed, "python3 hold.py"]);
    s.screen_shows(&boxed, "held 64 refused 6");
    // Another tab, and the user, are still served meanwhile.
    let plain = s.ok(&["agent", "sh"]);
    s.screen_shows(&plain, "$");
}

/// `nerdr sessions` from a sandboxed agent: its own session only, counting
/// its own tab only; the person sees every session and every tab.
#[test]
fn a_sandboxed_agent_lists_only_its_own_session() {
    let Some(s) = Setup::new() else { return };
    s.ok(&["agent", "sh"]);
    let boxed = s.ok(&["agent", "boxed"]);
    let elsewhere = s.env.home().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    crate::support::sysenv::run_ok(std::process::Command::new("chown").args([
        &format!("{}:{}", s.env.uid(), s.env.gid()),
        elsewhere.to_str().unwrap(),
    ]));
    s.ok(&["agent", "sh", "--folder", elsewhere.to_str().unwrap()]);
    s.screen_shows(&boxed, "$");
    s.ok(&[
        "send",
        &boxed,
        "\"$NERDR_BIN\" sessions --json > seen.json; echo sessions-$?",
    ]);
    s.screen_shows(&boxed, "sessions-0");
    let seen: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(s.work.join("seen.json")).unwrap()).unwrap();
    let work = s.work.canonicalize().unwrap();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0]["folder"], work.to_str().unwrap(), "{seen:?}");
    assert_eq!(seen[0]["tabs"], 1, "its own tab only: {seen:?}");
    assert_eq!(seen[0]["running"], 1, "{seen:?}");
    // The person sees both sessions, every tab counted.
    let all: Vec<serde_json::Value> = serde_json::from_str(&s.ok(&["sessions", "--json"])).unwrap();
    let tabs: Vec<u64> = all.iter().map(|x| x["tabs"].as_u64().unwrap()).collect();
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(tabs.iter().sum::<u64>(), 3, "{all:?}");
}
