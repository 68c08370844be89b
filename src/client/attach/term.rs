//! The person's terminal: raw mode and the alternate screen while attached,
//! everything put back on the way out (also on panic or signal exit).

use std::io::Write;
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
