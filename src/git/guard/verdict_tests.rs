//! One row per rule and per exception, each read as a sentence.

use super::*;
use crate::git::guard::config::Scope;

#[path = "verdict_layout_tests.rs"]
mod layout;

#[path = "verdict_kept_tests.rs"]
mod kept;

pub(super) const WT: &str = "/data/wt/r/a";

fn recorded() -> Standing {
    Standing::Recorded {
        common_dir: "/r/.git".into(),
    }
}

/// The main checkout as git finds it.
pub(super) fn main_checkout() -> Location {
    Location {
        common_dir: "/r/.git".into(),
        git_dir: "/r/.git".into(),
        toplevel: Some("/r".into()),
    }
}

fn entry(scope: Scope, origin: &str, key: &str, value: &str) -> Entry {
    Entry {
        scope,
        origin: if origin == "cmd" {
            Origin::CommandLine
        } else {
            Origin::File(origin.into())
        },
        key: key.into(),
        value: Some(value.into()),
    }
}

pub(super) fn local(key: &str, value: &str) -> Entry {
    entry(Scope::Local, "/r/.git/config", key, value)
}
fn global(key: &str, value: &str) -> Entry {
    entry(Scope::Global, "/h/.gitconfig", key, value)
}

/// What a clean repository lists anyway: nerdr's own `-c` settings too.
fn baseline() -> Vec<Entry> {
    vec![
        local("core.bare", "false"),
        global("user.name", "me"),
        entry(Scope::Command, "cmd", "core.hookspath", "/dev/null"),
        entry(Scope::Command, "cmd", "core.fsmonitor", "false"),
        entry(Scope::Command, "cmd", "diff.ignoresubmodules", "all"),
        entry(Scope::Command, "cmd", "submodule.recurse", "false"),
        entry(Scope::Command, "cmd", "status.submodulesummary", "false"),
    ]
}

pub(super) struct Row {
    pub(super) name: &'static str,
    pub(super) standing: Standing,
    pub(super) op: Op,
    pub(super) location: Option<Location>,
    pub(super) commondir_file: bool,
    pub(super) extra: Vec<Entry>,
    pub(super) uses: Vec<FilterUse>,
    pub(super) gitmodules: Option<&'static str>,
    pub(super) cwd: &'static str,
    /// The rule and setting of the first reason, or None for Allow.
    pub(super) want: Option<(Rule, &'static str)>,
}

pub(super) fn row(
    name: &'static str,
    extra: Vec<Entry>,
    want: Option<(Rule, &'static str)>,
) -> Row {
    Row {
        name,
        standing: recorded(),
        op: Op::WorktreeAdd,
        location: Some(main_checkout()),
        commondir_file: false,
        extra,
        uses: vec![],
        gitmodules: None,
        cwd: "/r",
        want,
    }
}

fn lfs_use() -> Vec<FilterUse> {
    vec![FilterUse {
        driver: "lfs".into(),
        file: "HEAD:.gitattributes".into(),
    }]
}

fn lfs_installed() -> Vec<Entry> {
    vec![
        global("filter.lfs.clean", "git-lfs clean -- %f"),
        global("filter.lfs.smudge", "git-lfs smudge -- %f"),
        global("filter.lfs.process", "git-lfs filter-process"),
        global("filter.lfs.required", "true"),
    ]
}

fn rows() -> Vec<Row> {
    use Rule::*;
    vec![
        row("a clean repository with history is allowed", vec![], None),
        Row {
            standing: Standing::Clean,
            ..row(
                "without history even a repository filter is allowed",
                vec![local("filter.x.clean", "/r/evil")],
                None,
            )
        },
        Row {
            op: Op::Query,
            ..row(
                "queries run nothing, so are allowed",
                vec![local("filter.x.clean", "/r/evil")],
                None,
            )
        },
        Row {
            op: Op::Fetch,
            ..row(
                "fetch is refused with history",
                vec![],
                Some((Network, "fetch")),
            )
        },
        Row {
            op: Op::Push,
            ..row(
                "push is refused with history",
                vec![],
                Some((Network, "push")),
            )
        },
        Row {
            op: Op::Fetch,
            standing: Standing::Clean,
            ..row("fetch without history is allowed", vec![], None)
        },
        Row {
            standing: Standing::InWritablePlace { place: WT.into() },
            cwd: WT,
            ..row(
                "a repository inside an agent-writable place is refused",
                vec![],
                Some((InWritablePlace, "repository")),
            )
        },
        row(
            "extensions.worktreeConfig is refused",
            vec![local("extensions.worktreeconfig", "true")],
            Some((WorktreeConfig, "extensions.worktreeconfig")),
        ),
        row(
            "extensions.worktreeConfig=false is allowed",
            vec![local("extensions.worktreeconfig", "false")],
            None,
        ),
        row(
            "core.fsmonitor = `yes` is the built-in daemon, not a hook",
            vec![global("core.fsmonitor", "yes")],
            None,
        ),
        Row {
            cwd: WT,
            ..row(
                "core.hooksPath = `true` is a folder named true",
                vec![global("core.hookspath", "true")],
                Some((ProgramInWritablePlace, "core.hookspath")),
            )
        },
        row(
            "a clean filter in the repository config is refused",
            vec![local("filter.x.clean", "cat")],
            Some((RepositoryProgram, "filter.x.clean")),
        ),
        row(
            "a smudge filter is refused",
            vec![local("filter.x.smudge", "cat")],
            Some((RepositoryProgram, "filter.x.smudge")),
        ),
        row(
            "a process filter is refused",
            vec![local("filter.x.process", "cat")],
            Some((RepositoryProgram, "filter.x.process")),
        ),
        row(
            "a textconv in config.worktree is refused",
            vec![entry(
                Scope::Worktree,
                "/r/.git/worktrees/a/config.worktree",
                "diff.t.textconv",
                "cat",
            )],
            Some((RepositoryProgram, "diff.t.textconv")),
        ),
        row(
            "diff.external in the repository is refused",
            vec![local("diff.external", "vimdiff")],
            Some((RepositoryProgram, "diff.external")),
        ),
        row(
            "a diff command in the repository is refused",
            vec![local("diff.t.command", "x")],
            Some((RepositoryProgram, "diff.t.command")),
        ),
        row(
            "a merge driver in the repository is refused",
            vec![local("merge.m.driver", "x %O %A %B")],
            Some((RepositoryProgram, "merge.m.driver")),
        ),
        row(
            "auto gc's recentObjectsHook in the repository is refused",
            vec![local("gc.recentobjectshook", "x")],
            Some((RepositoryProgram, "gc.recentobjectshook")),
        ),
        row(
            "a trailer command in the repository is refused",
            vec![local("trailer.sign.cmd", "x")],
            Some((RepositoryProgram, "trailer.sign.cmd")),
        ),
        row(
            "an ssh signing key command into a worktree is refused",
            vec![global("gpg.ssh.defaultkeycommand", "/data/wt/r/a/key")],
            Some((ProgramInWritablePlace, "gpg.ssh.defaultkeycommand")),
        ),
        row(
            "a pager setting for one command into a worktree is refused",
            vec![global("pager.log", "/data/wt/r/a/p")],
            Some((ProgramInWritablePlace, "pager.log")),
        ),
        row(
            "a local upload-pack into a worktree is refused",
            vec![global("remote.origin.uploadpack", "/data/wt/r/a/up")],
            Some((ProgramInWritablePlace, "remote.origin.uploadpack")),
        ),
        row(
            "a filter without a command (required only) is allowed",
            vec![local("filter.x.required", "true")],
            None,
        ),
        row(
            "a global textconv outside agent places is allowed",
            vec![global("diff.pdf.textconv", "/usr/bin/pdftotext")],
            None,
        ),
        row(
            "a global fsmonitor into a worktree is refused",
            vec![global("core.fsmonitor", "/data/wt/r/a/fsmon.sh")],
            Some((ProgramInWritablePlace, "core.fsmonitor")),
        ),
        row(
            "a global fsmonitor=true (the built-in daemon) is allowed",
            vec![global("core.fsmonitor", "true")],
            None,
        ),
        row(
            "a relative hooksPath in the main checkout is allowed",
            vec![global("core.hookspath", "hooks")],
            None,
        ),
        Row {
            cwd: WT,
            ..row(
                "a relative hooksPath resolves in the agent's worktree",
                vec![global("core.hookspath", "hooks")],
                Some((ProgramInWritablePlace, "core.hookspath")),
            )
        },
        row(
            "a system pager running a worktree script is refused",
            vec![entry(
                Scope::System,
                "/etc/gitconfig",
                "core.pager",
                "sh -c '/data/wt/r/a/p | less'",
            )],
            Some((ProgramInWritablePlace, "core.pager")),
        ),
        row(
            "a command-line editor into a worktree is refused",
            vec![entry(
                Scope::Command,
                "cmd",
                "core.editor",
                "/data/wt/r/a/ed",
            )],
            Some((ProgramInWritablePlace, "core.editor")),
        ),
        row(
            "sequence.editor into a worktree is refused",
            vec![global("sequence.editor", "/data/wt/r/a/ed")],
            Some((ProgramInWritablePlace, "sequence.editor")),
        ),
        row(
            "core.sshCommand into a worktree is refused",
            vec![global("core.sshcommand", "ssh -F /data/wt/r/a/cfg")],
            Some((ProgramInWritablePlace, "core.sshcommand")),
        ),
        row(
            "gpg.program into a worktree is refused",
            vec![global("gpg.program", "/data/wt/r/a/gpg")],
            Some((ProgramInWritablePlace, "gpg.program")),
        ),
        row(
            "gpg.ssh.program into a worktree is refused",
            vec![global("gpg.ssh.program", "/data/wt/r/a/sign")],
            Some((ProgramInWritablePlace, "gpg.ssh.program")),
        ),
        row(
            "a credential helper into a worktree is refused",
            vec![global("credential.helper", "!/data/wt/r/a/cred")],
            Some((ProgramInWritablePlace, "credential.helper")),
        ),
        row(
            "a ~/ path resolves from HOME",
            vec![global("credential.helper", "~/../data/wt/r/a/cred")],
            Some((ProgramInWritablePlace, "credential.helper")),
        ),
        row(
            "`..` cannot escape the check",
            vec![global("gpg.program", "/data/other/../wt/r/a/gpg")],
            Some((ProgramInWritablePlace, "gpg.program")),
        ),
        row(
            "a path through a symlink into a worktree is refused",
            vec![global("gpg.program", "/link/wt/r/a/gpg")],
            Some((ProgramInWritablePlace, "gpg.program")),
        ),
        row(
            "an include through a symlink into a worktree is refused",
            vec![global("include.path", "/link/wt/r/a/later.cfg")],
            Some((ConfigInWritablePlace, "include.path")),
        ),
        row(
            "a sibling folder that shares a prefix is not inside",
            vec![global("gpg.program", "/data/wt/r/ab/gpg")],
            None,
        ),
        row(
            "a global filter command into a worktree is refused",
            vec![global("filter.y.clean", "/data/wt/r/a/clean")],
            Some((ProgramInWritablePlace, "filter.y.clean")),
        ),
        row(
            "include.path into a worktree is refused",
            vec![global("include.path", "/data/wt/r/a/inc.cfg")],
            Some((ConfigInWritablePlace, "include.path")),
        ),
        row(
            "an includeIf file in a worktree is refused before it exists",
            vec![global("includeif.gitdir:/r/.path", "/data/wt/r/a/inc.cfg")],
            Some((ConfigInWritablePlace, "includeif.gitdir:/r/.path")),
        ),
        row(
            "a relative include resolves from the including file",
            vec![entry(
                Scope::Global,
                "/data/wt/cfg/x",
                "include.path",
                "../r/a/inc.cfg",
            )],
            Some((ConfigInWritablePlace, "include.path")),
        ),
        row(
            "settings read from a file in a worktree are refused",
            vec![entry(
                Scope::Global,
                "/data/wt/r/a/inc.cfg",
                "user.name",
                "x",
            )],
            Some((ConfigInWritablePlace, "user.name")),
        ),
        row(
            "an include outside agent places is allowed",
            vec![global("include.path", "/h/.gitconfig.d/more")],
            None,
        ),
        Row {
            uses: lfs_use(),
            ..row(
                "a checkout converting LFS content is refused",
                lfs_installed(),
                Some((Conversion, "filter.lfs.clean")),
            )
        },
        row(
            "LFS installed, nothing assigned to it, is allowed",
            lfs_installed(),
            None,
        ),
        Row {
            uses: lfs_use(),
            op: Op::WorktreeRemove,
            ..row(
                "removing a worktree converts nothing",
                lfs_installed(),
                None,
            )
        },
        Row {
            uses: lfs_use(),
            ..row(
                "an assigned filter with no command configured is allowed",
                vec![],
                None,
            )
        },
        Row {
            uses: lfs_use(),
            standing: Standing::Clean,
            ..row("LFS without history is allowed", lfs_installed(), None)
        },
    ]
}

/// `/link` is a symlink to `/data`.
fn link_to_data(p: &Path) -> PathBuf {
    match p.strip_prefix("/link") {
        Ok(rest) => Path::new("/data").join(rest),
        Err(_) => p.to_path_buf(),
    }
}

#[test]
fn every_rule_row_by_row() {
    let writable = [Path::new(WT)];
    for r in rows().into_iter().chain(layout::rows()) {
        let mut entries = baseline();
        entries.extend(r.extra);
        let v = decide(&Facts {
            standing: &r.standing,
            op: r.op,
            location: r.location.as_ref(),
            commondir_file: r.commondir_file,
            entries: &entries,
            writable: &writable,
            kept_read_only: &[],
            cwd: Path::new(r.cwd),
            home: Some(Path::new("/h")),
            filter_uses: &r.uses,
            gitmodules: r.gitmodules,
            realpath: &link_to_data,
        });
        match (&v, r.want) {
            (Verdict::Allow, None) => {}
            (Verdict::Refuse(reasons), Some((rule, setting))) => {
                assert_eq!(
                    (reasons[0].rule, reasons[0].setting.as_str()),
                    (rule, setting),
                    "{}: {reasons:#?}",
                    r.name
                );
            }
            _ => panic!("{}: got {v:#?}, wanted {:?}", r.name, r.want),
        }
    }
}

/// The verdict on `op` in the main checkout `/r` (recorded, no HOME, no
/// filters in use) with `entries` and `writable`.
fn decide_in_main_checkout(op: Op, entries: &[Entry], writable: &[&Path]) -> Verdict {
    decide(&Facts {
        standing: &recorded(),
        op,
        location: Some(&main_checkout()),
        commondir_file: false,
        entries,
        writable,
        kept_read_only: &[],
        cwd: Path::new("/r"),
        home: None,
        filter_uses: &[],
        gitmodules: None,
        realpath: &link_to_data,
    })
}

#[test]
fn a_refusal_names_setting_value_file_and_what_to_do() {
    let entries = vec![local("filter.x.clean", "/x/canary")];
    let Verdict::Refuse(r) = decide_in_main_checkout(Op::Diff, &entries, &[]) else {
        panic!("allowed");
    };
    let text = r[0].to_string();
    for part in [
        "filter.x.clean",
        "/x/canary",
        "/r/.git/config",
        "git config --file",
    ] {
        assert!(text.contains(part), "{part} missing from: {text}");
    }
    assert_eq!(r[0].origin, "/r/.git/config");
    assert_eq!(r[0].value, "/x/canary");
}

#[test]
fn the_repositorys_own_config_in_a_sandboxed_checkout_is_not_called_an_include() {
    // A main checkout a sandboxed agent could write whole (nothing in it
    // recorded as kept read-only): .git/config is agent-writable.
    let todo = |file: &str| {
        let entries = vec![entry(Scope::Local, file, "user.name", "x")];
        let Verdict::Refuse(r) =
            decide_in_main_checkout(Op::WorktreeAdd, &entries, &[Path::new("/r")])
        else {
            panic!("{file}: allowed");
        };
        assert_eq!(r[0].rule, Rule::ConfigInWritablePlace, "{file}: {r:#?}");
        r[0].todo.clone()
    };
    let own = todo("/r/.git/config");
    assert!(own.contains("the repository's own config"), "{own}");
    assert!(own.contains("--no-worktree"), "{own}");
    assert!(!own.contains("remove the include"), "{own}");
    let included = todo("/r/inc.cfg");
    assert!(included.contains("remove the include"), "{included}");
}

#[test]
fn paths_are_found_in_command_values() {
    let cwd = Path::new("/w");
    let rows: &[(&str, bool, bool, &[&str])] = &[
        ("/a/b --x", false, false, &["/a/b"]),
        ("sh -c '/a/b | less'", false, false, &["/a/b"]),
        ("!/a/cred get", false, false, &["/a/cred"]),
        ("./run.sh", false, false, &["/w/run.sh"]),
        ("less -R", false, false, &[]),
        ("hooks", true, false, &["/w/hooks"]),
        ("true", true, false, &["/w/true"]),
        ("false", true, true, &[]),
        ("1", true, true, &[]),
        ("fsmon", true, true, &["/w/fsmon"]),
        ("~/bin/x", false, false, &["/h/bin/x"]),
    ];
    for (value, whole, bool_or_path, want) in rows {
        let got = mentioned_paths(value, *whole, *bool_or_path, cwd, Some(Path::new("/h")));
        let want: Vec<PathBuf> = want.iter().map(PathBuf::from).collect();
        assert_eq!(got, want, "{value}");
    }
}

#[test]
fn only_filters_with_commands_count_as_configured() {
    let mut entries = lfs_installed();
    entries.push(local("filter.plain.required", "true"));
    entries.push(local("filter.x.smudge", "cat"));
    assert_eq!(configured_filters(&entries), vec!["lfs", "x"]);
}
