//! The Linux side of `nerdr service` and `nerdr doctor`: systemd user units
//! in `~/.config/systemd/user`, driven with `systemctl --user`. Same
//! signatures as `launchd.rs`. This file runs the commands; every decision
//! (what to restart, what to print, whether the manager reads our
//! directory) is a pure function in `plan.rs`.

mod plan;
mod status;

use std::path::Path;

use anyhow::{Context, Result};

use crate::paths::Paths;

use super::facts::{CoreState, Facts, FileState, Installed, Platform, SocketFacts, SocketProbe};
use super::install::{self};
use super::packaged::{
    self, drop_in_path, DROP_IN_NAME, DROP_IN_UNITS, PACKAGE_BIN, PACKAGE_UNIT_DIR,
};
use super::systemctl::{self, Props};
use super::units::{
    self, CLIENT_SOCKET_UNIT, HOOK_SOCKET_UNIT, SERVICE_UNIT, SOCKET_UNITS, UNIT_NAMES,
};
use plan::{
    active_state, core_line, followup, linger_line, listening_at, load_state, manager_reads,
    unread_dir_message,
};
use status::status_lines;

/// logind's record of who lingers: one empty file per user.
const LINGER_DIR: &str = "/var/lib/systemd/linger";
const JOURNAL_SOCKET: &str = "/run/systemd/journal/socket";

pub fn install(bin: &Path, paths: &Paths) -> Result<()> {
    let dir = paths.systemd_user_dir();
    // The package's units serve this binary already: the user needs at
    // most drop-ins for paths of their own, and their own full units
    // (from an earlier install) keep winning until they uninstall them.
    let packaged = bin == Path::new(PACKAGE_BIN)
        && package_present()
        && install::read_all(&dir, &UNIT_NAMES)
            .iter()
            .all(|(_, t)| t.is_none());
    let (old, changed) = if packaged {
        write_drop_ins(paths, &dir)?
    } else {
        write_own_units(bin, paths, &dir)?
    };
    apply(bin, paths, &old, &changed)
}

/// The user's own units for `bin`, written to `dir`: the old texts and the
/// units that changed.
fn write_own_units(bin: &Path, paths: &Paths, dir: &Path) -> Result<(OldTexts, Vec<&'static str>)> {
    // Refuse unrepresentable paths and a missing manager before writing anything.
    let rendered = units::render_units(bin, paths)?;
    let manager = manager().context("nothing was written")?;
    let version = manager.version;
    if !manager_reads(dir, &manager.unit_path) {
        anyhow::bail!(
            "{}; nothing was written",
            unread_dir_message(dir, &manager.unit_path)
        );
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let old = install::read_all(dir, &UNIT_NAMES);
    println!("nerdr: systemd {version} user units in {}:", dir.display());
    let mut changed = Vec::new();
    for unit in &rendered {
        let was = install::write_if_changed(dir, unit)
            .with_context(|| format!("writing {}", dir.join(unit.name).display()))?;
        let what = match was {
            FileState::Missing => "created",
            FileState::Different => "updated",
            FileState::Current => "unchanged",
        };
        println!("  {:<20} {what}", unit.name);
        if was != FileState::Current {
            changed.push(unit.name);
        }
    }
    Ok((old, changed))
}

/// Each unit's text before an install changed it.
type OldTexts = Vec<(&'static str, Option<String>)>;

/// The drop-ins the package's units need for this user's paths, written
/// (or removed, when the paths are XDG's defaults again) under `dir`.
fn write_drop_ins(paths: &Paths, dir: &Path) -> Result<(OldTexts, Vec<&'static str>)> {
    let home = crate::paths::Env::from_process()
        .home
        .context("HOME is not set; set it to your home directory")?;
    let wanted = packaged::drop_ins(paths, &home)?;
    let manager = manager().context("nothing was written")?;
    if !wanted.is_empty() && !manager_reads(dir, &manager.unit_path) {
        anyhow::bail!(
            "{}; nothing was written",
            unread_dir_message(dir, &manager.unit_path)
        );
    }
    println!(
        "nerdr: systemd {} runs the package's units from {PACKAGE_UNIT_DIR}{}",
        manager.version,
        if wanted.is_empty() {
            "; your paths are XDG's defaults they name, so you need no file of your own"
        } else {
            "; your paths differ from XDG's defaults they name, so drop-ins say yours:"
        }
    );
    let mut old = Vec::new();
    let mut changed = Vec::new();
    for unit in DROP_IN_UNITS {
        let path = drop_in_path(dir, unit);
        let unit_dir = path.parent().unwrap_or(dir).to_owned();
        old.push((unit, std::fs::read_to_string(&path).ok()));
        match wanted.iter().find(|d| d.unit == unit) {
            Some(d) => {
                std::fs::create_dir_all(&unit_dir)
                    .with_context(|| format!("creating {}", unit_dir.display()))?;
                let file = units::UnitFile {
                    name: DROP_IN_NAME,
                    contents: d.contents.clone(),
                };
                let was = install::write_if_changed(&unit_dir, &file)
                    .with_context(|| format!("writing {}", path.display()))?;
                let what = match was {
                    FileState::Missing => "created",
                    FileState::Different => "updated",
                    FileState::Current => "unchanged",
                };
                println!("  {} {what}", path.display());
                if was != FileState::Current {
                    changed.push(unit);
                }
            }
            None => {
                if install::remove_if_present(&path)
                    .with_context(|| format!("removing {}", path.display()))?
                {
                    println!("nerdr: removed {}, no longer needed", path.display());
                    install::remove_dir_if_empty(&unit_dir);
                    changed.push(unit);
                }
            }
        }
    }
    Ok((old, changed))
}

/// Reload, enable the sockets and start or restart what `changed` needs.
fn apply(bin: &Path, paths: &Paths, old: &OldTexts, changed: &[&'static str]) -> Result<()> {
    let before = unit_states()?;
    // Always reload: cheap, changes nothing when the files did not change,
    // and repairs an earlier install that wrote files but stopped here.
    run_and_say(&["daemon-reload"])?;
    // Only the sockets are enabled: the first connection starts the core.
    // Not `enable --now`: starting a socket whose core runs is refused, and
    // what to start or restart is decided below.
    run_and_say(&["enable", HOOK_SOCKET_UNIT, CLIENT_SOCKET_UNIT])?;
    let next = followup(changed, &before, &paths.hook_socket());
    for (verb, list) in [
        ("reset-failed", &next.reset_failed),
        ("restart", &next.restart),
        ("start", &next.start),
    ] {
        if !list.is_empty() {
            let mut args = vec![verb];
            args.extend(list.iter());
            run_and_say(&args)?;
        }
    }
    // A restarted socket with a new path leaves its old file behind.
    for unit in &next.restart {
        let old_path = old
            .iter()
            .find(|(n, _)| n == unit)
            .and_then(|(_, text)| units::listen_path(text.as_deref()?));
        let new_path = if *unit == HOOK_SOCKET_UNIT {
            paths.hook_socket()
        } else {
            paths.client_socket()
        };
        if let Some(old_path) = old_path.filter(|p| *p != new_path) {
            if install::remove_stale_socket(&old_path)? == SocketProbe::Stale {
                println!("nerdr: removed the previous socket {}", old_path.display());
            }
        }
    }
    if let Some(advice) = &next.advice {
        println!("nerdr: {advice}");
    }
    let after = unit_states()?;
    for (unit, path) in [
        (HOOK_SOCKET_UNIT, paths.hook_socket()),
        (CLIENT_SOCKET_UNIT, paths.client_socket()),
    ] {
        let state = active_state(&after, unit);
        // Under advice nothing restarted: the running core keeps the
        // socket it was given.
        let old = listening_at(&before, unit).filter(|old| next.advice.is_some() && *old != path);
        match old {
            Some(old) => println!(
                "nerdr: {unit} is {state}, still at {} until you do the above; then at {}",
                old.display(),
                path.display()
            ),
            None => println!("nerdr: {unit} is {state}, at {}", path.display()),
        }
    }
    println!("nerdr: {}", core_line(&after, next.advice.is_some(), bin));
    let user = install::user_name();
    println!("nerdr: {}", linger_line(&user, linger_on(&user)));
    Ok(())
}

pub fn uninstall(paths: &Paths) -> Result<()> {
    let dir = paths.systemd_user_dir();
    let present: Vec<&str> = UNIT_NAMES
        .into_iter()
        .filter(|n| dir.join(n).exists())
        .collect();
    // Stop before removing: a manager that cannot be asked to stop the units
    // would keep running them from memory, so remove nothing in that case.
    let reads_dir = manager_reads(&dir, &manager().context("nothing was removed")?.unit_path);
    let states = unit_states()?;
    let loaded: Vec<&str> = UNIT_NAMES
        .into_iter()
        .filter(|n| load_state(&states, n) != "not-found")
        .collect();
    if present.is_empty() && loaded.is_empty() {
        println!(
            "nerdr: no nerdr units are installed in {}; nothing to do",
            dir.display()
        );
        return Ok(());
    }
    if !loaded.is_empty() {
        let mut args = vec!["stop"];
        args.extend(&loaded);
        run_and_say(&args)?;
    }
    // `disable` works on files the manager can see; links beside files it
    // cannot see are removed by hand below.
    let enabled_files: Vec<&str> = SOCKET_UNITS
        .into_iter()
        .filter(|n| reads_dir && present.contains(n))
        .collect();
    if !enabled_files.is_empty() {
        let mut args = vec!["disable"];
        args.extend(&enabled_files);
        run_and_say(&args)?;
    }
    // Links `disable` could not remove: beside a unit file removed by hand,
    // or in a directory the manager does not read.
    let wants = dir.join("sockets.target.wants");
    for name in SOCKET_UNITS {
        let link = wants.join(name);
        if link
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
        {
            install::remove_if_present(&link)
                .with_context(|| format!("removing {}", link.display()))?;
        }
    }
    // A unit that failed before (or while stopping) keeps that state, and
    // with it its entry, until reset.
    let after_stop = unit_states()?;
    let failed: Vec<&str> = loaded
        .iter()
        .copied()
        .filter(|n| active_state(&after_stop, n) == "failed")
        .collect();
    if !failed.is_empty() {
        let mut args = vec!["reset-failed"];
        args.extend(&failed);
        run_and_say(&args)?;
    }
    for name in UNIT_NAMES {
        let path = dir.join(name);
        if install::remove_if_present(&path)
            .with_context(|| format!("removing {}", path.display()))?
        {
            println!("nerdr: removed {}", path.display());
        }
    }
    // Drop-ins for the package's units, and their directories if now empty.
    for unit in DROP_IN_UNITS {
        let path = drop_in_path(&dir, unit);
        if install::remove_if_present(&path)
            .with_context(|| format!("removing {}", path.display()))?
        {
            println!("nerdr: removed {}", path.display());
        }
        if let Some(parent) = path.parent() {
            install::remove_dir_if_empty(parent);
        }
    }
    // Directories `enable` and this install created, only if now empty.
    install::remove_dir_if_empty(&wants);
    if install::remove_dir_if_empty(&dir) {
        install::remove_dir_if_empty(dir.parent().unwrap_or(&dir));
    }
    run_and_say(&["daemon-reload"])?;
    // The socket units keep their files on stop (see RemoveOnStop in
    // nerdr-hook.socket); remove them now that nothing listens.
    for path in [paths.hook_socket(), paths.client_socket()] {
        match install::remove_stale_socket(&path)
            .with_context(|| format!("removing {}", path.display()))?
        {
            SocketProbe::Stale => println!("nerdr: removed {}", path.display()),
            SocketProbe::Listening => println!(
                "nerdr: left {}: something still listens on it (a core started by hand?)",
                path.display()
            ),
            SocketProbe::NotASocket => {
                println!("nerdr: left {}: it is not a socket", path.display())
            }
            SocketProbe::Missing | SocketProbe::Error(_) | SocketProbe::NotProbed(_) => {}
        }
    }
    // Directories systemd created for the sockets, if nothing else is in them.
    install::remove_dir_if_empty(&paths.run_dir);
    install::remove_dir_if_empty(&paths.state_dir);
    println!(
        "nerdr: uninstalled; your sessions and data under {} stay",
        paths.state_dir.display()
    );
    Ok(())
}

pub fn status(paths: &Paths) -> Result<()> {
    let installed = installed(paths);
    let manager = manager().map_err(|e| format!("{}\n  {}", e.brief(), e.hint()));
    let states = match &manager {
        Ok(_) => Some(unit_states()?),
        Err(_) => None,
    };
    if let Ok(m) = &manager {
        if !installed.none_present() && !manager_reads(&installed.dir, &m.unit_path) {
            println!(
                "nerdr: {}",
                unread_dir_message(&installed.dir, &m.unit_path)
            );
        }
    }
    let manager = manager.map(|m| m.version);
    for line in status_lines(&installed, &manager, states.as_deref(), paths) {
        println!("{line}");
    }
    Ok(())
}

/// Gathers what `nerdr doctor` checks.
/// The pid nerdr.service runs now (`None` when it runs none, or the
/// manager does not answer). Read apart from `gather`, after doctor's
/// requests, which may have started the core through its socket.
pub fn main_pid() -> Option<u32> {
    let props = systemctl::show(&[SERVICE_UNIT], "MainPID").ok()?;
    let pid: u32 = props.first()?.get("MainPID")?.parse().ok()?;
    (pid != 0).then_some(pid)
}

pub fn gather(paths: &Paths) -> Facts {
    let found = manager();
    let mut units = installed(paths);
    if let Ok(m) = &found {
        if !manager_reads(&units.dir, &m.unit_path) {
            units.unread = Some(unread_dir_message(&units.dir, &m.unit_path));
        }
    }
    let manager = found
        .map(|m| format!("systemd {} user manager", m.version))
        .map_err(|e| e.brief());
    // Read the core's state before probing the sockets: a probe connects,
    // and a connection starts the core.
    let states = manager
        .as_ref()
        .ok()
        .and_then(|_| unit_states().ok())
        .unwrap_or_default();
    let core = states
        .iter()
        .find(|p| p.get("Id").map(String::as_str) == Some(SERVICE_UNIT))
        .map(|p| CoreState {
            active: p.get("ActiveState").cloned().unwrap_or_default(),
            status_text: p.get("StatusText").cloned().unwrap_or_default(),
        });
    let reload_pending = UNIT_NAMES
        .into_iter()
        .filter(|u| plan::prop(&states, u, "NeedDaemonReload") == "yes")
        .collect();
    // A probe connects, and through the package's units without this
    // user's drop-ins a connection starts a core with XDG's default paths
    // (the client socket under XDG_RUNTIME_DIR is the same for both).
    // A running core is started already: a connection starts nothing.
    let core_runs = core
        .as_ref()
        .is_some_and(|c| matches!(c.active.as_str(), "active" | "activating" | "reloading"));
    let not_yours = units.starts_other_paths().filter(|_| !core_runs);
    let socket = |unit, path: std::path::PathBuf| SocketFacts {
        unit,
        probe: match &not_yours {
            Some(why) => SocketProbe::NotProbed(why.clone()),
            None => install::probe_socket(&path),
        },
        path,
    };
    let user = install::user_name();
    Facts {
        platform: Platform::Systemd,
        manager,
        units,
        reload_pending,
        core,
        hook: socket(HOOK_SOCKET_UNIT, paths.hook_socket()),
        client: socket(CLIENT_SOCKET_UNIT, paths.client_socket()),
        linger: Some(linger_on(&user)),
        user,
        bwrap: Some(crate::sandbox::availability::probe()),
        journald: Some(Path::new(JOURNAL_SOCKET).exists()),
        programs: None,
        config: None,
        cores: None,
        integrations: None,
    }
}

fn installed(paths: &Paths) -> Installed {
    let dir = paths.systemd_user_dir();
    let on_disk = install::read_all(&dir, &UNIT_NAMES);
    let bin = on_disk
        .iter()
        .find(|(n, _)| *n == SERVICE_UNIT)
        .and_then(|(_, text)| units::installed_bin(text.as_deref()?));
    let mut found = install::compare_installed(dir.clone(), &on_disk, bin, |b| {
        units::render_units(b, paths)
    });
    found.package = package_present().then(|| {
        let wanted = crate::paths::Env::from_process()
            .home
            .and_then(|home| packaged::drop_ins(paths, &home).ok())
            .unwrap_or_default();
        let on_disk: OldTexts = DROP_IN_UNITS
            .into_iter()
            .map(|u| (u, std::fs::read_to_string(drop_in_path(&dir, u)).ok()))
            .collect();
        packaged::compare_drop_ins(&wanted, &on_disk)
    });
    found
}

/// Whether a package put nerdr's units where every user's manager reads.
fn package_present() -> bool {
    UNIT_NAMES
        .iter()
        .any(|n| Path::new(PACKAGE_UNIT_DIR).join(n).exists())
}

fn linger_on(user: &str) -> bool {
    Path::new(LINGER_DIR).join(user).exists()
}

/// The manager's version and the directories it reads units from.
struct Manager {
    version: String,
    unit_path: String,
}

fn manager() -> Result<Manager, systemctl::SystemctlError> {
    // `show` without a unit shows the manager itself: a cheap "are you there".
    let out = systemctl::run(&["show", "-p", "Version,UnitPath"])?;
    let props = systemctl::parse_show(&out)
        .into_iter()
        .next()
        .unwrap_or_default();
    Ok(Manager {
        version: props.get("Version").cloned().unwrap_or_default(),
        unit_path: props.get("UnitPath").cloned().unwrap_or_default(),
    })
}

/// `show` for the three units (unknown units come back as `not-found`).
fn unit_states() -> Result<Vec<Props>, systemctl::SystemctlError> {
    systemctl::show(&UNIT_NAMES, systemctl::STATE_PROPS)
}

fn run_and_say(args: &[&str]) -> Result<(), systemctl::SystemctlError> {
    systemctl::run(args)?;
    println!("nerdr: ran `{}`", systemctl::command_line(args));
    Ok(())
}
