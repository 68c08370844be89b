use super::*;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

#[test]
fn gitdir_files_parse() {
    let rows: &[(&str, Option<&str>)] = &[
        ("gitdir: /r/.git/worktrees/a\n", Some("/r/.git/worktrees/a")),
        (
            "gitdir: ../r/.git/worktrees/a",
            Some("../r/.git/worktrees/a"),
        ),
        ("gitdir:   /x  \r\n", Some("/x")),
        ("gitdir:\n", None),
        ("nonsense", None),
        ("", None),
    ];
    for (text, want) in rows {
        assert_eq!(parse_gitdir_file(text), *want, "{text:?}");
    }
    assert_eq!(resolve(Path::new("/w"), "../r"), Path::new("/w/../r"));
    assert_eq!(resolve(Path::new("/w"), "/r"), Path::new("/r"));
}

#[test]
fn a_main_checkout_and_a_linked_worktree() {
    let t = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(t.path()).unwrap();
    let main = root.join("main");
    std::fs::create_dir(&main).unwrap();
    git(&main, &["init", "-q", "-b", "main"]);
    git(
        &main,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ],
    );
    std::fs::remove_dir_all(main.join(".git/hooks")).unwrap();
    std::fs::remove_dir_all(main.join(".git/info")).unwrap();
    let home = Path::new("/nonexistent-home");
    let layout = gather(&main, home).unwrap();
    let g = main.join(".git");
    assert_eq!(
        layout,
        GitLayout::Main {
            git_dir: g.clone(),
            protected: Protected {
                hooks: vec![g.join("hooks")],
                config: vec![g.join("config")],
                other: vec![
                    g.join("modules"),
                    g.join("info"),
                    g.join("worktrees"),
                    g.join("packed-refs")
                ],
            }
        }
    );
    assert!(g.join("hooks").is_dir(), "a missing hooks dir is created");
    assert!(g.join("info").is_dir(), "a missing info dir is created");
    assert!(
        g.join("worktrees").is_dir(),
        "a missing worktrees dir is created"
    );
    assert!(!g.join("shallow").exists(), "no shallow file is made");
    std::fs::write(g.join("shallow"), "").unwrap();
    let GitLayout::Main { protected, .. } = gather(&main, home).unwrap() else {
        panic!("not a main checkout")
    };
    assert!(
        protected.other.contains(&g.join("shallow")),
        "a shallow clone's shallow read-only"
    );
    std::fs::remove_file(g.join("shallow")).unwrap();
    assert!(
        g.join("modules").is_dir(),
        "a missing modules dir is created"
    );

    git(&main, &["worktree", "add", "-q", "-b", "side", "../linked"]);
    let linked = root.join("linked");
    let admin = g.join("worktrees/linked");
    assert_eq!(
        gather(&linked, home).unwrap(),
        GitLayout::Linked {
            dot_git: linked.join(".git"),
            admin_dir: admin.clone(),
            common: g.clone(),
            protected: Protected {
                hooks: vec![g.join("hooks")],
                config: vec![g.join("config")],
                other: vec![admin.join("commondir"), admin.join("gitdir")],
            }
        }
    );

    assert_eq!(gather(&root, home).unwrap(), GitLayout::None);

    // A linked worktree seen from its home: refused, nothing created.
    let e = gather(&linked, &g).unwrap_err().to_string();
    assert!(e.contains("home folder or above it"), "{e}");

    // A `.git` file planted in a folder that is no worktree, naming
    // the home folder (here `root`): refused, and no `logs` or `hooks`
    // appear there.
    let plain = root.join("plain");
    std::fs::create_dir(&plain).unwrap();
    std::fs::write(plain.join(".git"), format!("gitdir: {}\n", root.display())).unwrap();
    let e = gather(&plain, &root).unwrap_err().to_string();
    assert!(e.contains("not accepted as a linked worktree"), "{e}");
    assert!(!root.join("logs").exists() && !root.join("hooks").exists());
    // ... or naming the real admin dir of another worktree.
    std::fs::write(plain.join(".git"), format!("gitdir: {}\n", admin.display())).unwrap();
    let e = gather(&plain, home).unwrap_err().to_string();
    assert!(e.contains("not this worktree"), "{e}");

    // A `commondir` planted in a main checkout's .git: refused.
    std::fs::write(g.join("commondir"), "../.evil\n").unwrap();
    let e = gather(&main, home).unwrap_err().to_string();
    assert!(e.contains("planted redirect"), "{e}");
    std::fs::remove_file(g.join("commondir")).unwrap();

    std::fs::remove_dir(g.join("hooks")).unwrap();
    std::os::unix::fs::symlink(root.join("elsewhere"), g.join("hooks")).unwrap();
    assert_eq!(
        gather(&main, home),
        Err(GitLayoutError::Symlink(g.join("hooks")))
    );
}

/// A main checkout gets an empty `packed-refs` to bind read-only, and
/// a reftable (whose refs have no private copy) is kept read-only.
#[test]
fn a_main_checkouts_refs_stay_the_users() {
    let t = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(t.path()).unwrap();
    let home = Path::new("/nonexistent-home");
    git(&root, &["init", "-q", "plain"]);
    let g = root.join("plain/.git");
    gather(&root.join("plain"), home).unwrap();
    assert_eq!(
        std::fs::read_to_string(g.join("packed-refs")).unwrap(),
        PACKED_REFS_HEADER
    );
    git(&root, &["init", "-q", "--ref-format=reftable", "rt"]);
    let GitLayout::Main { protected, .. } = gather(&root.join("rt"), home).unwrap() else {
        panic!("not a main checkout")
    };
    assert!(
        protected.other.contains(&root.join("rt/.git/reftable")),
        "{protected:?}"
    );
}

/// Every rule of [`check_linked`], one row each: (change to a valid
/// linked worktree, the error's key words, or None for accepted).
#[test]
fn linked_worktrees_are_checked_as_git_checks_them() {
    let valid = LinkedFacts {
        dot_git: "/home/u/wt/t1/.git".into(),
        home: "/home/u".into(),
        admin: "/home/u/r/.git/worktrees/t1".into(),
        admin_gitdir: Some("/home/u/wt/t1/.git".into()),
        common: "/home/u/r/.git".into(),
        common_is_git_dir: true,
    };
    type Change = fn(&mut LinkedFacts);
    let rows: &[(&str, Change, Option<&str>)] = &[
        ("valid", |_| {}, None),
        (
            "admin is home",
            |f| f.admin = "/home/u".into(),
            Some("home folder or above"),
        ),
        (
            "admin above home",
            |f| f.admin = "/home".into(),
            Some("home folder or above"),
        ),
        (
            "common is home",
            |f| f.common = "/home/u".into(),
            Some("home folder or above"),
        ),
        (
            "common is /",
            |f| f.common = "/".into(),
            Some("home folder or above"),
        ),
        (
            "a whole repository",
            |f| f.admin = f.common.clone(),
            Some("whole repository"),
        ),
        (
            "admin outside worktrees/",
            |f| f.admin = "/home/u/r/.git/elsewhere/t1".into(),
            Some("not in the worktrees folder"),
        ),
        (
            "admin deeper",
            |f| f.admin = "/home/u/r/.git/worktrees/t1/x".into(),
            Some("not in the worktrees folder"),
        ),
        (
            "admin of another repository",
            |f| f.admin = "/home/u/q/.git/worktrees/t1".into(),
            Some("not in the worktrees folder"),
        ),
        (
            "common no git dir",
            |f| f.common_is_git_dir = false,
            Some("not a git repository"),
        ),
        (
            "gitdir names another worktree",
            |f| f.admin_gitdir = Some("/home/u/wt/t2/.git".into()),
            Some("not this worktree"),
        ),
        (
            "no gitdir",
            |f| f.admin_gitdir = None,
            Some("no gitdir file"),
        ),
    ];
    for (name, change, want) in rows {
        let mut f = valid.clone();
        change(&mut f);
        match (check_linked(&f), want) {
            (Ok(()), None) => {}
            (Err(e), Some(w)) => assert!(e.contains(w), "{name}: {e}"),
            (got, _) => panic!("{name}: {got:?}, wanted {want:?}"),
        }
    }
}

#[test]
fn redirects_in_a_main_checkout() {
    assert!(check_main(&[]).is_ok());
    assert!(check_main(&["config.worktree"]).is_ok());
    assert!(check_main(&["commondir"]).is_err());
    assert!(check_main(&["config.worktree", "gitdir"]).is_err());
    assert!(check_main(&["shallow"]).is_ok(), "a shallow clone's own");
    let rows: &[(&[&str], &[&str], &[&str])] = &[
        (&[], &[], &[]),
        (&[], &["commondir"], &["commondir"]),
        (&["config.worktree"], &["config.worktree"], &[]),
        (
            &["commondir", "gitdir"],
            &["commondir", "gitdir", "config.worktree"],
            &["config.worktree"],
        ),
        (&["gitdir"], &[], &[]),
        (&[], &["shallow"], &["shallow"]),
        (&["shallow"], &["shallow"], &[]),
    ];
    for (before, after, want) in rows {
        assert_eq!(appeared(before, after), *want, "{before:?} -> {after:?}");
    }
}
