//! Rows for where git finds the repository (a planted `commondir`),
//! submodules in agent-writable places, and booleans read as git reads
//! them.

use super::*;

pub(super) fn rows() -> Vec<Row> {
    use Rule::*;
    vec![
        row(
            "extensions.worktreeConfig = `2` is on for git, so refused",
            vec![local("extensions.worktreeconfig", "2")],
            Some((WorktreeConfig, "extensions.worktreeconfig")),
        ),
        row(
            "extensions.worktreeConfig = `1k` is on for git, so refused",
            vec![local("extensions.worktreeconfig", "1k")],
            Some((WorktreeConfig, "extensions.worktreeconfig")),
        ),
        row(
            "extensions.worktreeConfig = `yes` is on for git, so refused",
            vec![local("extensions.worktreeconfig", "yes")],
            Some((WorktreeConfig, "extensions.worktreeconfig")),
        ),
        row(
            "extensions.worktreeConfig = `On` is on for git, so refused",
            vec![local("extensions.worktreeconfig", "On")],
            Some((WorktreeConfig, "extensions.worktreeconfig")),
        ),
        row(
            "extensions.worktreeConfig = `-1` is on for git, so refused",
            vec![local("extensions.worktreeconfig", "-1")],
            Some((WorktreeConfig, "extensions.worktreeconfig")),
        ),
        row(
            "extensions.worktreeConfig = `0x10` is on for git, so refused",
            vec![local("extensions.worktreeconfig", "0x10")],
            Some((WorktreeConfig, "extensions.worktreeconfig")),
        ),
        row(
            "extensions.worktreeConfig = `010` is on for git, so refused",
            vec![local("extensions.worktreeconfig", "010")],
            Some((WorktreeConfig, "extensions.worktreeconfig")),
        ),
        row(
            "extensions.worktreeConfig = ` 3` is on for git, so refused",
            vec![local("extensions.worktreeconfig", " 3")],
            Some((WorktreeConfig, "extensions.worktreeconfig")),
        ),
        row(
            "extensions.worktreeConfig = `0` is off for git, so allowed",
            vec![local("extensions.worktreeconfig", "0")],
            None,
        ),
        row(
            "extensions.worktreeConfig = `off` is off for git, so allowed",
            vec![local("extensions.worktreeconfig", "off")],
            None,
        ),
        row(
            "extensions.worktreeConfig = `no` is off for git, so allowed",
            vec![local("extensions.worktreeconfig", "no")],
            None,
        ),
        row(
            "extensions.worktreeConfig = `` is off for git, so allowed",
            vec![local("extensions.worktreeconfig", "")],
            None,
        ),
        row(
            "extensions.worktreeConfig = `0x0` is off for git, so allowed",
            vec![local("extensions.worktreeconfig", "0x0")],
            None,
        ),
        row(
            "extensions.worktreeConfig = `00` is off for git, so allowed",
            vec![local("extensions.worktreeconfig", "00")],
            None,
        ),
        row(
            "extensions.worktreeConfig = `0k` is off for git, so allowed",
            vec![local("extensions.worktreeconfig", "0k")],
            None,
        ),
        row(
            "extensions.worktreeConfig = `maybe` makes git fail, so refused",
            vec![local("extensions.worktreeconfig", "maybe")],
            Some((WorktreeConfig, "extensions.worktreeconfig")),
        ),
        Row {
            extra: vec![Entry {
                value: None,
                ..local("extensions.worktreeconfig", "")
            }],
            ..row(
                "a bare extensions.worktreeConfig key is true",
                vec![],
                Some((WorktreeConfig, "extensions.worktreeconfig")),
            )
        },
        Row {
            location: Some(Location {
                common_dir: "/r/.git/evil".into(),
                ..main_checkout()
            }),
            commondir_file: true,
            ..row(
                "a commondir file in the main checkout's .git (history found by the git dir) is refused",
                vec![],
                Some((CommonDir, "commondir")),
            )
        },
        Row {
            location: Some(Location {
                common_dir: "/elsewhere/.git".into(),
                git_dir: "/elsewhere/.git".into(),
                toplevel: Some("/r".into()),
            }),
            ..row(
                "a common dir other than the recorded one is refused",
                vec![],
                Some((CommonDir, "commondir")),
            )
        },
        Row {
            commondir_file: true,
            ..row(
                "a commondir file in the main checkout's .git is refused even if it points home",
                vec![],
                Some((CommonDir, "commondir")),
            )
        },
        Row {
            location: Some(Location {
                git_dir: "/r/.git/worktrees/a".into(),
                toplevel: Some(WT.into()),
                ..main_checkout()
            }),
            commondir_file: true,
            cwd: WT,
            ..row(
                "a linked worktree's admin folder with its commondir is allowed",
                vec![],
                None,
            )
        },
        Row {
            location: Some(Location {
                common_dir: "/data/wt/r/a/x".into(),
                git_dir: "/r/.git/worktrees/a".into(),
                toplevel: Some(WT.into()),
            }),
            commondir_file: true,
            cwd: WT,
            ..row(
                "a linked worktree whose commondir was rewritten is refused",
                vec![],
                Some((CommonDir, "commondir")),
            )
        },
        Row {
            location: Some(Location {
                git_dir: "/r/.git/worktrees/a".into(),
                toplevel: Some(WT.into()),
                ..main_checkout()
            }),
            cwd: WT,
            ..row(
                "a linked worktree's admin folder without commondir is refused",
                vec![],
                Some((CommonDir, "commondir")),
            )
        },
        Row {
            location: None,
            standing: Standing::InWritablePlace { place: WT.into() },
            cwd: WT,
            ..row(
                "outside any repository, only the place counts",
                vec![],
                Some((InWritablePlace, "repository")),
            )
        },
        Row {
            location: Some(Location {
                common_dir: "/r/.git/evil".into(),
                ..main_checkout()
            }),
            commondir_file: true,
            standing: Standing::Clean,
            ..row(
                "without history a commondir file is the user's own",
                vec![],
                None,
            )
        },
        Row {
            op: Op::Checkout,
            location: Some(Location {
                git_dir: "/r/.git/worktrees/a".into(),
                toplevel: Some(WT.into()),
                ..main_checkout()
            }),
            commondir_file: true,
            cwd: WT,
            gitmodules: Some("/data/wt/r/a/.gitmodules"),
            ..row(
                "a checkout in an agent's worktree with a .gitmodules is refused",
                vec![],
                Some((Submodules, ".gitmodules")),
            )
        },
        Row {
            op: Op::Commit,
            location: Some(Location {
                git_dir: "/r/.git/worktrees/a".into(),
                toplevel: Some(WT.into()),
                ..main_checkout()
            }),
            commondir_file: true,
            cwd: WT,
            gitmodules: Some("/data/wt/r/a/.gitmodules"),
            ..row(
                "a commit in an agent's worktree with a .gitmodules is refused",
                vec![],
                Some((Submodules, ".gitmodules")),
            )
        },
        Row {
            op: Op::Other,
            location: Some(Location {
                git_dir: "/r/.git/worktrees/a".into(),
                toplevel: Some(WT.into()),
                ..main_checkout()
            }),
            commondir_file: true,
            cwd: WT,
            gitmodules: Some("/data/wt/r/a/.gitmodules"),
            ..row(
                "any other command in an agent's worktree with a .gitmodules is refused",
                vec![],
                Some((Submodules, ".gitmodules")),
            )
        },
        Row {
            op: Op::Status,
            location: Some(Location {
                git_dir: "/r/.git/worktrees/a".into(),
                toplevel: Some(WT.into()),
                ..main_checkout()
            }),
            commondir_file: true,
            cwd: WT,
            gitmodules: Some("/data/wt/r/a/.gitmodules"),
            ..row(
                "status there is allowed: the runner passes --ignore-submodules=all",
                vec![],
                None,
            )
        },
        Row {
            op: Op::Diff,
            location: Some(Location {
                git_dir: "/r/.git/worktrees/a".into(),
                toplevel: Some(WT.into()),
                ..main_checkout()
            }),
            commondir_file: true,
            cwd: WT,
            gitmodules: Some("/data/wt/r/a/.gitmodules"),
            ..row(
                "diff there is allowed: the runner passes --ignore-submodules=all",
                vec![],
                None,
            )
        },
        Row {
            op: Op::WorktreeRemove,
            location: Some(Location {
                git_dir: "/r/.git/worktrees/a".into(),
                toplevel: Some(WT.into()),
                ..main_checkout()
            }),
            commondir_file: true,
            cwd: WT,
            gitmodules: Some("/data/wt/r/a/.gitmodules"),
            ..row(
                "removing the worktree never looks inside submodules",
                vec![],
                None,
            )
        },
        Row {
            op: Op::Checkout,
            gitmodules: Some("HEAD:.gitmodules"),
            ..row(
                "a checkout in the main checkout no agent could write is allowed",
                vec![],
                None,
            )
        },
    ]
}
