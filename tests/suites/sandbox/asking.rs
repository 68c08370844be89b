//! Hosts on neither network list ask the person, and the program is told
//! its limits (issue 13, item 5), end to end: a real core under the
//! private `systemd --user`, a sandboxed agent (`nerdr sandbox -- asker`,
//! passing nerdr's own check) whose requests go through the real proxy,
//! a window (the real `nerdr` in tmux) and the real `nerdr approvals`.
//! `asked.test` resolves to 127.0.0.1 through an `/etc/hosts` bound over
//! in the environment's private mount namespace, so an unlisted *name*
//! reaches a loopback origin once allowed (its address is opened by an IP
//! entry, as a name resolving to a loopback address must be).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::{setup, text};
use crate::support::sysenv::{wait_until, SystemdEnv};

/// The agent: waits for `go` in its worktree (a window attached first),
/// then runs `~/steps.sh`. `--help` is what nerdr asks of it first.
const ASKER: &str = "#!/bin/sh\n\
    case \"$1\" in --help) echo 'Usage: asker'; exit 0;; esac\n\
    until [ -e go ]; do sleep 0.1; done\n\
    . \"$HOME/steps.sh\"\n\
    echo STEPS-DONE\n\
    exec sleep 1000\n";

/// `r NAME PORT`: one request to asked.test, its status as `NAME=CODE`.
const R: &str =
    "r() { curl -s -m 100 -o /dev/null -w \"$1=%{http_code}\\n\" \"http://asked.test:$2/\"; }\n";

/// A loopback HTTP server answering every request with `hello`.
fn origin() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut conn in listener.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            let _ = conn.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
            );
        }
    });
    port
}

struct Asking {
    env: SystemdEnv,
    proj: PathBuf,
    /// Two origins, both opened by IP entries.
    ports: [u16; 2],
    settings: PathBuf,
    path: String,
}

impl Asking {
    /// `steps`: the agent's script after `go`; `config`: extra config.toml.
    fn new(steps: &str, config: &str) -> Option<Asking> {
        let env = setup()?;
        env.run(&["nerdr", "service", "install"]);
        let hosts = env.write_user_file("hosts", "127.0.0.1 localhost\n127.0.0.1 asked.test\n");
        env.root_run(&["mount", "--bind", hosts.to_str().unwrap(), "/etc/hosts"]);
        let ports = [origin(), origin()];
        let settings = env.write_user_file(
            ".config/nerdr/sandbox.json",
            format!(
                "{{\"sandbox\": {{\"network\": {{\"allowedDomains\": [\"127.0.0.1:{}\", \
                 \"127.0.0.1:{}\"]}}}}}}",
                ports[0], ports[1]
            ),
        );
        let asker = env.write_user_file("bin/asker", ASKER);
        env.run(&["chmod", "+x", asker.to_str().unwrap()]);
        env.write_user_file("steps.sh", format!("{R}{steps}"));
        env.write_user_file(
            ".config/nerdr/config.toml",
            format!(
                "[agents.asker]\ncommand = [\"nerdr\", \"sandbox\", \"--\", \"asker\"]\n\
                 sandboxed = true\n{config}"
            ),
        );
        let path = format!(
            "{}:{}:/usr/local/bin:/usr/bin:/bin",
            env.home().join("bin").display(),
            env.nerdr().parent().unwrap().display()
        );
        let proj = env.home().join("proj");
        Some(Asking {
            env,
            proj,
            ports,
            settings,
            path,
        })
    }

    fn nerdr(&self, args: &[&str]) -> std::process::Output {
        let mut cmd = self.env.user_cmd(&[&["nerdr"], args].concat());
        cmd.current_dir(&self.proj).env("PATH", &self.path);
        crate::support::sysenv::output_of(&mut cmd)
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.nerdr(args);
        assert!(
            out.status.success(),
            "nerdr {args:?}: {}",
            text(&out.stderr)
        );
        text(&out.stdout)
    }

    /// Start the agent; its tab id and worktree.
    fn start(&self) -> (String, PathBuf) {
        let tab = self.ok(&["agent", "asker"]).trim().to_string();
        let tabs: Vec<serde_json::Value> =
            serde_json::from_str(&self.ok(&["tabs", "--json"])).unwrap();
        let t = tabs.iter().find(|t| t["id"] == tab.as_str()).unwrap();
        let worktree = PathBuf::from(t["worktree"].as_str().expect("a worktree"));
        (tab, worktree)
    }

    /// Let the agent's steps begin.
    fn go(&self, worktree: &std::path::Path) {
        self.env
            .run(&["touch", worktree.join("go").to_str().unwrap()]);
    }

    fn screen_shows(&self, tab: &str, needle: &str, within: Duration) -> String {
        let mut last = String::new();
        let ok = crate::support::poll(within, || {
            last = self.ok(&["read", tab]);
            last.contains(needle)
        });
        assert!(ok, "tab {tab} never showed {needle:?}:\n{last}");
        last
    }

    fn pending(&self) -> Vec<serde_json::Value> {
        serde_json::from_str(&self.ok(&["approvals", "--json"])).unwrap()
    }

    /// The network question that waits (polling until one does).
    fn question(&self) -> serde_json::Value {
        let mut found = None;
        let ok = crate::support::poll(Duration::from_secs(30), || {
            found = self.pending().into_iter().find(|p| p["kind"] == "network");
            found.is_some()
        });
        assert!(ok, "no network question was asked: {:?}", self.pending());
        found.unwrap()
    }

    /// Every `net` line of every audit trail (the check's run has one too).
    fn net_lines(&self) -> Vec<serde_json::Value> {
        let dir = self.env.home().join(".local/share/nerdr/audit");
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .flat_map(|f| {
                std::fs::read_to_string(f.path())
                    .unwrap()
                    .lines()
                    .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
                    .collect::<Vec<_>>()
            })
            .filter(|l| l["event"] == "net")
            .collect()
    }

    /// A window on the session: the real `nerdr` in tmux.
    fn window(&self) -> Window<'_> {
        let w = Window {
            s: self,
            sock: self.proj.join("tmux.sock").display().to_string(),
        };
        w.tmux(&[
            "new-session",
            "-d",
            "-x",
            "150",
            "-y",
            "40",
            "nerdr; sleep 600",
        ]);
        w
    }
}

struct Window<'a> {
    s: &'a Asking,
    sock: String,
}

impl Window<'_> {
    fn tmux(&self, args: &[&str]) -> String {
        let mut v = vec!["tmux", "-f", "/dev/null", "-S", &self.sock];
        v.extend_from_slice(args);
        let mut cmd = self.s.env.user_cmd(&v);
        cmd.current_dir(&self.s.proj)
            .env("TERM", "xterm-256color")
            .env("PATH", &self.s.path);
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "tmux {args:?}: {out:?}");
        text(&out.stdout)
    }

    fn shows(&self, needle: &str) {
        let mut last = String::new();
        let ok = crate::support::poll(Duration::from_secs(20), || {
            last = self.tmux(&["capture-pane", "-p", "-J", "-t", "0"]);
            last.contains(needle)
        });
        assert!(ok, "the window never showed {needle:?}:\n{last}");
    }
}

impl Drop for Window<'_> {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

#[test]
fn an_unlisted_host_is_asked_once_again_and_this_session_not_again_and_deny_holds() {
    let steps = "p=$(cat \"$HOME/ports\")\nset -- $p\n\
                 r one $1; r two $1; r three $1; r four $2; r five $2\n";
    let Some(s) = Asking::new(steps, "") else {
        return;
    };
    let [p1, p2] = s.ports;
    s.env.write_user_file("ports", format!("{p1} {p2}\n"));
    let (tab, worktree) = s.start();
    let window = s.window();
    window.shows("asker");
    s.go(&worktree);

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
    let settings = s.settings.display().to_string();
    let script = format!("curl -s -m 20 -w '\\ncode=%{{http_code}}\\n' http://asked.test:{p}/");
    let mut c = s.env.user_cmd(&[
        "nerdr",
        "sandbox",
        "--settings",
        &settings,
        "--",
        "sh",
        "-c",
        &script,
    ]);
    c.current_dir(&s.proj);
    let out = crate::support::sysenv::output_of(&mut c);
    said(&text(&out.stdout), "not run from a nerdr tab");
}

#[test]
fn from_its_worktree_a_sandboxed_agent_sees_its_own_tab_in_nerdr_tabs() {
    // The agent's folder is its worktree, which is no session's folder:
    // `nerdr tabs` there still lists its own session (its own tab only).
    let steps = "\"$NERDR_BIN\" tabs --json > tabs.json 2> tabs.err\n";
    let Some(s) = Asking::new(steps, "") else {
        return;
    };
    let (tab, worktree) = s.start();
    s.go(&worktree);
    s.screen_shows(&tab, "STEPS-DONE", Duration::from_secs(30));
    let said = std::fs::read_to_string(worktree.join("tabs.json")).unwrap();
    let err = std::fs::read_to_string(worktree.join("tabs.err")).unwrap();
    let seen: Vec<serde_json::Value> =
        serde_json::from_str(&said).unwrap_or_else(|e| panic!("{e}: {said:?} {err}"));
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0]["id"], tab.as_str(), "{seen:?}");
}

#[test]
fn the_limits_file_inside_names_each_limit() {
    let Some(env) = setup() else { return };
    env.write_user_file(".ssh/id_ed25519", "secret\n");
    let settings = env.write_user_file(
        "limits-settings.json",
        "{\"sandbox\": {\"network\": {\"allowedDomains\": [\"example.com\"]}}}",
    );
    let script = "echo \"var=$NERDR_SANDBOX_LIMITS\"; cat \"$NERDR_SANDBOX_LIMITS\"; \
                  (echo x > \"$NERDR_SANDBOX_LIMITS\") 2>/dev/null && echo WRITABLE || echo READ-ONLY";
    let proj = env.home().join("proj");
    let settings = settings.display().to_string();
    let mut c = env.user_cmd(&[
        "nerdr",
        "sandbox",
        "--settings",
        &settings,
        "--",
        "sh",
        "-c",
        script,
    ]);
    c.current_dir(&proj);
    let out = crate::support::sysenv::output_of(&mut c);
    let said = text(&out.stdout);
    assert!(out.status.success(), "{said}\n{}", text(&out.stderr));
    let home = env.home().display().to_string();
    let section = |title: &str| -> String {
        said.split("\n\n")
            .find(|s| s.starts_with(title))
            .map(|s| format!("{s}\n"))
            .unwrap_or_else(|| panic!("no {title:?} section:\n{said}"))
    };
    assert!(
        said.starts_with("var=/tmp/nerdr-sandbox-limits.txt\n"),
        "{said}"
    );
    assert!(
        section("Writable").contains(&format!("  {home}/proj\n")),
        "{said}"
    );
    let read_only = section("Read-only");
    for p in [".git/hooks", ".git/config"] {
        assert!(
            read_only.contains(&format!("  {home}/proj/{p}\n")),
            "{p}: {said}"
        );
    }
    let hidden = section("Hidden");
    // nerdr's state names every tab: hidden, but for its sockets.
    assert!(
        hidden.contains(&format!("  {home}/.local/state/nerdr\n")),
        "{said}"
    );
    assert!(hidden.contains(&format!("  {home}/.ssh\n")), "{said}");
    assert!(
        hidden.contains(&env.runtime_dir().display().to_string()),
        "{said}"
    );
    let network = section("Network");
    assert!(
        network.contains("nerdr's proxy at http://127.0.0.1:3128"),
        "{said}"
    );
    assert!(network.contains("allowed: example.com"), "{said}");
    assert!(
        network.contains("refused with 403"),
        "outside a tab: {said}"
    );
    let privileges = section("Privileges");
    for want in ["no new privileges", "no nested namespaces", "TIOCSTI"] {
        assert!(privileges.contains(want), "{want}: {said}");
    }
    assert!(said.trim_end().ends_with("READ-ONLY"), "{said}");
    // Nothing was left on the host for it.
    assert!(!env.ns_path("/tmp/nerdr-sandbox-limits.txt").exists());
}

/// Review (h4): the program inside has its tab's secret and the hook
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
    let (tab, worktree) = s.start();
    let window = s.window();
    window.shows("asker");
    s.go(&worktree);
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

/// Review (h4): the question names the host as the proxy would open it,
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
    std::fs::write(
        &s.settings,
        "{\"sandbox\": {\"network\": {\"allowLocalBinding\": false}}}",
    )
    .unwrap();
    s.env.write_user_file("ports", format!("{local}\n"));
    let (tab, worktree) = s.start();
    let window = s.window();
    window.shows("asker");
    s.go(&worktree);
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

/// Review (h4): `nerdr sandbox` as the command of a tab not marked
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

/// Review (h4): a program that opens many requests to unlisted hosts at
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
    let (tab, worktree) = s.start();
    let window = s.window();
    window.shows("asker");
    s.go(&worktree);
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

/// Review (h4): a yes is for a host name, never for the address it
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
    let (tab, worktree) = s.start();
    let window = s.window();
    window.shows("asker");
    s.go(&worktree);
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

/// Review (h4): a loop of requests to an unlisted host that cannot be
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

/// Review (h4): with local services closed, a "deny" of this machine's
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
    std::fs::write(
        &s.settings,
        "{\"sandbox\": {\"network\": {\"allowLocalBinding\": false}}}",
    )
    .unwrap();
    s.env.write_user_file("ports", format!("{local}\n"));
    let (tab, worktree) = s.start();
    let window = s.window();
    window.shows("asker");
    s.go(&worktree);
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
