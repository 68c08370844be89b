//! The review's confirmed findings about asking, replayed end to end.

use super::*;

/// Review of the asking proxy: the program inside has its tab's secret and the hook
/// socket; a network question it puts itself must be refused at once
/// (only `nerdr sandbox`, the tab's program, asks), so F3 shows only the
/// proxy's questions and a "deny" cannot be asked around. The proxy's own
/// question still waits and opens the request.
#[test]
fn a_program_inside_cannot_put_a_network_question_of_its_own() {
    let steps = "p=$(cat \"$HOME/ports\")\n\
                 (printf '{\"id\":1,\"tab\":\"%s\",\"method\":\"ask_network\",\"params\":{\"host\":\"forged.test\",\"port\":443}}\\n' \"$NERDR_TAB\" \
                 | socat -t 30 - \"UNIX-CONNECT:$NERDR_SOCKET\" > forged.txt 2>&1; echo FORGED-DONE) &\n\
                 sleep 2\n\
                 r real $p\n\
                 wait\n";
    let Some(s) = Asking::new(steps, "") else {
        return;
    };
    s.env.write_user_file("ports", format!("{}\n", s.ports[0]));
    let (tab, worktree, window) = s.start_in_a_window();
    // The proxy's own question is asked; the forged one never is.
    let mut q = None;
    let ok = crate::support::poll(Duration::from_secs(30), || {
        q = s.pending().into_iter().find(|p| p["host"] == "asked.test");
        q.is_some()
    });
    assert!(ok, "the proxy's question never came: {:?}", s.pending());
    let q = q.unwrap();
    assert!(
        s.pending().iter().all(|p| p["host"] != "forged.test"),
        "a question from inside the sandbox was queued: {:?}",
        s.pending()
    );
    // Its answer opens the request; the forged question was refused at once.
    s.ok(&["approvals", "approve", q["id"].as_str().unwrap()]);
    s.screen_shows(&tab, "real=200", Duration::from_secs(20));
    s.screen_shows(&tab, "FORGED-DONE", Duration::from_secs(20));
    let forged = std::fs::read_to_string(worktree.join("forged.txt")).unwrap();
    assert!(
        forged.contains("\"error\"") && forged.contains("nerdr sandbox"),
        "{forged}"
    );
    let log = s.ok(&["log", "--hook"]);
    assert!(
        log.contains("ask-network"),
        "the refusal is journaled: {log}"
    );
    drop(window);
}

/// Review of the asking proxy: the question names the host as the proxy would open it,
/// not as the program spelt it: `[::ffff:127.0.0.1]` is this machine's
/// loopback, and F3 must say so (with `allowLocalBinding: false`, a "this
/// run" opens a local service).
#[test]
fn a_question_names_the_host_as_it_would_be_opened() {
    let steps = "p=$(cat \"$HOME/ports\")\n\
                 curl -s -m 100 -o /dev/null -w \"mapped=%{http_code}\\n\" \"http://[::ffff:127.0.0.1]:$p/\"\n";
    let Some(s) = Asking::new(steps, "") else {
        return;
    };
    let local = origin();
    s.close_local_services();
    s.env.write_user_file("ports", format!("{local}\n"));
    let (tab, _, window) = s.start_in_a_window();
    let q = s.question();
    let question = q["question"].as_str().unwrap();
    assert!(
        question.contains(&format!("127.0.0.1:{local} (a service on this machine)")),
        "{question}"
    );
    assert!(!question.contains("ffff"), "{question}");
    assert_eq!(q["host"], "127.0.0.1", "{q}");
    s.ok(&["approvals", "deny", q["id"].as_str().unwrap()]);
    s.screen_shows(&tab, "mapped=403", Duration::from_secs(20));
    drop(window);
}

/// Review of the asking proxy: `nerdr sandbox` as the command of a tab not marked
/// `sandboxed` (or run by hand in a nerdr tab): the program inside has the
/// tab's secret and descends from the tab's program, so the kernel's
/// record made it that unsandboxed tab, with its powers: a terminal (the
/// user's shell, outside every sandbox) and typing into it. A caller in
/// another user namespace than its tab's program must get a sandboxed
/// caller's powers at most.
#[test]
fn a_program_inside_nerdr_sandbox_in_an_unsandboxed_tab_gets_no_unsandboxed_powers() {
    let Some(env) = setup() else { return };
    env.run(&["nerdr", "service", "install"]);
    let escaper = env.write_user_file(
        "bin/escaper",
        "#!/bin/sh\n\
         case \"$1\" in --help) echo 'Usage: escaper'; exit 0;; esac\n\
         until [ -e \"$HOME/tabid\" ]; do sleep 0.1; done\n\
         t=$(cat \"$HOME/tabid\")\n\
         term=$(\"$NERDR_BIN\" terminal \"$t\" 2>&1)\n\
         echo \"TERM=$term\"\n\
         \"$NERDR_BIN\" send \"$term\" \"touch $HOME/ESCAPED\" 2>&1\n\
         echo ESCAPER-DONE\n\
         exec sleep 1000\n",
    );
    env.run(&["chmod", "+x", escaper.to_str().unwrap()]);
    env.write_user_file(
        ".config/nerdr/config.toml",
        "[agents.boxed]\ncommand = [\"nerdr\", \"sandbox\", \"--\", \"escaper\"]\n",
    );
    let path = format!(
        "{}:{}:/usr/local/bin:/usr/bin:/bin",
        env.home().join("bin").display(),
        env.nerdr().parent().unwrap().display()
    );
    let proj = env.home().join("proj");
    let run = |args: &[&str]| {
        let mut cmd = env.user_cmd(&[&["nerdr"], args].concat());
        cmd.current_dir(&proj).env("PATH", &path);
        let out = crate::support::sysenv::output_of(&mut cmd);
        assert!(
            out.status.success(),
            "nerdr {args:?}: {}",
            text(&out.stderr)
        );
        text(&out.stdout)
    };
    let tab = run(&["agent", "boxed"]).trim().to_string();
    env.write_user_file("tabid", &tab);
    let mut screen = String::new();
    let done = crate::support::poll(Duration::from_secs(30), || {
        screen = run(&["read", &tab]);
        screen.contains("ESCAPER-DONE")
    });
    assert!(done, "{screen}");
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        !env.home().join("ESCAPED").exists(),
        "the program inside nerdr sandbox typed into a terminal outside it:\n{screen}"
    );
    assert!(
        screen.contains("comes from inside a sandbox"),
        "refused, saying why: {screen}"
    );
}

/// Review of the asking proxy: a program that opens many requests to unlisted hosts at
/// once (each a question the proxy puts in parallel) gets at most 5 of
/// them in front of the person; the rest are refused at once. The room
/// was checked, then the question queued under another lock: questions
/// arriving together on the core's two threads made 6 wait (2 runs in 3).
#[test]
fn a_burst_of_questions_puts_at_most_five_before_the_person() {
    let steps = "p=$(cat \"$HOME/ports\")\n\
                 for i in $(seq 1 40); do curl -s -m 60 -o /dev/null -w \"h$i=%{http_code}\\n\" \"http://h$i.test:$p/\" >> burst.txt & done\n\
                 wait\n";
    let Some(s) = Asking::new(steps, "[sandbox]\nask_timeout_secs = 8\n") else {
        return;
    };
    s.env.write_user_file("ports", format!("{}\n", s.ports[0]));
    let (tab, _, window) = s.start_in_a_window();
    let mut most = 0;
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(6) {
        let n = s
            .pending()
            .iter()
            .filter(|p| p["kind"] == "network")
            .count();
        most = most.max(n);
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(most >= 1, "no question was asked");
    assert!(
        most <= 5,
        "{most} network questions of one tab waited at once"
    );
    s.screen_shows(&tab, "STEPS-DONE", Duration::from_secs(60));
    drop(window);
}

/// Review of the asking proxy: a yes is for a host name, never for the address it
/// resolves to: an asked name that resolves to a private or loopback
/// address is still refused (DNS rebinding). And a "deny" holds for the
/// host and port whichever proxy form asks next (absolute URI, CONNECT,
/// SOCKS5), without asking again.
#[test]
fn a_yes_never_reaches_a_private_address_and_a_deny_holds_across_proxy_forms() {
    let steps = "set -- $(cat \"$HOME/ports\")\n\
                 curl -s -m 100 -w '\\ncode=%{http_code}\\n' \"http://asked.test:$1/\" > rebind.txt\n\
                 r http $2\n\
                 curl -s -m 20 -o /dev/null -p -w 'connect=%{http_connect}\\n' \"http://asked.test:$2/\"\n\
                 curl -s -m 20 -o /dev/null -x \"socks5h://127.0.0.1:3128\" -w 'socks=%{http_code}\\n' \"http://asked.test:$2/\"; echo socks-exit=$?\n";
    let Some(s) = Asking::new(steps, "") else {
        return;
    };
    // No IP entry opens the origins' address this time.
    std::fs::write(&s.settings, "{\"sandbox\": {\"network\": {}}}").unwrap();
    let [p1, p2] = s.ports;
    s.env.write_user_file("ports", format!("{p1} {p2}\n"));
    let (tab, worktree, window) = s.start_in_a_window();
    let q1 = s.question();
    assert_eq!(q1["port"].as_u64(), Some(p1 as u64), "{q1}");
    s.ok(&[
        "approvals",
        "approve",
        "--session",
        q1["id"].as_str().unwrap(),
    ]);
    let q2 = s.question();
    assert_eq!(q2["port"].as_u64(), Some(p2 as u64), "{q2}");
    s.ok(&["approvals", "deny", q2["id"].as_str().unwrap()]);
    let screen = s.screen_shows(&tab, "STEPS-DONE", Duration::from_secs(60));
    let rebind = std::fs::read_to_string(worktree.join("rebind.txt")).unwrap();
    assert!(
        rebind.contains("code=403") && rebind.contains("resolves to 127.0.0.1"),
        "{rebind}"
    );
    for want in ["http=403", "connect=403", "socks-exit=97"] {
        assert!(screen.contains(want), "{want}:\n{screen}");
    }
    assert!(s.pending().is_empty(), "asked again: {:?}", s.pending());
    drop(window);
}

/// Review of the asking proxy: a loop of requests to an unlisted host that cannot be
/// asked (no window attached) must cost the audit trail a merged line a
/// second, as any repeated refusal does, not lines for each request.
#[test]
fn a_loop_of_unaskable_requests_does_not_flood_the_trail() {
    let steps = "p=$(cat \"$HOME/ports\")\n\
                 i=0; while [ $i -lt 300 ]; do curl -s -m 5 -o /dev/null \"http://asked.test:$p/\"; i=$((i+1)); done\n\
                 echo LOOP-DONE\n";
    let Some(s) = Asking::new(steps, "") else {
        return;
    };
    s.env.write_user_file("ports", format!("{}\n", s.ports[0]));
    let (tab, worktree) = s.start();
    let t0 = Instant::now();
    s.go(&worktree);
    s.screen_shows(&tab, "STEPS-DONE", Duration::from_secs(120));
    let secs = t0.elapsed().as_secs() + 2;
    std::thread::sleep(Duration::from_secs(2));
    let net = s.net_lines();
    let about: Vec<_> = net.iter().filter(|l| l["host"] == "asked.test").collect();
    let counted: u64 = about
        .iter()
        .filter(|l| l["phase"] == "refused")
        .map(|l| l["count"].as_u64().unwrap())
        .sum();
    assert_eq!(counted, 300, "every refusal is counted: {about:#?}");
    assert!(
        (about.len() as u64) <= 3 * (secs + 2),
        "{} lines for 300 refusals in {secs} s",
        about.len()
    );
}

/// Review of the asking proxy: with local services closed, a "deny" of this machine's
/// port holds for every other spelling of it (`127.0.0.1`, `[::1]`,
/// `127.0.0.2`): the program cannot ask the same question again under
/// another of the 2^24 loopback addresses.
#[test]
fn a_deny_of_a_local_port_holds_for_every_loopback_spelling() {
    let steps = "p=$(cat \"$HOME/ports\")\n\
                 for h in localhost 127.0.0.1 '[::1]' 127.0.0.2 '[::ffff:127.0.0.3]'; do \
                 curl -s -m 100 -o /dev/null -w \"$h=%{http_code}\\n\" \"http://$h:$p/\"; done\n";
    let Some(s) = Asking::new(steps, "") else {
        return;
    };
    let local = origin();
    s.close_local_services();
    s.env.write_user_file("ports", format!("{local}\n"));
    let (tab, _, window) = s.start_in_a_window();
    let q = s.question();
    assert_eq!(q["host"], "localhost", "{q}");
    s.ok(&["approvals", "deny", q["id"].as_str().unwrap()]);
    let screen = s.screen_shows(&tab, "STEPS-DONE", Duration::from_secs(30));
    for h in [
        "localhost",
        "127.0.0.1",
        "[::1]",
        "127.0.0.2",
        "[::ffff:127.0.0.3]",
    ] {
        assert!(screen.contains(&format!("{h}=403")), "{h}:\n{screen}");
    }
    assert!(s.pending().is_empty(), "asked again: {:?}", s.pending());
    drop(window);
}
