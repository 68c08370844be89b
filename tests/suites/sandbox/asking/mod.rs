//! Hosts on neither network list ask the person, and the program is told
//! its limits (issue 13, item 5), end to end: a real core under the
//! private `systemd --user`, a sandboxed agent (`nerdr sandbox -- asker`,
//! passing nerdr's own check) whose requests go through the real proxy,
//! a window (the real `nerdr` in tmux) and the real `nerdr approvals`.
//! `asked.test` resolves to 127.0.0.1 through an `/etc/hosts` bound over
//! in the environment's private mount namespace, so an unlisted *name*
//! reaches a loopback origin once allowed (its address is opened by an IP
//! entry, as a name resolving to a loopback address must be).

mod asked;
mod attacks;
mod limits;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::{audit_lines, sandbox_sh_with_settings, setup, text};
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

    /// Start the agent, attach a window to its session and let its steps
    /// begin once the window shows it; its tab id, worktree and window.
    fn start_in_a_window(&self) -> (String, PathBuf, Window<'_>) {
        let (tab, worktree) = self.start();
        let window = self.window();
        window.shows("asker");
        self.go(&worktree);
        (tab, worktree, window)
    }

    /// The sandbox settings close this machine's local services
    /// (`allowLocalBinding: false`) and open nothing else.
    fn close_local_services(&self) {
        std::fs::write(
            &self.settings,
            "{\"sandbox\": {\"network\": {\"allowLocalBinding\": false}}}",
        )
        .unwrap();
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
        audit_lines(&self.env)
            .into_iter()
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
