//! One row per rule of what a sandbox must not reach, each named by the
//! sentence it checks (the fixtures are `targets_tests`').

use super::tests::{checked, disk, facts, gone, set_real, Kind};
use super::*;

/// A change to the facts, and what the checks then hold or lack.
struct Row {
    sentence: &'static str,
    change: fn(&mut Facts),
    has: &'static [&'static str],
    lacks: &'static [&'static str],
}

#[test]
fn each_rule() {
    let rows = [
        Row {
            sentence: "nerdr's client socket, its folder and its key are targets",
            change: |_| {},
            has: &[
                "the client socket's folder /run/user/1/nerdr (listed)",
                "the client socket /run/user/1/nerdr/client.sock (connected)",
                "the client key /run/user/1/nerdr/client.key (read)",
            ],
            lacks: &[],
        },
        Row {
            sentence: "a file of nerdr's that does not exist is no target",
            change: |f| gone(f, "/run/user/1/nerdr/client.key"),
            has: &["the client socket /run/user/1/nerdr/client.sock (connected)"],
            lacks: &["the client key"],
        },
        Row {
            sentence: "the core and the holder are reached by every way",
            change: |_| {},
            has: &[
                "the core (pid 10): attached with ptrace",
                "the holder (pid 11): its memory opened through /proc/PID/mem",
            ],
            lacks: &[],
        },
        Row {
            sentence: "a holder whose programs end with the core is no target",
            change: |f| f.programs_end_with_core = true,
            has: &["the core (pid 10): attached with ptrace"],
            lacks: &["the holder"],
        },
        Row {
            sentence: "without a recorded holder only the core is a process target",
            change: |f| f.holder = None,
            has: &["the core (pid 10): attached with ptrace"],
            lacks: &["the holder"],
        },
        Row {
            sentence: "without /proc (macOS) no mount table is read and no process is tried",
            change: |f| f.linux = false,
            has: &["the client key /run/user/1/nerdr/client.key (read)"],
            lacks: &["mount table", "the core (pid", "the holder (pid"],
        },
        Row {
            sentence: "the runtime folder is listed and the user bus and user manager are \
                       connected to",
            change: |_| {},
            has: &[
                "the runtime folder /run/user/1 (listed)",
                "the user's socket /run/user/1/bus (connected)",
                "the user's socket /run/user/1/systemd/private (connected)",
            ],
            lacks: &[],
        },
        Row {
            sentence: "a relative XDG_RUNTIME_DIR counts as unset",
            change: |f| {
                f.core_env.xdg_runtime_dir = Some("run/user/1".into());
                f.launch_env.dbus_session_bus_address = None;
                // As if it were there, seen from the core's own folder.
                let mut more = disk(&[("run/user/1", Kind::Dir), ("run/user/1/bus", Kind::File)]);
                f.disk.0.append(&mut more.0);
            },
            has: &[],
            lacks: &["the runtime folder", "the user's socket"],
        },
        Row {
            sentence: "the bus DBUS_SESSION_BUS_ADDRESS names is a target wherever it is",
            change: |f| {
                f.launch_env.dbus_session_bus_address =
                    Some("unix:abstract=/x;unix:path=/var/bus,guid=1;unix:path=/var/other".into())
            },
            has: &["the user's socket /var/bus (connected)"],
            lacks: &["/var/other", "/x"],
        },
        Row {
            sentence: "every unix entry of the bus address is a target, not only the first",
            change: |f| {
                f.launch_env.dbus_session_bus_address =
                    Some("unix:path=/var/gone;unix:path=/var/bus;unix:path=/var/bus2".into());
                let mut more = disk(&[("/var/bus2", Kind::File)]);
                f.disk.0.append(&mut more.0);
            },
            has: &[
                "the user's socket /var/bus (connected)",
                "the user's socket /var/bus2 (connected)",
            ],
            lacks: &["/var/gone"],
        },
        Row {
            sentence: "a bus address's path is found among its keys in any order, unescaped",
            change: |f| {
                f.launch_env.dbus_session_bus_address =
                    Some("unix:guid=1,path=/var/my%20bus%2".into());
                let mut more = disk(&[("/var/my bus%2", Kind::File)]);
                f.disk.0.append(&mut more.0);
            },
            has: &["the user's socket /var/my bus%2 (connected)"],
            lacks: &[],
        },
        Row {
            sentence: "a transport other than unix names no socket",
            change: |f| {
                f.launch_env.dbus_session_bus_address =
                    Some("unixexec:path=/var/bus;tcp:host=localhost,port=1".into())
            },
            has: &[],
            lacks: &["/var/bus"],
        },
        Row {
            sentence: "an abstract bus address names no socket",
            change: |f| f.launch_env.dbus_session_bus_address = Some("unix:abstract=/x".into()),
            has: &["the user's socket /run/user/1/bus (connected)"],
            lacks: &["/x"],
        },
        Row {
            sentence: "nerdr's config, state and data folders and its worktrees folder are \
                       targets",
            change: |_| {},
            has: &[
                "nerdr's config folder /h/.config/nerdr (written)",
                "nerdr's state folder /h/.local/state/nerdr (written)",
                "nerdr's data folder /h/.local/share/nerdr (written)",
                "nerdr's data folder /h/.local/share/nerdr/worktrees (written)",
            ],
            lacks: &[],
        },
        Row {
            sentence: "the repository's .git, its config, info and hooks folders are targets",
            change: |_| {},
            has: &[
                "the main checkout's .git /r/.git (written)",
                "the git config /r/.git/config (opened for writing)",
                "the git info folder /r/.git/info (written)",
                "the git hooks folder /r/.git/hooks (written)",
            ],
            lacks: &[],
        },
        Row {
            sentence: "without a hooks folder .git itself is where hooks are made",
            change: |f| gone(f, "/r/.git/hooks"),
            has: &["the git hooks folder /r/.git (written)"],
            lacks: &["/r/.git/hooks"],
        },
        Row {
            sentence: "a file named hooks is no hooks folder",
            change: |f| f.disk.0.get_mut(Path::new("/r/.git/hooks")).unwrap().is_dir = false,
            has: &["the git hooks folder /r/.git (written)"],
            lacks: &["/r/.git/hooks"],
        },
        Row {
            sentence: "outside a repository there is no git target but the global config",
            change: |f| f.git.repo_dirs.clear(),
            has: &["the global git config /h/.gitconfig (opened for writing)"],
            lacks: &["/r/.git"],
        },
        Row {
            sentence: "the folder of every tab's worktree is a target, each once",
            change: |_| {},
            has: &[
                "the folder of other tabs' worktrees /h/.local/share/nerdr/worktrees/q-2 \
                 (written)",
                "the folder of other tabs' worktrees /h/.local/share/nerdr/worktrees/r-1 \
                 (written)",
            ],
            lacks: &[],
        },
        Row {
            sentence: "nerdr's executable, the wrapper and the agent's program are host files",
            change: |_| {},
            has: &[
                "nerdr's executable /h/.cargo/bin/nerdr (opened for writing)",
                "the wrapper program /usr/bin/wrap (opened for writing)",
                "the agent's program /h/bin/claude (opened for writing)",
            ],
            lacks: &[],
        },
        Row {
            sentence: "a symlinked program counts as itself and as the file it leads to",
            change: |_| {},
            has: &[
                "the agent's program /h/bin/claude (opened for writing)",
                "the agent's program /h/.local/lib/claude.js (opened for writing)",
            ],
            lacks: &[],
        },
        Row {
            sentence: "a program not there yet is planted in the nearest folder above it, \
                       named before the PATH folder that is the same",
            change: |f| f.programs[1].path = "/h/bin/new/agent".into(),
            has: &[
                "the folder where the agent's program /h/bin/new/agent would be made /h/bin \
                    (written)",
            ],
            lacks: &["a PATH folder the core runs programs from /h/bin"],
        },
        Row {
            sentence: "the global git config is ~/.gitconfig and git/config and \
                       git/attributes in ~/.config, or the folder where each would be made",
            change: |_| {},
            has: &[
                "the global git config /h/.gitconfig (opened for writing)",
                "the folder where the global git config /h/.config/git/config would be made \
                 /h/.config (written)",
            ],
            lacks: &[],
        },
        Row {
            sentence: "git/config and git/attributes that exist are host files",
            change: |f| {
                let mut more = disk(&[
                    ("/h/.config/git", Kind::Dir),
                    ("/h/.config/git/config", Kind::File),
                    ("/h/.config/git/attributes", Kind::File),
                ]);
                f.disk.0.append(&mut more.0);
            },
            has: &[
                "the global git config /h/.config/git/config (opened for writing)",
                "the global git attributes /h/.config/git/attributes (opened for writing)",
            ],
            lacks: &["the folder where the global git"],
        },
        Row {
            sentence: "an XDG_CONFIG_HOME elsewhere counts as well as ~/.config",
            change: |f| f.core_env.xdg_config_home = Some("/var/cfg".into()),
            has: &[
                "the folder where the global git config /h/.config/git/config would be made \
                 /h/.config (written)",
                "the folder where the global git config /var/cfg/git/config would be made /var \
                 (written)",
            ],
            lacks: &[],
        },
        Row {
            sentence: "a relative XDG_CONFIG_HOME counts as unset",
            change: |f| {
                f.core_env.xdg_config_home = Some("cfg".into());
                let mut more = disk(&[("cfg", Kind::Dir)]);
                f.disk.0.append(&mut more.0);
            },
            has: &["the global git config /h/.gitconfig (opened for writing)"],
            lacks: &["cfg/git"],
        },
        Row {
            sentence: "the attributes file the global config names is a host file",
            change: |_| {},
            has: &["the global git attributes /h/attrs (opened for writing)"],
            lacks: &[],
        },
        Row {
            sentence: "a relative attributes file is none",
            change: |f| f.git.attributes_file = Some("attrs\n".into()),
            has: &[],
            lacks: &["/h/attrs", "attrs (opened"],
        },
        Row {
            sentence: "without HOME there is no ~/.gitconfig and no attributes file",
            change: |f| {
                f.core_env.home = None;
                f.core_env.xdg_config_home = Some("/var/cfg".into());
            },
            has: &[
                "the folder where the global git config /var/cfg/git/config would be made /var \
                    (written)",
            ],
            lacks: &["/h/.gitconfig", "/h/attrs", "/h/.config/git"],
        },
        Row {
            sentence: "a relative HOME counts as unset",
            change: |f| f.core_env.home = Some("h".into()),
            has: &[
                "the folder where the global git config /h/.config/git/config would be made \
                    /h/.config (written)",
            ],
            lacks: &["/h/.gitconfig", "/h/attrs"],
        },
        Row {
            sentence: "the folders of nerdr's executable and of the core's git are targets",
            change: |_| {},
            has: &[
                "the folder of nerdr's executable /h/.cargo/bin (written)",
                "the folder of the git the core runs /usr/bin (written)",
            ],
            lacks: &[],
        },
        Row {
            sentence: "a folder reached twice is checked once, under the first name",
            change: |_| {},
            has: &["the folder of the git the core runs /usr/bin (written)"],
            lacks: &["a PATH folder the core runs programs from /usr/bin"],
        },
        Row {
            sentence: "every absolute PATH folder of the core and of the launch is a target",
            change: |f| f.launch_env.path = "/var".into(),
            has: &[
                "a PATH folder the core runs programs from /h/bin (written)",
                "a PATH folder the core runs programs from /var (written)",
            ],
            lacks: &["/opt"],
        },
        Row {
            sentence: "a relative PATH folder is none",
            change: |f| {
                let mut more = disk(&[("bin", Kind::Dir)]);
                f.disk.0.append(&mut more.0);
            },
            has: &[],
            lacks: &["from bin (written)"],
        },
        Row {
            sentence: "a PATH folder not there yet is planted in the nearest folder above it",
            change: |_| {},
            has: &[
                "the folder where a PATH folder the core runs programs from /opt/tools would \
                    be made /opt (written)",
            ],
            lacks: &[],
        },
        Row {
            sentence: "a PATH folder that is a link is also the link, which may be put back",
            change: |f| set_real(f, "/h/bin", "/h/dotfiles/bin"),
            has: &[
                "a PATH folder the core runs programs from /h/bin (written)",
                "a PATH folder the core runs programs from /h/bin, a link or under one \
                 (replaced)",
            ],
            lacks: &["/h/.cargo/bin, a link"],
        },
        Row {
            sentence: "nerdr's and git's folders reached through a link are the link too",
            change: |f| {
                set_real(f, "/h/.local/state/nerdr", "/data/state/nerdr");
                set_real(f, "/r/.git/hooks", "/shared/hooks");
            },
            has: &[
                "nerdr's state folder /h/.local/state/nerdr, a link or under one (replaced)",
                "the git hooks folder /r/.git/hooks, a link or under one (replaced)",
            ],
            lacks: &["nerdr's config folder /h/.config/nerdr, a link"],
        },
        Row {
            sentence: "the nearest folder of a file not made yet, through a link, is the link too",
            change: |f| set_real(f, "/h/.config", "/h/dotfiles/config"),
            has: &[
                "the folder where the global git config /h/.config/git/config would be made \
                    /h/.config, a link or under one (replaced)",
            ],
            lacks: &[],
        },
        Row {
            sentence: "folders whose paths lead through no link are no links",
            change: |_| {},
            has: &[],
            lacks: &[", a link or under one"],
        },
        Row {
            sentence: "an absolute hooks folder git config names is a target, a relative one not",
            change: |f| {
                f.git.hooks_paths = vec!["/h/hooks\n".into(), ".husky\n".into()];
                let mut more = disk(&[("/h/hooks", Kind::Dir), (".husky", Kind::Dir)]);
                f.disk.0.append(&mut more.0);
            },
            has: &["the hooks folder git config names /h/hooks (written)"],
            lacks: &[".husky"],
        },
        Row {
            sentence: "a hooks path that is no folder (/dev/null) is its folder, where one \
                       could be put in its place",
            change: |f| {
                f.git.hooks_paths = vec!["/dev/null\n".into()];
                let mut more = disk(&[("/dev", Kind::Dir), ("/dev/null", Kind::File)]);
                f.disk.0.append(&mut more.0);
            },
            has: &[
                "the folder where the hooks folder git config names /dev/null could be put \
                    in its place /dev (written)",
            ],
            lacks: &["names /dev/null (written)"],
        },
        Row {
            sentence: "a hooks folder not made yet is made in the nearest folder above it",
            change: |f| f.git.hooks_paths = vec!["/h/.githooks/sub\n".into()],
            has: &[
                "the folder where the hooks folder git config names /h/.githooks/sub would \
                    be made /h (written)",
            ],
            lacks: &[],
        },
        Row {
            sentence: "a path named as a file and as a folder is checked once, as the file",
            change: |f| f.git.attributes_file = Some("/h/bin".into()),
            has: &["the global git attributes /h/bin (opened for writing)"],
            lacks: &["a PATH folder the core runs programs from /h/bin"],
        },
    ];
    // Every row is tried, and every row that fails is named.
    let mut failed = Vec::new();
    for row in rows {
        let mut f = facts();
        (row.change)(&mut f);
        let got = checked(&f);
        let lacking = row
            .has
            .iter()
            .filter(|want| !got.iter().any(|w| w == *want));
        let extra = row
            .lacks
            .iter()
            .filter(|not| got.iter().any(|w| w.contains(*not)));
        for w in lacking {
            failed.push(format!("{}: lacks `{w}`", row.sentence));
        }
        for w in extra {
            failed.push(format!("{}: has `{w}`", row.sentence));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}
