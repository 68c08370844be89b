//! The probe's checks against real files, sockets and this process.

use std::path::Path;

use super::*;
use crate::probe::plan::{plan, Proc, Targets};

fn by_id<'a>(f: &'a Findings, id: &str) -> &'a Finding {
    f.findings.iter().find(|f| f.id == id).unwrap()
}

#[test]
fn what_of_nerdr_is_out_of_reach_is_named() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let sock = tmp.path().join("nerdr.sock");
    let _listening = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let bin = tmp.path().join("nerdr");
    std::fs::write(&bin, "").unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let plain = tmp.path().join("plain");
    std::fs::write(&plain, "").unwrap();
    let gone = tmp.path().join("gone.sock");
    let os = |p: &Path| p.as_os_str().to_owned();
    let rows: Vec<(
        Option<std::ffi::OsString>,
        Option<std::ffi::OsString>,
        Vec<String>,
    )> = vec![
        (Some(os(&sock)), Some(os(&bin)), vec![]),
        (
            Some(os(&gone)),
            Some(os(&bin)),
            vec![format!(
                "the hook socket {}: No such file or directory (os error 2)",
                gone.display()
            )],
        ),
        (
            Some(os(&sock)),
            Some(os(&plain)),
            vec![format!(
                "$NERDR_BIN {}: not an executable file inside",
                plain.display()
            )],
        ),
        (
            None,
            None,
            vec![
                "$NERDR_SOCKET, unset inside".into(),
                "$NERDR_BIN, unset inside".into(),
            ],
        ),
    ];
    for (socket, bin, want) in rows {
        assert_eq!(nerdr_missing(socket.as_deref(), bin.as_deref()), want);
    }
}

#[test]
fn a_lookalike_folder_is_not_reached_and_no_trace_is_left() {
    let tmp = tempfile::tempdir().unwrap();
    let real = tmp.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let mut id = FileId::of(&real).unwrap();
    assert_eq!(id.mount, None);
    let t = Targets {
        config_dir: Some(id.clone()),
        ..Default::default()
    };
    let f = try_all(&plan(&t), "n1");
    assert!(by_id(&f, "config-dir").reached);
    assert_eq!(
        std::fs::read_dir(&real).unwrap().count(),
        0,
        "a trace was left"
    );
    // Another folder at the path (as a tmpfs in its place would be).
    id.ino += 1;
    let t = Targets {
        config_dir: Some(id),
        ..Default::default()
    };
    let f = try_all(&plan(&t), "n1");
    let got = by_id(&f, "config-dir");
    assert!(
        !got.reached && got.detail.contains("not the same"),
        "{got:?}"
    );
    assert_eq!(std::fs::read_dir(&real).unwrap().count(), 0);
}

#[test]
fn a_git_config_opened_for_writing_is_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("config");
    std::fs::write(&config, "[core]\n").unwrap();
    let before = std::fs::metadata(&config).unwrap().modified().unwrap();
    let t = Targets {
        git_configs: vec![FileId::of(&config).unwrap()],
        ..Default::default()
    };
    let f = try_all(&plan(&t), "n1");
    assert!(by_id(&f, "git-config-0").reached);
    assert_eq!(std::fs::read_to_string(&config).unwrap(), "[core]\n");
    assert_eq!(
        std::fs::metadata(&config).unwrap().modified().unwrap(),
        before
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_reused_pid_is_another_process() {
    let me = std::process::id();
    let start = crate::platform::proc_start_time(me).unwrap();
    let t = Targets {
        processes: vec![Proc {
            role: "core",
            pid: me,
            start_time: start + 1,
        }],
        processes_reachable_by_proc: true,
        ..Default::default()
    };
    let f = try_all(&plan(&t), "n1");
    for way in ["environ", "fd", "mem", "pidfd-getfd", "ptrace"] {
        let got = by_id(&f, &format!("core-{way}"));
        assert!(
            !got.reached && got.detail.contains("another process"),
            "{way}: {got:?}"
        );
    }
}
