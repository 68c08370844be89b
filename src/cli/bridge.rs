//! `nerdr bridge`: the far end of `nerdr --host HOST`, run on HOST by
//! `ssh HOST nerdr bridge`. It connects to that host's core through the
//! client socket, as the user ssh logged in, then relays its stdin and
//! stdout to that connection, byte for byte (`protocol::bridge` has what
//! it says first).
//!
//! # Where the key proof happens
//!
//! The bridge proves the key itself, on HOST, exactly as any client there
//! does (`client::open_welcomed`: connect, starting the sockets or a core
//! as a local command would, then the core's nonce answered with a proof
//! over the 0600 key file). Neither the key nor the proof crosses the SSH
//! channel; what crosses is the greeting, the core's verdict, and then the
//! client protocol after its handshake.
//!
//! Why not relay the core's challenge for the far side to answer: the far
//! side would need HOST's key, so the key would have to be copied off the
//! host it protects, and kept in a second place. The key file is there to
//! tell the user's processes on HOST from everyone else on HOST; over SSH
//! that question is already answered by SSH, which ran the bridge as the
//! user only after authenticating them. Whoever can run `nerdr bridge` as
//! the user on HOST can read the key there anyway, so the bridge proving
//! it hands nobody anything they did not have, and never hands out the
//! key itself.
//!
//! The core's other check, on the connecting process, applies to the
//! bridge as to any client: it is the bridge's PID the core sees, so a
//! bridge run from inside a tab there (a program nerdr started, its
//! descendant, its session or scope) is refused as any such client is,
//! and says so in its verdict. A `NERDR_TAB` in its environment does not
//! make it use the hook socket: a bridge never speaks as a tab.
//!
//! # Inside a tab
//!
//! A bridge whose environment has `NERDR_TAB` set refuses itself before
//! it does anything else that reaches the core ([`in_tab`]): connecting
//! may start the sockets or a core by hand (`client::connect_or_start`),
//! which a program in a tab has no business doing as the user. That check
//! is a courtesy, not the guard: the environment is the caller's to
//! change, and a bridge started with `NERDR_TAB` removed still meets the
//! core's check on its PID, which is what refuses it.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::process::ExitCode;

use crate::paths::Paths;
use crate::protocol::bridge::Greeting;
use crate::protocol::frame::{write_frame_blocking, Frame};
use crate::protocol::handshake::Verdict;

#[derive(Debug, clap::Args)]
#[command(
    about = "Relay the client protocol on stdin and stdout to this host's core (run by `nerdr --host` through ssh)",
    long_about = "Relay the client protocol on stdin and stdout to this host's core.\n\n\
        `nerdr --host HOST CMD` runs `ssh HOST nerdr bridge`; the bridge connects to the core \
        here as the user ssh logged in (with the key handshake, done here: the key never \
        leaves this host), then passes the connection on. It is not for typing at."
)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    use std::io::IsTerminal;
    if std::io::stdout().is_terminal() {
        anyhow::bail!(
            "`nerdr bridge` speaks nerdr's client protocol on its stdin and stdout for \
             `nerdr --host` on another machine, which runs it through ssh; run `nerdr --host \
             THIS_HOST tabs` there instead"
        );
    }
    let mut out = std::io::stdout().lock();
    let home = std::env::var_os("HOME").map(Into::into);
    let greeting = Greeting::ours(home, crate::client::own_env());
    write_frame_blocking(&mut out, &Frame::control(&greeting))?;
    // The greeting first even so: the far end then reads the refusal as
    // this host's verdict, not as a broken link.
    let core = match in_tab(std::env::var_os("NERDR_TAB").as_deref()) {
        Some(refusal) => Err(anyhow::anyhow!(refusal)),
        None => connect(),
    };
    let verdict = match &core {
        // The core's own welcome: its offer of paint acknowledgements is
        // its, not this build's (a core of an earlier build makes none).
        Ok((_, welcome)) => Verdict::Welcome {
            core_pid: welcome.core_pid,
            ack_every: welcome.ack_every,
        },
        Err(e) => Verdict::Refused {
            message: format!("{e:#}"),
        },
    };
    write_frame_blocking(&mut out, &Frame::control(&verdict))?;
    let Ok((core, _)) = core else {
        return Ok(ExitCode::FAILURE);
    };
    relay(core, out)?;
    Ok(ExitCode::SUCCESS)
}

/// Why a bridge with this `NERDR_TAB` refuses itself, if it does: any
/// value but an empty one says it runs in a tab (as for every command).
fn in_tab(nerdr_tab: Option<&std::ffi::OsStr>) -> Option<&'static str> {
    nerdr_tab.filter(|v| !v.is_empty()).map(|_| {
        "nerdr bridge runs inside a nerdr tab there (NERDR_TAB is set): a tab's program has \
         its tab's powers on that core, never the user's, so it is no bridge to it; run ssh \
         from your own shell, not from inside a tab"
    })
}

/// A connection to this host's core past the key handshake, as a blocking
/// socket, and what the core's welcome said.
fn connect() -> anyhow::Result<(UnixStream, crate::client::Welcome)> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let paths = Paths::from_process()?;
        let (stream, welcome) = crate::client::open_welcomed(&paths).await?;
        let stream = stream.into_std()?;
        stream.set_nonblocking(false)?;
        Ok((stream, welcome))
    })
}

/// Stdin to the core on a thread of its own, the core to stdout here,
/// until the core closes (then the bridge ends, whatever stdin does) or
/// stdin ends (then the core is told, and closes in turn).
fn relay(core: UnixStream, mut out: impl Write) -> std::io::Result<()> {
    let mut up = core.try_clone()?;
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buf = vec![0u8; 64 << 10];
        loop {
            match stdin.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if up.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            }
        }
        let _ = up.shutdown(std::net::Shutdown::Write);
    });
    let mut down = core;
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match down.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        out.write_all(&buf[..n])?;
        out.flush()?;
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;

    #[test]
    fn a_bridge_in_a_tab_refuses_itself_before_reaching_the_core() {
        let rows: &[(Option<&str>, bool)] = &[
            (None, false),
            // Empty is unset, as for every command.
            (Some(""), false),
            (Some("s3cr3t"), true),
        ];
        for (tab, refused) in rows {
            let got = super::in_tab(tab.map(OsStr::new));
            assert_eq!(got.is_some(), *refused, "{tab:?}");
            if let Some(why) = got {
                assert!(why.contains("inside a nerdr tab"), "{why}");
            }
        }
    }
}
