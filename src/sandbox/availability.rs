//! Can bubblewrap sandbox here, and if not, what to do. The facts are
//! gathered by [`probe`] (runs bwrap); [`advice`] is pure. Used by
//! `nerdr sandbox` (fail closed) and `nerdr doctor`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    /// `bwrap` on PATH.
    pub bwrap: Option<PathBuf>,
    /// `bubblewrap 0.8.0` → `0.8.0`.
    pub version: Option<String>,
    pub disables_userns: bool,
    /// `Err(bwrap's stderr)` when a trial sandbox failed to start.
    pub namespaces: Result<(), String>,
    /// `/proc/sys/kernel/apparmor_restrict_unprivileged_userns`.
    pub apparmor_restricts_userns: Option<bool>,
    /// `/proc/sys/user/max_user_namespaces`.
    pub max_user_namespaces: Option<u64>,
}

/// Why the sandbox cannot run and how to fix it; `None` when it can.
pub fn advice(f: &Facts) -> Option<String> {
    if f.bwrap.is_none() {
        return Some(
            "bubblewrap (`bwrap`) is not on PATH; install bubblewrap: `apt install bubblewrap` (Debian, Ubuntu), `dnf install bubblewrap` (Fedora), `pacman -S bubblewrap` (Arch)"
                .into(),
        );
    }
    let Err(stderr) = &f.namespaces else {
        return None;
    };
    let bwrap = f.bwrap.as_deref().unwrap_or(Path::new("bwrap")).display();
    let why = stderr.trim();
    Some(if f.apparmor_restricts_userns == Some(true) {
        format!(
            "bubblewrap cannot create its namespaces ({why}): AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1, Ubuntu 24.04 and later); either allow them for bwrap with an AppArmor profile (/etc/apparmor.d/bwrap: `abi <abi/4.0>, include <tunables/global>, profile bwrap {bwrap} flags=(unconfined) {{ userns, }}`, then `sudo systemctl reload apparmor`), or `sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0`"
        )
    } else if f.max_user_namespaces == Some(0) {
        format!(
            "bubblewrap cannot create its namespaces ({why}): user namespaces are disabled (user.max_user_namespaces=0); enable them: `sudo sysctl user.max_user_namespaces=15000`"
        )
    } else {
        format!(
            "bubblewrap cannot create its namespaces ({why}); check that unprivileged user namespaces are allowed (kernel.unprivileged_userns_clone=1 on older Debian kernels, user.max_user_namespaces > 0) and that no security module denies them to {bwrap}"
        )
    })
}

/// Find bwrap and try it.
pub fn probe() -> Facts {
    let bwrap = crate::executable::find_on_path("bwrap", std::env::var_os("PATH").as_deref());
    let read_num = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
    };
    let mut f = Facts {
        bwrap: bwrap.clone(),
        version: None,
        disables_userns: false,
        namespaces: Err("not tried".into()),
        apparmor_restricts_userns: read_num(
            "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
        )
        .map(|v| v == 1),
        max_user_namespaces: read_num("/proc/sys/user/max_user_namespaces"),
    };
    let Some(bwrap) = bwrap else {
        return f;
    };
    let (version, disables_userns) = version_and_features(&bwrap);
    f.version = version;
    f.disables_userns = disables_userns;
    // The namespaces `nerdr sandbox` asks for, around a program that does
    // nothing.
    let trial = Command::new(&bwrap)
        .args([
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--unshare-user",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-ipc",
            "--unshare-uts",
            "--die-with-parent",
            "--",
            "true",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    f.namespaces = match trial {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(String::from_utf8_lossy(&out.stderr).trim().to_string()),
        Err(e) => Err(format!("cannot run {}: {e}", bwrap.display())),
    };
    f
}

/// `bwrap --version` and whether `--help` lists `--disable-userns`.
pub fn version_and_features(bwrap: &Path) -> (Option<String>, bool) {
    let text = |arg: &str| {
        Command::new(bwrap)
            .arg(arg)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let version = text("--version").map(|v| {
        v.trim()
            .strip_prefix("bubblewrap ")
            .unwrap_or(v.trim())
            .to_string()
    });
    let disables = text("--help").is_some_and(|h| h.contains("--disable-userns"));
    (version, disables)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok() -> Facts {
        Facts {
            bwrap: Some("/usr/bin/bwrap".into()),
            version: Some("0.8.0".into()),
            disables_userns: true,
            namespaces: Ok(()),
            apparmor_restricts_userns: None,
            max_user_namespaces: Some(15000),
        }
    }

    #[test]
    fn every_advice_row() {
        assert_eq!(advice(&ok()), None);

        let mut f = ok();
        f.bwrap = None;
        assert!(advice(&f).unwrap().contains("apt install bubblewrap"));

        let mut f = ok();
        f.namespaces = Err("bwrap: setting up uid map: Permission denied".into());
        f.apparmor_restricts_userns = Some(true);
        let a = advice(&f).unwrap();
        assert!(a.contains("setting up uid map: Permission denied"), "{a}");
        assert!(
            a.contains("kernel.apparmor_restrict_unprivileged_userns=0"),
            "{a}"
        );
        assert!(a.contains("profile bwrap /usr/bin/bwrap"), "{a}");

        let mut f = ok();
        f.namespaces = Err("No permissions to create new namespace".into());
        f.max_user_namespaces = Some(0);
        assert!(advice(&f)
            .unwrap()
            .contains("user.max_user_namespaces=15000"));

        let mut f = ok();
        f.namespaces = Err("Operation not permitted".into());
        f.apparmor_restricts_userns = Some(false);
        let a = advice(&f).unwrap();
        assert!(a.contains("kernel.unprivileged_userns_clone=1"), "{a}");
    }
}
