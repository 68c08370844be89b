//! An isolated nerdr for one test, run as the current user without a
//! service manager: its own HOME and XDG dirs, a core started by the test
//! (and ended by PID when the test ends), and the real binary for commands.

use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use super::wait_until;

pub const BIN: &str = env!("CARGO_BIN_EXE_nerdr");

pub struct Local {
    pub root: tempfile::TempDir,
    pub core: Option<Child>,
}

impl Local {
    /// A fresh root with no core running.
    pub fn empty() -> Self {
        let root = tempfile::Builder::new()
            .prefix("nerdr-t")
            .tempdir()
            .unwrap();
        for d in ["home", "run", "work", "config/nerdr", "state", "data"] {
            std::fs::create_dir_all(root.path().join(d)).unwrap();
        }
        let run = root.path().join("run");
        std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .unwrap();
        Local { root, core: None }
    }

    /// A fresh root with a hand-started core serving it.
    pub fn started() -> Self {
        let mut l = Self::empty();
        l.start_core();
        l
    }

    pub fn start_core(&mut self) {
        self.start_core_with(&[]);
    }

    /// Start the core with `env` added to its environment.
    pub fn start_core_with(&mut self, env: &[(&str, &str)]) {
        let mut cmd = self.cmd(&["core"]);
        cmd.envs(env.iter().copied());
        self.start_core_from(cmd);
    }

    /// Start the core from `cmd` (`self.cmd(&["core"])`, changed).
    pub fn start_core_from(&mut self, mut cmd: Command) {
        let child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.core = Some(child);
        let sock = self.client_socket();
        wait_until(
            "the core to accept on its client socket",
            Duration::from_secs(10),
            || UnixStream::connect(&sock).is_ok(),
        );
        // The kernel accepts as soon as the socket is bound; the core is
        // ready once it answers (connecting first, so this cannot start a
        // second core).
        wait_until("the core to answer", Duration::from_secs(10), || {
            self.run(&["tabs"]).status.success()
        });
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.path().join(rel)
    }
    pub fn work(&self) -> PathBuf {
        self.path("work")
    }
    pub fn client_socket(&self) -> PathBuf {
        self.path("run/nerdr/client.sock")
    }
    pub fn hook_socket(&self) -> PathBuf {
        self.path("state/nerdr/nerdr.sock")
    }
    pub fn core_log(&self) -> String {
        std::fs::read_to_string(self.path("state/nerdr/core.log")).unwrap_or_default()
    }

    pub fn write_config(&self, text: &str) {
        std::fs::write(self.path("config/nerdr/config.toml"), text).unwrap();
    }

    /// The binary with a scrubbed environment pointing at this root.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args)
            .env_clear()
            .env("HOME", self.path("home"))
            .env("XDG_RUNTIME_DIR", self.path("run"))
            .env("XDG_CONFIG_HOME", self.path("config"))
            .env("XDG_STATE_HOME", self.path("state"))
            .env("XDG_DATA_HOME", self.path("data"))
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .current_dir(self.work());
        c
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    /// Run, require success, return trimmed stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        check(&out, true, &format!("nerdr {}", args.join(" ")), self);
        String::from_utf8_lossy(&out.stdout)
            .trim_end_matches('\n')
            .to_string()
    }

    /// Run, require failure, return stderr.
    pub fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args);
        check(&out, false, &format!("nerdr {}", args.join(" ")), self);
        String::from_utf8_lossy(&out.stderr).to_string()
    }

    /// Poll `nerdr read` until the screen contains `needle`.
    pub fn wait_screen(&self, tab: &str, needle: &str) -> String {
        self.wait_screen_within(tab, needle, Duration::from_secs(30))
    }

    /// [`Self::wait_screen`] with its own time limit (programs that start
    /// slowly, such as node-based agents).
    pub fn wait_screen_within(&self, tab: &str, needle: &str, timeout: Duration) -> String {
        let mut last = String::new();
        let found = super::poll(timeout, || {
            last = self.ok(&["read", tab]);
            last.contains(needle)
        });
        assert!(
            found,
            "screen of {tab} never showed {needle:?} within {timeout:?}; last screen:\n{last}"
        );
        last
    }

    pub fn tabs_json(&self, extra: &[&str]) -> Vec<serde_json::Value> {
        let mut args = vec!["tabs", "--json"];
        args.extend_from_slice(extra);
        serde_json::from_str(&self.ok(&args)).unwrap()
    }

    pub fn core_pid(&self) -> u32 {
        self.core.as_ref().expect("core started").id()
    }
}

impl Local {
    /// The core's PID, as it recorded itself before serving (also for a core
    /// that a command started).
    pub fn recorded_core_pid(&self) -> u32 {
        let text = std::fs::read_to_string(self.path("state/nerdr/core.pid")).unwrap();
        text.split_whitespace().next().unwrap().parse().unwrap()
    }

    /// Put an executable `name` with `script` in this root's `bin/`; returns
    /// a PATH with it first.
    pub fn stand_in(&self, name: &str, script: &str) -> String {
        use std::os::unix::fs::PermissionsExt;
        let bin = self.path("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let file = bin.join(name);
        std::fs::write(&file, script).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display())
    }

    /// The holder's PID, as it recorded itself in the state dir.
    pub fn holder_pid(&self) -> Option<u32> {
        let text = std::fs::read_to_string(self.path("state/nerdr/holder.pid")).ok()?;
        text.split_whitespace().next()?.parse().ok()
    }
}

impl Local {
    /// The work folder made a git repository holding `files` (paths in
    /// it, and their text) in one commit, `message`; its path.
    pub fn repo_with(&self, files: &[(&str, &str)], message: &str) -> PathBuf {
        use super::git::git;
        let r = self.work();
        git(&r, &["init", "-q"]);
        for (rel, text) in files {
            std::fs::write(r.join(rel), text).unwrap();
        }
        git(&r, &["add", "."]);
        git(&r, &["commit", "-q", "-m", message]);
        r
    }

    /// Tab `id`'s row in `nerdr tabs --json`.
    pub fn tab(&self, id: &str) -> serde_json::Value {
        self.tabs_json(&[])
            .into_iter()
            .find(|t| t["id"] == id)
            .unwrap_or_else(|| panic!("no tab {id}"))
    }

    /// Tab `id`'s worktree.
    pub fn worktree_of(&self, id: &str) -> PathBuf {
        PathBuf::from(self.tab(id)["worktree"].as_str().expect("a worktree"))
    }
}

impl Drop for Local {
    fn drop(&mut self) {
        // The holder outlives cores by design; this test started it (through
        // its core), so this test ends it, by its recorded PID.
        let holder = self.holder_pid();
        self.stop_core();
        if let Some(pid) = holder.filter(|p| pid_alive(*p)) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGTERM,
            );
            super::poll(Duration::from_secs(5), || !pid_alive(pid));
        }
    }
}

impl Local {
    pub fn stop_core(&mut self) {
        if let Some(mut c) = self.core.take() {
            // SIGTERM first so the core ends its programs, then be sure.
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(c.id() as i32),
                nix::sys::signal::Signal::SIGTERM,
            );
            if !super::poll(Duration::from_secs(8), || {
                matches!(c.try_wait(), Ok(Some(_)))
            }) {
                let _ = c.kill();
            }
            let _ = c.wait();
        }
    }
}

/// Assert an outcome, printing everything useful when it is not the one wanted.
pub fn check(out: &Output, want_ok: bool, what: &str, l: &Local) {
    if out.status.success() != want_ok {
        panic!(
            "{what}: expected {}, got {}\n--- stdout\n{}\n--- stderr\n{}\n--- core.log\n{}",
            if want_ok { "success" } else { "failure" },
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            l.core_log()
        );
    }
}

pub fn pid_alive(pid: u32) -> bool {
    // A zombie still has a /proc entry; only count processes that can run.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

/// Open PTY masters in a process (its `/dev/ptmx` descriptors).
pub fn ptmx_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| {
            d.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                .filter(|t| t == Path::new("/dev/ptmx") || t.starts_with("/dev/pts/ptmx"))
                .count()
        })
        .unwrap_or(0)
}
