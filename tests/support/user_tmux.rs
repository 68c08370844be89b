//! A person at a terminal inside a [`SystemdEnv`]: a tmux server run as the
//! test user (so the window talks to the user's systemd-activated core),
//! `send-keys` to type, `capture-pane` to read. The environment's teardown
//! ends the server with every other process of the user.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::sysenv::SystemdEnv;

pub struct UserTmux<'a> {
    env: &'a SystemdEnv,
    sock: PathBuf,
}

impl<'a> UserTmux<'a> {
    /// A tmux server with one `cols` x `rows` session running `cmd` in
    /// `dir`; when `cmd` ends the pane prints `EXITED=<code>` and stays.
    pub fn start(env: &'a SystemdEnv, dir: &Path, cols: u16, rows: u16, cmd: &str) -> Self {
        Self::start_on(env, "tmux.sock", dir, cols, rows, cmd)
    }

    /// [`Self::start`] on a server of its own, its socket `HOME/sock`.
    pub fn start_on(
        env: &'a SystemdEnv,
        sock: &str,
        dir: &Path,
        cols: u16,
        rows: u16,
        cmd: &str,
    ) -> Self {
        let t = UserTmux {
            env,
            sock: env.home().join(sock),
        };
        let script = format!("cd {} && {cmd}; echo EXITED=$?; sleep 600", dir.display());
        let (cols, rows) = (cols.to_string(), rows.to_string());
        t.run(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-x",
            &cols,
            "-y",
            &rows,
            &script,
        ]);
        t
    }

    pub fn run(&self, args: &[&str]) -> std::process::Output {
        let mut all = vec!["tmux", "-S", self.sock.to_str().unwrap()];
        all.extend_from_slice(args);
        let mut cmd = self.env.user_cmd(&all);
        cmd.env("TERM", "xterm-256color");
        super::sysenv::run_ok(&mut cmd)
    }

    /// Keys as tmux names them (`C-b`, `Enter`).
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "0"];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    /// Literal text.
    pub fn text(&self, text: &str) {
        self.run(&["send-keys", "-t", "0", "-l", text]);
    }

    pub fn screen(&self) -> Vec<String> {
        let out = self.run(&["capture-pane", "-p", "-t", "0"]);
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    }

    pub fn wait_within(
        &self,
        what: &str,
        timeout: Duration,
        mut cond: impl FnMut(&[String]) -> bool,
    ) -> Vec<String> {
        let mut last = Vec::new();
        let ok = super::poll(timeout, || {
            last = self.screen();
            cond(&last)
        });
        assert!(
            ok,
            "timed out waiting for {what}; screen:\n{}",
            last.join("\n")
        );
        last
    }

    pub fn wait_text(&self, needle: &str) -> Vec<String> {
        self.wait_within(
            &format!("{needle:?} on screen"),
            Duration::from_secs(45),
            |s| s.iter().any(|l| l.contains(needle)),
        )
    }

    /// Waits until the pane (the window but its status line, the last
    /// row) is `read()`'s text, as text compares them; the last pane seen.
    pub fn wait_pane_is(&self, what: &str, mut read: impl FnMut() -> String) -> Vec<String> {
        let mut last = (Vec::new(), String::new());
        crate::support::sysenv::wait_until(what, Duration::from_secs(20), || {
            let shown = self.screen();
            let pane = trimmed(
                shown[..shown.len().saturating_sub(1)]
                    .iter()
                    .map(String::as_str),
            );
            let text = read();
            let same = pane == trimmed(text.lines());
            last = (pane, text);
            same
        });
        last.0
    }
}

/// Screen lines as text compares them: trailing blanks dropped, and the
/// blank lines at the end.
pub fn trimmed<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = lines.into_iter().map(|l| l.trim_end().to_owned()).collect();
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out
}
