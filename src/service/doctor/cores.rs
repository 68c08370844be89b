//! One core, and which process it is: the pid the answering core gives,
//! compared with `core.pid`, the unit's MainPID and every `nerdr core` of
//! this user for the same state dir. Two cores over one state dir fight
//! over the same tabs and sockets, so more than one is a failure.

use super::verdict::{check, Check, Status};
use crate::service::facts::{Cores, Facts, Platform};

fn list(pids: &[u32]) -> String {
    pids.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn check_cores(f: &Facts, c: &Cores) -> Check {
    let name = "core-process";
    let serving = c.answering.or(c.unit_main).or(c.recorded);
    let Some(serving) = serving else {
        return match c.running.as_slice() {
            [] => check(name, Status::Ok, "no core process running".into(), None),
            others => check(
                name,
                Status::Warn,
                format!(
                    "`nerdr core` running as pid {} but none answers at the client socket",
                    list(others)
                ),
                Some(format!("stop it: `kill {}`", list(others))),
            ),
        };
    };
    let others: Vec<u32> = c
        .running
        .iter()
        .copied()
        .filter(|p| *p != serving)
        .collect();
    if !others.is_empty() {
        return check(
            name,
            Status::Fail,
            format!(
                "{} cores for this state dir: pid {serving} serves the client socket, pid {} too",
                others.len() + 1,
                list(&others)
            ),
            Some(format!(
                "stop the extra: `kill {}` (agents are kept by the holder, not by the core)",
                list(&others)
            )),
        );
    }
    let systemd = f.platform == Platform::Systemd;
    if let (Some(main), true) = (c.unit_main, systemd) {
        if main != serving {
            return check(
                name,
                Status::Fail,
                format!("pid {serving} serves, but nerdr.service runs pid {main}"),
                Some(format!(
                    "stop the core systemd did not start: `kill {serving}`"
                )),
            );
        }
    }
    if let Some(recorded) = c.recorded.filter(|r| *r != serving) {
        return check(
            name,
            Status::Warn,
            format!("pid {serving} serves, but core.pid names pid {recorded}"),
            Some("`systemctl --user restart nerdr.service` rewrites it".into()),
        );
    }
    let units_installed = !f.units.nothing_in_force();
    if systemd && units_installed && c.unit_main.is_none() && f.manager.is_ok() {
        return check(
            name,
            Status::Warn,
            format!("pid {serving} serves, outside nerdr.service"),
            Some(format!(
                "`kill {serving}`, then `systemctl --user start nerdr-hook.socket nerdr-client.socket`"
            )),
        );
    }
    // The `core` line reads the unit before doctor's own request; a core
    // that request started says so, or the two lines seem to disagree.
    let started_by_doctor = c.answering == Some(serving)
        && f.core
            .as_ref()
            .is_some_and(|u| matches!(u.active.as_str(), "inactive" | "deactivating"));
    let how = match (c.unit_main == Some(serving), started_by_doctor) {
        (true, true) => " (nerdr.service's main process, started by doctor's own request)",
        (true, false) => " (nerdr.service's main process)",
        (false, true) => " (started by doctor's own request)",
        (false, false) => "",
    };
    if c.replaced.contains(&serving) {
        let restart = match f.platform {
            Platform::Systemd => "`systemctl --user restart nerdr.service`",
            Platform::Launchd => "`nerdr service install` again",
        };
        return check(
            name,
            Status::Warn,
            format!(
                "pid {serving} answers on the client socket{how}, but runs a nerdr that was \
                 replaced on disk since it started (an upgrade or a reinstall)"
            ),
            Some(format!(
                "{restart} runs the new one (agents keep running in the holder, windows reconnect)"
            )),
        );
    }
    check(
        name,
        Status::Ok,
        format!("pid {serving} answers on the client socket{how}"),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::doctor::{assert_verdicts, Case};

    fn cores(f: &mut Facts) -> &mut Cores {
        f.cores.as_mut().unwrap()
    }

    #[test]
    fn verdicts() {
        let cases: &[Case] = &[
            (
                "the unit's process serves",
                |_| {},
                "core-process",
                Status::Ok,
                "pid 4242 answers on the client socket (nerdr.service's main process)",
                "",
                0,
            ),
            (
                "a core doctor's own request started says so",
                |f| f.core.as_mut().unwrap().active = "inactive".into(),
                "core-process",
                Status::Ok,
                "pid 4242 answers on the client socket (nerdr.service's main process, started by doctor's own request)",
                "",
                0,
            ),
            (
                "a second core for the state dir fails naming both",
                |f| cores(f).running = vec![4242, 5151],
                "core-process",
                Status::Fail,
                "2 cores for this state dir: pid 4242 serves the client socket, pid 5151 too",
                "kill 5151",
                2,
            ),
            (
                "a core by hand serves while the unit runs another",
                |f| {
                    let c = cores(f);
                    c.answering = Some(5151);
                    c.running = vec![5151];
                },
                "core-process",
                Status::Fail,
                "pid 5151 serves, but nerdr.service runs pid 4242",
                "kill 5151",
                2,
            ),
            (
                "a stale core.pid warns",
                |f| cores(f).recorded = Some(17),
                "core-process",
                Status::Warn,
                "core.pid names pid 17",
                "restart nerdr.service",
                0,
            ),
            (
                "a core outside the installed units warns",
                |f| cores(f).unit_main = None,
                "core-process",
                Status::Warn,
                "pid 4242 serves, outside nerdr.service",
                "kill 4242",
                0,
            ),
            (
                "without units a hand-started core is fine",
                |f| {
                    cores(f).unit_main = None;
                    for file in &mut f.units.files {
                        file.1 = crate::service::facts::FileState::Missing
                    }
                },
                "core-process",
                Status::Ok,
                "pid 4242 answers on the client socket",
                "",
                2,
            ),
            (
                "no core at all is fine",
                |f| *cores(f) = Cores::default(),
                "core-process",
                Status::Ok,
                "no core process running",
                "",
                0,
            ),
            (
                "a core whose program was replaced since it started warns with the restart",
                |f| cores(f).replaced = vec![4242],
                "core-process",
                Status::Warn,
                "runs a nerdr that was replaced on disk since it started",
                "`systemctl --user restart nerdr.service` runs the new one",
                0,
            ),
            (
                "another replaced process is not the serving core's word",
                |f| cores(f).replaced = vec![99],
                "core-process",
                Status::Ok,
                "pid 4242 answers",
                "",
                0,
            ),
            (
                "a core nobody reaches warns",
                |f| {
                    *cores(f) = Cores {
                        running: vec![99],
                        ..Cores::default()
                    }
                },
                "core-process",
                Status::Warn,
                "running as pid 99 but none answers",
                "kill 99",
                0,
            ),
        ];
        assert_verdicts(cases);
    }
}
