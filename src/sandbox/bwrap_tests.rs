use super::*;
use crate::sandbox::git_layout::Protected;

fn base() -> Layout {
    Layout {
        home: "/home/u".into(),
        keep_in_tmp: vec![],
        runtime_dir: Some("/run/user/1000".into()),
        nerdr_read_only: vec![
            "/home/u/.config/nerdr".into(),
            "/home/u/.local/state/nerdr".into(),
        ],
        proxy_dir: None,
        state_dir: Some("/home/u/.local/state/nerdr".into()),
        hook_socket: Some("/home/u/.local/state/nerdr/nerdr.sock".into()),
        worktree_only: false,
        data_hidden: vec![
            "/home/u/.local/share/nerdr/worktrees".into(),
            "/home/u/.local/share/nerdr/audit".into(),
        ],
        nerdr_run_dir: None,
        system_sockets: vec!["/run/dbus".into()],
        worktree: "/home/u/src/p".into(),
        cwd: "/home/u/src/p".into(),
        git: GitLayout::Main {
            git_dir: "/home/u/src/p/.git".into(),
            protected: Protected {
                hooks: vec!["/home/u/src/p/.git/hooks".into()],
                config: vec!["/home/u/src/p/.git/config".into()],
                other: vec!["/home/u/src/p/.git/packed-refs".into()],
            },
        },
        private_git: Some(PrivateGit {
            objects: "/home/u/.local/share/nerdr/sandbox-git/s1/objects".into(),
            refs: "/home/u/.local/share/nerdr/sandbox-git/s1/refs".into(),
            logs: "/home/u/.local/share/nerdr/sandbox-git/s1/logs".into(),
        }),
        writable: vec![
            Entry::dir("/home/u/.claude"),
            Entry::file("/home/u/.claude.json"),
        ],
        agent_config: vec![],
        read_only: vec![Entry::file("/home/u/.claude/settings.json")],
        hidden: vec![Entry::dir("/home/u/.ssh"), Entry::file("/home/u/.netrc")],
        sockets: vec![],
        network_binds: vec![],
        bwrap_disables_userns: true,
        seccomp_fds: vec![5],
        status_fd: Some(6),
        limits_fd: None,
        weaken: Weaken::none(),
        cmd: vec!["claude".into(), "--resume".into()],
    }
}

fn words(v: &[OsString]) -> String {
    v.iter()
        .map(|w| w.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn the_whole_vector_for_a_main_checkout() {
    let got = words(&args(&base()));
    let want = [
        "--ro-bind / /",
        "--dev /dev",
        "--proc /proc",
        "--tmpfs /tmp",
        "--tmpfs /run/user/1000",
        "--tmpfs /home/u/.local/share/nerdr/worktrees",
        "--tmpfs /home/u/.local/share/nerdr/audit",
        "--bind /home/u/.claude /home/u/.claude",
        "--bind /home/u/.claude.json /home/u/.claude.json",
        "--bind /home/u/src/p /home/u/src/p",
        "--bind /home/u/src/p/.git /home/u/src/p/.git",
        "--bind /home/u/.local/share/nerdr/sandbox-git/s1/objects /home/u/src/p/.git/objects",
        "--ro-bind /home/u/src/p/.git/objects /home/u/src/p/.git/objects/.nerdr-shared",
        "--ro-bind /home/u/.local/share/nerdr/sandbox-git/s1/objects/info /home/u/src/p/.git/objects/info",
        "--bind /home/u/.local/share/nerdr/sandbox-git/s1/refs /home/u/src/p/.git/refs",
        "--bind /home/u/.local/share/nerdr/sandbox-git/s1/logs /home/u/src/p/.git/logs",
        "--ro-bind /home/u/src/p/.git/hooks /home/u/src/p/.git/hooks",
        "--ro-bind /home/u/src/p/.git/config /home/u/src/p/.git/config",
        "--ro-bind /home/u/src/p/.git/packed-refs /home/u/src/p/.git/packed-refs",
        "--ro-bind /home/u/.config/nerdr /home/u/.config/nerdr",
        "--ro-bind /home/u/.local/state/nerdr /home/u/.local/state/nerdr",
        "--ro-bind /home/u/.claude/settings.json /home/u/.claude/settings.json",
        "--tmpfs /home/u/.local/state/nerdr",
        "--ro-bind /home/u/.local/state/nerdr/nerdr.sock /home/u/.local/state/nerdr/nerdr.sock",
        "--remount-ro /home/u/.local/state/nerdr",
        "--remount-ro /home/u/.local/share/nerdr/worktrees",
        "--remount-ro /home/u/.local/share/nerdr/audit",
        "--tmpfs /home/u/.ssh --remount-ro /home/u/.ssh",
        "--ro-bind /dev/null /home/u/.netrc",
        "--tmpfs /run/dbus --remount-ro /run/dbus",
        "--unshare-user --unshare-pid --unshare-net --unshare-ipc --unshare-uts --unshare-cgroup-try",
        "--die-with-parent --cap-drop ALL --disable-userns",
        "--add-seccomp-fd 5 --json-status-fd 6",
        "--chdir /home/u/src/p -- claude --resume",
    ]
    .join(" ");
    assert_eq!(got, want);
    assert_eq!(
        features(&base()),
        [
            "user-ns",
            "mount-ns",
            "pid-ns",
            "net-ns",
            "ipc-ns",
            "uts-ns",
            "no-new-privs",
            "cap-drop-all",
            "seccomp",
            "disable-userns"
        ]
    );
}

#[test]
fn a_linked_worktree_writes_its_admin_dir_and_private_objects_refs_logs() {
    let mut l = base();
    l.writable.clear();
    l.read_only.clear();
    l.hidden.clear();
    l.nerdr_read_only.clear();
    l.state_dir = None;
    l.data_hidden.clear();
    l.system_sockets.clear();
    l.worktree = "/d/wt/t1".into();
    l.cwd = "/d/wt/t1/sub".into();
    l.git = GitLayout::Linked {
        dot_git: "/d/wt/t1/.git".into(),
        admin_dir: "/r/.git/worktrees/t1".into(),
        common: "/r/.git".into(),
        protected: Protected {
            hooks: vec!["/r/.git/hooks".into()],
            config: vec!["/r/.git/config".into()],
            other: vec![
                "/r/.git/worktrees/t1/commondir".into(),
                "/r/.git/worktrees/t1/gitdir".into(),
            ],
        },
    };
    l.private_git = Some(PrivateGit {
        objects: "/p/objects".into(),
        refs: "/p/refs".into(),
        logs: "/p/logs".into(),
    });
    let got = words(&args(&l));
    let mounts = [
        "--bind /d/wt/t1 /d/wt/t1",
        "--bind /r/.git/worktrees/t1 /r/.git/worktrees/t1",
        "--bind /p/objects /r/.git/objects",
        "--ro-bind /r/.git/objects /r/.git/objects/.nerdr-shared",
        "--ro-bind /p/objects/info /r/.git/objects/info",
        "--bind /p/refs /r/.git/refs",
        "--bind /p/logs /r/.git/logs",
        "--ro-bind /d/wt/t1/.git /d/wt/t1/.git",
        "--ro-bind /r/.git/hooks /r/.git/hooks",
        "--ro-bind /r/.git/config /r/.git/config",
        "--ro-bind /r/.git/worktrees/t1/commondir /r/.git/worktrees/t1/commondir",
        "--ro-bind /r/.git/worktrees/t1/gitdir /r/.git/worktrees/t1/gitdir",
        "--unshare-user",
    ]
    .join(" ");
    assert!(got.contains(&mounts), "{got}");
    assert!(
        got.ends_with("--chdir /d/wt/t1/sub -- claude --resume"),
        "{got}"
    );
    // Without its private copies nothing of the repository's history is
    // writable (commits fail; nothing the user has can be lost).
    l.private_git = None;
    let got = words(&args(&l));
    assert!(!got.contains("/r/.git/objects"), "{got}");
    assert!(!got.contains("/r/.git/refs"), "{got}");
    assert!(!got.contains("/r/.git/logs"), "{got}");
}

#[test]
fn sockets_and_the_client_folder() {
    let mut l = base();
    l.sockets = vec!["/run/user/1000/docker.sock".into()];
    l.nerdr_run_dir = Some("/home/u/.cache/nerdr/run".into());
    let got = words(&args(&l));
    assert!(
        got.contains(
            "--tmpfs /run/user/1000 --bind /run/user/1000/docker.sock /run/user/1000/docker.sock"
        ),
        "{got}"
    );
    assert!(
        got.contains("--tmpfs /home/u/.cache/nerdr/run --remount-ro /home/u/.cache/nerdr/run"),
        "{got}"
    );
}

#[test]
fn a_home_under_tmp_stays_visible_over_the_private_tmp() {
    let mut l = base();
    l.keep_in_tmp = vec!["/tmp/t/home".into(), "/tmp/t/bin".into()];
    let got = words(&args(&l));
    assert!(
        got.contains("--tmpfs /tmp --ro-bind /tmp/t/home /tmp/t/home --ro-bind /tmp/t/bin /tmp/t/bin --tmpfs /run/user/1000"),
        "{got}"
    );
}

#[test]
fn without_disable_userns_nothing_asks_for_it() {
    let mut l = base();
    l.bwrap_disables_userns = false;
    assert!(!words(&args(&l)).contains("--disable-userns"));
    assert!(!features(&l).contains(&"disable-userns"));
}

/// Each weakening drops exactly its protection: (weakening, text present
/// in the real sandbox and absent from the weakened one, text only in the
/// weakened one).
#[test]
fn each_weakening_drops_one_protection() {
    use Weakening::*;
    let rows: &[(Weakening, &str, &str)] = &[
        (NoPidNs, "--unshare-pid", ""),
        (NoNetNs, "--unshare-net", ""),
        (RuntimeVisible, "--tmpfs /run/user/1000", ""),
        (RuntimeVisible, "--tmpfs /run/dbus", ""),
        (
            HooksWritable,
            "--ro-bind /home/u/src/p/.git/hooks",
            "--bind /home/u/src/p/.git/hooks",
        ),
        (
            GitConfigWritable,
            "--ro-bind /home/u/src/p/.git/config",
            "--bind /home/u/src/p/.git/config",
        ),
        (CredsVisible, "--tmpfs /home/u/.ssh", ""),
        (
            NerdrWritable,
            "--ro-bind /home/u/.config/nerdr",
            "--bind /home/u/.config/nerdr",
        ),
        (NoSeccomp, "--add-seccomp-fd 5", ""),
        (UsernsAllowed, "--disable-userns", ""),
        (HomeWritable, "", "--bind /home/u /home/u"),
    ];
    assert_eq!(rows.len(), Weakening::ALL.len() + 1);
    let strong = words(&args(&base()));
    for (w, gone, added) in rows {
        let mut l = base();
        l.weaken = Weaken::parse(w.name()).unwrap();
        let weak = words(&args(&l));
        if !gone.is_empty() {
            assert!(strong.contains(gone), "{w:?}: {strong}");
            assert!(!weak.contains(gone), "{w:?} still has {gone}: {weak}");
        }
        if !added.is_empty() {
            assert!(!strong.contains(added), "{w:?}: {strong}");
            assert!(weak.contains(added), "{w:?} lacks {added}: {weak}");
        }
    }
}

#[test]
fn no_git_means_no_git_binds() {
    let mut l = base();
    l.git = GitLayout::None;
    assert!(!words(&args(&l)).contains(".git"));
}

/// The proxy sockets' folder lies in nerdr's state dir: its tmpfs must come
/// after the state dir's read-only bind and the empty folder hiding it
/// (which would cover it), and this session's socket after the tmpfs
/// (which would cover it); the state dir goes read-only after both.
#[test]
fn only_this_sessions_proxy_socket_is_visible() {
    let mut l = base();
    let dir = "/home/u/.local/state/nerdr/sandbox";
    l.proxy_dir = Some(dir.into());
    l.network_binds = vec![format!("{dir}/s1.sock").into()];
    let got = words(&args(&l));
    let state = "/home/u/.local/state/nerdr";
    let want = format!(
        "--ro-bind {state} {state} \
         --ro-bind /home/u/.claude/settings.json /home/u/.claude/settings.json \
         --tmpfs {state} --ro-bind {state}/nerdr.sock {state}/nerdr.sock \
         --tmpfs {dir} --bind {dir}/s1.sock {dir}/s1.sock --remount-ro {dir} \
         --remount-ro {state} "
    );
    let want = want.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(got.contains(&want), "{got}");
    assert_eq!(got.matches("s1.sock").count(), 2, "{got}");
}

#[test]
fn the_limits_file_is_bound_read_only_from_its_descriptor_after_every_mount() {
    let mut l = base();
    l.limits_fd = Some(7);
    let got = words(&args(&l));
    let bind = "--ro-bind-data 7 /tmp/nerdr-sandbox-limits.txt --unshare-user";
    assert!(got.contains(bind), "{got}");
    // After the private /tmp (else covered) and every other mount.
    assert!(got.find("--tmpfs /tmp").unwrap() < got.find(bind).unwrap());
    assert!(got.find("--remount-ro /run/dbus").unwrap() < got.find(bind).unwrap());
    assert!(!words(&args(&base())).contains("--ro-bind-data"));
}

/// nerdr's state dir (the tab list, logs and audit file name every tab) is
/// an empty folder inside but for the hook socket; weakened to writable,
/// it is the real folder, as the sandbox check must see.
#[test]
fn nerdrs_state_is_hidden_but_for_the_hook_socket() {
    let got = words(&args(&base()));
    let state = "/home/u/.local/state/nerdr";
    assert!(got.contains(&format!("--tmpfs {state} ")), "{got}");
    assert!(got.contains(&format!("--remount-ro {state} ")), "{got}");
    let mut l = base();
    l.weaken = Weaken::parse("nerdr-writable").unwrap();
    let got = words(&args(&l));
    assert!(!got.contains(&format!("--tmpfs {state}")), "{got}");
    assert!(got.contains(&format!("--bind {state} {state}")), "{got}");
}

/// `--worktree-only`: the state dir is the same empty folder, without the
/// hook socket; everything else is as in every run, the proxy's socket
/// included (the network is no way to reach nerdr).
#[test]
fn worktree_only_leaves_the_hook_socket_hidden_and_changes_nothing_else() {
    let state = "/home/u/.local/state/nerdr";
    let dir = "/home/u/.local/state/nerdr/sandbox";
    let rows: &[(&str, bool, bool)] = &[
        ("every run keeps the hook socket", false, true),
        ("a worktree-only run hides it", true, false),
    ];
    for (sentence, only, socket) in rows {
        let mut l = base();
        l.proxy_dir = Some(dir.into());
        l.network_binds = vec![format!("{dir}/s1.sock").into()];
        l.worktree_only = *only;
        let got = words(&args(&l));
        let bound = format!("--ro-bind {state}/nerdr.sock {state}/nerdr.sock");
        assert_eq!(got.contains(&bound), *socket, "{sentence}: {got}");
        let sock = format!(
            "--tmpfs {state} {}--tmpfs {dir} --bind {dir}/s1.sock",
            match socket {
                true => format!("{bound} "),
                false => String::new(),
            }
        );
        assert!(got.contains(&sock), "{sentence}: {got}");
        let mut all = base();
        all.proxy_dir = Some(dir.into());
        all.network_binds = l.network_binds.clone();
        let without = words(&args(&all)).replace(&format!("{bound} "), "");
        assert_eq!(got.replace(&format!("{bound} "), ""), without, "{sentence}");
    }
}

/// What sandbox history is told the run kept read-only: exactly what the
/// arguments bind read-only, plus the history the private copies replace.
#[test]
fn what_a_run_keeps_read_only_for_sandbox_history() {
    let p = |s: &str| PathBuf::from(format!("/home/u/src/p/.git/{s}"));
    let main = base().git;
    let rows: &[(&str, &GitLayout, &str, Vec<PathBuf>)] = &[
        (
            "a main checkout keeps its hooks, config, packed-refs and history",
            &main,
            "",
            ["hooks", "config", "packed-refs", "objects", "refs", "logs"]
                .map(p)
                .to_vec(),
        ),
        (
            "hooks made writable by a test weakening are not kept",
            &main,
            "hooks-writable",
            ["config", "packed-refs", "objects", "refs", "logs"]
                .map(p)
                .to_vec(),
        ),
        (
            "config made writable by a test weakening is not kept",
            &main,
            "git-config-writable",
            ["hooks", "packed-refs", "objects", "refs", "logs"]
                .map(p)
                .to_vec(),
        ),
        ("no repository keeps nothing", &GitLayout::None, "", vec![]),
    ];
    for (name, git, weakening, want) in rows {
        let w = if weakening.is_empty() {
            Weaken::none()
        } else {
            Weaken::parse(weakening).unwrap()
        };
        assert_eq!(&kept_read_only(git, &w), want, "{name}");
        let mut l = base();
        l.git = (*git).clone();
        l.weaken = w;
        let got = words(&args(&l));
        for k in want.iter().take(want.len().saturating_sub(3)) {
            assert!(
                got.contains(&format!("--ro-bind {0} {0}", k.display())),
                "{name}: {} not bound read-only: {got}",
                k.display()
            );
        }
    }
    let linked = GitLayout::Linked {
        dot_git: "/d/wt/t1/.git".into(),
        admin_dir: "/r/.git/worktrees/t1".into(),
        common: "/r/.git".into(),
        protected: Protected::default(),
    };
    assert_eq!(
        kept_read_only(&linked, &Weaken::none()),
        [
            "/d/wt/t1/.git",
            "/r/.git/objects",
            "/r/.git/refs",
            "/r/.git/logs"
        ]
        .map(PathBuf::from)
        .to_vec(),
        "a linked worktree keeps its .git file and the repository's history"
    );
}

/// A hidden path inside nerdr's state dir (every run's private config
/// copies) is hidden with the state dir: a mount point for it could not be
/// made in the read-only, empty folder that stands in for it.
#[test]
fn what_is_hidden_inside_the_hidden_state_dir_needs_no_mount_of_its_own() {
    let private = "/home/u/.local/state/nerdr/sandbox-private";
    let mut l = base();
    l.hidden.push(Entry::dir(private));
    let got = words(&args(&l));
    assert!(!got.contains(private), "{got}");
    l.weaken = Weaken::parse("nerdr-writable").unwrap();
    let got = words(&args(&l));
    assert!(got.contains(&format!("--tmpfs {private} ")), "{got}");
}

/// Other tabs' worktrees are hidden before the agent's own is bound back
/// inside, and stay hidden (read-only, empty) after every mount in them;
/// what else lies there comes back only where the run needs it.
#[test]
fn other_tabs_worktrees_are_hidden_and_only_the_tabs_own_comes_back() {
    const OWN: &str = "/d/worktrees/r-1/t1";
    const OTHER: &str = "/d/worktrees/r-1/t2";
    let linked = |common: &str| GitLayout::Linked {
        dot_git: format!("{OWN}/.git").into(),
        admin_dir: format!("{common}/worktrees/t1").into(),
        common: common.into(),
        protected: Protected::default(),
    };
    /// (what, worktree, git, hidden entries, mounted in this order, never mounted)
    type Row<'a> = (
        &'a str,
        &'a str,
        GitLayout,
        &'a [&'a str],
        &'a [&'a str],
        &'a [&'a str],
    );
    #[rustfmt::skip]
    let rows: Vec<Row> = vec![
        ("a tab's worktree: bound back writable inside the hidden folder",
         OWN, linked("/r/.git"), &[],
         &["--tmpfs /d/worktrees ", "--bind /d/worktrees/r-1/t1 /d/worktrees/r-1/t1 ",
           "--bind /r/.git/worktrees/t1 ", "--remount-ro /d/worktrees "],
         &[OTHER]),
        ("a main checkout: the folder hidden all the same",
         "/r", GitLayout::Main { git_dir: "/r/.git".into(), protected: Protected::default() }, &[],
         &["--tmpfs /d/worktrees ", "--bind /r /r ", "--remount-ro /d/worktrees "],
         &[OWN]),
        ("a repository kept in another tab's worktree: its git dir read-only again",
         OWN, linked("/d/worktrees/r-1/t2/sub/.git"), &[],
         &["--tmpfs /d/worktrees ", "--ro-bind /d/worktrees/r-1/t2/sub/.git /d/worktrees/r-1/t2/sub/.git ",
           "--bind /d/worktrees/r-1/t1 ", "--remount-ro /d/worktrees "],
         &["--bind /d/worktrees/r-1/t2 ", "--ro-bind /d/worktrees/r-1/t2 "]),
        ("denyRead in its own worktree hidden; in another's, hidden with the folder",
         OWN, linked("/r/.git"), &["/d/worktrees/r-1/t1/secret", "/d/worktrees/r-1/t2/secret"],
         &["--remount-ro /d/worktrees ", "--tmpfs /d/worktrees/r-1/t1/secret "],
         &["/d/worktrees/r-1/t2/secret"]),
    ];
    for (what, worktree, git, hidden, ordered, absent) in rows {
        let mut l = base();
        l.data_hidden = vec!["/d/worktrees".into()];
        l.worktree = worktree.into();
        l.cwd = worktree.into();
        l.git = git;
        l.private_git = None;
        l.hidden = hidden.iter().map(|h| Entry::dir(*h)).collect();
        let got = words(&args(&l)) + " ";
        let mut from = 0;
        for m in ordered {
            let at = got[from..].find(m);
            assert!(
                at.is_some(),
                "{what}: {m:?} missing or out of order in {got}"
            );
            from += at.unwrap() + m.len();
        }
        for m in absent {
            assert!(!got.contains(m), "{what}: {m:?} in {got}");
        }
    }
}
