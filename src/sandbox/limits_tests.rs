//! The limits file: the whole text for a linked worktree, and one row per
//! weakening showing the protection it drops leave the text.

use super::*;
use crate::sandbox::git_layout::Protected;
use crate::sandbox::weaken::Weaken;

fn layout() -> Layout {
    Layout {
        home: "/home/u".into(),
        keep_in_tmp: vec![],
        runtime_dir: Some("/run/user/1000".into()),
        nerdr_read_only: vec![
            "/home/u/.config/nerdr".into(),
            "/home/u/.local/state/nerdr".into(),
        ],
        proxy_dir: Some("/home/u/.local/state/nerdr/sandbox".into()),
        state_dir: Some("/home/u/.local/state/nerdr".into()),
        hook_socket: Some("/home/u/.local/state/nerdr/nerdr.sock".into()),
        worktree_only: false,
        data_hidden: vec!["/home/u/.local/share/nerdr/worktrees".into()],
        nerdr_run_dir: Some("/run/user/1000/nerdr".into()),
        system_sockets: vec!["/run/dbus".into()],
        worktree: "/home/u/wt/t1".into(),
        cwd: "/home/u/wt/t1".into(),
        private_git: None,
        git: GitLayout::Linked {
            dot_git: "/home/u/wt/t1/.git".into(),
            admin_dir: "/home/u/p/.git/worktrees/t1".into(),
            common: "/home/u/p/.git".into(),
            protected: Protected {
                hooks: vec!["/home/u/p/.git/hooks".into()],
                config: vec!["/home/u/p/.git/config".into()],
                other: vec!["/home/u/p/.git/worktrees/t1/commondir".into()],
            },
        },
        writable: vec![Entry::dir("/home/u/.claude")],
        agent_config: vec![],
        read_only: vec![Entry::dir("/home/u/.claude/settings.json")],
        hidden: vec![Entry::dir("/home/u/.ssh"), Entry::dir("/home/u/.aws")],
        sockets: vec![],
        network_binds: vec![],
        bwrap_disables_userns: true,
        seccomp_fds: vec![5],
        status_fd: None,
        limits_fd: None,
        weaken: Weaken::none(),
        cmd: vec!["claude".into()],
    }
}

fn net(asks: bool) -> NetWords {
    NetWords {
        proxy: "http://127.0.0.1:3128".into(),
        allowed: "example.com, local services (allowLocalBinding)".into(),
        asks,
    }
}

#[test]
fn the_whole_text_for_a_linked_worktree() {
    let want = "\
nerdr sandbox: the limits of this sandbox. A command failing on one of them (\"Read-only file system\", \"Permission denied\", \"No such file\", a 403 from the proxy, \"Operation not permitted\", \"Device or resource busy\" when replacing a read-only file such as git's packed-refs) met a limit, not a bug: say which to the user.

Writable (everything else is read-only):
  /home/u/wt/t1
  /home/u/.claude
  /home/u/p/.git/worktrees/t1
  /tmp (private to this sandbox, empty at start)
  /home/u/p/.git: objects, refs and logs are a private copy: new commits on the branch you started on come home to the repository (while you run and at the end); changes to other branches and tags stay in the copy and are never carried back

Read-only even inside the writable places (git admin files, nerdr's folders, protected settings):
  /home/u/wt/t1/.git
  /home/u/p/.git/hooks
  /home/u/p/.git/config
  /home/u/p/.git/worktrees/t1/commondir
  /home/u/.config/nerdr
  /home/u/.claude/settings.json

Hidden (empty or missing inside: credentials, the login's sockets, nerdr's state but for its sockets, other tabs' worktrees):
  /home/u/.ssh
  /home/u/.aws
  /run/user/1000
  /run/user/1000/nerdr
  /run/dbus
  /home/u/.local/state/nerdr
  /home/u/.local/share/nerdr/worktrees

Network:
  no direct connections: the only way out is nerdr's proxy at http://127.0.0.1:3128 (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY are set); programs that ignore them have no network
  allowed: example.com, local services (allowLocalBinding)
  a request to any other host waits while the user is asked (allow once, for this run, or deny); with no answer it is refused
  to allow a host for good, the user adds it to sandbox.network.allowedDomains in $XDG_CONFIG_HOME/nerdr/sandbox.json or ~/.claude/settings.json

Privileges:
  no new privileges (setuid programs, sudo, su do not work), no capabilities
  no nested namespaces (unshare, bwrap, containers inside fail)
  typing into the terminal from a program (TIOCSTI, TIOCLINUX) is blocked
  own process list: programs outside the sandbox are not visible
";
    let got = text(&layout(), &net(true));
    assert_eq!(got, want, "got:\n{got}");
}

#[test]
fn without_anyone_to_ask_other_hosts_are_refused() {
    let got = text(&layout(), &net(false));
    assert!(got.contains("a request to any other host is refused with 403"));
    assert!(!got.contains("waits while the user is asked"));
}

/// Each weakening: a line (or path) the full sandbox states that the
/// weakened one must not, and what it says instead, if anything.
#[test]
fn each_weakening_changes_what_the_file_says() {
    #[rustfmt::skip]
    let rows: &[(Weakening, &str, Option<&str>)] = &[
        (Weakening::NoPidNs, "own process list", None),
        (Weakening::NoNetNs, "only way out is nerdr's proxy", Some("unfiltered (WEAKENED")),
        (Weakening::RuntimeVisible, "  /run/dbus\n", None),
        (Weakening::HooksWritable, "  /home/u/p/.git/hooks\n", None),
        (Weakening::GitConfigWritable, "  /home/u/p/.git/config\n", None),
        (Weakening::CredsVisible, "  /home/u/.ssh\n", None),
        (Weakening::NerdrWritable, "  /home/u/.config/nerdr\n", None),
        (Weakening::NoSeccomp, "TIOCSTI", None),
        (Weakening::UsernsAllowed, "no nested namespaces", None),
        (Weakening::HomeWritable, "Hidden", Some("  /home/u\n  /tmp")),
    ];
    assert_eq!(rows.len(), Weakening::ALL.len(), "a row per weakening");
    let full = text(&layout(), &net(true));
    for (weakening, gone, instead) in rows {
        assert!(
            full.contains(gone),
            "{weakening:?}: the full text lacks {gone:?}"
        );
        let mut l = layout();
        l.weaken = Weaken::parse(weakening.name()).unwrap();
        let got = text(&l, &net(true));
        match instead {
            // HomeWritable adds the home folder and keeps the rest.
            Some(i) if *weakening == Weakening::HomeWritable => {
                assert!(got.contains(i), "{weakening:?}:\n{got}")
            }
            Some(i) => {
                assert!(
                    !got.contains(gone),
                    "{weakening:?} still says {gone:?}:\n{got}"
                );
                assert!(got.contains(i), "{weakening:?}:\n{got}");
            }
            None => assert!(
                !got.contains(gone),
                "{weakening:?} still says {gone:?}:\n{got}"
            ),
        }
    }
}

#[test]
fn no_repository_and_nothing_hidden_say_so() {
    let mut l = layout();
    l.git = GitLayout::None;
    l.hidden.clear();
    l.runtime_dir = None;
    l.nerdr_run_dir = None;
    l.system_sockets.clear();
    l.state_dir = None;
    l.data_hidden.clear();
    let got = text(&l, &net(true));
    assert!(
        got.contains(
            "Hidden (empty or missing inside: credentials, the login's sockets, nerdr's state \
             but for its sockets, other tabs' worktrees):\n  (none)\n"
        ),
        "{got}"
    );
    assert!(!got.contains(".git"), "{got}");
}

#[test]
fn a_path_with_a_newline_stays_on_its_line() {
    let mut l = layout();
    l.writable.push(Entry::dir("/home/u/odd\nname"));
    let got = text(&l, &net(true));
    assert!(!got.contains("odd\nname"), "{got}");
}

#[test]
fn the_agents_protected_config_is_named_and_its_copies_explained() {
    let mut l = layout();
    l.agent_config = vec![
        crate::sandbox::bwrap::Bind::same(std::path::Path::new("/home/u/.claude/plugins"), true),
        crate::sandbox::bwrap::Bind::rw(
            std::path::Path::new("/home/u/.local/state/nerdr/sandbox-private/s/claude.json"),
            std::path::Path::new("/home/u/.claude/.config.json"),
        ),
    ];
    let t = text(&l, &net(true));
    let read_only = t.split("Read-only even inside").nth(1).unwrap();
    let read_only = read_only.split("\n\n").next().unwrap();
    assert!(read_only.ends_with("\n  /home/u/.claude/plugins"), "{t}");
    assert!(!read_only.contains(".config.json"), "{t}");
    assert!(
        t.contains("your own config folders are private copies"),
        "{t}"
    );
    assert!(!text(&layout(), &net(true)).contains("private copies: what in them"));
}

/// `--worktree-only`: the program is told that nerdr cannot be reached
/// and where its reports go; every other run is told nothing of it.
#[test]
fn a_worktree_only_run_says_nerdr_is_reached_through_the_reports_file() {
    let line = "nerdr: unreachable from here (--worktree-only: no hook socket); nerdr commands \
                that need it fail, and reports go as JSON lines to reports.jsonl in \
                $NERDR_DATA_DIR, which nerdr reads\n";
    let full = text(&layout(), &net(true));
    assert!(!full.contains("--worktree-only"), "{full}");
    let mut l = layout();
    l.worktree_only = true;
    let got = text(&l, &net(true));
    assert_eq!(
        got,
        full.replacen("\n\nNetwork:", &format!("\n{line}\nNetwork:"), 1)
    );
}
