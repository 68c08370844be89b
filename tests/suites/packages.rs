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
pub(super) static PACKAGING: Mutex<()> = Mutex::new(());

pub(super) const ROOT: &str = env!("CARGO_MANIFEST_DIR");

pub(super) fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `packaging/deb.sh` on the debug binary the tests built (no second
/// build): the .deb's path.
pub(super) fn build_deb(out: &Path) -> PathBuf {
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

/// A private systemd user session with the .deb built from the binary
/// under test installed by `dpkg -i` over overlays (see the module's
/// docs); the overlays' upper layers, which hold what dpkg changed. `None`
/// after a loud skip.
fn with_deb_installed() -> Option<(SystemdEnv, Vec<PathBuf>, tempfile::TempDir)> {
    if !need(
        &["cargo-deb", "dpkg", "dpkg-deb"],
        "`cargo install cargo-deb --locked`; dpkg is Debian's",
    ) {
        return None;
    }
    let env = SystemdEnv::start()?;
    let out = tempfile::Builder::new()
        .prefix("deb")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let deb = build_deb(out.path());
    // dpkg runs inside the namespace, whose /tmp is its own: a checkout
    // under the host's /tmp (`git clone . /tmp/ci-check`) is not there.
    // The package is put where dpkg looks, through the namespace's root.
    std::fs::copy(&deb, env.ns_path(NS_DEB)).unwrap();

    // Overlays inside the namespace (its /tmp is a private tmpfs); each
    // upper layer owned like its lower one, or it masks it (man-db's
    // /var/cache/man is man's).
    let layers = ["/usr", "/var/lib/dpkg", "/var/cache/man"];
    let mut script = String::from("set -e\n");
    for (i, l) in layers.iter().enumerate() {
        script.push_str(&format!(
            "mkdir -p /tmp/ovl/{i}/up /tmp/ovl/{i}/work\n\
             chown --reference={l} /tmp/ovl/{i}/up && chmod --reference={l} /tmp/ovl/{i}/up\n\
             mount -t overlay overlay -o lowerdir={l},upperdir=/tmp/ovl/{i}/up,workdir=/tmp/ovl/{i}/work {l}\n"
        ));
    }
    env.root_run(&["sh", "-c", &script]);
    let uppers = (0..layers.len())
        .map(|i| env.ns_path(format!("/tmp/ovl/{i}/up")))
        .collect();

    let o = env
        .root_cmd(&["dpkg", DPKG_LOG, "-i"])
        .arg(NS_DEB)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "dpkg -i: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    Some((env, uppers, out))
}

/// README's one step for each user of the package.
const ENABLE: &[&str] = &[
    "systemctl",
    "--user",
    "enable",
    "--now",
    "nerdr-hook.socket",
    "nerdr-client.socket",
];

/// The .deb as dpkg sees it, inside the namespace.
const NS_DEB: &str = "/tmp/nerdr_test.deb";

/// dpkg's log inside the namespace, not the host's /var/log/dpkg.log.
const DPKG_LOG: &str = "--log=/tmp/dpkg.log";

#[test]
fn the_deb_installs_serves_a_user_without_service_install_and_purges_clean() {
    let Some((env, uppers, _out)) = with_deb_installed() else {
        return;
    };
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
    ok(ENABLE);
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
    // A liveness probe slower than doctor's: it hangs up with the core's
    // challenge unread, which the core reads as a reset. No warning for
    // that, nor for doctor's probes.
    {
        use std::io::Read;
        let sock = env.ns_path(env.runtime_dir().join("nerdr/client.sock"));
        let mut probe = std::os::unix::net::UnixStream::connect(&sock)
            .unwrap_or_else(|e| panic!("connect {}: {e}", sock.display()));
        let mut first = [0u8; 1];
        probe.read_exact(&mut first).unwrap();
    }
    std::thread::sleep(Duration::from_millis(300));
    let noise: Vec<String> = env
        .journal(&["_SYSTEMD_USER_UNIT=nerdr.service"])
        .iter()
        .map(|e| e.to_string())
        .filter(|e| e.contains("malformed hello"))
        .collect();
    assert!(noise.is_empty(), "doctor's probes were logged: {noise:#?}");

    // An upgrade (here the same .deb again: dpkg renames the new file over
    // the old all the same) leaves the core running the old program;
    // doctor says so and how to run the new one, which keeps the tab.
    let o = env
        .root_cmd(&["dpkg", DPKG_LOG, "-i"])
        .arg(NS_DEB)
        .output()
        .unwrap();
    assert!(o.status.success(), "dpkg -i again: {o:?}");
    let report = String::from_utf8_lossy(&user(&["nerdr", "doctor"]).stdout).into_owned();
    let line = report
        .lines()
        .find(|l| l.contains("core-process"))
        .unwrap_or_default();
    assert!(
        line.starts_with("warn") && line.contains("replaced on disk since it started"),
        "{report}"
    );
    assert!(
        line.contains("`systemctl --user restart nerdr.service` runs the new one"),
        "{report}"
    );
    ok(&["systemctl", "--user", "restart", "nerdr.service"]);
    assert!(ok(&["nerdr", "tabs", "--json"]).contains(tab));
    let report = String::from_utf8_lossy(&user(&["nerdr", "doctor"]).stdout).into_owned();
    assert!(
        report
            .lines()
            .any(|l| l.starts_with("ok") && l.contains("core-process")),
        "{report}"
    );

    // Purge while the core still runs, as a user's upgrade or removal
    // would meet it; then stop what is left.
    let o = env
        .root_cmd(&["dpkg", DPKG_LOG, "--purge", "nerdr"])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "dpkg --purge: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let left: Vec<PathBuf> = uppers.iter().flat_map(|u| nerdr_files(u)).collect();
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

/// Skips (loudly; a failure under NERDR_MUST_TEST=1) without `tools`.
pub(super) fn need(tools: &[&str], how: &str) -> bool {
    for tool in tools {
        if !have(tool) {
            let why = format!("{tool} is not installed ({how})");
            if must_test() {
                panic!("{why}");
            }
            skip(&why);
            return false;
        }
    }
    true
}

/// A user whose XDG_STATE_HOME is not XDG's default, who enabled the
/// package's sockets first: doctor does not start the package's core
/// with the default paths (it fails the units and connects to nothing);
/// a tab started before the move keeps running through `nerdr service
/// install` and the restart it advises (the holder of the other state
/// folder is left running); `nerdr service install` with the package's
/// units writes only drop-ins (no units of their own), the hook socket
/// listens at their path, doctor says so; back on the defaults, install
/// removes the drop-ins.
#[test]
fn service_install_over_the_package_writes_drop_ins_for_other_paths() {
    let Some((env, _uppers, _out)) = with_deb_installed() else {
        return;
    };
    let state = env.home().join("elsewhere/state");
    let run = |args: &[&str], moved: bool| {
        let mut c = env.user_cmd(args);
        c.env("PATH", "/usr/bin:/bin");
        if moved {
            c.env("XDG_STATE_HOME", &state);
        }
        let o = c.output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        (o.status.code(), text)
    };
    let user = |args: &[&str], moved: bool| {
        let (code, text) = run(args, moved);
        assert_eq!(code, Some(0), "{}: {text}", args.join(" "));
        text
    };
    user(&["systemctl", "--user", "daemon-reload"], false);
    user(ENABLE, false);

    // Moved before `service install`: the units fail, and doctor's probes
    // leave the package's core (which would use the default paths) alone.
    let (code, report) = run(&["nerdr", "doctor"], true);
    assert_eq!(code, Some(2), "{report}");
    assert!(report.contains("run `nerdr service install`"), "{report}");
    assert!(report.contains("not connected to at"), "{report}");
    assert_eq!(
        env.unit_prop("nerdr.service", "ActiveState"),
        "inactive",
        "doctor started the package's core:\n{report}"
    );

    // A tab under the default paths, then the move.
    let tab = user(
        &["nerdr", "agent", "--no-worktree", "--", "sleep", "600"],
        false,
    );
    let tab = tab.trim().to_owned();
    let pid = || -> Option<u64> {
        let tabs: serde_json::Value =
            serde_json::from_str(&user(&["nerdr", "tabs", "--json"], false)).unwrap();
        tabs.as_array()?
            .iter()
            .find(|t| t["id"].as_str() == Some(tab.as_str()))?["pid"]
            .as_u64()
    };
    let mut sleep = None;
    wait_until("the tab to run", Duration::from_secs(20), || {
        sleep = pid();
        sleep.is_some()
    });
    let sleep = sleep.unwrap();
    let said = user(&["nerdr", "service", "install"], true);
    assert!(said.contains("drop-ins say yours"), "{said}");
    assert!(
        !said.contains("the first connection starts the core"),
        "install says a connection starts the core while the old one serves:\n{said}"
    );
    assert!(said.contains("keeps the previous units"), "{said}");
    // Install knows the state folder moves: ending the tabs comes first.
    let quit = said.find("`nerdr quit`").unwrap_or(usize::MAX);
    let stop = said
        .find("systemctl --user stop nerdr.service")
        .unwrap_or(0);
    assert!(
        said.contains("your state folder changes from") && quit < stop,
        "{said}"
    );
    assert!(
        said.contains("nerdr-hook.socket is active, still at"),
        "{said}"
    );
    // The advice, as the user would paste it.
    let apply = said
        .split('`')
        .find(|part| part.starts_with("systemctl --user stop nerdr.service"))
        .unwrap_or_else(|| panic!("no stop-and-start advice:\n{said}"))
        .to_owned();
    user(&["sh", "-c", &apply], true);
    let units = env.home().join(".config/systemd/user");
    for f in [
        "nerdr-hook.socket.d/50-nerdr-paths.conf",
        "nerdr.service.d/50-nerdr-paths.conf",
    ] {
        assert!(units.join(f).is_file(), "{f} not written:\n{said}");
    }
    for unit in ["nerdr.service", "nerdr-hook.socket", "nerdr-client.socket"] {
        assert!(
            !units.join(unit).exists(),
            "{unit} written as the user's own"
        );
    }
    assert_eq!(user(&["nerdr", "tabs", "--json"], true).trim(), "[]");
    assert!(
        state.join("nerdr/nerdr.sock").exists(),
        "the hook socket is not at the user's XDG_STATE_HOME"
    );
    // The stop in the advice leaves the old socket file (systemd's
    // RemoveOnStop=no); nothing may listen there any more.
    let old = env.home().join(".local/state/nerdr/nerdr.sock");
    assert!(
        std::os::unix::net::UnixStream::connect(&old).is_err(),
        "something still listens at {}",
        old.display()
    );
    assert!(
        std::path::Path::new(&format!("/proc/{sleep}")).exists(),
        "the tab started under the old state folder died with the move"
    );
    let report = user(&["nerdr", "doctor"], true);
    assert!(
        report.contains("the package's in force, from /usr/lib/systemd/user (runs /usr/bin/nerdr), with your paths in drop-ins"),
        "{report}"
    );
    assert!(!report.contains("FAIL"), "{report}");

    let said = user(&["nerdr", "service", "install"], false);
    assert!(said.contains("no longer needed"), "{said}");
    assert!(!units.join("nerdr-hook.socket.d").exists(), "{said}");

    // README's removal: `nerdr service uninstall` stops and disables the
    // package's units and removes the user's drop-ins.
    user(&["nerdr", "service", "install"], true);
    assert!(units.join("nerdr-hook.socket.d").exists());
    let said = user(&["nerdr", "service", "uninstall"], true);
    for left in [
        "nerdr-hook.socket.d",
        "nerdr.service.d",
        "sockets.target.wants/nerdr-hook.socket",
        "sockets.target.wants/nerdr-client.socket",
    ] {
        assert!(!units.join(left).exists(), "{left} left:\n{said}");
    }
    for unit in ["nerdr.service", "nerdr-hook.socket", "nerdr-client.socket"] {
        assert_eq!(
            env.unit_prop(unit, "ActiveState"),
            "inactive",
            "{unit}:\n{said}"
        );
    }
}
