//! Bringing a core up when nothing answers at the client socket: gathers
//! the facts `start_plan::decide` reads (are nerdr's units installed, does
//! the user manager answer, which socket units are active), and does what
//! it decides: start socket units through the user manager (D-Bus
//! `StartUnit`), or a core by hand, a detached process in its own session
//! so closing the terminal that ran the first command does not end it.
//!
//! Only Linux's systemd is asked: on macOS launchd owns the sockets of an
//! installed agent and listens on them itself, so a refused connection
//! there means no agent is installed.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

use anyhow::Context;

use super::start_plan::StartFacts;
use crate::paths::Paths;
use crate::unit_names::{PACKAGE_UNIT_DIR, SOCKET_UNITS, UNIT_NAMES};

/// The facts, asking the user manager only when the units are installed.
pub async fn gather(paths: &Paths) -> StartFacts {
    // The user's own units, else a package's once this user enabled its
    // sockets: a package's units alone do not say the user wants systemd
    // to run the core (there may be no user manager at all).
    let own = paths.systemd_user_dir();
    let wants = own.join("sockets.target.wants");
    let package = std::path::PathBuf::from(PACKAGE_UNIT_DIR);
    let dir = if !UNIT_NAMES.iter().any(|u| own.join(u).exists())
        && SOCKET_UNITS
            .iter()
            .any(|u| wants.join(u).exists() && package.join(u).exists())
    {
        package
    } else {
        own
    };
    let installed = cfg!(target_os = "linux") && UNIT_NAMES.iter().any(|u| dir.join(u).exists());
    let mut facts = StartFacts {
        units: installed.then_some(dir),
        manager: None,
        sockets: Vec::new(),
    };
    if !installed {
        return facts;
    }
    let manager = match crate::systemd::UserManager::connect().await {
        Ok(m) => m,
        Err(e) => {
            facts.manager = Some(Err(e.to_string()));
            return facts;
        }
    };
    let mut sockets = Vec::new();
    for unit in SOCKET_UNITS {
        match manager.active_state(unit).await {
            Ok(state) => sockets.push((unit, state)),
            Err(e) => {
                facts.manager = Some(Err(e.to_string()));
                return facts;
            }
        }
    }
    facts.manager = Some(Ok(()));
    facts.sockets = sockets;
    facts
}

/// Start `units` through the user manager, each waited for.
pub async fn start_units(units: &[&str]) -> Result<(), String> {
    let manager = crate::systemd::UserManager::connect()
        .await
        .map_err(|e| e.to_string())?;
    for unit in units {
        manager.start_unit(unit).await.map_err(|e| e.to_string())?;
    }
    Ok(())
}

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
