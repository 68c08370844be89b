//! `nerdr doctor`: is the service set up and working, and if not, what to
//! do. Gather, then decide. This file is the part that touches the system:
//! it has the platform code (`systemd/`, `launchd.rs`) fill a plain
//! [`Facts`], hands it to the checks and prints their verdicts. Every
//! verdict is a pure function of the facts:
//! - `facts`: the plain data;
//! - `setup`: is the service installed and answering (manager, units, core,
//!   sockets);
//! - `agents`: what the agents get from the system (lingering, bubblewrap,
//!   journald);
//! - `report`: the checks in order, the exit code, the two output forms.
//!
//! Exit code: 0 when every check is ok, 1 when the worst is a warning, 2 when
//! any check fails.

mod agents;
mod facts;
mod report;
mod setup;

pub use facts::{CoreState, Facts, Installed, Platform, SocketFacts};

use crate::paths::Paths;

/// `nerdr doctor [--json]`: prints one line per check (or a JSON array of
/// `{name, status, detail, remedy}`) and returns the exit code.
pub fn run(json: bool) -> anyhow::Result<i32> {
    let paths = Paths::from_process()?;
    let checks = report::checks(&super::platform::gather(&paths));
    if json {
        println!("{}", report::render_json(&checks));
    } else {
        print!("{}", report::render_human(&checks));
    }
    Ok(report::exit_code(&checks))
}
