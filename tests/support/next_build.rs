//! Second real builds of nerdr from the same source, each under another
//! version number read at compile time: another holder protocol
//! (`NERDR_HOLDER_VERSION_FOR_TESTS`) for the upgrade tests, another
//! client protocol (`NERDR_PROTOCOL_VERSION_FOR_TESTS`) for `--host`'s
//! version check.
//!
//! Each goes to its own target dir (`target/holder-next`,
//! `target/protocol-next`), in the same profile as the binary under test.
//! That dir is seeded with hard links to the dependencies already built
//! for the tests (their artifacts and fingerprints), so cargo compiles only
//! nerdr itself; later runs rebuild only when the source changed. nerdr's
//! own artifacts are never linked: the second build must not write into
//! the first one's files.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Instant;

/// The holder protocol of the second build (the first has the default,
/// `protocol::holder::HOLDER_VERSION`, which this must differ from).
pub const NEXT_VERSION: u32 = 1000;

/// The client protocol of [`other_protocol_build`] (the binary under test
/// speaks `protocol::PROTOCOL_VERSION`, which this must differ from).
pub const OTHER_PROTOCOL: u32 = 1000;

/// The second build's binary, built once per test run.
pub fn next_build() -> PathBuf {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            build(
                "holder-next",
                "NERDR_HOLDER_VERSION_FOR_TESTS",
                NEXT_VERSION,
            )
        })
        .clone()
        .unwrap_or_else(|e| panic!("cannot make the second build: {e}"))
}

/// A build of the same source speaking client protocol [`OTHER_PROTOCOL`],
/// built once per test run.
pub fn other_protocol_build() -> PathBuf {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            build(
                "protocol-next",
                "NERDR_PROTOCOL_VERSION_FOR_TESTS",
                OTHER_PROTOCOL,
            )
        })
        .clone()
        .unwrap_or_else(|e| panic!("cannot make the other protocol's build: {e}"))
}

fn build(dir: &str, var: &str, version: u32) -> Result<PathBuf, String> {
    let first = Path::new(super::sysenv::NERDR_BIN);
    let profile_dir = first
        .parent()
        .ok_or("the binary under test has no folder")?;
    let profile = profile_dir
        .file_name()
        .and_then(|p| p.to_str())
        .ok_or("the binary under test is in no profile folder")?;
    let target = profile_dir
        .parent()
        .ok_or("the profile folder has no target folder")?;
    let next_target = target.join(dir);
    let next_profile = next_target.join(profile);
    for sub in ["deps", "build", ".fingerprint"] {
        seed(&profile_dir.join(sub), &next_profile.join(sub), true)?;
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["build", "--bin", "nerdr"])
        .env("CARGO_TARGET_DIR", &next_target)
        .env(var, version.to_string())
        // One build from scratch of one crate: incremental state only costs.
        .env("CARGO_INCREMENTAL", "0");
    match profile {
        "debug" => {}
        "release" => {
            cmd.arg("--release");
        }
        other => {
            cmd.args(["--profile", other]);
        }
    }
    let t0 = Instant::now();
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd:?} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    // For the record: what the second build costs a test run.
    eprintln!("SECOND BUILD ({var}={version}) took {:.1?}", t0.elapsed());
    let bin = next_profile.join("nerdr");
    bin.is_file()
        .then_some(bin.clone())
        .ok_or_else(|| format!("{} was not built", bin.display()))
}

/// Hard-link what `from` holds into `to`, where missing, leaving out
/// nerdr's own artifacts (at the top level only: `nerdr-*`, and the test
/// binary `all-*`).
fn seed(from: &Path, to: &Path, top: bool) -> Result<(), String> {
    let Ok(entries) = std::fs::read_dir(from) else {
        return Ok(());
    };
    std::fs::create_dir_all(to).map_err(|e| format!("mkdir {}: {e}", to.display()))?;
    for e in entries {
        let e = e.map_err(|e| e.to_string())?;
        let name = e.file_name();
        let text = name.to_string_lossy();
        if top && (text.starts_with("nerdr-") || text.starts_with("all-")) {
            continue;
        }
        let (src, dst) = (e.path(), to.join(&name));
        let kind = e.file_type().map_err(|e| e.to_string())?;
        if kind.is_dir() {
            seed(&src, &dst, false)?;
        } else if !dst.exists() && std::fs::hard_link(&src, &dst).is_err() {
            std::fs::copy(&src, &dst)
                .map_err(|e| format!("copy {} to {}: {e}", src.display(), dst.display()))?;
        }
    }
    Ok(())
}
