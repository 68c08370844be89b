//! Hosts on neither list asked of the person: once, for the run, denied, unanswered, with no one to ask.

use super::*;

#[test]
fn an_unlisted_host_is_asked_once_again_and_this_session_not_again_and_deny_holds() {
    let steps = "p=$(cat \"$HOME/ports\")\nset -- $p\n\
                 r one $1; r two $1; r three $1; r four $2; r five $2\n";
    let Some(s) = Asking::new(steps, "") else {
        return;
    };
    let [p1, p2] = s.ports;
    s.env.write_user_file("ports", format!("{p1} {p2}\n"));
    let (tab, _, window) = s.start_in_a_window();

    // One: asked; allowed once from the command line.
    let q1 = s.question();
    assert_eq!(
        (q1["host"].as_str(), q1["port"].as_u64()),
        (Some("asked.test"), Some(p1 as u64))
    );
    assert_eq!(q1["tab"], tab.as_str());
    let question = q1["question"].as_str().unwrap();
    assert!(
        question.contains(&format!(
            "of tab {tab} (asker) asks to connect to asked.test:{p1}"
        )),
        "{question}"
    );
    s.ok(&["approvals", "approve", q1["id"].as_str().unwrap()]);
    s.screen_shows(&tab, "one=200", Duration::from_secs(20));

    // Two: the same host is asked again; the window answers `s`.
    let q2 = s.question();
    assert_ne!(q2["id"], q1["id"]);
    assert_eq!(q2["host"], "asked.test");
    window.tmux(&["send-keys", "-t", "0", "C-b", "F3"]);
    window.shows("Approval queue");
    window.shows(&format!("asked.test:{p1}"));
    window.shows("s for this sandbox run");
    window.tmux(&["send-keys", "-t", "0", "s"]);

    // Three: not asked again; four (another port) asked and denied; five
    // refused without asking.
    let q4 = s.question();
    assert_eq!(
        q4["port"].as_u64(),
        Some(p2 as u64),
        "three was asked: {q4}"
    );
    s.ok(&["approvals", "deny", q4["id"].as_str().unwrap()]);
    let screen = s.screen_shows(&tab, "STEPS-DONE", Duration::from_secs(30));
    for want in ["one=200", "two=200", "three=200", "four=403", "five=403"] {
        assert!(screen.contains(want), "{want}:\n{screen}");
    }
    assert!(s.pending().is_empty(), "{:?}", s.pending());

    // The trail: three questions, their answers, three connections.
    let mut net = Vec::new();
    wait_until("the answers in the trail", Duration::from_secs(10), || {
        net = s.net_lines();
        // A repeated refusal is written once its merging second ends.
        let refused: u64 = net
            .iter()
            .filter(|l| l["phase"] == "refused")
            .map(|l| l["count"].as_u64().unwrap())
            .sum();
        net.iter().filter(|l| l["phase"] == "closed").count() == 3 && refused == 2
    });
    let of = |phase: &str| -> Vec<String> {
        net.iter()
            .filter(|l| l["phase"] == phase)
            .map(|l| {
                format!(
                    "{}:{} {}",
                    l["host"].as_str().unwrap(),
                    l["port"],
                    l["rule"].as_str().unwrap()
                )
            })
            .collect()
    };
    assert_eq!(of("asked").len(), 3, "{net:#?}");
    assert_eq!(
        of("answered"),
        [
            format!("asked.test:{p1} allowed once"),
            format!("asked.test:{p1} allowed for this run"),
            format!("asked.test:{p2} denied"),
        ],
        "{net:#?}"
    );
    assert_eq!(
        of("opened"),
        [
            format!("asked.test:{p1} allowed once by the user"),
            format!("asked.test:{p1} allowed for this sandbox run by the user"),
            format!("asked.test:{p1} allowed for this sandbox run by the user"),
        ],
        "{net:#?}"
    );
    let refused: Vec<_> = net
        .iter()
        .filter(|l| l["phase"] == "refused")
        .map(|l| (l["rule"].as_str().unwrap(), l["count"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        refused.iter().map(|r| r.1).sum::<u64>(),
        2,
        "four and five: {net:#?}"
    );
    assert!(
        refused.iter().all(|r| r.0 == "denied by the user"),
        "{net:#?}"
    );
    drop(window);
}

#[test]
fn a_question_no_one_answers_is_refused_in_time_and_other_connections_go_on() {
    let steps = "p=$(cat \"$HOME/ports\")\n\
                 start=$(date +%s)\n\
                 (curl -s -m 100 -w '\\ncode=%{http_code}\\n' \"http://asked.test:$p/\" > one.txt; \
                  echo one >> order.txt) &\n\
                 sleep 1\n\
                 curl -s -m 10 -o /dev/null -w 'other=%{http_code}\\n' \"http://127.0.0.1:$p/\" >> order.txt\n\
                 wait\n\
                 echo elapsed=$(( $(date +%s) - start ))\n";
    let Some(s) = Asking::new(steps, "[sandbox]\nask_timeout_secs = 3\n") else {
        return;
    };
    s.env.write_user_file("ports", format!("{}\n", s.ports[0]));
    let (tab, worktree) = s.start();
    let window = s.window();
    window.shows("asker");
    let t0 = Instant::now();
    s.go(&worktree);
    let q = s.question();
    assert!(
        q["question"].as_str().unwrap().contains("refused in 3 s"),
        "{q}"
    );
    let screen = s.screen_shows(&tab, "STEPS-DONE", Duration::from_secs(30));
    let waited = t0.elapsed();
    let elapsed: u64 = screen
        .lines()
        .find_map(|l| l.trim().strip_prefix("elapsed="))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no elapsed line:\n{screen}"));
    assert!(
        (3..=8).contains(&elapsed),
        "refused after {elapsed} s, not about 3 (test waited {waited:?})"
    );
    let one = std::fs::read_to_string(worktree.join("one.txt")).unwrap();
    assert!(one.contains("code=403"), "{one}");
    assert!(
        one.contains("did not answer within 3 s"),
        "the body says why: {one}"
    );
    // The allowed request was served while the question waited.
    let order = std::fs::read_to_string(worktree.join("order.txt")).unwrap();
    assert_eq!(order, "other=200\none\n", "{order}");
    // The question left the queue with its time-out.
    assert!(s.pending().is_empty(), "{:?}", s.pending());
    let mut net = Vec::new();
    wait_until("the time-out in the trail", Duration::from_secs(10), || {
        net = s.net_lines();
        net.iter().any(|l| l["phase"] == "answered")
    });
    assert!(
        net.iter()
            .any(|l| l["phase"] == "answered" && l["rule"] == "no answer within 3 s"),
        "{net:#?}"
    );
    drop(window);
}

#[test]
fn with_no_window_or_outside_nerdr_the_refusal_is_at_once_and_says_how_to_allow() {
    let steps = "p=$(cat \"$HOME/ports\")\n\
                 start=$(date +%s)\n\
                 curl -s -m 100 -w '\\ncode=%{http_code}\\n' \"http://asked.test:$p/\" > nowin.txt\n\
                 echo elapsed=$(( $(date +%s) - start )) >> nowin.txt\n";
    let Some(s) = Asking::new(steps, "") else {
        return;
    };
    let p = s.ports[0];
    s.env.write_user_file("ports", format!("{p}\n"));
    let (tab, worktree) = s.start();
    s.go(&worktree);
    s.screen_shows(&tab, "STEPS-DONE", Duration::from_secs(30));
    let body = std::fs::read_to_string(worktree.join("nowin.txt")).unwrap();
    let said = |body: &str, how_not: &str| {
        for want in [
            &format!("Blocked by nerdr network policy: asked.test:{p}"),
            "code=403",
            how_not,
            &format!("allowed: 127.0.0.1:{p}, 127.0.0.1:{}", s.ports[1]),
            "to allow it: add \"asked.test\" to sandbox.network.allowedDomains in \
             $XDG_CONFIG_HOME/nerdr/sandbox.json or ~/.claude/settings.json",
        ] {
            assert!(body.contains(want), "{want:?} missing:\n{body}");
        }
    };
    said(
        &body,
        "not asked: no window is attached to this tab's session",
    );
    assert!(
        body.contains("elapsed=0") || body.contains("elapsed=1"),
        "{body}"
    );
    assert!(s.pending().is_empty(), "{:?}", s.pending());

    // Outside any nerdr tab: refused the same way, saying why.
    let script = format!("curl -s -m 20 -w '\\ncode=%{{http_code}}\\n' http://asked.test:{p}/");
    let out = sandbox_sh_with_settings(&s.env, &s.proj, &s.settings, &script);
    said(&text(&out.stdout), "not run from a nerdr tab");
}
