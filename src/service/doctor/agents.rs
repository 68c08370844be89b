//! What the agents get: how the core keeps them (do they outlive it),
//! lingering (do they outlive a logout), bubblewrap (`nerdr sandbox`) and
//! journald (audit events).

use super::verdict::{check, Check, Status};
use crate::protocol::api::ProgramsMode;
use crate::sandbox::availability::{self, Facts as Availability};
use crate::service::facts::{Facts, Platform, Programs};

/// Which mode keeps the programs, and whether it is the best this system
/// allows. A holder in scopes is the goal; a holder in sessions is the best
/// there is without a service manager (macOS, a container), but where a
/// systemd user manager answers it means the holder could not use it; the
/// core's own children end with the core.
pub fn check_programs(f: &Facts, p: &Programs) -> Check {
    let name = "programs";
    let systemd_answers = f.platform == Platform::Systemd && f.manager.is_ok();
    let core_log = p.core_log.display();
    let mode = match &p.mode {
        Ok(mode) => mode,
        Err(e) => {
            let look = match f.platform {
                Platform::Systemd => {
                    format!("see `journalctl --user -u nerdr.service -e` and {core_log}")
                }
                Platform::Launchd => format!("see {core_log}"),
            };
            return check(
                name,
                Status::Warn,
                format!("cannot ask the core how it keeps programs: {e}"),
                Some(look),
            );
        }
    };
    let restart = match f.platform {
        Platform::Systemd if systemd_answers => "`systemctl --user restart nerdr.service`",
        Platform::Systemd => "stop the core and run `nerdr core` again",
        Platform::Launchd => "`nerdr service install` (it restarts the core)",
    };
    match ProgramsMode::parse(mode) {
        Some(ProgramsMode::HolderScopes) => check(
            name,
            Status::Ok,
            format!("{mode}: agents outlive core restarts and upgrades"),
            None,
        ),
        Some(ProgramsMode::HolderSessions) if !systemd_answers => check(
            name,
            Status::Ok,
            format!("{mode}: agents outlive core restarts and upgrades"),
            None,
        ),
        Some(ProgramsMode::HolderSessions) => check(
            name,
            Status::Warn,
            format!("{mode}, yet a systemd user manager answers: agents are not in scopes, so systemd cannot track or stop each one"),
            Some(format!(
                "see why the holder could not use the user manager: `systemctl --user status nerdr-holder.service` and {}; the holder outlives core restarts, so scopes come with the next holder, once this one has stopped",
                p.holder_log.display()
            )),
        ),
        Some(ProgramsMode::CoreChildren(why)) => {
            let fix = if why.contains("NERDR_HOLDER") {
                "unset NERDR_HOLDER in the core's environment".to_owned()
            } else {
                format!("see {core_log} for why the holder could not be had and fix that")
            };
            check(
                name,
                Status::Warn,
                format!("the core runs them as its own children ({why}): agents end when the core stops or restarts"),
                Some(format!("{fix}, then {restart} (agents running now end with it)")),
            )
        }
        None => check(
            name,
            Status::Warn,
            format!("the core keeps them in a way this nerdr does not know: {mode}"),
            Some("the running core or its holder is another version of nerdr than this one; compare `nerdr --version` with the binary the service runs".into()),
        ),
    }
}

pub fn check_linger(on: bool, user: &str) -> Check {
    if on {
        check(
            "lingering",
            Status::Ok,
            format!("on for {user}: agents keep running after logout"),
            None,
        )
    } else {
        check(
            "lingering",
            Status::Warn,
            format!(
                "off for {user}: your user manager, the core and every agent stop when you log out"
            ),
            Some(format!("`loginctl enable-linger {user}`")),
        )
    }
}

/// Can `nerdr sandbox` build its sandbox here (bwrap found, and its
/// namespaces work); if not, what to do.
pub fn check_bwrap(b: &Availability) -> Check {
    let name = "bubblewrap";
    let Some(path) = &b.bwrap else {
        return check(
            name,
            Status::Warn,
            "bwrap is not on PATH: `nerdr sandbox` refuses to run without it".into(),
            availability::advice(b),
        );
    };
    let version = b.version.as_deref().unwrap_or("(unknown version)");
    match &b.namespaces {
        Ok(()) => {
            let userns = if b.disables_userns {
                "--disable-userns"
            } else {
                "seccomp"
            };
            check(
                name,
                Status::Ok,
                format!(
                    "bwrap {version} at {}: namespaces work; nested user namespaces blocked by {userns}",
                    path.display()
                ),
                None,
            )
        }
        Err(_) => check(
            name,
            Status::Warn,
            format!(
                "bwrap {version} at {} cannot create its namespaces: `nerdr sandbox` refuses to run",
                path.display()
            ),
            availability::advice(b),
        ),
    }
}

pub fn check_journald(present: bool) -> Check {
    if present {
        check(
            "journald",
            Status::Ok,
            "reachable at /run/systemd/journal/socket".into(),
            None,
        )
    } else {
        check(
            "journald",
            Status::Warn,
            "no /run/systemd/journal/socket: audit events go to core.log only".into(),
            Some("run under systemd-journald to get audit events in the journal; meanwhile read them in core.log in the state dir".into()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::doctor::{assert_verdicts, Case};

    fn mode(f: &mut Facts, mode: ProgramsMode) {
        f.programs.as_mut().unwrap().mode = Ok(mode.to_string());
    }

    #[test]
    fn verdicts() {
        let cases: &[Case] = &[
            (
                "a holder with scopes is ok",
                |f| mode(f, ProgramsMode::HolderScopes),
                "programs",
                Status::Ok,
                "holder, each program in its own systemd scope: agents outlive core restarts",
                "",
                0,
            ),
            (
                "a holder with sessions is ok on launchd",
                |f| {
                    f.platform = Platform::Launchd;
                    mode(f, ProgramsMode::HolderSessions);
                },
                "programs",
                Status::Ok,
                "own session (no service manager): agents outlive core restarts",
                "",
                0,
            ),
            (
                "a holder with sessions is ok where no systemd manager answers",
                |f| {
                    f.manager = Err("Failed to connect to bus: No such file or directory".into());
                    f.core = None;
                    mode(f, ProgramsMode::HolderSessions);
                },
                "programs",
                Status::Ok,
                "own session",
                "",
                // A core started by hand, no manager: warnings only.
                0,
            ),
            (
                "a holder with sessions under systemd warns and points at the holder",
                |f| mode(f, ProgramsMode::HolderSessions),
                "programs",
                Status::Warn,
                "own session (no service manager), yet a systemd user manager answers",
                "`systemctl --user status nerdr-holder.service` and /home/ann/.local/state/nerdr/holder.log",
                0,
            ),
            (
                "core children for NERDR_HOLDER=0 warn: unset it, then restart",
                |f| mode(f, ProgramsMode::CoreChildren("NERDR_HOLDER=0".into())),
                "programs",
                Status::Warn,
                "own children (NERDR_HOLDER=0): agents end when the core stops",
                "unset NERDR_HOLDER in the core's environment, then `systemctl --user restart nerdr.service`",
                0,
            ),
            (
                "core children for a holder that would not start warn: see core.log",
                |f| mode(f, ProgramsMode::CoreChildren("cannot start the holder: Access denied (polkit)".into())),
                "programs",
                Status::Warn,
                "(cannot start the holder: Access denied (polkit)): agents end",
                "see /home/ann/.local/state/nerdr/core.log for why the holder could not be had",
                0,
            ),
            (
                "core children on launchd say to install again",
                |f| {
                    f.platform = Platform::Launchd;
                    mode(f, ProgramsMode::CoreChildren("NERDR_HOLDER=0".into()));
                },
                "programs",
                Status::Warn,
                "own children",
                "then `nerdr service install`",
                0,
            ),
            (
                "core children without a service manager say to restart the core by hand",
                |f| {
                    f.manager = Err("Failed to connect to bus: No such file or directory".into());
                    f.core = None;
                    mode(f, ProgramsMode::CoreChildren("NERDR_HOLDER=0".into()));
                },
                "programs",
                Status::Warn,
                "own children",
                "then stop the core and run `nerdr core` again",
                2,
            ),
            (
                "an unknown mode warns with the versions to compare",
                |f| f.programs.as_mut().unwrap().mode = Ok("in a jar".into()),
                "programs",
                Status::Warn,
                "does not know: in a jar",
                "nerdr --version",
                0,
            ),
            (
                "a core that cannot be asked warns with the error and the logs",
                |f| f.programs.as_mut().unwrap().mode = Err("the core refused this client: wrong key".into()),
                "programs",
                Status::Warn,
                "cannot ask the core how it keeps programs: the core refused this client: wrong key",
                "journalctl --user -u nerdr.service -e` and /home/ann/.local/state/nerdr/core.log",
                0,
            ),
            (
                "lingering off warns with the loginctl command",
                |f| f.linger = Some(false),
                "lingering",
                Status::Warn,
                "off for ann",
                "loginctl enable-linger ann",
                0,
            ),
            (
                "a bwrap that cannot create namespaces warns with the AppArmor remedy",
                |f| {
                    let b = f.bwrap.as_mut().unwrap();
                    b.namespaces = Err("setting up uid map: Permission denied".into());
                    b.apparmor_restricts_userns = Some(true);
                },
                "bubblewrap",
                Status::Warn,
                "cannot create its namespaces",
                "kernel.apparmor_restrict_unprivileged_userns=0",
                0,
            ),
            (
                "a missing bwrap warns",
                |f| f.bwrap.as_mut().unwrap().bwrap = None,
                "bubblewrap",
                Status::Warn,
                "nerdr sandbox",
                "install bubblewrap",
                0,
            ),
            (
                "no journald warns",
                |f| f.journald = Some(false),
                "journald",
                Status::Warn,
                "core.log only",
                "systemd-journald",
                0,
            ),
        ];
        assert_verdicts(cases);
    }
}
