//! Starting a core by hand when no service manager is there to activate one:
//! a detached process in its own session, so closing the terminal that ran
//! the first command does not end it.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

use anyhow::Context;

pub fn spawn_core() -> anyhow::Result<Child> {
    let exe = std::env::current_exe().context("cannot find this executable to start a core")?;
    let mut cmd = Command::new(exe);
    cmd.arg("core")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // A tab's identity must not leak into the core's own environment.
        .env_remove("NERDR_TAB");
    // SAFETY: setsid is async-signal-safe and touches only the child.
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid().map_err(std::io::Error::from)?;
            Ok(())
        });
    }
    cmd.spawn().context("cannot start `nerdr core`")
}
