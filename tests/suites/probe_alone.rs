//! The probe (`nerdr probe`) run on its own, as the non-root test user,
//! outside any sandbox: each check against a target it can reach and one
//! it cannot, so that each check is seen to pass and to fail.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::sysenv::SystemdEnv;

fn ok(env: &SystemdEnv, args: &[&str]) -> String {
    let out = env.run(args);
    String::from_utf8_lossy(&out.stdout).trim_end().to_string()
}

/// The probe on its own, as the user, outside any sandbox: each check
/// against a target it can reach and one it cannot, and each way a
/// read-only mode is no protection.
#[test]
fn the_probe_alone_detects_each_finding() {
    let Some(env) = SystemdEnv::start() else {
        return;
    };
    let env = &env;
    let home = env.home();
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let file_id = |p: &Path| {
        let m = std::fs::symlink_metadata(p).unwrap();
        serde_json::json!({"path": p, "dev": m.dev(), "ino": m.ino()})
    };
    let chmod = |p: &Path, mode: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    // The user's own targets, and root's (which the user cannot touch).
    let mine = |rel: &str, body: &str, mode: u32| {
        let p = env.write_user_file(rel, body);
        chmod(&p, mode);
        p
    };
    let roots = |rel: &str, body: Option<&str>, mode: u32| {
        let p = home.join(rel);
        match body {
            Some(b) => std::fs::write(&p, b).unwrap(),
            None => std::fs::create_dir_all(&p).unwrap(),
        }
        chmod(&p, mode);
        p
    };
    env.write_user_file("open/.keep", "");
    let open_dir = home.join("open");
    let key = mine("open/key", "secret", 0o600);
    let config = mine("open/config", "[core]\n", 0o644);
    let root_dir = roots("shut", None, 0o755);
    // The user's read-only file in root's folder: only its mode protects it.
    let config_0444 = mine("shut/config-ro", "[core]\n", 0o444);
    let root_key = roots("shut/key", Some("secret"), 0o600);
    let root_config = roots("shut/config", Some("[core]\n"), 0o644);
    let shut_dir = roots("shut/private", None, 0o700);
    // root's file in the user's folder: the user may put another in its place.
    let replaceable = roots("open/config-root", Some("[core]\n"), 0o644);
    let sock = home.join("target.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    chmod(&sock, 0o777);
    let shut_sock = home.join("shut/target.sock");
    let _shut = std::os::unix::net::UnixListener::bind(&shut_sock).unwrap();
    chmod(&shut_sock, 0o700);
    // Running programs (a text file busy) of root's that the user may or
    // may not write.
    let busy = |name: &str, mode: u32| {
        let p = home.join("shut").join(name);
        std::fs::copy("/bin/sleep", &p).unwrap();
        chmod(&p, mode);
        let pid: u32 = ok(
            env,
            &[
                "sh",
                "-c",
                &format!("{} 120 >/dev/null 2>&1 & echo $!", p.display()),
            ],
        )
        .parse()
        .unwrap();
        (p, pid)
    };
    let (busy_open, busy_open_pid) = busy("busy-open", 0o777);
    let (busy_shut, busy_shut_pid) = busy("busy-shut", 0o755);
    // A process of the user's, and this test's own (root's).
    let user_pid: u32 = ok(env, &["sh", "-c", "sleep 120 >/dev/null 2>&1 & echo $!"])
        .trim()
        .parse()
        .unwrap();
    let start_of = |pid: u32| -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        after.split(' ').nth(19).unwrap().parse().unwrap()
    };
    let check = |id: &str, try_: &str, key: &str, p: &Path| serde_json::json!({"id": id, "what": id, "try": try_, key: file_id(p)});
    // (id, check, reached?)
    let mut rows: Vec<(String, Value, bool)> = vec![
        (
            "list".into(),
            check("list", "list-dir", "dir", &open_dir),
            true,
        ),
        (
            "list-shut".into(),
            check("list-shut", "list-dir", "dir", &shut_dir),
            false,
        ),
        (
            "create".into(),
            check("create", "create-in", "dir", &open_dir),
            true,
        ),
        // Listable, not writable, not the user's.
        (
            "create-shut".into(),
            check("create-shut", "create-in", "dir", &root_dir),
            false,
        ),
        (
            "connect".into(),
            check("connect", "connect", "socket", &sock),
            true,
        ),
        (
            "connect-shut".into(),
            check("connect-shut", "connect", "socket", &shut_sock),
            false,
        ),
        ("read".into(), check("read", "read", "file", &key), true),
        (
            "read-shut".into(),
            check("read-shut", "read", "file", &root_key),
            false,
        ),
        (
            "write".into(),
            check("write", "open-for-write", "file", &config),
            true,
        ),
        (
            "write-0444".into(),
            check("write-0444", "open-for-write", "file", &config_0444),
            true,
        ),
        (
            "write-replace".into(),
            check("write-replace", "open-for-write", "file", &replaceable),
            true,
        ),
        (
            "write-shut".into(),
            check("write-shut", "open-for-write", "file", &root_config),
            false,
        ),
        (
            "write-busy".into(),
            check("write-busy", "open-for-write", "file", &busy_open),
            true,
        ),
        (
            "write-busy-shut".into(),
            check("write-busy-shut", "open-for-write", "file", &busy_shut),
            false,
        ),
    ];
    for way in ["environ", "fd", "mem", "pidfd-getfd", "ptrace"] {
        for (pid, reached, tag) in [
            (user_pid, true, "user"),
            (std::process::id(), false, "root"),
        ] {
            let id = format!("{way}-{tag}");
            rows.push((
                id.clone(),
                serde_json::json!({"id": id, "what": id, "try": "process", "role": "core",
                    "pid": pid, "start_time": start_of(pid), "way": way}),
                reached,
            ));
        }
    }
    let plan = serde_json::json!({"checks": rows.iter().map(|r| r.1.clone()).collect::<Vec<_>>()});
    let line = ok(
        env,
        &[
            "nerdr",
            "probe",
            "--nonce",
            "n0nce",
            "--plan",
            &plan.to_string(),
        ],
    );
    let json = line
        .strip_prefix("NERDR-PROBE n0nce ")
        .unwrap_or_else(|| panic!("{line}"));
    let findings: Value = serde_json::from_str(json).unwrap();
    let findings = findings["findings"].as_array().unwrap();
    assert_eq!(findings.len(), rows.len());
    for (id, _, want) in &rows {
        let f = findings.iter().find(|f| f["id"] == id.as_str()).unwrap();
        assert_eq!(f["reached"], *want, "{id}: {f}");
    }
    // No trace: nothing made is left, nothing written is changed.
    for pid in [user_pid, busy_open_pid, busy_shut_pid] {
        let _ = nix_kill(pid);
    }
    assert_eq!(
        std::fs::read_dir(&open_dir).unwrap().count(),
        4,
        "the probe left a file"
    );
    for c in [&config, &config_0444, &replaceable] {
        assert_eq!(std::fs::read_to_string(c).unwrap(), "[core]\n");
    }
    assert_eq!(
        std::fs::metadata(&config_0444).unwrap().mode() & 0o777,
        0o444
    );
}

/// The probe run as the user without a sandbox: its findings by id.
fn probe_outside(env: &SystemdEnv, plan: &Value) -> Value {
    let line = ok(
        env,
        &[
            "nerdr",
            "probe",
            "--nonce",
            "n2",
            "--plan",
            &plan.to_string(),
        ],
    );
    let json = line
        .strip_prefix("NERDR-PROBE n2 ")
        .unwrap_or_else(|| panic!("{line}"));
    let found: Value = serde_json::from_str(json).unwrap();
    found["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["id"].as_str().unwrap().to_string(), f.clone()))
        .collect::<serde_json::Map<String, Value>>()
        .into()
}

/// Where `path` lies in its filesystem, as the core would note it: the
/// deepest mount above it in the environment's mount table, and the path
/// inside that mount's filesystem.
fn spot(env: &SystemdEnv, path: &Path) -> Value {
    let table = std::fs::read_to_string(format!("/proc/{}/mountinfo", env.pid())).unwrap();
    let (dev, root, point) = table
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f[2].to_string(), PathBuf::from(f[3]), PathBuf::from(f[4]))
        })
        .filter(|(_, _, point)| path.starts_with(point))
        .max_by_key(|(_, _, point)| point.components().count())
        .unwrap();
    let rest = path.strip_prefix(&point).unwrap();
    serde_json::json!({"dev": dev, "root": root.join(rest)})
}

/// Nerdr's folder shown at another path of the sandbox (and hidden at its
/// own) is found by identity through the mount table; a sandbox whose
/// mount table cannot be read counts as reached.
#[test]
fn the_probe_finds_a_folder_mounted_elsewhere_and_needs_the_mount_table() {
    if !Path::new("/usr/bin/bwrap").is_file() {
        crate::support::sysenv::skip("bubblewrap is not installed (apt-get install bubblewrap)");
        return;
    }
    let Some(env) = SystemdEnv::start() else {
        return;
    };
    env.write_user_file("folder/.keep", "");
    let folder = env.home().join("folder");
    let m = std::fs::metadata(&folder).unwrap();
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    // A running program anyone may write, on what the sandbox mounts
    // read-only: busy (ETXTBSY) is not writable there.
    let shut = env.home().join("shut-busy");
    std::fs::create_dir(&shut).unwrap();
    let busy = shut.join("busy");
    std::fs::copy("/bin/sleep", &busy).unwrap();
    std::fs::set_permissions(&busy, std::fs::Permissions::from_mode(0o777)).unwrap();
    let busy_pid: u32 = ok(
        &env,
        &[
            "sh",
            "-c",
            &format!("{} 120 >/dev/null 2>&1 & echo $!", busy.display()),
        ],
    )
    .parse()
    .unwrap();
    let b = std::fs::metadata(&busy).unwrap();
    let plan = serde_json::json!({"checks": [
        {"id": "busy", "what": "busy", "try": "open-for-write",
         "file": {"path": busy, "dev": b.dev(), "ino": b.ino()}},
        {"id": "moved", "what": "moved", "try": "create-in",
         "dir": {"path": folder, "dev": m.dev(), "ino": m.ino(), "mount": spot(&env, &folder)}},
        {"id": "mount-table", "what": "mount-table", "try": "mount-table"},
    ]});
    let f = folder.display().to_string();
    let probe = |sandbox: &[&str]| -> Value {
        let mut args = vec![
            "bwrap",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--unshare-pid",
        ];
        args.extend_from_slice(sandbox);
        let plan = plan.to_string();
        args.extend_from_slice(&["--", "nerdr", "probe", "--nonce", "n1", "--plan", &plan]);
        let line = ok(&env, &args);
        let json = line
            .lines()
            .find_map(|l| l.strip_prefix("NERDR-PROBE n1 "))
            .unwrap_or_else(|| panic!("{line}"));
        let found: Value = serde_json::from_str(json).unwrap();
        let by = |id: &str| {
            found["findings"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["id"] == id)
                .unwrap()
                .clone()
        };
        serde_json::json!({"moved": by("moved"), "mount-table": by("mount-table"), "busy": by("busy")})
    };
    // Hidden where it is, writable at /mnt/again.
    let got = probe(&[
        "--proc",
        "/proc",
        "--tmpfs",
        "/mnt",
        "--bind",
        &f,
        "/mnt/again",
        "--tmpfs",
        &f,
    ]);
    assert_eq!(got["moved"]["reached"], true, "{got}");
    assert!(
        got["moved"]["detail"]
            .as_str()
            .unwrap()
            .contains("/mnt/again"),
        "{got}"
    );
    assert_eq!(got["mount-table"]["reached"], false, "{got}");
    assert_eq!(got["busy"]["reached"], false, "{got}");
    // Hidden, and nowhere else; and no /proc to read the mount table from.
    let got = probe(&["--tmpfs", "/proc", "--tmpfs", &f]);
    assert_eq!(got["moved"]["reached"], false, "{got}");
    assert_eq!(got["mount-table"]["reached"], true, "{got}");
    assert_eq!(
        std::fs::read_dir(&folder).unwrap().count(),
        1,
        "the probe left a file"
    );
    // Outside the sandbox, the same program is writable.
    let got = probe_outside(&env, &plan);
    assert_eq!(got["busy"]["reached"], true, "{got}");
    let _ = nix_kill(busy_pid);
}

fn nix_kill(pid: u32) -> std::io::Result<()> {
    // SAFETY: kill has no memory preconditions; the PID is our own sleep.
    if unsafe { libc::kill(pid as i32, libc::SIGKILL) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
