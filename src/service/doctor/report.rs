//! The checks in the order a person would fix them, the exit code, and the
//! two ways they print (one line each, or a JSON array).

use super::agents::{check_bwrap, check_journald, check_linger, check_programs};
use super::config::{check_agents, check_config, check_integrations};
use super::cores::check_cores;
use super::setup::{check_core, check_manager, check_socket, check_units};
use super::verdict::{Check, Status};
use crate::service::facts::Facts;

/// Every check that applies, in the order a person would fix them.
pub fn checks(f: &Facts) -> Vec<Check> {
    if by_hand(f) {
        return without_a_manager(f);
    }
    let mut all = vec![check_manager(f), check_units(f)];
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

/// No service manager answers, yet a core answers on the client socket:
/// nerdr runs as the README's first command leaves it on a machine with
/// no user session (the core and holder started by hand). Units and
/// lingering are then not in play, so they cannot fail the install.
fn by_hand(f: &Facts) -> bool {
    use crate::protocol::api::ProgramsMode;
    f.manager.is_err()
        && f.programs.as_ref().is_some_and(|p| {
            p.mode.as_deref().ok().and_then(ProgramsMode::parse)
                == Some(ProgramsMode::HolderSessions)
        })
}

/// The checks of a core started by hand: the manager's absence is a
/// warning (what it costs), the unit files and lingering are not checked.
fn without_a_manager(f: &Facts) -> Vec<Check> {
    let why = f.manager.as_ref().err().cloned().unwrap_or_default();
    let mut all = vec![super::verdict::check(
        "user-manager",
        Status::Warn,
        format!(
            "none answers ({why}): the core runs without one, started by hand, and nothing \
             starts it again after a reboot"
        ),
        Some(
            "for a core started on demand, run nerdr in a login session with a user manager \
             and `nerdr service install`"
                .into(),
        ),
    )];
    all.extend(f.cores.as_ref().map(|c| check_cores(f, c)));
    all.push(check_socket(f, &f.hook));
    all.push(check_socket(f, &f.client));
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

/// 2 when any check fails, else 0: a warning says what to improve on an
/// install that works, so a script must not read it as broken.
pub fn exit_code(checks: &[Check]) -> i32 {
    match checks.iter().map(|c| c.status).max() {
        None | Some(Status::Ok) | Some(Status::Warn) => 0,
        Some(Status::Fail) => 2,
    }
}

/// One line per check: status, name, detail, and the remedy after `->`.
pub fn render_human(checks: &[Check]) -> String {
    let mut out = String::new();
    for c in checks {
        let status = match c.status {
            Status::Ok => "ok",
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
    use crate::service::facts::{healthy, Platform};

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
        assert!(
            !names.contains(&"units") && !names.contains(&"lingering"),
            "{names:?}"
        );
        assert_eq!(find(&all, "user-manager").status, Status::Warn);
        assert!(find(&all, "user-manager")
            .detail
            .contains("started by hand"));
        assert_eq!(exit_code(&all), 0, "{all:#?}");
        // No core answering either: the missing manager fails as before.
        f.programs = None;
        let all = checks(&f);
        assert_eq!(find(&all, "user-manager").status, Status::Fail);
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
