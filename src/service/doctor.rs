//! `nerdr doctor`: is the service set up and working, and if not, what to
//! do. Gather, then decide: the platform code (`systemd.rs`, `launchd.rs`)
//! fills a plain [`Facts`]; every verdict below is a pure function of it.
//!
//! Exit code: 0 when every check is ok, 1 when the worst is a warning, 2 when
//! any check fails.

use std::path::PathBuf;

use serde::Serialize;

use super::install::{FileState, SocketProbe};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    Systemd,
    Launchd,
}

/// Everything the checks look at, gathered once.
#[derive(Debug, Clone)]
pub struct Facts {
    pub platform: Platform,
    /// `Ok(what answered)`, or `Err(why no service manager answered)`.
    pub manager: Result<String, String>,
    pub units: Installed,
    /// The core's unit state; `None` when no manager answered.
    pub core: Option<CoreState>,
    pub hook: SocketFacts,
    pub client: SocketFacts,
    pub user: String,
    /// Lingering (`None` where it does not apply: launchd).
    pub linger: Option<bool>,
    /// Where `bwrap` is on PATH (outer `None` where it does not apply).
    pub bwrap: Option<Option<PathBuf>>,
    /// Whether journald's socket exists (`None` where it does not apply).
    pub journald: Option<bool>,
}

/// The installed unit files compared with what this nerdr would write.
#[derive(Debug, Clone)]
pub struct Installed {
    pub dir: PathBuf,
    /// The binary the comparison rendered with: the one the installed
    /// service runs, else this executable.
    pub bin: Option<PathBuf>,
    pub bin_from_installed: bool,
    /// Why `bin` cannot run (missing, not executable), if it cannot.
    pub bin_problem: Option<String>,
    /// Why rendering failed (a path units cannot hold), if it did.
    pub render_error: Option<String>,
    pub files: Vec<(&'static str, FileState)>,
    /// Why the service manager does not read `dir`, if it does not.
    pub unread: Option<String>,
}

impl Installed {
    pub fn none_present(&self) -> bool {
        self.files.iter().all(|(_, s)| *s == FileState::Missing)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreState {
    /// `active`, `inactive`, `failed`, `activating`, ... (systemd words;
    /// launchd's `running` is mapped to `active`).
    pub active: String,
    pub status_text: String,
}

#[derive(Debug, Clone)]
pub struct SocketFacts {
    /// The unit (or launchd socket name) that should listen there.
    pub unit: &'static str,
    pub path: PathBuf,
    pub probe: SocketProbe,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warn,
    Fail,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub status: Status,
    pub detail: String,
    pub remedy: Option<String>,
}

fn check(name: &'static str, status: Status, detail: String, remedy: Option<String>) -> Check {
    Check {
        name,
        status,
        detail,
        remedy,
    }
}

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
    check(
        name,
        Status::Ok,
        format!("installed and current in {} (runs {bin})", u.dir.display()),
        None,
    )
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
            "not running; the first connection to either socket starts it".into(),
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
    let not_installed = f.units.none_present();
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

pub fn check_bwrap(found: Option<&PathBuf>) -> Check {
    match found {
        Some(p) => check("bubblewrap", Status::Ok, format!("bwrap at {}", p.display()), None),
        None => check(
            "bubblewrap",
            Status::Warn,
            "bwrap is not on PATH: `nerdr sandbox` refuses to start agents without it".into(),
            Some("install bubblewrap (`apt install bubblewrap`, `dnf install bubblewrap`, `pacman -S bubblewrap`)".into()),
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
            Some("run under systemd-journald to get audit events in the journal; `nerdr log` still reads core.log".into()),
        )
    }
}

/// Every check that applies, in the order a person would fix them.
pub fn checks(f: &Facts) -> Vec<Check> {
    let mut all = vec![check_manager(f), check_units(f)];
    all.extend(check_core(f));
    all.push(check_socket(f, &f.hook));
    all.push(check_socket(f, &f.client));
    all.extend(f.linger.map(|on| check_linger(on, &f.user)));
    all.extend(f.bwrap.as_ref().map(|b| check_bwrap(b.as_ref())));
    all.extend(f.journald.map(check_journald));
    all
}

/// 0 all ok, 1 worst is a warning, 2 any failure.
pub fn exit_code(checks: &[Check]) -> i32 {
    match checks.iter().map(|c| c.status).max() {
        None | Some(Status::Ok) => 0,
        Some(Status::Warn) => 1,
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

    fn healthy() -> Facts {
        Facts {
            platform: Platform::Systemd,
            manager: Ok("systemd 252".into()),
            units: Installed {
                dir: "/home/ann/.config/systemd/user".into(),
                bin: Some("/usr/bin/nerdr".into()),
                bin_from_installed: true,
                bin_problem: None,
                render_error: None,
                unread: None,
                files: vec![
                    ("nerdr-hook.socket", FileState::Current),
                    ("nerdr-client.socket", FileState::Current),
                    ("nerdr.service", FileState::Current),
                ],
            },
            core: Some(CoreState {
                active: "active".into(),
                status_text: "3 agents, 1 blocked".into(),
            }),
            hook: SocketFacts {
                unit: "nerdr-hook.socket",
                path: "/home/ann/.local/state/nerdr/nerdr.sock".into(),
                probe: SocketProbe::Listening,
            },
            client: SocketFacts {
                unit: "nerdr-client.socket",
                path: "/run/user/1000/nerdr/client.sock".into(),
                probe: SocketProbe::Listening,
            },
            user: "ann".into(),
            linger: Some(true),
            bwrap: Some(Some("/usr/bin/bwrap".into())),
            journald: Some(true),
        }
    }

    fn find<'a>(checks: &'a [Check], name: &str) -> &'a Check {
        checks.iter().find(|c| c.name == name).unwrap()
    }

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
                "hook-socket",
                "client-socket",
                "lingering",
                "bubblewrap",
                "journald"
            ]
        );
        assert!(checks.iter().all(|c| c.status == Status::Ok), "{checks:#?}");
        assert_eq!(exit_code(&checks), 0);
        assert_eq!(find(&checks, "core").detail, "running: 3 agents, 1 blocked");
    }

    /// (case, how the facts differ from healthy, check, status, words in the
    /// detail, words in the remedy, exit code)
    type Case = (
        &'static str,
        fn(&mut Facts),
        &'static str,
        Status,
        &'static str,
        &'static str,
        i32,
    );

    #[test]
    fn verdicts() {
        let cases: &[Case] = &[
            (
                "lingering off warns with the loginctl command",
                |f| f.linger = Some(false),
                "lingering",
                Status::Warn,
                "off for ann",
                "loginctl enable-linger ann",
                1,
            ),
            (
                "a missing bwrap warns",
                |f| f.bwrap = Some(None),
                "bubblewrap",
                Status::Warn,
                "nerdr sandbox",
                "install bubblewrap",
                1,
            ),
            (
                "no journald warns",
                |f| f.journald = Some(false),
                "journald",
                Status::Warn,
                "core.log only",
                "systemd-journald",
                1,
            ),
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
                "a changed unit warns",
                |f| f.units.files[2].1 = FileState::Different,
                "units",
                Status::Warn,
                "nerdr.service differ",
                "nerdr service install",
                1,
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
        for (case, change, name, status, detail, remedy, code) in cases {
            let mut f = healthy();
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

    #[test]
    fn launchd_skips_what_does_not_apply() {
        let mut f = healthy();
        f.platform = Platform::Launchd;
        f.linger = None;
        f.bwrap = None;
        f.journald = None;
        let names: Vec<_> = checks(&f).iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [
                "user-manager",
                "units",
                "core",
                "hook-socket",
                "client-socket"
            ]
        );
    }

    #[test]
    fn human_output_is_one_line_per_check_with_its_remedy() {
        let mut f = healthy();
        f.linger = Some(false);
        let out = render_human(&checks(&f));
        assert_eq!(out.lines().count(), 8);
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
        f.bwrap = Some(None);
        let v: serde_json::Value = serde_json::from_str(&render_json(&checks(&f))).unwrap();
        let arr = v.as_array().unwrap();
        assert_eq!(arr.len(), 8);
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
