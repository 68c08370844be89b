//! A person at a terminal: a private tmux server runs the window, `send-keys`
//! types, `capture-pane` reads. Always polling for the expected screen.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::Duration;

use super::local::Local;

pub struct Tmux {
    sock: PathBuf,
    envs: Vec<(String, String)>,
}

impl Tmux {
    /// A tmux server with one session running `cmd` in `l`'s environment.
    pub fn start(l: &Local, cols: u16, rows: u16, cmd: &str) -> Self {
        let sock = l.path("tmux.sock");
        let probe = l.cmd(&[]);
        let envs: Vec<(String, String)> = probe
            .get_envs()
            .filter_map(|(k, v)| Some((k.to_str()?.to_string(), v?.to_str()?.to_string())))
            .collect();
        let bin_dir = PathBuf::from(super::local::BIN)
            .parent()
            .unwrap()
            .to_path_buf();
        let t = Tmux { sock, envs };
        let path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin_dir.display());
        let out = t
            .cmd(&[
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-x",
                &cols.to_string(),
                "-y",
                &rows.to_string(),
            ])
            .arg(format!(
                "cd {} && PATH={path} {cmd}; echo EXITED=$?; sleep 600",
                l.work().display()
            ))
            .output()
            .unwrap();
        assert!(out.status.success(), "tmux new-session: {out:?}");
        t
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new("tmux");
        c.env_clear()
            .envs(self.envs.iter().map(|(k, v)| (k, v)))
            .env("TERM", "xterm-256color")
            .arg("-S")
            .arg(&self.sock)
            .args(args);
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        let out = self.cmd(args).output().unwrap();
        assert!(out.status.success(), "tmux {args:?}: {out:?}");
        out
    }

    /// Keys as tmux names them (`C-b`, `Enter`, `PageUp`) or literal text.
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "0"];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    pub fn text(&self, text: &str) {
        self.run(&["send-keys", "-t", "0", "-l", text]);
    }

    /// The visible screen, one string per row.
    pub fn screen(&self) -> Vec<String> {
        let out = self.run(&["capture-pane", "-p", "-t", "0"]);
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// The screen with colours and attributes, for exact comparisons.
    pub fn screen_styled(&self) -> String {
        let out = self.run(&["capture-pane", "-p", "-e", "-t", "0"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn wait(&self, what: &str, mut cond: impl FnMut(&[String]) -> bool) -> Vec<String> {
        let mut last = Vec::new();
        let ok = super::poll(Duration::from_secs(45), || {
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
        self.wait(&format!("{needle:?} on screen"), |s| {
            s.iter().any(|l| l.contains(needle))
        })
    }

    pub fn resize(&self, cols: u16, rows: u16) {
        self.run(&[
            "resize-window",
            "-t",
            "0",
            "-x",
            &cols.to_string(),
            "-y",
            &rows.to_string(),
        ]);
    }

    /// Run another window command in the same session's pane (after the
    /// previous one exited).
    pub fn respawn(&self, l: &Local, cmd: &str) {
        let bin_dir = PathBuf::from(super::local::BIN)
            .parent()
            .unwrap()
            .to_path_buf();
        let path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin_dir.display());
        self.run(&[
            "respawn-pane",
            "-k",
            "-t",
            "0",
            &format!(
                "cd {} && PATH={path} {cmd}; echo EXITED=$?; sleep 600",
                l.work().display()
            ),
        ]);
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]).output();
    }
}
