//! The privilege model end to end (issue 6), as a non-root user under a real
//! `systemd --user`: a sandboxed agent (bash inside bubblewrap) uses the real
//! CLI from inside its tab and is held to the matrix; an unsandboxed agent
//! doing the same succeeds; strangers holding a tab's secret, re-parented
//! processes and replaced programs lose the tab's identity; a sandboxed
//! agent's message to an unsandboxed one waits under F3 until approved.

mod handles;
mod reports;
mod session;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::sysenv::{wait_until, SystemdEnv};

const HOOK_REFUSED: &str = "MESSAGE_ID=6f3c1e2a9b7d4c58a1e0f2b3c4d5e601";

/// Every restricted operation, run through the real CLI from inside a tab;
/// each leaves `<out>/<name>.rc` and `<name>.txt` (stdout and stderr).
const OPS: &str = r#"#!/bin/sh
out=$1 agent=$2 term=$3 self=$4
mkdir -p "$out"
op() { name=$1; shift; "$NERDR_BIN" "$@" > "$out/$name.txt" 2>&1; echo $? > "$out/$name.rc"; }
op read-agent read "$agent"
op read-term read "$term"
op send-term send "$term" "echo typed-into-terminal"
op tabs tabs --json
op approvals approvals
op terminal terminal "$self"
op start-unsandboxed agent sh
printf '#!/bin/sh\ntouch "$0.ran"\nexec sleep 1000\n' > "$out/prog"; chmod +x "$out/prog"
op start-program agent -- "$out/prog"
op restart-agent restart --force "$agent"
op close-term close "$term"
op close-agent close "$agent"
echo "ops-done-$(basename "$out")"
"#;

struct Setup {
    env: SystemdEnv,
    work: PathBuf,
}

impl Setup {
    fn new() -> Option<Setup> {
        let env = SystemdEnv::start()?;
        env.run(&["nerdr", "service", "install"]);
        let home = env.home().to_path_buf();
        let work = home.join("work");
        env.write_user_file("work/ops.sh", OPS);
        // The sandboxed agent: only the work folder writable.
        let agents = env.sh_and_boxed_agents(&work);
        env.write_user_file(
            ".config/nerdr/config.toml",
            format!("{agents}[plugins]\napproval_timeout_secs = 5\n"),
        );
        Some(Setup { env, work })
    }

    fn ok(&self, args: &[&str]) -> String {
        self.env.nerdr_ok_in(&self.work, args)
    }

    fn screen_shows(&self, tab: &str, needle: &str) {
        let mut last = String::new();
        let ok = crate::support::poll(Duration::from_secs(20), || {
            last = self.ok(&["read", tab]);
            last.contains(needle)
        });
        assert!(ok, "tab {tab} never showed {needle:?}:\n{last}");
    }

    fn tabs(&self) -> Vec<serde_json::Value> {
        serde_json::from_str(&self.ok(&["tabs", "--json"])).unwrap()
    }

    fn pid(&self, tab: &str) -> u32 {
        let tabs = self.tabs();
        let t = tabs.iter().find(|t| t["id"] == tab).expect("tab listed");
        t["pid"].as_u64().expect("running") as u32
    }

    /// Run ops.sh inside `tab` against the given targets; the results.
    fn run_ops(&self, tab: &str, name: &str, agent: &str, term: &str) -> Results {
        let out = self.work.join(name);
        self.ok(&[
            "send",
            tab,
            &format!("sh ops.sh {} {agent} {term} {tab}", out.display()),
        ]);
        self.screen_shows(tab, &format!("ops-done-{name}"));
        Results(out)
    }
}

struct Results(PathBuf);

impl Results {
    fn rc(&self, op: &str) -> i32 {
        std::fs::read_to_string(self.0.join(format!("{op}.rc")))
            .unwrap_or_else(|e| panic!("{op}.rc: {e}"))
            .trim()
            .parse()
            .unwrap()
    }
    fn text(&self, op: &str) -> String {
        std::fs::read_to_string(self.0.join(format!("{op}.txt"))).unwrap()
    }
}

/// A file the shell has finished writing (`echo $? > f` creates it first).
fn written(p: &Path) -> bool {
    std::fs::read_to_string(p).is_ok_and(|t| t.ends_with('\n'))
}

fn set_mode(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

impl Setup {
    /// `nerdr ARGS` run as tab `tab`'s program would run it: with its
    /// secret (read from its environment, as any process of the user
    /// could) on the hook socket.
    fn as_tab(&self, tab: &str, args: &[&str]) -> std::process::Output {
        let mut cmd = self.env.user_cmd(&[&["nerdr"], args].concat());
        cmd.current_dir(&self.work)
            .env("NERDR_TAB", secret_of(self.pid(tab)))
            .env(
                "NERDR_SOCKET",
                self.env.home().join(".local/state/nerdr/nerdr.sock"),
            );
        cmd.output().unwrap()
    }
}

/// The `NERDR_TAB` secret of a running program, as any process of the
/// user could read it.
fn secret_of(pid: u32) -> String {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    environ
        .split(|b| *b == 0)
        .find_map(|v| v.strip_prefix(b"NERDR_TAB="))
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .expect("NERDR_TAB in the environment")
}

const RESTRICTED: [(&str, &str); 11] = [
    ("read-agent", "read"),
    ("read-term", "read"),
    ("send-term", "send"),
    ("approvals", "approvals"),
    ("terminal", "terminal"),
    ("start-unsandboxed", "agent"),
    // Any program run as it is (`nerdr agent -- CMD`) is unsandboxed.
    ("start-program", "agent"),
    ("restart-agent", "restart"),
    ("close-term", "close"),
    ("close-agent", "close"),
    ("tabs", "tabs"),
];

#[test]
fn a_sandboxed_tab_is_held_to_the_matrix_and_an_unsandboxed_one_is_not() {
    let Some(s) = Setup::new() else { return };
    let plain = s.ok(&["agent", "sh"]);
    let boxed = s.ok(&["agent", "boxed"]);
    let term = s.ok(&["terminal", &plain]);
    s.screen_shows(&boxed, "$");

    let r = s.run_ops(&boxed, "boxed-ops", &plain, &term);
    for (op, name) in RESTRICTED {
        if op == "tabs" {
            continue;
        }
        assert_ne!(r.rc(op), 0, "{op} from a sandboxed tab: {}", r.text(op));
        // A tab outside every sandbox reads as one that does not exist.
        let want = match op {
            "read-agent" | "restart-agent" | "close-agent" => format!("no tab `{plain}`"),
            "read-term" | "send-term" | "close-term" => format!("no tab `{term}`"),
            _ => format!("refused `nerdr {name}`"),
        };
        assert!(r.text(op).contains(&want), "{op}: {}", r.text(op));
    }
    // `nerdr tabs` shows the sandboxed agent its own tab only.
    assert_eq!(r.rc("tabs"), 0, "{}", r.text("tabs"));
    let seen: Vec<serde_json::Value> = serde_json::from_str(&r.text("tabs")).unwrap();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0]["id"], boxed.as_str());
    // Nothing happened: every tab is still there, the terminal untouched,
    // no program started.
    assert_eq!(s.tabs().len(), 3);
    assert!(
        !r.0.join("prog.ran").exists(),
        "a sandboxed tab ran a program"
    );
    assert!(!s.ok(&["read", &term]).contains("typed-into-terminal"));

    // Each refusal is a journal entry naming the tab (never its secret),
    // the operation and the reason.
    let secret = secret_of(s.pid(&boxed));
    wait_until(
        "the refusals in the journal",
        Duration::from_secs(10),
        || s.env.journal(&[HOOK_REFUSED]).len() >= 9,
    );
    let entries = s.env.journal(&[HOOK_REFUSED]);
    for (op, name) in RESTRICTED {
        if op == "tabs" {
            continue;
        }
        assert!(
            entries.iter().any(|e| e["NERDR_OPERATION"] == name
                && e["NERDR_TAB"] == boxed.as_str()
                && e["NERDR_REASON"].as_str().is_some_and(|r| r.len() > 10)),
            "no journal entry for {op}: {entries:#?}"
        );
    }
    let all = serde_json::to_string(&entries).unwrap();
    assert!(!all.contains(&secret), "the secret reached the journal");
    // `nerdr log --hook` lists them for the person.
    let log = s.ok(&["log", "--hook"]);
    assert!(
        log.contains("hook-refused") && log.contains("operation=terminal"),
        "{log}"
    );

    // The same from the unsandboxed agent's tab, against another agent and
    // terminal: every one succeeds.
    let other = s.ok(&["agent", "sh"]);
    let term2 = s.ok(&["terminal", &other]);
    s.screen_shows(&other, "$");
    let r = s.run_ops(&plain, "plain-ops", &other, &term2);
    for (op, _) in RESTRICTED {
        assert_eq!(r.rc(op), 0, "{op} from an unsandboxed tab: {}", r.text(op));
    }
    let seen: Vec<serde_json::Value> = serde_json::from_str(&r.text("tabs")).unwrap();
    assert!(
        seen.len() >= 4,
        "an unsandboxed agent sees every tab: {seen:?}"
    );
}

/// Each request naming a tab, run from inside a tab: `<out>/<name>.rc`
/// and `<name>.txt`, with the tab id in the output replaced by `ID`.
const NAMED: &str = r#"#!/bin/sh
out=$1 name=$2 id=$3
mkdir -p "$out"
op() { what=$1; shift; "$NERDR_BIN" "$@" > "$out/$name-$what.raw" 2>&1; echo $? > "$out/$name-$what.rc"
  sed "s/$id/ID/g" "$out/$name-$what.raw" > "$out/$name-$what.txt"; }
op read read "$id"
op send send "$id" "echo hi"
op terminal terminal "$id"
op restart restart "$id"
op close close --remove-worktree "$id"
echo "named-done-$name"
"#;

const NAMED_OPS: [&str; 5] = ["read", "send", "terminal", "restart", "close"];

#[test]
fn a_sandboxed_agent_cannot_tell_a_forbidden_tab_from_a_missing_one() {
    let Some(s) = Setup::new() else { return };
    s.env.write_user_file("work/named.sh", NAMED);
    let plain = s.ok(&["agent", "sh"]);
    let term = s.ok(&["terminal", &plain]);
    let boxed = s.ok(&["agent", "boxed"]);
    s.screen_shows(&boxed, "$");
    let out = s.work.join("named");
    for (name, id) in [("missing", "0badc0de"), ("agent", &plain), ("term", &term)] {
        s.ok(&[
            "send",
            &boxed,
            &format!("sh named.sh {} {name} {id}", out.display()),
        ]);
        s.screen_shows(&boxed, &format!("named-done-{name}"));
    }
    let read = |f: String| std::fs::read_to_string(out.join(&f)).unwrap();
    for op in NAMED_OPS {
        let missing = (
            read(format!("missing-{op}.rc")),
            read(format!("missing-{op}.txt")),
        );
        assert_ne!(missing.0.trim(), "0", "{op}: {}", missing.1);
        assert!(missing.1.contains("no tab `ID`"), "{op}: {}", missing.1);
        for kind in ["agent", "term"] {
            if (kind, op) == ("agent", "send") {
                // Queued for the person's yes, which tells the tab exists
                // (see SECURITY.md, Limits).
                continue;
            }
            let got = (
                read(format!("{kind}-{op}.rc")),
                read(format!("{kind}-{op}.txt")),
            );
            assert_eq!(
                got, missing,
                "{op} on the {kind} tab reads unlike a missing tab"
            );
        }
    }
    // Nothing happened to them, and the journal has the real refusals.
    assert_eq!(s.tabs().len(), 3);
    wait_until(
        "the refusals in the journal",
        Duration::from_secs(10),
        || {
            s.env.journal(&[HOOK_REFUSED]).iter().any(|e| {
                e["NERDR_OPERATION"] == "read"
                    && e["MESSAGE"]
                        .as_str()
                        .is_some_and(|m| m.contains(&format!("on tab {plain}")))
            })
        },
    );
}

#[test]
fn strangers_with_a_secret_and_reparented_processes_are_not_the_tab() {
    let Some(s) = Setup::new() else { return };
    let plain = s.ok(&["agent", "sh"]);
    let boxed = s.ok(&["agent", "boxed"]);
    s.screen_shows(&boxed, "$");
    let hook = s.env.home().join(".local/state/nerdr/nerdr.sock");
    let as_stranger = |secret: &str, args: &[&str]| {
        let mut cmd = s.env.user_cmd(&[&["nerdr"], args].concat());
        cmd.current_dir(&s.work)
            .env("NERDR_TAB", secret)
            .env("NERDR_SOCKET", &hook);
        cmd.output().unwrap()
    };
    // A process outside every tab with a stolen secret: refused for an
    // unsandboxed tab, a sandboxed caller for a sandboxed one.
    let out = as_stranger(&secret_of(s.pid(&plain)), &["tabs"]);
    assert!(!out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("not from a program of tab"));
    let out = as_stranger(&secret_of(s.pid(&boxed)), &["tabs", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let seen: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(seen.len(), 1);
    let out = as_stranger(&secret_of(s.pid(&boxed)), &["read", &plain]);
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("no tab `{plain}`")));

    // A process the agent started that double-forks and whose parent exits
    // is re-parented away from the agent: no longer provably the tab's.
    s.ok(&[
        "send",
        &plain,
        "(sh -c 'sleep 2; \"$NERDR_BIN\" tabs > orphan.txt 2>&1; echo $? > orphan.rc' &); echo forked",
    ]);
    let rc = s.work.join("orphan.rc");
    wait_until("the orphan to ask", Duration::from_secs(20), || {
        written(&rc)
    });
    assert_eq!(std::fs::read_to_string(&rc).unwrap().trim(), "1");
    let said = std::fs::read_to_string(s.work.join("orphan.txt")).unwrap();
    assert!(said.contains("not from a program of tab"), "{said}");
    // The same from a sandboxed tab: it keeps only a sandboxed caller's powers.
    s.ok(&[
        "send",
        &boxed,
        &format!(
            "(sh -c 'sleep 2; \"$NERDR_BIN\" read {plain} > borphan.txt 2>&1; echo $? > borphan.rc' &); echo forked"
        ),
    ]);
    let rc = s.work.join("borphan.rc");
    wait_until(
        "the sandboxed orphan to ask",
        Duration::from_secs(20),
        || written(&rc),
    );
    let said = std::fs::read_to_string(s.work.join("borphan.txt")).unwrap();
    assert!(said.contains(&format!("no tab `{plain}`")), "{said}");

    // A program that exits: what it left behind still holds the secret, but
    // the tab's recorded program is gone, so it is no one's; and once the
    // tab's agent is replaced, the old secret names nothing.
    let old = secret_of(s.pid(&plain));
    s.ok(&[
        "send",
        &plain,
        "(sh -c 'sleep 3; \"$NERDR_BIN\" tabs > late.txt 2>&1; echo $? > late.rc' &); exit",
    ]);
    let rc = s.work.join("late.rc");
    wait_until("the leftover to ask", Duration::from_secs(20), || {
        written(&rc)
    });
    assert_eq!(std::fs::read_to_string(&rc).unwrap().trim(), "1");
    let said = std::fs::read_to_string(s.work.join("late.txt")).unwrap();
    assert!(said.contains("not from a program of tab"), "{said}");
    s.ok(&["restart", &plain]);
    s.screen_shows(&plain, "$");
    assert_ne!(
        secret_of(s.pid(&plain)),
        old,
        "a new program gets a new secret"
    );
    let out = as_stranger(&old, &["tabs"]);
    assert!(!out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("names no open tab"));
}

#[test]
fn a_sandboxed_agents_message_waits_for_approval_under_f3() {
    let Some(s) = Setup::new() else { return };
    let plain = s.ok(&["agent", "sh"]);
    let boxed = s.ok(&["agent", "boxed"]);
    s.screen_shows(&boxed, "$");
    s.ok(&[
        "send",
        &boxed,
        &format!("\"$NERDR_BIN\" send {plain} 'echo from-$((6*7))-boxed'; echo sent-$?"),
    ]);
    s.screen_shows(&boxed, "sent-0");
    s.screen_shows(&boxed, "waits for the user's approval");
    // Not delivered: the unsandboxed agent's screen has no trace of it.
    assert!(!s.ok(&["read", &plain]).contains("from-"));
    let listed = s.ok(&["approvals"]);
    assert!(
        listed.contains(&format!("from sandboxed tab {boxed}")),
        "{listed}"
    );

    // The person's window: F3 shows the question, y approves it.
    let sock = s.work.join("tmux.sock");
    let sock = sock.to_str().unwrap();
    let tmux = |args: &[&str]| {
        let mut v = vec!["tmux", "-f", "/dev/null", "-S", sock];
        v.extend_from_slice(args);
        let mut cmd = s.env.user_cmd(&v);
        cmd.current_dir(&s.work).env("TERM", "xterm-256color");
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "tmux {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    tmux(&[
        "new-session",
        "-d",
        "-x",
        "120",
        "-y",
        "30",
        "nerdr; sleep 600",
    ]);
    let screen_has = |needle: &str| {
        let mut last = String::new();
        let ok = crate::support::poll(Duration::from_secs(15), || {
            last = tmux(&["capture-pane", "-p", "-t", "0"]);
            last.contains(needle)
        });
        assert!(ok, "the window never showed {needle:?}:\n{last}");
    };
    screen_has("waiting for your approval");
    tmux(&["send-keys", "-t", "0", "C-b", "F3"]);
    screen_has("Approval queue");
    screen_has(&format!("from sandboxed tab {boxed}"));
    tmux(&["send-keys", "-t", "0", "y"]);
    s.screen_shows(&plain, "from-42-boxed");
    assert!(s.ok(&["approvals"]).contains("nothing waits"));
    tmux(&["kill-server"]);
}

#[test]
fn a_sandboxed_agents_plugin_runs_only_once_approved() {
    let Some(s) = Setup::new() else { return };
    let plugin = s.env.write_user_file(
        ".config/nerdr/plugins/mark",
        "#!/bin/sh\necho \"ran $1\" >> \"$HOME/plugin-ran\"\necho plugin-said-$1\n",
    );
    set_mode(&plugin, 0o755);
    let ran = s.env.home().join("plugin-ran");
    let boxed = s.ok(&["agent", "boxed"]);
    s.screen_shows(&boxed, "$");
    // Unanswered: it waits, then does not run (timeout 5 s in config).
    s.ok(&[
        "send",
        &boxed,
        "\"$NERDR_BIN\" plugin mark one; echo plugin-rc-$?",
    ]);
    wait_until(
        "the plugin run to be asked about",
        Duration::from_secs(10),
        || s.ok(&["approvals"]).contains("run plugin `mark`"),
    );
    s.screen_shows(&boxed, "plugin-rc-1");
    s.screen_shows(&boxed, "no one answered within 5 s");
    assert!(!ran.exists(), "the plugin ran without approval");
    // Approved: it runs once, and its output reaches the agent.
    s.ok(&[
        "send",
        &boxed,
        "\"$NERDR_BIN\" plugin mark two; echo plugin-rc-$?",
    ]);
    let mut id = String::new();
    wait_until("the second request", Duration::from_secs(10), || {
        let listed = s.ok(&["approvals"]);
        id = listed
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_string();
        listed.contains("run plugin `mark` with arguments [\"two\"]")
    });
    s.ok(&["approvals", "approve", &id]);
    s.screen_shows(&boxed, "plugin-said-two");
    s.screen_shows(&boxed, "plugin-rc-0");
    assert_eq!(std::fs::read_to_string(&ran).unwrap(), "ran two\n");
    // The user runs it directly, unasked.
    assert_eq!(s.ok(&["plugin", "mark", "three"]), "plugin-said-three");
}
