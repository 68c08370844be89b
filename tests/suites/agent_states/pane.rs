//! A CLI in a terminal of its own, outside nerdr: a private tmux server
//! (its own socket, no config, a scrubbed environment) runs one program in
//! a 120x40 pane, `send-keys` types and `capture-pane -p` reads the screen
//! and `#{pane_title}` the title the program set. The capture tool uses it
//! to record what the real CLIs show.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use crate::support::poll;

pub const COLS: u16 = 120;
pub const ROWS: u16 = 40;

pub struct Pane {
    sock: PathBuf,
}

impl Pane {
    /// Run `argv` in `cwd` with exactly `env` (plus `TERM`), in a detached
    /// session of a new tmux server whose socket lives in `dir`.
    pub fn start(dir: &Path, cwd: &Path, env: &[(String, String)], argv: &[&str]) -> Pane {
        let pane = Pane {
            sock: dir.join("tmux.sock"),
        };
        let mut shell = format!("cd {} && exec env -i", quote(&cwd.display().to_string()));
        for (k, v) in env {
            shell.push_str(&format!(" {k}={}", quote(v)));
        }
        shell.push_str(" TERM=xterm-256color");
        for a in argv {
            shell.push(' ');
            shell.push_str(&quote(a));
        }
        pane.run(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-x",
            &COLS.to_string(),
            "-y",
            &ROWS.to_string(),
            &shell,
        ]);
        // tmux's title is the host's name until the program sets one; the
        // program (node) takes far longer to start than this.
        pane.run(&["select-pane", "-t", "0", "-T", ""]);
        // Keep the pane (and its last screen) if the program exits.
        pane.run(&["set-option", "-t", "0", "remain-on-exit", "on"]);
        pane
    }

    fn run(&self, args: &[&str]) -> Output {
        let out = Command::new("tmux")
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("TERM", "xterm-256color")
            // Without a UTF-8 locale tmux shows a title's `✳` as `_`.
            .env("LANG", "C.UTF-8")
            .arg("-S")
            .arg(&self.sock)
            .args(args)
            .output()
            .expect("run tmux");
        assert!(out.status.success(), "tmux {args:?}: {out:?}");
        out
    }

    /// The visible rows, trailing spaces trimmed (all of them, blank ones
    /// too).
    pub fn rows(&self) -> Vec<String> {
        let out = self.run(&["capture-pane", "-p", "-t", "0"]);
        let mut rows: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.trim_end().to_string())
            .collect();
        rows.resize(ROWS as usize, String::new());
        rows
    }

    pub fn title(&self) -> String {
        let out = self.run(&["display", "-p", "-t", "0", "#{pane_title}"]);
        String::from_utf8_lossy(&out.stdout).trim_end().to_string()
    }

    /// Literal text (no Enter).
    pub fn text(&self, text: &str) {
        self.run(&["send-keys", "-t", "0", "-l", text]);
    }

    /// Keys as tmux names them (`Enter`, `Escape`, `Down`).
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "0"];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    /// Type `prompt`, wait until it shows, then press Enter (in a write of
    /// its own: in the same one it would count as part of a paste).
    pub fn prompt(&self, prompt: &str) {
        self.text(prompt);
        self.wait(
            &format!("the typed {prompt:?}"),
            Duration::from_secs(20),
            |s| s.contains(prompt),
        );
        self.keys(&["Enter"]);
    }

    /// Poll the screen (as one string) until `cond` holds; `None` after
    /// `timeout`.
    pub fn poll(&self, timeout: Duration, cond: impl Fn(&str) -> bool) -> Option<String> {
        let mut last = String::new();
        poll(timeout, || {
            last = self.rows().join("\n");
            cond(&last)
        })
        .then_some(last)
    }

    /// Like [`Pane::poll`], panicking with the screen after `timeout`.
    pub fn wait(&self, what: &str, timeout: Duration, cond: impl Fn(&str) -> bool) -> String {
        self.poll(timeout, &cond).unwrap_or_else(|| {
            panic!(
                "{what} never showed within {timeout:?}; screen:\n{}",
                self.rows().join("\n")
            )
        })
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .env_clear()
            .arg("-S")
            .arg(&self.sock)
            .arg("kill-server")
            .output();
    }
}

/// `s` as one shell word.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}
