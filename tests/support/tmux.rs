//! A person at a terminal: a private tmux server runs the window, `send-keys`
//! types, `capture-pane` reads. Always polling for the expected screen.
//! [`Tmux::attach_outer`] plays the terminal outside tmux, to see what
//! tmux passes through to it (escape sequences `capture-pane` never shows).

use std::io::Read;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::local::Local;

/// Whether tmux is here to play the person's terminal; if not, the test
/// says so (and fails under `NERDR_MUST_TEST=1`).
pub fn have_tmux() -> bool {
    let ok = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        super::sysenv::skip("tmux is not installed");
    }
    ok
}

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

/// The person's own terminal, outside tmux: a tmux client attached on a
/// pseudo-terminal whose every output byte is kept.
pub struct Outer {
    client: Child,
    seen: Arc<Mutex<Vec<u8>>>,
}

impl Tmux {
    /// Attach a client at `cols` x `rows` (the session's size, so nothing
    /// resizes) on a new pseudo-terminal, with `allow-passthrough on` so a
    /// program in the pane can reach it through `ESC P tmux; ... ESC \`.
    pub fn attach_outer(&self, cols: u16, rows: u16) -> Outer {
        self.run(&["set-option", "-wg", "allow-passthrough", "on"]);
        let size = nix::pty::Winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        let pty = nix::pty::openpty(Some(&size), None).expect("openpty");
        let slave: OwnedFd = pty.slave;
        let mut cmd = self.cmd(&["attach-session", "-t", "0"]);
        cmd.stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave));
        // SAFETY: only async-signal-safe calls between fork and exec: a new
        // session whose controlling terminal is the pseudo-terminal, as a
        // terminal emulator starts its shell.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let client = cmd.spawn().expect("tmux attach-session");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let mut master = std::fs::File::from(pty.master);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // Ends with EIO once the client is gone.
            while let Ok(n) = master.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Outer { client, seen }
    }
}

impl Outer {
    /// Everything the outer terminal was sent so far.
    pub fn seen(&self) -> Vec<u8> {
        self.seen.lock().unwrap().clone()
    }

    /// Wait until the outer terminal was sent `needle`; fails showing what
    /// it was sent (escaped) after `timeout`.
    pub fn wait_for(&self, what: &str, needle: &[u8], timeout: Duration) -> Vec<u8> {
        let found = super::poll(timeout, || {
            self.seen
                .lock()
                .unwrap()
                .windows(needle.len())
                .any(|w| w == needle)
        });
        let seen = self.seen();
        assert!(
            found,
            "the outer terminal was never sent {what} ({:?}); it was sent:\n{}",
            String::from_utf8_lossy(needle),
            String::from_utf8_lossy(&seen).escape_debug()
        );
        seen
    }
}

impl Drop for Outer {
    fn drop(&mut self) {
        // Ours, by its PID.
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.client.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
        let _ = self.client.wait();
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]).output();
    }
}
