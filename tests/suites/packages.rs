//! The .deb as a user meets it: built by `packaging/deb.sh` (cargo-deb)
//! from the binary under test, installed with `dpkg -i`, its sockets
//! enabled by a non-root user of a private `systemd --user` with nothing
//! but `systemctl --user enable --now` (no `nerdr service install`), the
//! core socket-activated, a tab started, `nerdr doctor` all ok, and
//! `dpkg --purge` leaving no nerdr file behind outside the user's state.
//!
//! dpkg runs as root inside the environment's mount namespace, over
//! overlays of /usr, /var/lib/dpkg and /var/cache/man: it installs for
//! real, the user manager reads /usr/lib/systemd/user as it would, but the
//! host and parallel tests never see the package, and the overlays' upper
//! layers are exactly what dpkg changed, which is what the purge must undo.

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use crate::support::sysenv::{must_test, skip, wait_until, SystemdEnv, NERDR_BIN};

/// target/packaging is shared by every package build.
static PACKAGING: Mutex<()> = Mutex::new(());

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `packaging/deb.sh` on the debug binary the tests built (no second
/// build): the .deb's path.
fn build_deb(out: &Path) -> PathBuf {
    let _one = PACKAGING.lock().unwrap_or_else(|e| e.into_inner());
    let bin = Path::new(NERDR_BIN);
    assert_eq!(
        bin.parent()
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str()),
        Some("debug"),
        "deb.sh --profile dev takes the binary from target/debug: {NERDR_BIN}"
    );
    let o = Command::new(format!("{ROOT}/packaging/deb.sh"))
        .args(["--profile", "dev", "--no-build", "--fast", "-o"])
        .arg(out)
        .env("CARGO_TARGET_DIR", bin.parent().unwrap().parent().unwrap())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "deb.sh: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let deb = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let deb = PathBuf::from(deb.lines().last().unwrap_or_default());
    assert!(deb.is_file(), "no .deb at {}", deb.display());
    deb
}

/// Every file (not directory, not overlay whiteout: a 0/0 character
/// device for a deleted lower file) under `dir` whose path names nerdr.
fn nerdr_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(e.path());
            } else if !t.is_char_device() && e.path().to_string_lossy().contains("nerdr") {
                found.push(e.path());
            }
        }
    }
    found
}

#[test]
fn the_deb_installs_serves_a_user_without_service_install_and_purges_clean() {
    for tool in ["cargo-deb", "dpkg", "dpkg-deb"] {
        if !have(tool) {
            let why = format!(
                "{tool} is not installed (`cargo install cargo-deb --locked`; dpkg is Debian's)"
            );
            if must_test() {
                panic!("{why}");
            }
            skip(&why);
            return;
        }
    }
    let Some(env) = SystemdEnv::start() else {
        return;
    };
    let out = tempfile::Builder::new()
        .prefix("deb")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let deb = build_deb(out.path());

    // Overlays inside the namespace (its /tmp is a private tmpfs).
    let layers = ["/usr", "/var/lib/dpkg", "/var/cache/man"];
    let mut script = String::from("set -e\n");
    for (i, l) in layers.iter().enumerate() {
        script.push_str(&format!(
            "mkdir -p /tmp/ovl/{i}/up /tmp/ovl/{i}/work\n\
             mount -t overlay overlay -o lowerdir={l},upperdir=/tmp/ovl/{i}/up,workdir=/tmp/ovl/{i}/work {l}\n"
        ));
    }
    env.root_run(&["sh", "-c", &script]);
    let upper = |i: usize| env.ns_path(format!("/tmp/ovl/{i}/up"));

    let dpkg_log = "--log=/tmp/dpkg.log";
    let o = env
        .root_cmd(&["dpkg", dpkg_log, "-i"])
        .arg(&deb)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "dpkg -i: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    for f in [
        "usr/bin/nerdr",
        "usr/lib/systemd/user/nerdr-hook.socket",
        "usr/lib/systemd/user/nerdr-client.socket",
        "usr/lib/systemd/user/nerdr.service",
        "usr/share/bash-completion/completions/nerdr",
        "usr/share/man/man1/nerdr-agent.1.gz",
        "usr/share/doc/nerdr/README.md",
    ] {
        assert!(env.ns_path(format!("/{f}")).is_file(), "{f} not installed");
    }

    // The user: the package's nerdr first on PATH, and nothing of their own
    // but what `enable` links.
    let user = |args: &[&str]| {
        let mut c = env.user_cmd(args);
        c.env("PATH", "/usr/bin:/bin");
        c.output().unwrap()
    };
    let ok = |args: &[&str]| {
        let o = user(args);
        assert!(
            o.status.success(),
            "{}: {}\n{}",
            args.join(" "),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    ok(&["systemctl", "--user", "daemon-reload"]);
    ok(&[
        "systemctl",
        "--user",
        "enable",
        "--now",
        "nerdr-hook.socket",
        "nerdr-client.socket",
    ]);
    assert_eq!(
        env.unit_prop("nerdr.service", "FragmentPath"),
        "/usr/lib/systemd/user/nerdr.service"
    );
    assert_eq!(env.unit_prop("nerdr.service", "ActiveState"), "inactive");
    assert!(
        !env.home()
            .join(".config/systemd/user/nerdr.service")
            .exists(),
        "the user has units of their own"
    );
    assert!(ok(&["nerdr", "--version"]).starts_with("nerdr "));

    // The first command activates the core through the package's sockets.
    assert_eq!(ok(&["nerdr", "tabs", "--json"]).trim(), "[]");
    assert_eq!(env.unit_prop("nerdr.service", "ActiveState"), "active");
    let tab = ok(&["nerdr", "agent", "--no-worktree", "--", "sleep", "600"]);
    let tab = tab.trim();
    wait_until("the tab to run", Duration::from_secs(20), || {
        ok(&["nerdr", "tabs", "--json"]).contains(tab)
    });

    let o = user(&["nerdr", "doctor"]);
    let report = String::from_utf8_lossy(&o.stdout);
    eprintln!("nerdr doctor, from the package:\n{report}");
    assert!(
        o.status.success(),
        "nerdr doctor failed:\n{report}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        report.contains("the package's in force, from /usr/lib/systemd/user"),
        "{report}"
    );
    // All ok, but for advice about this machine rather than the package:
    // logind's lingering, and agent CLIs on /usr/bin:/bin.
    for line in report.lines().filter(|l| !l.trim().is_empty()) {
        let fine = line.starts_with("ok ")
            || line.starts_with("info ")
            || line.starts_with("warn  lingering")
            || line.starts_with("warn  agents");
        assert!(fine, "doctor: {line}\n{report}");
    }

    // Purge while the core still runs, as a user's upgrade or removal
    // would meet it; then stop what is left.
    let o = env
        .root_cmd(&["dpkg", dpkg_log, "--purge", "nerdr"])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "dpkg --purge: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let left: Vec<PathBuf> = (0..layers.len())
        .flat_map(|i| nerdr_files(&upper(i)))
        .collect();
    assert!(left.is_empty(), "left behind by the purge: {left:?}");
    let _ = user(&[
        "systemctl",
        "--user",
        "stop",
        "nerdr.service",
        "nerdr-hook.socket",
        "nerdr-client.socket",
    ]);
    let _ = user(&[
        "systemctl",
        "--user",
        "kill",
        "--signal=KILL",
        "nerdr.service",
    ]);
}
