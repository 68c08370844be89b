//! `nerdr doctor`: is the service set up and working, and if not, what to
//! do. Gather, then decide. This file is the part that touches the system:
//! it has the platform code (`systemd/`, `launchd.rs`) fill a plain
//! `service::facts::Facts`, asks the core how it keeps programs, hands the
//! facts to the checks and prints their verdicts. Every verdict is a pure
//! function of the facts:
//! - `verdict`: what a check says (status, detail, remedy);
//! - `setup`: is the service installed and answering (manager, units, core,
//!   sockets);
//! - `agents`: what the agents get (how the programs are kept, lingering,
//!   bubblewrap, journald);
//! - `config`: config.toml as a launch reads it, the agents' programs, the
//!   installed integrations;
//! - `cores`: which process serves, and whether it is the only core;
//! - `report`: the checks in order, the exit code, the two output forms.
//!
//! `local` gathers what is not the platform's: the config, the agents on
//! PATH, the `nerdr core` processes, the integrations' records.
//!
//! Exit code: 2 when any check fails, else 0 (a warning is advice).

mod agents;
mod config;
mod cores;
mod local;
mod report;
mod setup;
mod verdict;

use std::sync::mpsc;
use std::time::Duration;

use crate::paths::Paths;
use crate::protocol::api::GetStatus;
use crate::service::facts::{Facts, SocketProbe};

/// How long to wait for the core's status. A core that socket activation is
/// starting first attaches its holder (up to 20 s for the holder unit to
/// start, 10 s for its socket); past that, it is stuck, and doctor is what
/// people run when things are stuck.
const ASK_TIMEOUT: Duration = Duration::from_secs(40);

/// `nerdr doctor [--json]`: prints one line per check (or a JSON array of
/// `{name, status, detail, remedy}`) and returns the exit code.
pub fn run(json: bool) -> anyhow::Result<i32> {
    let paths = Paths::from_process()?;
    let checks = report::checks(&gather(&paths));
    if json {
        println!("{}", report::render_json(&checks));
    } else {
        print!("{}", report::render_human(&checks));
    }
    Ok(report::exit_code(&checks))
}

/// The platform's facts first, then the core's word on its programs.
fn gather(paths: &Paths) -> Facts {
    // The platform code reads the core's unit state before its socket
    // probes connect (a connection starts the core), so asking the core
    // only after it keeps that report true to what doctor found.
    let mut facts = super::platform::gather(paths);
    // Ask only a socket that listens: there, asking at most starts the core
    // through socket activation, as the probes just did. Where nothing
    // listens, `client::request` would start a core by hand, which doctor
    // must not do; the client-socket check already says what is wrong.
    let mut answering = None;
    if facts.client.probe == SocketProbe::Listening {
        let status = ask_status();
        answering = status.as_ref().ok().map(|s| s.pid);
        facts.programs = Some(crate::service::facts::Programs {
            mode: status.map(|s| s.mode),
            core_log: paths.core_log(),
            holder_log: paths.state_dir.join("holder.log"),
        });
    }
    facts.config = Some(local::config(paths));
    facts.integrations = Some(local::integrations(paths));
    // After the status request: a core that socket activation started for
    // it is then running, and has written core.pid.
    facts.cores = Some(local::cores(paths, answering));
    facts
}

/// The core's [`crate::protocol::api::CoreStatus`], or why the core could not tell, within
/// [`ASK_TIMEOUT`].
fn ask_status() -> Result<crate::protocol::api::CoreStatus, String> {
    let (tx, rx) = mpsc::channel();
    // A thread rather than a timeout inside `request`, which builds its own
    // runtime; if the core never answers, the thread ends with the process.
    std::thread::spawn(move || {
        let _ = tx.send(crate::client::request(GetStatus));
    });
    match rx.recv_timeout(ASK_TIMEOUT) {
        Ok(Ok(Ok(status))) => Ok(status),
        Ok(Ok(Err(refused))) => Err(format!("the core refused the status request: {refused}")),
        Ok(Err(e)) => Err(format!("{e:#}")),
        Err(mpsc::RecvTimeoutError::Timeout) => Err(format!(
            "the core did not answer within {} s",
            ASK_TIMEOUT.as_secs()
        )),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            Err("the status request ended without an answer".into())
        }
    }
}

// Test helpers shared by the checks' tables. They live here, above the
// checks and the report, so that each check's tests can run the whole
// report without the checks and the report naming each other.

#[cfg(test)]
use report::{checks, exit_code};
#[cfg(test)]
use verdict::{Check, Status};

#[cfg(test)]
pub fn find<'a>(checks: &'a [Check], name: &str) -> &'a Check {
    checks.iter().find(|c| c.name == name).unwrap()
}

/// (case, how the facts differ from healthy, check, status, words in the
/// detail, words in the remedy, exit code)
#[cfg(test)]
pub type Case = (
    &'static str,
    fn(&mut Facts),
    &'static str,
    Status,
    &'static str,
    &'static str,
    i32,
);

/// Runs each case on a changed healthy setup and checks the verdict.
#[cfg(test)]
pub fn assert_verdicts(cases: &[Case]) {
    for (case, change, name, status, detail, remedy, code) in cases {
        let mut f = crate::service::facts::healthy();
        change(&mut f);
        let all = checks(&f);
        let c = find(&all, name);
        assert_eq!(c.status, *status, "{case}: {c:?}");
        assert!(c.detail.contains(detail), "{case}: {c:?}");
        assert!(
            c.remedy.as_deref().unwrap_or("").contains(remedy),
            "{case}: {c:?}"
        );
        assert_eq!(exit_code(&all), *code, "{case}");
    }
}
