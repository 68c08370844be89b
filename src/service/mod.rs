//! `nerdr service install | uninstall | status` and `nerdr doctor`: puts the
//! core under the user's service manager (systemd user units on Linux, a
//! launchd agent on macOS) and checks that it works. Owns the unit
//! templates' rendering and installation; does not own the core's socket
//! handling (it only finds the sockets by name) nor the CLI wiring.
//!
//! Layout: `units` renders (pure, with `escape`), `install` holds what both
//! platforms share, `systemd` and `launchd` run the platform's manager with
//! identical signatures, `facts` is the plain data they find, `doctor`
//! gathers facts and decides from them.

pub mod doctor;
pub mod escape;
pub mod facts;
pub mod install;
// Both platform modules are compiled everywhere so their signatures cannot
// drift apart; only one is used.
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
mod launchd;
pub mod packaged;
#[cfg_attr(target_os = "macos", allow(dead_code))]
pub mod systemctl;
#[cfg_attr(target_os = "macos", allow(dead_code))]
mod systemd;
pub mod units;

#[cfg(target_os = "macos")]
use launchd as platform;
#[cfg(not(target_os = "macos"))]
use systemd as platform;

use std::path::PathBuf;

use crate::paths::Paths;

/// `nerdr service install [--bin PATH]`: renders the units for `bin` (default:
/// this executable), writes them, reloads the manager and enables the
/// sockets. Running it twice changes nothing the second time.
pub fn install(bin: Option<PathBuf>) -> anyhow::Result<()> {
    let bin = install::resolve_bin(bin)?;
    let paths = Paths::from_process()?;
    platform::install(&bin, &paths)
}

/// `nerdr service uninstall`: stops and disables the units and removes
/// exactly the files `install` wrote (and socket files nothing listens on).
/// Sessions and data stay.
pub fn uninstall() -> anyhow::Result<()> {
    platform::uninstall(&Paths::from_process()?)
}

/// `nerdr service status`: whether the installed units are current, the
/// units' states, and the core's status text.
pub fn status() -> anyhow::Result<()> {
    platform::status(&Paths::from_process()?)
}

/// `nerdr service package-units --dir D`: the package's units, written
/// into `dir` (created) for a package build.
pub fn package_units(dir: &std::path::Path) -> anyhow::Result<()> {
    use anyhow::Context;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for unit in packaged::render_packaged_units() {
        let path = dir.join(unit.name);
        std::fs::write(&path, unit.contents)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// `nerdr doctor [--json]`: prints one line per check (or a JSON array of
/// `{name, status, detail, remedy}`) and returns the exit code: 2 when
/// something fails, else 0 (warnings are advice).
pub fn doctor(json: bool) -> anyhow::Result<i32> {
    doctor::run(json)
}
