//! The person's terminal: raw mode and the alternate screen while attached,
//! everything put back on the way out (also on panic or signal exit).

use std::io::{IsTerminal, Write};
use std::os::fd::AsFd;

use nix::sys::termios::{self, SetArg, Termios};

pub struct RawTerminal {
    saved: Termios,
}

/// Modes a program may have switched on in the outer terminal through us;
/// leaving must switch them off, or the person's shell inherits them.
const LEAVE: &str = concat!(
    "\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l", // mouse
    "\x1b[?2004l",                                             // bracketed paste
    "\x1b[?1l\x1b>",                                           // cursor and keypad modes
    "\x1b[0m\x1b[?25h",                                        // attributes, cursor shown
    "\x1b[?1049l",                                             // back to the main screen
);

impl RawTerminal {
    pub fn enter() -> anyhow::Result<Self> {
        let stdin = std::io::stdin();
        // As tmux: a window drawn into a file or a terminal that cannot
        // move its cursor would resize the session's tabs for nothing.
        if !std::io::stdout().is_terminal() {
            anyhow::bail!("standard output is not a terminal; attach from a terminal");
        }
        if std::env::var("TERM").is_ok_and(|t| t == "dumb") {
            anyhow::bail!("TERM is dumb (a terminal that cannot move its cursor); attach from a terminal such as xterm");
        }
        let saved = termios::tcgetattr(stdin.as_fd()).map_err(|e| {
            anyhow::anyhow!("standard input is not a terminal ({e}); attach from a terminal")
        })?;
        let mut raw = saved.clone();
        termios::cfmakeraw(&mut raw);
        termios::tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &raw)?;
        let mut out = std::io::stdout();
        out.write_all(b"\x1b[?1049h\x1b[H\x1b[2J")?;
        out.flush()?;
        Ok(RawTerminal { saved })
    }
}

impl Drop for RawTerminal {
    fn drop(&mut self) {
        let mut out = std::io::stdout();
        let _ = out.write_all(LEAVE.as_bytes());
        let _ = out.flush();
        let _ = termios::tcsetattr(std::io::stdin().as_fd(), SetArg::TCSANOW, &self.saved);
    }
}

/// The terminal's size as (rows, cols).
pub fn size() -> (u16, u16) {
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ fills the winsize struct we pass, nothing else.
    let rc = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) };
    if rc == 0 && ws.ws_row > 0 && ws.ws_col > 0 {
        (ws.ws_row, ws.ws_col)
    } else {
        (24, 80)
    }
}

/// The person's keys, read as they come on the runtime's own thread.
///
/// `tokio::io::stdin` reads on a blocking-pool thread, so every key would
/// wake that thread and then the runtime's: one more hand-over per key, on
/// the path of its echo. Standard input is not made non-blocking itself:
/// it shares its open file with standard output (one terminal), whose
/// writes must block. The terminal is opened again instead, a file of its
/// own, non-blocking, and watched by the runtime (`AsyncFd`).
pub enum Keyboard {
    Watched(tokio::io::unix::AsyncFd<std::fs::File>),
    /// Standard input could not be opened again: read it as before.
    Blocking(tokio::io::Stdin),
}

impl Keyboard {
    pub fn open() -> Keyboard {
        use std::os::unix::fs::OpenOptionsExt;
        let reopened = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open("/proc/self/fd/0")
            .and_then(|file| {
                // SAFETY: the `File` owns its descriptor, and the `AsyncFd`
                // owns the `File` until it drops: the descriptor stays
                // open and the same for as long as it is watched.
                unsafe { tokio::io::unix::AsyncFd::register(file) }.map_err(|e| e.into_parts().1)
            });
        match reopened {
            Ok(fd) => Keyboard::Watched(fd),
            Err(_) => Keyboard::Blocking(tokio::io::stdin()),
        }
    }

    /// The next keys: 0 at the end of input.
    pub async fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::io::Read;
        match self {
            Keyboard::Watched(fd) => loop {
                let mut ready = fd.readable_mut().await?;
                match ready.try_io(|f| f.get_mut().read(buf)) {
                    Ok(r) => return r,
                    Err(_would_block) => continue,
                }
            },
            Keyboard::Blocking(stdin) => {
                use tokio::io::AsyncReadExt;
                stdin.read(buf).await
            }
        }
    }
}
