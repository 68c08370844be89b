//! Ignored files that count as work (issue 18, review 18d): only rules an
//! agent cannot have planted unseen (a committed, unchanged `.gitignore`,
//! the repository's `info/exclude`, the person's global excludes) make a
//! file not worth keeping. A committed build folder still costs nothing;
//! a file only an agent's `.gitignore` hides is listed by `close`,
//! counted by `worktrees`, shown by `diff` and saved by `--force`. Real
//! binary, real git, as a non-root user under the private `systemd --user`.

use crate::support::repo_session::{s, RepoSession, SH};

/// A repository with one commit whose `.gitignore` ignores `target/` and
/// `*.log`, in `~/work/r`.
fn setup() -> Option<RepoSession> {
    RepoSession::start(
        SH,
        &[
            ("work/r/tracked.txt", "one\n"),
            ("work/r/.gitignore", "target/\n*.log\n"),
        ],
    )
}

#[test]
fn a_committed_gitignores_build_folder_does_not_keep_a_worktree() {
    let Some(st) = setup() else { return };
    let (tab, wt) = st.tab_and_worktree("sh");
    // A build folder and a log the committed .gitignore ignores, and a
    // file the repository's info/exclude ignores.
    let exclude = st.git(
        &wt,
        &[
            "rev-parse",
            "--path-format=absolute",
            "--git-path",
            "info/exclude",
        ],
    );
    st.sh(&format!(
        "cd {w} && mkdir -p target/debug/deps && echo bin > target/debug/out.bin \
         && echo d > target/debug/deps/x.d && echo junk > build.log && echo t > scratch.tmp \
         && echo '*.tmp' >> {exclude}",
        w = s(&wt)
    ));
    let row = st.worktree_row(&wt);
    assert_eq!(row["dirty"], 0, "trusted rules' files counted: {row:#}");

    let (ok, _, err) = st.nerdr(&["close", "--remove-worktree", &tab]);
    assert!(ok, "a build folder kept the worktree: {err}");
    assert!(!wt.exists(), "{} stays", wt.display());
    assert_eq!(st.ok(&["saved", "--json"]).trim_end(), "[]");
}

#[test]
fn a_planted_gitignores_files_are_counted_shown_and_saved() {
    let Some(st) = setup() else { return };
    let (tab, wt) = st.tab_and_worktree("sh");
    // The person's notes, a planted self-ignoring .gitignore in a folder,
    // and a line added to the committed one: neither rule is trusted.
    st.sh(&format!(
        "cd {w} && echo 'the notes' > notes.txt && mkdir -p keep && echo k > keep/mine.txt \
         && printf '*\\n' > keep/.gitignore && echo '*.txt' >> .gitignore",
        w = s(&wt)
    ));

    let row = st.worktree_row(&wt);
    // modified .gitignore; notes.txt (by the changed .gitignore);
    // keep/.gitignore and keep/mine.txt (by the planted one).
    assert_eq!(row["dirty"], 4, "{row:#}");

    let (ok, patch, err) = st.nerdr(&["diff", &tab]);
    assert!(ok, "{err}");
    assert!(
        patch.contains("+the notes") && patch.contains("b/keep/mine.txt"),
        "{patch}"
    );
    assert!(
        err.contains("notes.txt") && err.contains("keep/mine.txt"),
        "{err}"
    );

    let (ok, _, err) = st.nerdr(&["close", "--remove-worktree", &tab]);
    assert!(!ok, "removed with the person's notes: {err}");
    for line in [
        "modified: .gitignore",
        "ignored by an untrusted rule: notes.txt",
        "ignored by an untrusted rule: keep/mine.txt",
    ] {
        assert!(err.contains(line), "{line:?} not in: {err}");
    }

    let (_, said) = st.ok_said(&["close", "--remove-worktree", "--force", &tab]);
    assert!(!wt.exists());
    assert!(
        said.contains("holds ignored files too") && said.contains("\n  notes.txt"),
        "{said}"
    );
    let reference = format!("refs/nerdr/saved/{tab}");
    let files = st.git(&st.repo, &["ls-tree", "-r", "--name-only", &reference]);
    for f in ["notes.txt", "keep/mine.txt", "keep/.gitignore"] {
        assert!(files.lines().any(|l| l == f), "{f} not saved: {files}");
    }
    let message = st.git(&st.repo, &["log", "-1", "--format=%B", &reference]);
    assert!(
        message.contains("ignored, saved all the same") && message.contains("  notes.txt"),
        "{message}"
    );
    assert_eq!(
        st.git(&st.repo, &["show", &format!("{reference}:notes.txt")]),
        "the notes"
    );
}

/// git lists an ignored folder once and never looks inside it; a
/// repository in one that no trusted rule ignores still keeps the
/// worktree, `--force` or not.
#[test]
fn a_repository_inside_a_planted_ignored_folder_keeps_the_worktree() {
    let Some(st) = setup() else { return };
    let (tab, wt) = st.tab_and_worktree("sh");
    st.sh(&format!(
        "cd {w} && mkdir -p deps/lib && printf '*\\n' > deps/.gitignore \
         && git init -q deps/lib/clone && echo c > deps/lib/clone/file.txt",
        w = s(&wt)
    ));
    let (ok, _, err) = st.nerdr(&["close", "--remove-worktree", "--force", &tab]);
    assert!(!ok, "removed with a nested repository in it: {err}");
    assert!(err.contains("nested repository: deps/lib/clone/"), "{err}");
    assert!(wt.join("deps/lib/clone/file.txt").is_file());
}
