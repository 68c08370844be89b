//! `nerdr sandbox-init -- CMD`: the first program inside the sandbox.
//! bubblewrap's outer process shares the terminal's process group with
//! CMD, so the terminal's Ctrl-C would end bubblewrap, and with it (through
//! `--die-with-parent`) CMD, before CMD could handle it. So `nerdr sandbox`
//! starts bubblewrap with SIGINT and SIGQUIT ignored, and this init puts
//! them back to their defaults before it becomes CMD: an ignored signal
//! survives exec, and a shell cannot undo one it was started with.
//!
//! PROXY SEAM: the network bridge (127.0.0.1:PORT to the proxy's Unix
//! socket) starts here too, once the proxy is merged.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitCode};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(last = true, required = true)]
    pub cmd: Vec<OsString>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    for sig in [libc::SIGINT, libc::SIGQUIT] {
        // SAFETY: SIG_DFL installs no handler; no other thread exists.
        unsafe { libc::signal(sig, libc::SIG_DFL) };
    }
    let err = Command::new(&args.cmd[0]).args(&args.cmd[1..]).exec();
    eprintln!(
        "nerdr sandbox: cannot run {}: {err}",
        args.cmd[0].to_string_lossy()
    );
    Ok(ExitCode::from(
        if err.kind() == std::io::ErrorKind::NotFound {
            127
        } else {
            126
        },
    ))
}
