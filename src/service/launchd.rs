//! The macOS side of `nerdr service` and `nerdr doctor`: one launchd agent
//! (`~/Library/LaunchAgents/com.nerdr.core.plist`) holding both sockets,
//! driven with `launchctl` in the `gui/<uid>` domain. Same signatures as
//! `systemd.rs`. Compiled (and its pure parts tested) everywhere so it
//! cannot drift from them; only used on macOS.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::paths::Paths;

use super::facts::{CoreState, Facts, FileState, Installed, Platform, SocketFacts, SocketProbe};
use super::install::{self};
use super::units::{self, LAUNCHD_LABEL, PLIST_NAME};

fn home() -> Result<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .context("HOME is not set (or not absolute); set it to your home directory")
}

fn domain() -> String {
    format!("gui/{}", uid())
}

fn uid() -> u32 {
    nix::unistd::getuid().as_raw()
}

fn service_target() -> String {
    format!("{}/{LAUNCHD_LABEL}", domain())
}

/// Runs `launchctl ARGS`; stdout on success, an error naming the command,
/// its output and the next step otherwise.
fn launchctl(args: &[&str]) -> Result<String> {
    let line = format!("launchctl {}", args.join(" "));
    let out = Command::new("launchctl")
        .args(args)
        .output()
        .with_context(|| {
            format!("could not run `{line}`; without launchd, run `nerdr core` by hand")
        })?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    bail!(
        "`{line}` failed ({}):\n  {}\nlaunchd refused the nerdr agent: run `nerdr doctor`, and read {} for the core's own errors",
        out.status,
        format!("{}{}", stderr.trim(), stdout.trim()).replace('\n', "\n  "),
        "core.log in the state directory"
    )
}

/// The job's `state = ...` line from `launchctl print`, if loaded.
fn job_state() -> Option<String> {
    let out = launchctl(&["print", &service_target()]).ok()?;
    parse_state(&out)
}

/// The first `state = X` in `launchctl print` output (the job's own; the
/// sockets and endpoints listed later have their own lines).
pub fn parse_state(print: &str) -> Option<String> {
    print
        .lines()
        .find_map(|l| l.trim().strip_prefix("state = "))
        .map(|s| s.trim().to_owned())
}

/// Create the sockets' directories, private, before launchd binds in them.
fn make_private_dirs(paths: &Paths) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    for dir in [&paths.state_dir, &paths.run_dir] {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .with_context(|| format!("creating {}", dir.display()))?;
    }
    Ok(())
}

pub fn install(bin: &Path, paths: &Paths) -> Result<()> {
    let plist = units::render_plist(bin, paths)?;
    let dir = paths.launch_agents_dir(&home()?);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    make_private_dirs(paths)?;
    let was = install::write_if_changed(&dir, &plist)
        .with_context(|| format!("writing {}", dir.join(PLIST_NAME).display()))?;
    let path = dir.join(PLIST_NAME);
    let path_str = path
        .to_str()
        .context("the LaunchAgents path is not UTF-8")?;
    println!(
        "nerdr: {} {}",
        match was {
            FileState::Missing => "created",
            FileState::Different => "updated",
            FileState::Current => "unchanged:",
        },
        path.display()
    );
    match (job_state(), was) {
        (None, _) => {
            launchctl(&["bootstrap", &domain(), path_str])?;
            println!(
                "nerdr: ran `launchctl bootstrap {} {}`",
                domain(),
                path.display()
            );
        }
        (Some(_), FileState::Current) => {}
        (Some(state), _) if state == "running" => println!(
            "nerdr: the running core was started from the previous plist; \
             `launchctl bootout {t} && launchctl bootstrap {d} {p}` applies the new one",
            t = service_target(),
            d = domain(),
            p = path.display()
        ),
        (Some(_), _) => {
            // Loaded but idle: reload it so launchd binds the new sockets.
            launchctl(&["bootout", &service_target()])?;
            launchctl(&["bootstrap", &domain(), path_str])?;
            println!("nerdr: reloaded {} with the new plist", service_target());
        }
    }
    println!(
        "nerdr: the first connection starts the core ({}).",
        bin.display()
    );
    println!("nerdr: launchd agents stop when you log out of your Mac session.");
    Ok(())
}

pub fn uninstall(paths: &Paths) -> Result<()> {
    let dir = paths.launch_agents_dir(&home()?);
    if job_state().is_some() {
        launchctl(&["bootout", &service_target()])?;
        println!("nerdr: ran `launchctl bootout {}`", service_target());
    }
    let path = dir.join(PLIST_NAME);
    if install::remove_if_present(&path).with_context(|| format!("removing {}", path.display()))? {
        println!("nerdr: removed {}", path.display());
    }
    for sock in [paths.hook_socket(), paths.client_socket()] {
        if install::remove_stale_socket(&sock)? == SocketProbe::Stale {
            println!("nerdr: removed {}", sock.display());
        }
    }
    install::remove_dir_if_empty(&paths.run_dir);
    install::remove_dir_if_empty(&paths.state_dir);
    Ok(())
}

pub fn status(paths: &Paths) -> Result<()> {
    let i = installed(paths)?;
    let file = match i.files.first().map(|f| f.1) {
        Some(FileState::Current) => "current",
        Some(FileState::Different) => "out of date (run `nerdr service install`)",
        _ => "not installed (run `nerdr service install`)",
    };
    println!("nerdr service: {} {file}", i.dir.join(PLIST_NAME).display());
    match job_state() {
        Some(state) => println!("  {}: {state}", service_target()),
        None => println!("  {}: not loaded", service_target()),
    }
    if let Some(bin) = &i.bin {
        println!("  runs {}", bin.display());
    }
    Ok(())
}

fn installed(paths: &Paths) -> Result<Installed> {
    let dir = paths.launch_agents_dir(&home()?);
    let on_disk = install::read_all(&dir, &[PLIST_NAME]);
    let bin = on_disk[0].1.as_deref().and_then(units::installed_plist_bin);
    Ok(install::compare_installed(dir, &on_disk, bin, |b| {
        units::render_plist(b, paths).map(|p| vec![p])
    }))
}

/// launchd has no main pid to compare with; `core.pid` and the answering
/// core's own word are what doctor compares there.
pub fn main_pid() -> Option<u32> {
    None
}

pub fn gather(paths: &Paths) -> Facts {
    let manager = launchctl(&["print", &domain()])
        .map(|_| format!("launchd ({})", domain()))
        .map_err(|e| e.to_string());
    let units = installed(paths).unwrap_or_else(|e| Installed {
        dir: PathBuf::from("~/Library/LaunchAgents"),
        bin: None,
        bin_from_installed: false,
        bin_problem: None,
        render_error: Some(e.to_string()),
        files: vec![(PLIST_NAME, FileState::Missing)],
        unread: None,
        package: None,
    });
    let core = job_state().map(|s| CoreState {
        active: if s == "running" {
            "active".into()
        } else {
            "inactive".into()
        },
        status_text: String::new(),
    });
    let socket = |unit, path: PathBuf| SocketFacts {
        unit,
        probe: install::probe_socket(&path),
        path,
    };
    Facts {
        platform: Platform::Launchd,
        manager,
        units,
        reload_pending: Vec::new(),
        core,
        hook: socket("hook", paths.hook_socket()),
        client: socket("client", paths.client_socket()),
        user: install::user_name(),
        linger: None,
        bwrap: None,
        journald: None,
        programs: None,
        config: None,
        cores: None,
        integrations: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_job_state_is_the_first_state_line() {
        let out = "gui/501/com.nerdr.core = {\n\tactive count = 0\n\tpath = /Users/ann/Library/LaunchAgents/com.nerdr.core.plist\n\tstate = not running\n\n\tsockets = {\n\t\tstate = active\n";
        assert_eq!(parse_state(out).as_deref(), Some("not running"));
        assert_eq!(parse_state("nothing"), None);
    }
}
