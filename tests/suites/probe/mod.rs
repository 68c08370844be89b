//! The sandbox check (issue 7) against real bubblewrap, as the non-root test
//! user under a real `systemd --user` and journald: a catalogue of wrappers
//! and the verdict each gets, the refusal as the person sees it (the CLI's
//! answer, `nerdr tabs --json`, the tab's screen, the journal, `nerdr log`),
//! checking again on restart, and the same without a holder. The probe run
//! on its own is in `probe_alone`.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::sysenv::SystemdEnv;

const REFUSED_ID: &str = "6f3c1e2a9b7d4c58a1e0f2b3c4d5e602";
const UNCHECKED_ID: &str = "6f3c1e2a9b7d4c58a1e0f2b3c4d5e603";
const PASSED_ID: &str = "6f3c1e2a9b7d4c58a1e0f2b3c4d5e604";
const BWRAP: &str = "/usr/bin/bwrap";

/// A sandbox that gets everything right: the tab's own folder writable, the
/// rest read-only, the runtime dir (client socket and key, user bus) hidden,
/// its own PID namespace and /proc. So that the agent can commit, what a
/// commit in its worktree writes is writable too: the repository's
/// `objects`, `refs` and `logs` and the worktree's own admin folder
/// (`.git/worktrees/<tab>`), while `.git` itself, `info`, `hooks` and
/// `config` stay read-only.
const CORRECT: &str = "gitbinds=''\n\
    gd=$(sed -n 's/^gitdir: //p' \"$PWD/.git\" 2>/dev/null)\n\
    if [ -n \"$gd\" ]; then\n\
      common=$(dirname \"$(dirname \"$gd\")\")\n\
      for d in \"$common/objects\" \"$common/refs\" \"$common/logs\" \"$gd\"; do\n\
        [ -d \"$d\" ] && gitbinds=\"$gitbinds --bind $d $d\"\n\
      done\n\
    fi\n\
    exec bwrap --ro-bind / / --dev /dev --proc /proc --unshare-pid \
    --die-with-parent --tmpfs \"$XDG_RUNTIME_DIR\" --bind \"$PWD\" \"$PWD\" $gitbinds --chdir \"$PWD\"";

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

struct Setup {
    env: SystemdEnv,
    repo: PathBuf,
    bin: PathBuf,
}

impl Setup {
    /// An installed nerdr, a repository with one commit as the session's
    /// folder, and the catalogue's wrappers and stand-in agents in ~/bin.
    fn start() -> Option<Setup> {
        if !Path::new(BWRAP).is_file() {
            crate::support::sysenv::skip(
                "bubblewrap is not installed (apt-get install bubblewrap)",
            );
            return None;
        }
        let env = SystemdEnv::start()?;
        env.run(&["nerdr", "service", "install"]);
        let home = env.home().to_path_buf();
        let bin = home.join("bin");
        let repo = home.join("repo");
        let script = |name: &str, body: &str| {
            let p = env.write_user_file(format!("bin/{name}"), format!("#!/bin/sh\n{body}\n"));
            std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .unwrap();
        };
        // Stand-in agents: say they started, then wait.
        let agent = "case \"$1\" in --help) echo 'Usage: agent [options]'; exit 0;; esac\n\
                     echo AGENT-STARTED; exec sleep 1000";
        // The agent of the correct sandbox commits in its worktree first.
        script(
            "fine",
            &format!(
                "if git -c user.name=a -c user.email=a@example.com commit -q --allow-empty \
                 -m agent; then echo COMMITTED; else echo COMMIT-FAILED; fi\n{agent}"
            ),
        );
        for name in [
            "claude",
            "gitdir",
            "hostrun",
            "homebind",
            "relwrap",
            "scriptwrap",
            "none",
            "bindall",
            "rtvisible",
            "hooks",
            "nopid",
            "nobin",
            "plain",
        ] {
            script(name, agent);
        }
        let hooks = repo.join(".git/hooks");
        script("wrap-ok", &format!("{CORRECT} -- \"$@\""));
        script(
            "wrap-rt",
            "exec bwrap --ro-bind / / --dev /dev --proc /proc --unshare-pid --die-with-parent \
             --bind \"$PWD\" \"$PWD\" --chdir \"$PWD\" -- \"$@\"",
        );
        script(
            "wrap-hooks",
            &format!("{CORRECT} --bind {0} {0} -- \"$@\"", hooks.display()),
        );
        // No PID namespace: the host's /proc comes with the root bind.
        script(
            "wrap-nopid",
            "exec bwrap --ro-bind / / --dev /dev --die-with-parent --tmpfs \"$XDG_RUNTIME_DIR\" \
             --bind \"$PWD\" \"$PWD\" --chdir \"$PWD\" -- \"$@\"",
        );
        // Hides the folder of nerdr's own executable.
        script(
            "wrap-nobin",
            &format!("{CORRECT} --tmpfs \"$(dirname \"$NERDR_BIN\")\" -- \"$@\""),
        );
        // `.git` itself writable (its hooks and config kept read-only).
        let git = repo.join(".git");
        script(
            "wrap-gitdir",
            &format!(
                "{CORRECT} --bind {0} {0} --ro-bind {0}/hooks {0}/hooks --ro-bind {0}/config \
                 {0}/config -- \"$@\"",
                git.display()
            ),
        );
        // The runtime dir and nerdr's config folder hidden where they are,
        // shown again at other paths.
        script(
            "wrap-hostrun",
            &format!(
                "{CORRECT} --tmpfs /mnt --bind \"$XDG_RUNTIME_DIR\" /mnt/hostrun \
                 --bind {0} /mnt/hostcfg --tmpfs {0} -- \"$@\"",
                home.join(".config").display()
            ),
        );
        // The home writable, nerdr's own folders read-only: what nerdr runs
        // or trusts on the host is the agent's to change.
        script(
            "wrap-home",
            &format!(
                "{CORRECT} --bind {0} {0} --ro-bind {0}/.config/nerdr {0}/.config/nerdr \
                 --ro-bind {0}/.local/state/nerdr {0}/.local/state/nerdr --ro-bind {1} {1} \
                 --tmpfs \"$XDG_RUNTIME_DIR\" -- \"$@\"",
                home.display(),
                git.display()
            ),
        );
        let b = |n: &str| bin.join(n).display().to_string();
        let agents = [
            (
                "none",
                format!("[\"env\", \"--\", \"{}\"]", b("none")),
                true,
            ),
            (
                "bindall",
                format!(
                    "[\"{BWRAP}\", \"--bind\", \"/\", \"/\", \"--dev\", \"/dev\", \"--\", \"{}\"]",
                    b("bindall")
                ),
                true,
            ),
            (
                "rtvisible",
                format!("[\"{}\", \"{}\"]", b("wrap-rt"), b("rtvisible")),
                true,
            ),
            (
                "hooks",
                format!("[\"{}\", \"{}\"]", b("wrap-hooks"), b("hooks")),
                true,
            ),
            (
                "nopid",
                format!("[\"{}\", \"{}\"]", b("wrap-nopid"), b("nopid")),
                true,
            ),
            (
                "nobin",
                format!("[\"{}\", \"{}\"]", b("wrap-nobin"), b("nobin")),
                true,
            ),
            (
                "gitdir",
                format!("[\"{}\", \"{}\"]", b("wrap-gitdir"), b("gitdir")),
                true,
            ),
            (
                "hostrun",
                format!("[\"{}\", \"{}\"]", b("wrap-hostrun"), b("hostrun")),
                true,
            ),
            (
                "homebind",
                format!("[\"{}\", \"{}\"]", b("wrap-home"), b("homebind")),
                true,
            ),
            // The wrapper named relative to the agent's folder: the copy
            // in the tab's worktree, which the agent may rewrite.
            (
                "relwrap",
                format!("[\"./sandbox.sh\", \"{}\"]", b("relwrap")),
                true,
            ),
            // A wrapper script the agent may rewrite, given to an
            // interpreter that lies outside its reach.
            (
                "scriptwrap",
                format!("[\"sh\", \"sandbox.sh\", \"{}\"]", b("scriptwrap")),
                true,
            ),
            // No word of the command names `noword`.
            (
                "noword",
                format!("[\"{}\", \"{}\"]", b("wrap-ok"), b("fine")),
                true,
            ),
            (
                "fine",
                format!("[\"{}\", \"{}\"]", b("wrap-ok"), b("fine")),
                true,
            ),
            (
                "claude",
                format!("[\"{}\", \"{}\"]", b("wrap-ok"), b("claude")),
                true,
            ),
            // The same wrapper, not marked sandboxed: no check (for timing).
            (
                "plain",
                format!("[\"{}\", \"{}\"]", b("wrap-ok"), b("plain")),
                false,
            ),
        ];
        let config: String = agents
            .iter()
            .map(|(name, command, sandboxed)| {
                format!("[agents.{name}]\ncommand = {command}\nsandboxed = {sandboxed}\n\n")
            })
            .collect();
        env.write_user_file(".config/nerdr/config.toml", config);
        env.write_user_file("repo/README", "hello\n");
        let rel = env.write_user_file(
            "repo/sandbox.sh",
            format!("#!/bin/sh\n{CORRECT} -- \"$@\"\n"),
        );
        std::fs::set_permissions(&rel, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let s = Setup { env, repo, bin };
        for args in [
            &["git", "init", "-q"][..],
            &["git", "add", "."],
            &[
                "git",
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@example.com",
                "commit",
                "-q",
                "-m",
                "first",
            ],
        ] {
            s.ok(args);
        }
        Some(s)
    }

    fn output(&self, args: &[&str]) -> Output {
        let mut cmd = self.env.user_cmd(args);
        cmd.current_dir(&self.repo);
        cmd.output().unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.output(args);
        assert!(
            out.status.success(),
            "{args:?} failed: {}\n{}",
            text(&out.stderr),
            self.core_log()
        );
        text(&out.stdout).trim_end().to_string()
    }

    fn core_log(&self) -> String {
        let log = self.env.home().join(".local/state/nerdr/core.log");
        std::fs::read_to_string(log).unwrap_or_default()
    }

    fn tabs(&self) -> Vec<Value> {
        serde_json::from_str(&self.ok(&["nerdr", "tabs", "--json"])).unwrap()
    }

    fn tab_of(&self, agent: &str) -> Value {
        self.tabs()
            .into_iter()
            .rev()
            .find(|t| t["agent"] == agent)
            .unwrap_or_else(|| panic!("no tab of {agent}"))
    }

    /// Start `agent`; its answer (ok or not) and the CLI's output.
    fn agent(&self, agent: &str) -> (bool, String) {
        let out = self.output(&["nerdr", "agent", agent]);
        (
            out.status.success(),
            format!("{}{}", text(&out.stdout), text(&out.stderr)),
        )
    }

    fn wait_screen(&self, tab: &str, needle: &str) -> String {
        let mut last = String::new();
        let ok = crate::support::poll(Duration::from_secs(15), || {
            last = self.ok(&["nerdr", "read", tab]);
            last.contains(needle)
        });
        assert!(ok, "screen of {tab} never showed {needle:?}:\n{last}");
        last
    }

    /// Journal entries with this MESSAGE_ID for tab `tab`.
    fn audit(&self, message_id: &str, tab: &str) -> Vec<Value> {
        let mut found = Vec::new();
        crate::support::poll(Duration::from_secs(5), || {
            found = self
                .env
                .journal(&[&format!("MESSAGE_ID={message_id}")])
                .into_iter()
                .filter(|e| e["NERDR_TAB"] == tab)
                .collect();
            !found.is_empty()
        });
        found
    }
}

/// A journal field's values (one string, or an array for a repeated field).
fn values(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a
            .iter()
            .filter_map(|x| x.as_str().map(String::from))
            .collect(),
        _ => Vec::new(),
    }
}

enum Want {
    /// Refused; the reached list holds each of these (and, if `exact`,
    /// nothing else).
    Refused {
        each: &'static [&'static str],
        exact: bool,
    },
    /// Could not check; the reason holds this.
    Unchecked(&'static str),
    /// Could not check, since no word of the command is the agent's
    /// program: refused before any probe, in one line holding this fix.
    NoProgram(&'static str),
    Started,
}

/// Everything the check can reach outside any sandbox, as the notice words it.
const EVERYTHING: &[&str] = &[
    "the client socket's folder",
    "the client socket ",
    "the client key",
    "the core (pid",
    "environment read through /proc",
    "open files listed through /proc",
    "memory opened through /proc",
    "pidfd_getfd",
    "attached with ptrace",
    "the holder (pid",
    "nerdr's config folder",
    "nerdr's state folder",
    "the git hooks folder",
    "the folder of other tabs' worktrees",
    "the git config",
    "the main checkout's .git",
    "the git info folder",
    "nerdr's data folder",
    "the runtime folder",
    "/bus (connected)",
    "/systemd/private (connected)",
    "the agent's program",
];

mod bus;
mod catalogue;
mod links;
mod relaunch;
mod slow_facts;
