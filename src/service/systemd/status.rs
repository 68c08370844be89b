//! What `nerdr service status` prints, from plain data: the unit files
//! and their states, the drop-ins that adapt the package's units, and
//! units changed on disk since the manager read them.

use crate::paths::Paths;
use crate::service::facts::{FileState, Installed};
use crate::service::systemctl::Props;
use crate::service::units::{CLIENT_SOCKET_UNIT, HOOK_SOCKET_UNIT, SERVICE_UNIT};

use super::plan::{active_state, prop};

/// What `nerdr service status` prints.
pub fn status_lines(
    installed: &Installed,
    manager: &Result<String, String>,
    states: Option<&[Props]>,
    paths: &Paths,
) -> Vec<String> {
    let mut out = Vec::new();
    let dir = installed.dir.display();
    if installed.none_present() && installed.package.is_some() {
        out.push(format!(
            "nerdr service: the package's systemd user units in {}, none of your own in {dir}",
            crate::unit_names::PACKAGE_UNIT_DIR
        ));
    } else if installed.none_present() {
        out.push(format!(
            "nerdr service: not installed in {dir}; run `nerdr service install`"
        ));
    } else {
        out.push(format!("nerdr service: systemd user units in {dir}"));
    }
    let packaged = installed.none_present() && installed.package.is_some();
    for (name, file) in &installed.files {
        let file = match file {
            FileState::Missing if packaged => "package's",
            FileState::Missing => "missing",
            FileState::Current => "current",
            FileState::Different => "out of date",
        };
        let state = match states {
            Some(s) => format!("{} ({})", active_state(s, name), prop(s, name, "SubState")),
            None => "unknown".to_owned(),
        };
        let at = match *name {
            HOOK_SOCKET_UNIT => format!("  {}", paths.hook_socket().display()),
            CLIENT_SOCKET_UNIT => format!("  {}", paths.client_socket().display()),
            _ => String::new(),
        };
        out.push(
            format!("  {name:<20} {file:<12} {state:<22}{at}")
                .trim_end()
                .to_owned(),
        );
    }
    if let Some(bin) = &installed.bin {
        let whose = if installed.bin_from_installed {
            "runs"
        } else {
            "would run"
        };
        let problem = installed
            .bin_problem
            .as_deref()
            .map(|p| format!(" (cannot run: {p})"))
            .unwrap_or_default();
        out.push(format!("  {whose} {}{problem}", bin.display()));
    }
    if packaged {
        out.extend(drop_ins_line(installed));
    }
    if let Some(e) = &installed.render_error {
        out.push(format!("  cannot render the units: {e}"));
    }
    let pending: Vec<&str> = installed
        .files
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| states.is_some_and(|s| prop(s, n, "NeedDaemonReload") == "yes"))
        .collect();
    if !pending.is_empty() {
        out.push(format!(
            "  changed on disk since the user manager read them: {}; run `systemctl --user daemon-reload`",
            pending.join(", ")
        ));
    }
    if installed
        .files
        .iter()
        .any(|(_, f)| *f == FileState::Different)
    {
        out.push("  out of date: run `nerdr service install` to rewrite the units".to_owned());
    }
    match (manager, states) {
        (Err(e), _) => out.push(format!("  user manager: {e}")),
        (Ok(_), Some(s)) => {
            let text = prop(s, SERVICE_UNIT, "StatusText");
            if !text.is_empty() {
                out.push(format!("  core: {text}"));
            }
        }
        (Ok(_), None) => {}
    }
    out
}

/// The drop-ins that adapt the package's units to this user's paths.
fn drop_ins_line(installed: &Installed) -> Option<String> {
    use crate::service::packaged::{DropIns, DROP_IN_NAME};
    let dir = installed.dir.display();
    Some(match installed.package.as_ref()? {
        DropIns::NotNeeded => "  drop-ins: none needed, your paths are XDG's defaults".to_owned(),
        DropIns::Current => {
            format!("  drop-ins: your paths, in {dir}/<unit>.d/{DROP_IN_NAME} (current)")
        }
        DropIns::Stale(units) => format!(
            "  drop-ins: missing or out of date for {}, so the package's units use other \
             paths than yours (XDG's defaults, or those the drop-ins name); run `nerdr service install`",
            units.join(", ")
        ),
        DropIns::Unneeded(units) => format!(
            "  drop-ins: {} in {dir} are left from other paths; run `nerdr service install` \
             to remove them",
            units.join(", ")
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::super::plan::tests::states;
    use super::*;
    use crate::paths::Env;
    use crate::service::units::UNIT_NAMES;

    fn paths() -> Paths {
        Paths::resolve(&Env {
            home: Some("/home/ann".into()),
            xdg_runtime_dir: Some("/run/user/1000".into()),
            ..Env::default()
        })
        .unwrap()
    }

    fn installed(files: [FileState; 3]) -> Installed {
        Installed {
            dir: "/home/ann/.config/systemd/user".into(),
            bin: Some("/usr/bin/nerdr".into()),
            bin_from_installed: true,
            bin_problem: None,
            render_error: None,
            files: UNIT_NAMES.into_iter().zip(files).collect(),
            unread: None,
            package: None,
        }
    }

    #[test]
    fn status_of_the_packages_units() {
        let mut units = installed([FileState::Missing; 3]);
        units.package = Some(crate::service::packaged::DropIns::NotNeeded);
        let lines = status_lines(&units, &Ok("252".into()), None, &paths());
        assert_eq!(
            lines[..2],
            [
                "nerdr service: the package's systemd user units in /usr/lib/systemd/user, none of your own in /home/ann/.config/systemd/user",
                "  nerdr-hook.socket    package's    unknown                 /home/ann/.local/state/nerdr/nerdr.sock",
            ]
        );
    }

    #[test]
    fn status_names_the_drop_ins_of_every_kind() {
        use crate::service::packaged::DropIns;
        let rows: &[(&str, DropIns, &str)] = &[
            ("defaults", DropIns::NotNeeded, "drop-ins: none needed"),
            (
                "current",
                DropIns::Current,
                "drop-ins: your paths, in /home/ann/.config/systemd/user/<unit>.d/50-nerdr-paths.conf (current)",
            ),
            (
                "missing",
                DropIns::Stale(vec![SERVICE_UNIT]),
                "missing or out of date for nerdr.service, so the package's units use other paths than yours (XDG's defaults, or those the drop-ins name); run `nerdr service install`",
            ),
            (
                "left over",
                DropIns::Unneeded(vec![HOOK_SOCKET_UNIT]),
                "nerdr-hook.socket in /home/ann/.config/systemd/user are left from other paths",
            ),
        ];
        for (case, drop_ins, want) in rows {
            let mut units = installed([FileState::Missing; 3]);
            units.package = Some(drop_ins.clone());
            let lines = status_lines(&units, &Ok("252".into()), None, &paths());
            assert!(lines.iter().any(|l| l.contains(want)), "{case}: {lines:#?}");
        }
        // The user's own units: no word of drop-ins.
        let mut units = installed([FileState::Current; 3]);
        units.package = Some(DropIns::Stale(vec![SERVICE_UNIT]));
        let lines = status_lines(&units, &Ok("252".into()), None, &paths());
        assert!(!lines.iter().any(|l| l.contains("drop-ins")), "{lines:#?}");
    }

    #[test]
    fn status_names_units_changed_on_disk() {
        let mut s = states("inactive", "active", "active");
        s[2].insert("NeedDaemonReload".into(), "yes".into());
        let lines = status_lines(
            &installed([FileState::Current; 3]),
            &Ok("252".into()),
            Some(&s),
            &paths(),
        );
        assert!(
            lines.iter().any(|l| l.contains(
                "changed on disk since the user manager read them: nerdr-client.socket; run `systemctl --user daemon-reload`"
            )),
            "{lines:#?}"
        );
    }

    #[test]
    fn status_of_a_running_install() {
        let mut s = states("active", "active", "active");
        for p in &mut s {
            let sub = if p["Id"] == SERVICE_UNIT {
                "running"
            } else {
                "listening"
            };
            p.insert("SubState".into(), sub.into());
        }
        s[0].insert("StatusText".into(), "3 agents, 1 blocked".into());
        let lines = status_lines(
            &installed([FileState::Current; 3]),
            &Ok("252".into()),
            Some(&s),
            &paths(),
        );
        assert_eq!(
            lines,
            [
                "nerdr service: systemd user units in /home/ann/.config/systemd/user",
                "  nerdr-hook.socket    current      active (listening)      /home/ann/.local/state/nerdr/nerdr.sock",
                "  nerdr-client.socket  current      active (listening)      /run/user/1000/nerdr/client.sock",
                "  nerdr.service        current      active (running)",
                "  runs /usr/bin/nerdr",
                "  core: 3 agents, 1 blocked",
            ]
        );
    }

    #[test]
    fn status_without_units_or_manager_says_what_to_do() {
        let mut i = installed([FileState::Missing; 3]);
        i.bin_from_installed = false;
        let lines = status_lines(&i, &Err("Failed to connect to bus".into()), None, &paths());
        assert_eq!(
            lines[0],
            "nerdr service: not installed in /home/ann/.config/systemd/user; run `nerdr service install`"
        );
        assert_eq!(lines[1], "  nerdr-hook.socket    missing      unknown                 /home/ann/.local/state/nerdr/nerdr.sock");
        assert!(
            lines.contains(&"  would run /usr/bin/nerdr".to_owned()),
            "{lines:#?}"
        );
        assert_eq!(
            lines.last().unwrap(),
            "  user manager: Failed to connect to bus"
        );
    }

    #[test]
    fn status_of_an_outdated_install_says_reinstall() {
        let lines = status_lines(
            &installed([FileState::Current, FileState::Current, FileState::Different]),
            &Ok("252".into()),
            Some(&states("inactive", "active", "active")),
            &paths(),
        );
        assert!(
            lines
                .iter()
                .any(|l| l.contains("nerdr.service        out of date")),
            "{lines:#?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.contains("run `nerdr service install`")),
            "{lines:#?}"
        );
    }
}
