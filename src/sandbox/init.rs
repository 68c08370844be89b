//! `nerdr sandbox-init -- CMD`: the first program inside the sandbox.
//! bubblewrap's outer process shares the terminal's process group with
//! CMD, so the terminal's Ctrl-C would end bubblewrap, and with it (through
//! `--die-with-parent`) CMD, before CMD could handle it. So `nerdr sandbox`
//! starts bubblewrap with SIGINT and SIGQUIT ignored, and this init puts
//! them back to their defaults before it becomes CMD: an ignored signal
//! survives exec, and a shell cannot undo one it was started with.
//!
//!
//! With `--bridge-socket S --bridge-port P` it first opens 127.0.0.1:P and
//! leaves a child forwarding each connection to the proxy's socket S (the
//! one way out of the sandbox's network namespace); the listener is open
//! before CMD starts, so CMD's first request finds it.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitCode};

use nix::sys::signal::{signal, SigHandler, Signal};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The proxy's Unix socket, bound into the sandbox
    #[arg(long, requires = "bridge_port")]
    pub bridge_socket: Option<std::path::PathBuf>,
    /// The loopback port the bridge listens on
    #[arg(long)]
    pub bridge_port: Option<u16>,
    #[arg(last = true, required = true)]
    pub cmd: Vec<OsString>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let (Some(socket), Some(port)) = (&args.bridge_socket, args.bridge_port) {
        start_bridge(socket, port)?;
    }
    for sig in [Signal::SIGINT, Signal::SIGQUIT] {
        // SAFETY: SIG_DFL installs no handler; no other thread exists.
        let _ = unsafe { signal(sig, SigHandler::SigDfl) };
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

/// Listen, then fork: the child forwards, this process goes on to become
/// CMD. No thread exists yet, so the fork is safe.
fn start_bridge(socket: &std::path::Path, port: u16) -> anyhow::Result<()> {
    use anyhow::Context;
    let listener = std::net::TcpListener::bind(("127.0.0.1", port)).with_context(|| {
        format!("nerdr sandbox: cannot open the proxy bridge on 127.0.0.1:{port}")
    })?;
    listener.set_nonblocking(true)?;
    // SAFETY: single-threaded here; the child only runs the bridge.
    match unsafe { nix::unistd::fork() }.context("nerdr sandbox: cannot fork the bridge")? {
        nix::unistd::ForkResult::Parent { .. } => Ok(()),
        nix::unistd::ForkResult::Child => {
            // Ends with CMD even without a PID namespace of its own.
            let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
            let code = match bridge(listener, socket) {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("nerdr sandbox: the proxy bridge stopped: {e}");
                    1
                }
            };
            std::process::exit(code)
        }
    }
}

fn bridge(listener: std::net::TcpListener, socket: &std::path::Path) -> std::io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        crate::proxy::bridge::serve(listener, socket.to_path_buf(), std::future::pending::<()>())
            .await;
        Ok(())
    })
}
