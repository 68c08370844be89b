//! The checks in the order a person would fix them, the exit code, and the
//! two ways they print (one line each, or a JSON array).

use super::agents::{check_bwrap, check_journald, check_linger, check_programs};
use super::config::{check_agents, check_config, check_integrations};
use super::cores::check_cores;
use super::setup::{check_core, check_manager, check_reload, check_socket, check_units};
use super::verdict::{check, Check, Status};
use crate::service::facts::{Facts, SocketFacts, SocketProbe};

/// Every check that applies, in the order a person would fix them.
pub fn checks(f: &Facts) -> Vec<Check> {
    if by_hand(f) {
        return without_a_manager(f);
    }
    let mut all = vec![check_manager(f), check_units(f)];
    all.extend(check_reload(f));
    all.extend(check_core(f));
    all.extend(f.cores.as_ref().map(|c| check_cores(f, c)));
    all.push(check_socket(f, &f.hook));
    all.push(check_socket(f, &f.client));
    all.extend(f.programs.as_ref().map(|p| check_programs(f, p)));
    all.extend(f.linger.map(|on| check_linger(on, &f.user)));
    all.extend(f.bwrap.as_ref().map(check_bwrap));
    all.extend(f.journald.map(check_journald));
    if let Some(c) = &f.config {
        all.push(check_config(c));
        all.extend(check_agents(c));
    }
    all.extend(f.integrations.as_deref().map(check_integrations));
    all
}

/// No service manager answers, and nerdr runs as the README says it does
/// there: each command starts the core by hand when none runs. Either a
/// core answers that was started so (its holder keeps programs in
/// sessions), or nothing of systemd's is installed, so the next command
/// starts one. Units, socket activation and lingering are then not in
/// play, so they cannot fail the install. Installed units without a
/// manager stay a failure: no command starts a core beside them.
fn by_hand(f: &Facts) -> bool {
    use crate::protocol::api::ProgramsMode;
    f.manager.is_err()
        && (f.units.nothing_in_force()
            || f.programs.as_ref().is_some_and(|p| {
                p.mode.as_deref().ok().and_then(ProgramsMode::parse)
                    == Some(ProgramsMode::HolderSessions)
            }))
}

/// The checks of a core started by hand: the manager's absence is a
/// warning (what it costs), the unit files and the sockets nobody listens
/// on are information (what the next command does), lingering is not
/// checked (it is the user manager's).
fn without_a_manager(f: &Facts) -> Vec<Check> {
    let why = f.manager.as_ref().err().cloned().unwrap_or_default();
    let mut all = vec![
        check(
            "user-manager",
            Status::Warn,
            format!(
                "none answers ({why}): nerdr runs without one, the core started by the first \
                 command that needs it (or `nerdr core` by hand); nothing restarts it after a \
                 crash or a reboot"
            ),
            Some(
                "for a core systemd starts and restarts, run nerdr in a login session with a \
                 user manager and `nerdr service install`"
                    .into(),
            ),
        ),
        check(
            "units",
            Status::Info,
            "not used without a user manager".into(),
            None,
        ),
    ];
    all.extend(f.cores.as_ref().map(|c| check_cores(f, c)));
    all.push(by_hand_socket(f, &f.hook));
    all.push(by_hand_socket(f, &f.client));
    all.extend(f.programs.as_ref().map(|p| check_programs(f, p)));
    all.extend(f.bwrap.as_ref().map(check_bwrap));
    all.extend(f.journald.map(check_journald));
    if let Some(c) = &f.config {
        all.push(check_config(c));
        all.extend(check_agents(c));
    }
    all.extend(f.integrations.as_deref().map(check_integrations));
    all
}

/// A socket without a manager: no socket, or one left by a core that
/// ended, is what the next command replaces when it starts the core.
fn by_hand_socket(f: &Facts, s: &SocketFacts) -> Check {
    let c = check_socket(f, s);
    match s.probe {
        SocketProbe::Missing | SocketProbe::Stale => Check {
            status: Status::Info,
            detail: format!(
                "{}: no core runs; the next nerdr command starts one",
                c.detail
            ),
            remedy: None,
            ..c
        },
        _ => c,
    }
}

/// 2 when any check fails, else 0: a warning says what to improve on an
/// install that works, so a script must not read it as broken.
pub fn exit_code(checks: &[Check]) -> i32 {
    match checks.iter().map(|c| c.status).max() {
        None | Some(Status::Ok) | Some(Status::Info) | Some(Status::Warn) => 0,
        Some(Status::Fail) => 2,
    }
}

/// One line per check: status, name, detail, and the remedy after `->`.
pub fn render_human(checks: &[Check]) -> String {
    let mut out = String::new();
    for c in checks {
        let status = match c.status {
            Status::Ok => "ok",
            Status::Info => "info",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
        };
        out.push_str(&format!("{status:<4}  {:<13} {}", c.name, c.detail));
        if let Some(r) = &c.remedy {
            out.push_str(&format!(" -> {r}"));
        }
        out.push('\n');
    }
    out
}

pub fn render_json(checks: &[Check]) -> String {
    serde_json::to_string_pretty(checks).expect("checks serialize")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::doctor::find;
    use crate::service::facts::{healthy, Platform, SocketProbe};

    #[test]
    fn a_healthy_setup_is_all_ok_and_exits_0() {
        let checks = checks(&healthy());
        let names: Vec<_> = checks.iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [
                "user-manager",
                "units",
                "core",
                "core-process",
                "hook-socket",
                "client-socket",
                "programs",
                "lingering",
                "bubblewrap",
                "journald",
                "config",
                "agents",
                "integrations"
            ]
        );
        assert!(checks.iter().all(|c| c.status == Status::Ok), "{checks:#?}");
        assert_eq!(exit_code(&checks), 0);
        assert_eq!(find(&checks, "core").detail, "running: 3 agents, 1 blocked");
    }

    #[test]
    fn launchd_skips_what_does_not_apply() {
        let mut f = healthy();
        f.platform = Platform::Launchd;
        f.linger = None;
        f.bwrap = None;
        f.journald = None;
        f.config = None;
        f.cores = None;
        f.integrations = None;
        let names: Vec<_> = checks(&f).iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [
                "user-manager",
                "units",
                "core",
                "hook-socket",
                "client-socket",
                "programs"
            ]
        );
    }

    #[test]
    fn a_core_started_by_hand_without_a_manager_is_a_warning_not_a_failure() {
        let mut f = healthy();
        f.manager = Err("no XDG_RUNTIME_DIR bus".into());
        f.core = None;
        f.units
            .files
            .iter_mut()
            .for_each(|(_, s)| *s = crate::service::facts::FileState::Missing);
        // The holder keeps each program in a session of its own: no
        // manager to put them in scopes.
        f.programs.as_mut().unwrap().mode =
            Ok(crate::protocol::api::ProgramsMode::HolderSessions.to_string());
        let all = checks(&f);
        let names: Vec<_> = all.iter().map(|c| c.name).collect();
        assert!(!names.contains(&"lingering"), "{names:?}");
        assert_eq!(find(&all, "units").status, Status::Info);
        assert_eq!(find(&all, "user-manager").status, Status::Warn);
        assert!(find(&all, "user-manager")
            .detail
            .contains("`nerdr core` by hand"));
        assert_eq!(exit_code(&all), 0, "{all:#?}");
        // No core answering, units installed: no command starts a core
        // beside them, so the missing manager fails.
        f.programs = None;
        f.units
            .files
            .iter_mut()
            .for_each(|(_, s)| *s = crate::service::facts::FileState::Current);
        let all = checks(&f);
        assert_eq!(find(&all, "user-manager").status, Status::Fail);
        assert_eq!(exit_code(&all), 2);
    }

    /// The trial's case: no user manager, nothing installed, no core
    /// running yet (or any more). The README says the first command starts
    /// the core, so nothing here is a failure and no line asks for
    /// `nerdr service install` or lingering.
    #[test]
    fn no_manager_and_no_core_yet_is_information_not_a_failure() {
        for probe in [SocketProbe::Missing, SocketProbe::Stale] {
            let mut f = healthy();
            f.manager = Err("Failed to connect to bus: No medium found".into());
            f.core = None;
            f.programs = None;
            f.units
                .files
                .iter_mut()
                .for_each(|(_, s)| *s = crate::service::facts::FileState::Missing);
            f.hook.probe = probe.clone();
            f.client.probe = probe.clone();
            f.linger = Some(false);
            let all = checks(&f);
            let names: Vec<_> = all.iter().map(|c| c.name).collect();
            assert!(!names.contains(&"lingering"), "{names:?}");
            assert_eq!(exit_code(&all), 0, "{all:#?}");
            let manager = find(&all, "user-manager");
            assert_eq!(manager.status, Status::Warn);
            assert!(manager.detail.contains("first command"), "{manager:?}");
            assert!(
                manager.detail.contains("nothing restarts it"),
                "{manager:?}"
            );
            assert_eq!(find(&all, "units").status, Status::Info);
            for name in ["hook-socket", "client-socket"] {
                let c = find(&all, name);
                assert_eq!(c.status, Status::Info, "{c:?}");
                assert!(
                    c.detail.contains("the next nerdr command starts one"),
                    "{c:?}"
                );
                assert_eq!(c.remedy, None, "{c:?}");
            }
            let out = render_human(&all);
            assert!(!out.contains("FAIL"), "{out}");
            assert!(out.contains("info  units"), "{out}");
        }
    }

    #[test]
    fn a_socket_in_the_way_still_fails_without_a_manager() {
        let mut f = healthy();
        f.manager = Err("no bus".into());
        f.programs = None;
        f.units
            .files
            .iter_mut()
            .for_each(|(_, s)| *s = crate::service::facts::FileState::Missing);
        f.client.probe = SocketProbe::NotASocket;
        let all = checks(&f);
        assert_eq!(find(&all, "client-socket").status, Status::Fail);
        assert_eq!(exit_code(&all), 2);
    }

    #[test]
    fn a_core_not_asked_has_no_programs_check() {
        let mut f = healthy();
        f.client.probe = crate::service::facts::SocketProbe::Stale;
        f.programs = None;
        let all = checks(&f);
        assert!(all.iter().all(|c| c.name != "programs"), "{all:#?}");
        assert_eq!(exit_code(&all), 2);
    }

    #[test]
    fn human_output_is_one_line_per_check_with_its_remedy() {
        let mut f = healthy();
        f.linger = Some(false);
        let out = render_human(&checks(&f));
        assert_eq!(out.lines().count(), 13);
        assert!(out.contains(
            "warn  lingering     off for ann: your user manager, the core and every agent stop when you log out -> `loginctl enable-linger ann`\n"
        ), "{out}");
        assert!(
            out.starts_with("ok    user-manager  systemd 252 answers\n"),
            "{out}"
        );
    }

    #[test]
    fn json_output_is_an_array_of_name_status_detail_remedy() {
        let mut f = healthy();
        f.bwrap.as_mut().unwrap().bwrap = None;
        let v: serde_json::Value = serde_json::from_str(&render_json(&checks(&f))).unwrap();
        let arr = v.as_array().unwrap();
        assert_eq!(arr.len(), 13);
        assert_eq!(arr[0]["name"], "user-manager");
        assert_eq!(arr[0]["status"], "ok");
        assert_eq!(arr[0]["remedy"], serde_json::Value::Null);
        let b = arr.iter().find(|c| c["name"] == "bubblewrap").unwrap();
        assert_eq!(b["status"], "warn");
        assert!(b["remedy"].as_str().unwrap().contains("bubblewrap"));
        let mut keys: Vec<_> = arr[0].as_object().unwrap().keys().cloned().collect();
        keys.sort();
        assert_eq!(keys, ["detail", "name", "remedy", "status"]);
    }
}
