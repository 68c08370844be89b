//! A main checkout a hand-run `nerdr sandbox` wrote, with what it kept
//! read-only on record: one row per rule that must still hold.

use super::*;

/// (sentence, operation, settings, attribute uses, `.gitmodules`, the
/// first refusal's rule and setting or None for Allow)
type KeptRow = (
    &'static str,
    Op,
    Vec<Entry>,
    Vec<FilterUse>,
    Option<&'static str>,
    Option<(Rule, &'static str)>,
);

/// `nerdr sandbox` run by hand in the main checkout /r, which kept
/// `.git/config` and `.git/hooks` read-only: those are not agent-writable,
/// everything else in the checkout still is, and every other rule holds.
#[test]
fn a_main_checkout_whose_git_config_a_sandbox_kept_read_only() {
    let writable = [Path::new("/r")];
    let kept = [Path::new("/r/.git/config"), Path::new("/r/.git/hooks")];
    let in_worktree = |driver: &str| FilterUse {
        driver: driver.into(),
        file: "/r/.gitattributes".into(),
    };
    let rows: Vec<KeptRow> = vec![
        (
            "the repository's own config, kept read-only, is not a config in a writable place",
            Op::WorktreeAdd,
            vec![local("user.email", "a@b")],
            vec![],
            None,
            None,
        ),
        (
            "hooksPath naming the kept hooks folder is not a program in a writable place",
            Op::Commit,
            vec![global("core.hookspath", "/r/.git/hooks")],
            vec![],
            None,
            None,
        ),
        (
            "an include pointing into the checkout is still refused",
            Op::WorktreeAdd,
            vec![local("include.path", "../evil.inc")],
            vec![],
            None,
            Some((Rule::ConfigInWritablePlace, "include.path")),
        ),
        (
            "a config.worktree the run did not keep is still a config in a writable place",
            Op::WorktreeAdd,
            vec![entry(Scope::Worktree, "/r/.git/config.worktree", "user.name", "x")],
            vec![],
            None,
            Some((Rule::ConfigInWritablePlace, "user.name")),
        ),
        (
            "fsmonitor naming a file in the checkout is still refused",
            Op::Status,
            vec![global("core.fsmonitor", "/r/tools/mon")],
            vec![],
            None,
            Some((Rule::ProgramInWritablePlace, "core.fsmonitor")),
        ),
        (
            "fsmonitor naming a link in the kept hooks folder that leads into the checkout is still refused",
            Op::Status,
            vec![global("core.fsmonitor", "/r/.git/hooks/mon")],
            vec![],
            None,
            Some((Rule::ProgramInWritablePlace, "core.fsmonitor")),
        ),
        (
            "a filter the checkout's attributes assign is still refused",
            Op::Checkout,
            vec![global("filter.x.smudge", "/usr/bin/x")],
            vec![in_worktree("x")],
            None,
            Some((Rule::Conversion, "filter.x.smudge")),
        ),
        (
            "a filter in the repository's own config is still refused",
            Op::Diff,
            vec![local("filter.x.clean", "/usr/bin/x")],
            vec![],
            None,
            Some((Rule::RepositoryProgram, "filter.x.clean")),
        ),
        (
            "submodules in the checkout are still refused",
            Op::Checkout,
            vec![],
            vec![],
            Some("/r/.gitmodules"),
            Some((Rule::Submodules, ".gitmodules")),
        ),
        (
            "a fetch is still refused",
            Op::Fetch,
            vec![],
            vec![],
            None,
            Some((Rule::Network, "fetch")),
        ),
    ];
    for (name, op, extra, uses, gitmodules, want) in rows {
        let mut entries = baseline();
        entries.extend(extra);
        let v = decide(&Facts {
            standing: &recorded(),
            op,
            location: Some(&main_checkout()),
            commondir_file: false,
            entries: &entries,
            writable: &writable,
            kept_read_only: &kept,
            cwd: Path::new("/r"),
            home: Some(Path::new("/h")),
            filter_uses: &uses,
            gitmodules,
            realpath: &|p: &Path| {
                // The user's own link, in the kept folder, to a file in
                // the checkout.
                if p == Path::new("/r/.git/hooks/mon") {
                    PathBuf::from("/r/tools/mon")
                } else {
                    p.to_path_buf()
                }
            },
        });
        match (&v, want) {
            (Verdict::Allow, None) => {}
            (Verdict::Refuse(reasons), Some((rule, setting))) => assert_eq!(
                (reasons[0].rule, reasons[0].setting.as_str()),
                (rule, setting),
                "{name}: {reasons:#?}"
            ),
            _ => panic!("{name}: got {v:#?}, wanted {want:?}"),
        }
    }
}
