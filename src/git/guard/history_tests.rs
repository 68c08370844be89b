//! Sandbox history's lookups and records, row by row.

use super::*;

fn loc(common: &str, git_dir: &str, top: Option<&str>) -> Location {
    Location {
        common_dir: common.into(),
        git_dir: git_dir.into(),
        toplevel: top.map(PathBuf::from),
    }
}

fn recorded(common: &str) -> Standing {
    Standing::Recorded {
        common_dir: common.into(),
    }
}

fn with_run() -> History {
    let mut h = History::default();
    let main = loc("/r/.git", "/r/.git", Some("/r"));
    h.note_run(
        Some((&main, Some(Path::new("/r")))),
        Path::new("/data/wt/r/a"),
        &[],
        1,
    );
    h.note_run(None, Path::new("/scratch"), &[], 2);
    h
}

#[test]
fn standing_of_each_kind_of_folder() {
    let h = with_run();
    let rows: &[(&str, Location, &str, Standing)] = &[
        (
            "the main checkout",
            loc("/r/.git", "/r/.git", Some("/r")),
            "/r",
            recorded("/r/.git"),
        ),
        (
            "another worktree of the repository",
            loc("/r/.git", "/r/.git/worktrees/b", Some("/data/wt/r/b")),
            "/data/wt/r/b",
            recorded("/r/.git"),
        ),
        (
            "a planted .git/commondir: found by the main git dir",
            loc("/r/.git/evil", "/r/.git", Some("/r")),
            "/r",
            recorded("/r/.git"),
        ),
        (
            "a rewritten worktrees/<tab>/commondir: found by the admin folder",
            loc("/tmp/evil", "/r/.git/worktrees/b", Some("/data/wt/r/b")),
            "/data/wt/r/b",
            recorded("/r/.git"),
        ),
        (
            "a planted commondir and core.worktree elsewhere: found by the top folder",
            loc("/elsewhere/.git", "/elsewhere/.git", Some("/r")),
            "/r",
            recorded("/r/.git"),
        ),
        (
            "an unrelated repository",
            loc("/o/.git", "/o/.git", Some("/o")),
            "/o",
            Standing::Clean,
        ),
        (
            "a worktree whose .git file points at a repository the agent made",
            loc(
                "/data/wt/r/a/fake.git",
                "/data/wt/r/a/fake.git",
                Some("/data/wt/r/a"),
            ),
            "/data/wt/r/a",
            Standing::InWritablePlace {
                place: "/data/wt/r/a".into(),
            },
        ),
        (
            "a repository made in a folder an agent could write",
            loc("/scratch/p/.git", "/scratch/p/.git", Some("/scratch/p")),
            "/scratch/p",
            Standing::InWritablePlace {
                place: "/scratch".into(),
            },
        ),
        (
            "a sibling whose name merely starts the same is not inside",
            loc("/scratch2/.git", "/scratch2/.git", Some("/scratch2")),
            "/scratch2",
            Standing::Clean,
        ),
    ];
    for (name, at, dir, want) in rows {
        assert_eq!(&h.standing(Some(at), Path::new(dir)), want, "{name}");
    }
    assert_eq!(
        h.standing(None, Path::new("/scratch/x")),
        Standing::InWritablePlace {
            place: "/scratch".into()
        }
    );
    assert_eq!(h.standing(None, Path::new("/x")), Standing::Clean);
}

/// One recorded step: a run in the repository at /r (place, kept), a
/// run in a folder outside any repository, or an import into /r.
enum Step {
    Run(&'static str, &'static [&'static str]),
    Folder(&'static str),
    Import(&'static str),
}

fn after(steps: &[Step]) -> History {
    let main = loc("/r/.git", "/r/.git", Some("/r"));
    let mut h = History::default();
    for (t, s) in steps.iter().enumerate() {
        match s {
            Step::Run(place, kept) => {
                let kept: Vec<PathBuf> = kept.iter().map(PathBuf::from).collect();
                h.note_run(
                    Some((&main, Some(Path::new("/r")))),
                    Path::new(place),
                    &kept,
                    t as u64,
                )
            }
            Step::Folder(place) => h.note_run(None, Path::new(place), &[], t as u64),
            Step::Import(from) => {
                h.note_import(&main, Some(Path::new("/r")), Path::new(from), t as u64)
            }
        }
    }
    h
}

#[test]
fn what_counts_as_kept_read_only_after_each_sequence_of_runs() {
    use Step::*;
    const KEPT: &[&str] = &["/r/.git/config", "/r/.git/hooks"];
    // (sentence, steps, path, the place it is writable through)
    let rows: &[(&str, &[Step], &str, Option<&str>)] = &[
        (
            "a run in the main checkout that kept .git/config read-only leaves it not agent-writable",
            &[Run("/r", KEPT)],
            "/r/.git/config",
            None,
        ),
        (
            "what is inside a kept folder (.git/hooks) is not agent-writable either",
            &[Run("/r", KEPT)],
            "/r/.git/hooks/pre-commit",
            None,
        ),
        (
            "the rest of the checkout stays agent-writable",
            &[Run("/r", KEPT)],
            "/r/src/evil.inc",
            Some("/r"),
        ),
        (
            "the rest of .git stays agent-writable",
            &[Run("/r", KEPT)],
            "/r/.git/info/attributes",
            Some("/r"),
        ),
        (
            "a path whose name merely starts like a kept one is not kept",
            &[Run("/r", KEPT)],
            "/r/.git/config2",
            Some("/r"),
        ),
        (
            "two runs that both kept it leave it kept",
            &[Run("/r", KEPT), Run("/r", KEPT)],
            "/r/.git/config",
            None,
        ),
        (
            "a later run that could write it (kept nothing) makes it agent-writable",
            &[Run("/r", KEPT), Run("/r", &[])],
            "/r/.git/config",
            Some("/r"),
        ),
        (
            "a later run that kept only the hooks makes the config agent-writable",
            &[Run("/r", KEPT), Run("/r", &["/r/.git/hooks"])],
            "/r/.git/config",
            Some("/r"),
        ),
        (
            "...and the hooks stay kept",
            &[Run("/r", KEPT), Run("/r", &["/r/.git/hooks"])],
            "/r/.git/hooks/x",
            None,
        ),
        (
            "a run recorded before (history from before this change, or a wrapped agent) that could write it: never kept",
            &[Run("/r", &[]), Run("/r", KEPT)],
            "/r/.git/config",
            Some("/r"),
        ),
        (
            "an earlier run over a folder holding the checkout could write it: never kept",
            &[Folder("/"), Run("/r", KEPT)],
            "/r/.git/config",
            Some("/"),
        ),
        (
            "a later run over a folder holding the checkout makes it agent-writable",
            &[Run("/r", KEPT), Folder("/")],
            "/r/.git/config",
            Some("/"),
        ),
        (
            "a later import from a folder holding it makes it agent-writable",
            &[Run("/r", KEPT), Import("/r/.git")],
            "/r/.git/config",
            Some("/r"),
        ),
        (
            "a run in a linked worktree elsewhere leaves the main checkout's kept paths kept",
            &[Run("/r", KEPT), Run("/data/wt/r/a", &[])],
            "/r/.git/config",
            None,
        ),
        (
            "a linked worktree's run keeping the common dir's config does not stop a main checkout's run keeping it",
            &[Run("/data/wt/r/a", &["/r/.git/config"]), Run("/r", KEPT)],
            "/r/.git/config",
            None,
        ),
        (
            "a writable place inside a kept folder is writable all the same",
            &[Run("/r", KEPT), Run("/r/.git/hooks/x", &[])],
            "/r/.git/hooks/x/run",
            Some("/r/.git/hooks/x"),
        ),
    ];
    for (name, steps, path, want) in rows {
        let h = after(steps);
        let places = h.writable();
        let kept = h.kept_read_only();
        assert_eq!(
            writable_place(&places, &kept, Path::new(path)),
            want.map(Path::new),
            "{name}"
        );
    }
}

#[test]
fn a_history_without_kept_paths_reads_as_keeping_none() {
    let old = r#"{"version":1,"repos":{"/r/.git":{"since_us":1,"writable":["/r"]}}}"#;
    let h: History = serde_json::from_str(old).unwrap();
    assert!(h.kept_read_only().is_empty());
    assert_eq!(
        writable_place(&h.writable(), &[], Path::new("/r/.git/config")),
        Some(Path::new("/r"))
    );
}

#[test]
fn a_history_written_before_git_dirs_were_kept_finds_the_main_git_dir_by_its_key() {
    let old = r#"{"version":1,"repos":{"/r/.git":{"since_us":1,"writable":["/w"]}}}"#;
    let h: History = serde_json::from_str(old).unwrap();
    assert_eq!(
        h.standing(
            Some(&loc("/r/.git/evil", "/r/.git", Some("/r"))),
            Path::new("/r")
        ),
        recorded("/r/.git")
    );
}

#[test]
fn imports_give_history_and_writable_places() {
    let mut h = History::default();
    let dest = loc("/dest/.git", "/dest/.git", Some("/dest"));
    h.note_import(
        &dest,
        Some(Path::new("/dest")),
        Path::new("/data/wt/src/a"),
        5,
    );
    h.note_import(
        &dest,
        Some(Path::new("/dest")),
        Path::new("/data/wt/src/a"),
        6,
    );
    assert_eq!(
        h.standing(
            Some(&loc("/dest/.git", "/dest/.git", Some("/dest"))),
            Path::new("/dest")
        ),
        recorded("/dest/.git")
    );
    assert_eq!(h.repos[Path::new("/dest/.git")].imports.len(), 1);
    assert_eq!(
        h.standing(
            Some(&loc("/dest/.git/evil", "/dest/.git", Some("/dest"))),
            Path::new("/dest")
        ),
        recorded("/dest/.git"),
        "found by the main git dir"
    );
    assert_eq!(h.writable(), vec![Path::new("/data/wt/src/a")]);
}

#[test]
fn history_persists_and_a_damaged_file_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    assert!(load(tmp.path()).unwrap().repos.is_empty());
    let at = loc("/r/.git", "/r/.git/worktrees/w", Some("/w"));
    update(tmp.path(), |h| {
        h.note_run(Some((&at, Some(Path::new("/r")))), Path::new("/w"), &[], 1)
    })
    .unwrap();
    update(tmp.path(), |h| {
        h.note_run(Some((&at, Some(Path::new("/r")))), Path::new("/w2"), &[], 2)
    })
    .unwrap();
    let h = load(tmp.path()).unwrap();
    let r = &h.repos[Path::new("/r/.git")];
    assert_eq!(r.writable.len(), 2);
    assert_eq!(r.since_us, 1);
    assert_eq!(
        r.git_dirs.iter().collect::<Vec<_>>(),
        vec![Path::new("/r/.git")]
    );
    assert_eq!(
        r.toplevels.iter().collect::<Vec<_>>(),
        vec![Path::new("/r")]
    );
    std::fs::write(file(tmp.path()), "{not json").unwrap();
    let e = load(tmp.path()).unwrap_err().to_string();
    assert!(
        e.contains("sandbox-history.json") && e.contains("refuses"),
        "{e}"
    );
    assert!(
        update(tmp.path(), |_| {}).is_err(),
        "a damaged file is not overwritten"
    );
}

#[test]
fn folders_the_history_may_concern() {
    let h = with_run();
    let rows: &[(&str, bool)] = &[
        ("/r", true),
        ("/r/src/deep", true),
        ("/r/.git", true),
        ("/data/wt/r/a/sub", true),
        ("/scratch/x", true),
        ("/data/wt/r", false),
        ("/rr", false),
        ("/elsewhere", false),
    ];
    for (dir, want) in rows {
        assert_eq!(h.may_concern(Path::new(dir)), *want, "{dir}");
    }
    assert!(!History::default().may_concern(Path::new("/r")));
}
