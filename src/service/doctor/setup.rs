//! Is the service set up and answering: the service manager, the unit
//! files, the core's unit and both sockets.

use super::verdict::{check, Check, Status};
use crate::service::facts::{Facts, FileState, Installed, Platform, SocketFacts, SocketProbe};
use crate::service::packaged::{DropIns, PACKAGE_BIN, PACKAGE_UNIT_DIR};

const INSTALL: &str = "run `nerdr service install`";

pub fn check_manager(f: &Facts) -> Check {
    match (&f.manager, f.platform) {
        (Ok(what), _) => check("user-manager", Status::Ok, format!("{what} answers"), None),
        (Err(why), Platform::Systemd) => check(
            "user-manager",
            Status::Fail,
            format!("no systemd user manager answers: {why}"),
            Some("set XDG_RUNTIME_DIR (and DBUS_SESSION_BUS_ADDRESS) as a login session does, or `loginctl enable-linger $USER`; without systemd, run `nerdr core` by hand".into()),
        ),
        (Err(why), Platform::Launchd) => check(
            "user-manager",
            Status::Fail,
            format!("launchd did not answer: {why}"),
            Some("run nerdr from a logged-in GUI session, or run `nerdr core` by hand".into()),
        ),
    }
}

pub fn check_units(f: &Facts) -> Check {
    let u = &f.units;
    let name = "units";
    if let Some(err) = &u.render_error {
        return check(
            name,
            Status::Fail,
            format!("cannot be rendered: {err}"),
            None,
        );
    }
    if u.none_present() {
        if let Some(drop_ins) = &u.package {
            return package_units(u, drop_ins);
        }
    }
    if let Some(why) = &u.unread {
        return check(name, Status::Fail, why.clone(), None);
    }
    if u.none_present() {
        return check(
            name,
            Status::Fail,
            format!("not installed in {}", u.dir.display()),
            Some(INSTALL.into()),
        );
    }
    let bin = u
        .bin
        .as_deref()
        .map(|b| b.display().to_string())
        .unwrap_or_default();
    if let Some(problem) = &u.bin_problem {
        return check(
            name,
            Status::Fail,
            format!("the installed service runs {bin}, which cannot run: {problem}"),
            Some(
                "run `nerdr service install` with the nerdr you mean to keep (or `--bin PATH`)"
                    .into(),
            ),
        );
    }
    let missing: Vec<_> = u
        .files
        .iter()
        .filter(|(_, s)| *s == FileState::Missing)
        .map(|(n, _)| *n)
        .collect();
    if !missing.is_empty() {
        return check(
            name,
            Status::Fail,
            format!(
                "incomplete in {}: {} missing",
                u.dir.display(),
                missing.join(", ")
            ),
            Some(INSTALL.into()),
        );
    }
    let differ: Vec<_> = u
        .files
        .iter()
        .filter(|(_, s)| *s == FileState::Different)
        .map(|(n, _)| *n)
        .collect();
    if !differ.is_empty() {
        return check(
            name,
            Status::Warn,
            format!(
                "out of date in {}: {} differ from what this nerdr would write for {bin} (paths or nerdr changed)",
                u.dir.display(),
                differ.join(", ")
            ),
            Some(INSTALL.into()),
        );
    }
    // systemd reads the user's directory first: their own units win.
    let over = match u.package {
        Some(_) => format!(", over the package's in {PACKAGE_UNIT_DIR}"),
        None => String::new(),
    };
    check(
        name,
        Status::Ok,
        format!(
            "yours in force: installed and current in {} (runs {bin}){over}",
            u.dir.display()
        ),
        None,
    )
}

/// The package's units in force (the user has none of their own), with
/// the drop-ins the user's paths need.
fn package_units(u: &Installed, drop_ins: &DropIns) -> Check {
    let name = "units";
    let base = format!("the package's in force, from {PACKAGE_UNIT_DIR} (runs {PACKAGE_BIN})");
    let dir = u.dir.display();
    match drop_ins {
        DropIns::NotNeeded => check(name, Status::Ok, base, None),
        DropIns::Current => check(
            name,
            Status::Ok,
            format!("{base}, with your paths in drop-ins in {dir}"),
            None,
        ),
        DropIns::Stale(units) => check(
            name,
            Status::Fail,
            format!(
                "{base}, but your paths differ from XDG's defaults it names and the drop-ins for {} in {dir} are missing or out of date",
                units.join(", ")
            ),
            Some(INSTALL.into()),
        ),
        DropIns::Unneeded(units) => check(
            name,
            Status::Warn,
            format!(
                "{base}; the drop-ins for {} in {dir} are left from other paths",
                units.join(", ")
            ),
            Some(INSTALL.into()),
        ),
    }
}

pub fn check_core(f: &Facts) -> Option<Check> {
    let core = f.core.as_ref()?;
    let journal = match f.platform {
        Platform::Systemd => "see `journalctl --user -u nerdr.service -e`, then `systemctl --user reset-failed nerdr.service`",
        Platform::Launchd => "see the core log in the state directory (core.log)",
    };
    let status = if core.status_text.is_empty() {
        String::new()
    } else {
        format!(": {}", core.status_text)
    };
    Some(match core.active.as_str() {
        "active" | "reloading" => check("core", Status::Ok, format!("running{status}"), None),
        "activating" => check("core", Status::Ok, format!("starting{status}"), None),
        "inactive" | "deactivating" => check(
            "core",
            Status::Ok,
            "not running when doctor looked; the first connection to either socket starts it"
                .into(),
            None,
        ),
        "failed" => check(
            "core",
            Status::Fail,
            format!("failed{status}"),
            Some(journal.into()),
        ),
        other => check(
            "core",
            Status::Warn,
            format!("in state {other}{status}"),
            Some(journal.into()),
        ),
    })
}

/// Unit files changed on disk since the manager read them (a package
/// upgrade, an edited drop-in): what runs is the old text.
pub fn check_reload(f: &Facts) -> Option<Check> {
    if f.reload_pending.is_empty() {
        return None;
    }
    Some(check(
        "units-loaded",
        Status::Warn,
        format!(
            "{} changed on disk since the user manager read {}; it still runs the previous text",
            f.reload_pending.join(", "),
            if f.reload_pending.len() == 1 {
                "it"
            } else {
                "them"
            }
        ),
        Some("`systemctl --user daemon-reload`".into()),
    ))
}

pub fn check_socket(f: &Facts, s: &SocketFacts) -> Check {
    let name = if s.unit.contains("hook") {
        "hook-socket"
    } else {
        "client-socket"
    };
    let path = s.path.display();
    let core_active = f.core.as_ref().is_some_and(|c| c.active == "active");
    let restart = match f.platform {
        // A socket unit cannot start under a running core; stopping all
        // three first is what works (see `systemd::plan::APPLY_ALL`).
        Platform::Systemd if core_active => "`systemctl --user stop nerdr.service nerdr-hook.socket nerdr-client.socket && systemctl --user start nerdr-hook.socket nerdr-client.socket` (agents keep running in the holder)".to_owned(),
        Platform::Systemd => format!("`systemctl --user restart {}`; if it fails, `systemctl --user status {}`", s.unit, s.unit),
        Platform::Launchd => "`nerdr service install` again (it re-bootstraps the agent)".into(),
    };
    // Restarting a unit whose file changed runs the text the manager read
    // before: the reload comes first.
    let restart = if f.reload_pending.is_empty() {
        restart
    } else {
        format!("`systemctl --user daemon-reload`, then {restart}")
    };
    let not_installed = f.units.nothing_in_force();
    let fix = |s: String| Some(if not_installed { INSTALL.into() } else { s });
    match &s.probe {
        SocketProbe::Listening => check(name, Status::Ok, format!("listening at {path}"), None),
        SocketProbe::Missing => check(
            name,
            Status::Fail,
            format!("no socket at {path}"),
            fix(restart),
        ),
        SocketProbe::Stale => check(
            name,
            Status::Fail,
            format!("{path} exists but nothing listens on it"),
            fix(restart),
        ),
        SocketProbe::NotASocket => check(
            name,
            Status::Fail,
            format!("{path} is not a socket"),
            Some(format!("move {path} out of the way, then {restart}")),
        ),
        SocketProbe::NotProbed(why) => check(
            name,
            Status::Info,
            format!("not connected to at {path}: {why}"),
            Some(INSTALL.into()),
        ),
        SocketProbe::Error(e) => check(
            name,
            Status::Fail,
            format!("cannot connect to {path}: {e}"),
            Some(
                "the socket and its directory must belong to you (directory 0700, socket 0600)"
                    .into(),
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::doctor::{assert_verdicts, Case};
    use crate::service::facts::CoreState;

    #[test]
    fn verdicts() {
        let cases: &[Case] = &[
            (
                "no manager fails with the runtime dir hint",
                |f| {
                    f.manager = Err("Failed to connect to bus: No medium found".into());
                    f.core = None;
                },
                "user-manager",
                Status::Fail,
                "No medium found",
                "XDG_RUNTIME_DIR",
                2,
            ),
            (
                "no units fails with install",
                |f| {
                    for file in &mut f.units.files {
                        file.1 = FileState::Missing
                    }
                },
                "units",
                Status::Fail,
                "not installed in /home/ann/.config/systemd/user",
                "nerdr service install",
                2,
            ),
            (
                "the package's units alone are in force",
                |f| {
                    for file in &mut f.units.files {
                        file.1 = FileState::Missing
                    }
                    f.units.package = Some(DropIns::NotNeeded);
                },
                "units",
                Status::Ok,
                "the package's in force, from /usr/lib/systemd/user (runs /usr/bin/nerdr)",
                "",
                0,
            ),
            (
                "the package's units with the user's drop-ins are in force",
                |f| {
                    for file in &mut f.units.files {
                        file.1 = FileState::Missing
                    }
                    f.units.package = Some(DropIns::Current);
                },
                "units",
                Status::Ok,
                "with your paths in drop-ins in /home/ann/.config/systemd/user",
                "",
                0,
            ),
            (
                "the package's units without the drop-ins the paths need fail",
                |f| {
                    for file in &mut f.units.files {
                        file.1 = FileState::Missing
                    }
                    f.units.package = Some(DropIns::Stale(vec!["nerdr.service"]));
                },
                "units",
                Status::Fail,
                "drop-ins for nerdr.service",
                "nerdr service install",
                2,
            ),
            (
                "drop-ins left from other paths warn",
                |f| {
                    for file in &mut f.units.files {
                        file.1 = FileState::Missing
                    }
                    f.units.package = Some(DropIns::Unneeded(vec!["nerdr-hook.socket"]));
                },
                "units",
                Status::Warn,
                "left from other paths",
                "nerdr service install",
                0,
            ),
            (
                "the user's own units win over the package's",
                |f| f.units.package = Some(DropIns::NotNeeded),
                "units",
                Status::Ok,
                "yours in force: installed and current in /home/ann/.config/systemd/user (runs /usr/bin/nerdr), over the package's in /usr/lib/systemd/user",
                "",
                0,
            ),
            (
                "a changed unit warns",
                |f| f.units.files[2].1 = FileState::Different,
                "units",
                Status::Warn,
                "nerdr.service differ",
                "nerdr service install",
                0,
            ),
            (
                "a missing unit among others fails",
                |f| f.units.files[0].1 = FileState::Missing,
                "units",
                Status::Fail,
                "nerdr-hook.socket missing",
                "nerdr service install",
                2,
            ),
            (
                "an installed bin that is gone fails",
                |f| f.units.bin_problem = Some("does not exist".into()),
                "units",
                Status::Fail,
                "runs /usr/bin/nerdr, which cannot run",
                "--bin",
                2,
            ),
            (
                "a failed core fails with the journal command",
                |f| f.core.as_mut().unwrap().active = "failed".into(),
                "core",
                Status::Fail,
                "failed",
                "journalctl --user -u nerdr.service",
                2,
            ),
            (
                "an idle core is fine",
                |f| {
                    f.core = Some(CoreState {
                        active: "inactive".into(),
                        status_text: String::new(),
                    })
                },
                "core",
                Status::Ok,
                "first connection",
                "",
                0,
            ),
            (
                "a unit file changed on disk warns with daemon-reload",
                |f| f.reload_pending = vec!["nerdr-client.socket"],
                "units-loaded",
                Status::Warn,
                "nerdr-client.socket changed on disk since the user manager read it",
                "systemctl --user daemon-reload",
                0,
            ),
            (
                "a stale socket whose unit changed on disk reloads before restarting",
                |f| {
                    f.client.probe = SocketProbe::Stale;
                    f.core.as_mut().unwrap().active = "inactive".into();
                    f.reload_pending = vec!["nerdr-client.socket", "nerdr.service"];
                },
                "client-socket",
                Status::Fail,
                "nothing listens",
                "`systemctl --user daemon-reload`, then `systemctl --user restart nerdr-client.socket`",
                2,
            ),
            (
                "sockets not connected to while a connection would start a core for other paths",
                |f| {
                    f.client.probe = SocketProbe::NotProbed("a connection would start the package's core with XDG's default paths, not yours".into());
                },
                "client-socket",
                Status::Info,
                "not connected to at /run/user/1000/nerdr/client.sock: a connection would start",
                "nerdr service install",
                0,
            ),
            (
                "a missing socket with a running core says stop then restart",
                |f| f.hook.probe = SocketProbe::Missing,
                "hook-socket",
                Status::Fail,
                "no socket at",
                "stop nerdr.service nerdr-hook.socket nerdr-client.socket && systemctl --user start nerdr-hook.socket nerdr-client.socket`",
                2,
            ),
            (
                "a stale socket with an idle core says restart",
                |f| {
                    f.client.probe = SocketProbe::Stale;
                    f.core.as_mut().unwrap().active = "inactive".into();
                },
                "client-socket",
                Status::Fail,
                "nothing listens",
                "`systemctl --user restart nerdr-client.socket`",
                2,
            ),
            (
                "a missing socket without units says install",
                |f| {
                    f.hook.probe = SocketProbe::Missing;
                    for file in &mut f.units.files {
                        file.1 = FileState::Missing
                    }
                },
                "hook-socket",
                Status::Fail,
                "no socket",
                "nerdr service install",
                2,
            ),
            (
                "a regular file in the way says move it",
                |f| f.hook.probe = SocketProbe::NotASocket,
                "hook-socket",
                Status::Fail,
                "is not a socket",
                "move /home/ann/.local/state/nerdr/nerdr.sock out of the way",
                2,
            ),
        ];
        assert_verdicts(cases);
    }
}
