use super::*;
use crate::probe::plan::plan;

pub(super) enum Kind {
    Dir,
    File,
    /// A symlink to this path (which must be listed too).
    Link(&'static str),
}

/// A disk where each listed path exists; files under `/run/user/1` are on
/// the runtime tmpfs (device 2), the rest on device 1.
pub(super) fn disk(entries: &[(&str, Kind)]) -> Disk {
    let mut d = Disk::default();
    for (i, (path, kind)) in entries.iter().enumerate() {
        let real = match kind {
            Kind::Link(to) => PathBuf::from(to),
            _ => PathBuf::from(path),
        };
        let is_dir = match kind {
            Kind::Dir => true,
            Kind::File => false,
            Kind::Link(to) => entries
                .iter()
                .any(|(p, k)| p == to && matches!(k, Kind::Dir)),
        };
        let dev = if path.starts_with("/run/user/1") {
            2
        } else {
            1
        };
        d.0.insert(
            PathBuf::from(path),
            Seen {
                dev,
                ino: i as u64 + 100,
                is_dir,
                real: Some(real),
            },
        );
    }
    d
}

/// A user with nerdr installed in `~/.cargo/bin`, a repository at `/r`
/// with two tabs' worktrees, an agent `claude` in `~/bin` (a symlink), and
/// a launch PATH with a folder that does not exist yet.
pub(super) fn facts() -> Facts {
    use Kind::*;
    Facts {
        nerdr: NerdrPlaces {
            bin: "/h/.cargo/bin/nerdr".into(),
            run_dir: "/run/user/1/nerdr".into(),
            client_socket: "/run/user/1/nerdr/client.sock".into(),
            client_key: "/run/user/1/nerdr/client.key".into(),
            config_dir: "/h/.config/nerdr".into(),
            state_dir: "/h/.local/state/nerdr".into(),
            data_dir: "/h/.local/share/nerdr".into(),
        },
        core_env: CoreEnv {
            home: Some("/h".into()),
            xdg_config_home: Some("/h/.config".into()),
            xdg_runtime_dir: Some("/run/user/1".into()),
            path: "/usr/bin:/h/bin".into(),
        },
        launch_env: LaunchEnv {
            path: "/usr/bin:bin:/opt/tools".into(),
            dbus_session_bus_address: Some("unix:path=/run/user/1/bus,guid=0".into()),
        },
        core: Some(Proc {
            role: "core",
            pid: 10,
            start_time: 5,
        }),
        holder: Some(Proc {
            role: "holder",
            pid: 11,
            start_time: 6,
        }),
        programs_end_with_core: false,
        git: GitFacts {
            core_git: Some("/usr/bin/git".into()),
            attributes_file: Some("/h/attrs\n".into()),
            hooks_paths: Vec::new(),
            repo_dirs: vec!["/r/.git".into()],
        },
        programs: vec![
            HostProgram {
                role: "the wrapper program".into(),
                path: "/usr/bin/wrap".into(),
            },
            HostProgram {
                role: "the agent's program".into(),
                path: "/h/bin/claude".into(),
            },
        ],
        worktrees: vec![
            "/h/.local/share/nerdr/worktrees/r-1/a".into(),
            "/h/.local/share/nerdr/worktrees/q-2/c".into(),
            "/h/.local/share/nerdr/worktrees/r-1/b".into(),
        ],
        mounts: vec![
            Mount {
                dev: "0:1".into(),
                root: "/".into(),
                point: "/".into(),
            },
            Mount {
                dev: "0:2".into(),
                root: "/".into(),
                point: "/run/user/1".into(),
            },
        ],
        disk: disk(&[
            ("/", Dir),
            ("/h", Dir),
            ("/h/.cargo", Dir),
            ("/h/.cargo/bin", Dir),
            ("/h/.cargo/bin/nerdr", File),
            ("/h/.config", Dir),
            ("/h/.config/nerdr", Dir),
            ("/h/.local", Dir),
            ("/h/.local/state", Dir),
            ("/h/.local/state/nerdr", Dir),
            ("/h/.local/share", Dir),
            ("/h/.local/share/nerdr", Dir),
            ("/h/.local/share/nerdr/worktrees", Dir),
            ("/h/.local/share/nerdr/worktrees/r-1", Dir),
            ("/h/.local/share/nerdr/worktrees/q-2", Dir),
            ("/h/.local/lib", Dir),
            ("/h/.local/lib/claude.js", File),
            ("/h/.gitconfig", File),
            ("/h/attrs", File),
            ("/h/bin", Dir),
            ("/h/bin/claude", Link("/h/.local/lib/claude.js")),
            ("/run", Dir),
            ("/run/user", Dir),
            ("/run/user/1", Dir),
            ("/run/user/1/nerdr", Dir),
            ("/run/user/1/nerdr/client.sock", File),
            ("/run/user/1/nerdr/client.key", File),
            ("/run/user/1/bus", File),
            ("/run/user/1/systemd", Dir),
            ("/run/user/1/systemd/private", File),
            ("/r", Dir),
            ("/r/.git", Dir),
            ("/r/.git/config", File),
            ("/r/.git/hooks", Dir),
            ("/r/.git/info", Dir),
            ("/usr", Dir),
            ("/usr/bin", Dir),
            ("/usr/bin/git", File),
            ("/usr/bin/wrap", File),
            ("/opt", Dir),
            ("/var", Dir),
            ("/var/bus", File),
        ]),
        linux: true,
    }
}

/// What the probe is asked to show unreachable, in the plan's words.
pub(super) fn checked(f: &Facts) -> Vec<String> {
    plan(&targets(f))
        .checks
        .into_iter()
        .map(|c| c.what)
        .collect()
}

/// `path` leads through a symlink to `real`.
pub(super) fn set_real(f: &mut Facts, path: &str, real: &str) {
    let seen = f.disk.0.get_mut(Path::new(path)).expect(path);
    seen.real = Some(real.into());
}

pub(super) fn gone(f: &mut Facts, path: &str) {
    assert!(f.disk.0.remove(Path::new(path)).is_some(), "{path}");
}

#[test]
fn every_current_target_for_a_full_set_of_facts() {
    // The whole list, in order: a rule dropped or renamed shows here.
    let want = [
        "the client socket's folder /run/user/1/nerdr (listed)",
        "the client socket /run/user/1/nerdr/client.sock (connected)",
        "the client key /run/user/1/nerdr/client.key (read)",
        "the runtime folder /run/user/1 (listed)",
        "the user's socket /run/user/1/bus (connected)",
        "the user's socket /run/user/1/systemd/private (connected)",
        "the sandbox's mount table /proc/self/mountinfo could not be read, so nerdr's folders \
         mounted at other paths cannot be ruled out",
        "the core (pid 10): its environment read through /proc/PID/environ",
        "the core (pid 10): its open files listed through /proc/PID/fd",
        "the core (pid 10): its memory opened through /proc/PID/mem",
        "the core (pid 10): a descriptor taken with pidfd_getfd",
        "the core (pid 10): attached with ptrace",
        "the holder (pid 11): its environment read through /proc/PID/environ",
        "the holder (pid 11): its open files listed through /proc/PID/fd",
        "the holder (pid 11): its memory opened through /proc/PID/mem",
        "the holder (pid 11): a descriptor taken with pidfd_getfd",
        "the holder (pid 11): attached with ptrace",
        "nerdr's config folder /h/.config/nerdr (written)",
        "nerdr's state folder /h/.local/state/nerdr (written)",
        "the git hooks folder /r/.git/hooks (written)",
        "the main checkout's .git /r/.git (written)",
        "the git info folder /r/.git/info (written)",
        "the folder of other tabs' worktrees /h/.local/share/nerdr/worktrees/q-2 (written)",
        "the folder of other tabs' worktrees /h/.local/share/nerdr/worktrees/r-1 (written)",
        "nerdr's data folder /h/.local/share/nerdr (written)",
        "nerdr's data folder /h/.local/share/nerdr/worktrees (written)",
        "the folder where the global git config /h/.config/git/config would be made /h/.config \
         (written)",
        "the folder of nerdr's executable /h/.cargo/bin (written)",
        "the folder of the git the core runs /usr/bin (written)",
        "a PATH folder the core runs programs from /h/bin (written)",
        "the folder where a PATH folder the core runs programs from /opt/tools would be made \
         /opt (written)",
        "the git config /r/.git/config (opened for writing)",
        "nerdr's executable /h/.cargo/bin/nerdr (opened for writing)",
        "the wrapper program /usr/bin/wrap (opened for writing)",
        "the agent's program /h/bin/claude (opened for writing)",
        "the agent's program /h/.local/lib/claude.js (opened for writing)",
        "the global git config /h/.gitconfig (opened for writing)",
        "the global git attributes /h/attrs (opened for writing)",
    ];
    assert_eq!(checked(&facts()), want);
}
#[test]
fn a_target_is_found_among_the_mounts_by_its_real_path() {
    let t = targets(&facts());
    let run_dir = t.run_dir.unwrap();
    assert_eq!((run_dir.dev, run_dir.ino), (2, 124));
    let spot = run_dir.mount.unwrap();
    assert_eq!(
        (spot.dev.as_str(), spot.root.as_path()),
        ("0:2", Path::new("/nerdr"))
    );
    // The symlinked agent lies where the file it leads to is.
    let link = &t
        .host_files
        .iter()
        .find(|n| n.file.path == Path::new("/h/bin/claude"));
    assert_eq!(
        link.unwrap().file.mount.as_ref().unwrap().root,
        Path::new("/h/.local/lib/claude.js")
    );
}

#[test]
fn the_decision_reads_only_what_it_asks_to_be_looked_at() {
    // The core records each path `looked_at` names, and for one that does
    // not exist the folders above it up to the nearest that does: a disk
    // of only those must decide the same as the whole disk. Hooks paths
    // (one no folder) and a folder through a link are among them.
    let mut whole = facts();
    whole.git.hooks_paths = vec!["/dev/null\n".into(), "/h/hooks\n".into()];
    let mut more = disk(&[
        ("/dev", Kind::Dir),
        ("/dev/null", Kind::File),
        ("/h/hooks", Kind::Dir),
    ]);
    whole.disk.0.append(&mut more.0);
    set_real(&mut whole, "/h/bin", "/h/dotfiles/bin");
    let mut f = whole.clone();
    let mut kept = Disk::default();
    for p in looked_at(&whole) {
        for a in p.ancestors() {
            if let Some(s) = whole.disk.0.get(a) {
                kept.0.insert(a.to_path_buf(), s.clone());
                if let Some(r) = &s.real {
                    if let Some(rs) = whole.disk.0.get(r) {
                        kept.0.insert(r.clone(), rs.clone());
                    }
                }
                break;
            }
        }
    }
    assert!(
        kept.0.len() < whole.disk.0.len(),
        "the test must leave some out"
    );
    f.disk = kept;
    let got = checked(&whole);
    for rule in [
        "/dev/null could be put",
        "names /h/hooks (written)",
        "/h/bin, a link",
    ] {
        assert!(got.iter().any(|c| c.contains(rule)), "{rule}: {got:#?}");
    }
    assert_eq!(checked(&f), got);
}

#[test]
fn the_folder_of_worktrees_is_checked_once_however_many_tabs_share_it() {
    let got = checked(&facts());
    let r1 = "the folder of other tabs' worktrees /h/.local/share/nerdr/worktrees/r-1 (written)";
    assert_eq!(got.iter().filter(|w| *w == r1).count(), 1, "{got:#?}");
}
