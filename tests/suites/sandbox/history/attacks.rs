//! The review's confirmed findings about the repository's history, replayed end to end.

use super::*;

/// Attack, main checkout: `.git` is writable there, and host git reads
/// `info/grafts` and `shallow` from it. A graft giving the program's
/// unrelated commit the user's tip as parent made a rewrite of `main` pass
/// for a fast-forward; a `shallow` file hiding a made-up parent made an
/// incomplete history pass for a complete one (the repository then names
/// an object it does not have). Neither moves `main`, and neither file is
/// left behind to cut the user's history short.
#[test]
fn planted_grafts_or_shallow_do_not_move_the_users_branch() {
    let Some(env) = setup() else { return };
    let proj = env.home().join("proj");
    history_repo(&env, &proj);
    let graft = r#"
M=$(git rev-parse HEAD); E=$(git hash-object -t tree /dev/null)
T=$(git commit-tree -m evil $E)
echo "$T $M" > .git/info/grafts 2>&1 && echo WROTE-GRAFTS
git update-ref refs/heads/main $T
sleep 2
true
"#;
    let shallow = r#"
M=$(git rev-parse HEAD); E=$(git hash-object -t tree /dev/null)
F=1111111111111111111111111111111111111111
G=$(printf 'tree %s\nparent %s\nauthor a <a@b> 0 +0000\ncommitter a <a@b> 0 +0000\n\ng\n' $E $F | git hash-object -t commit -w --stdin)
echo $G > .git/shallow && echo WROTE-SHALLOW
C=$(git commit-tree -p $M -p $G -m merge $E)
git update-ref refs/heads/main $C
sleep 2
true
"#;
    for (what, script) in [("shallow", shallow), ("grafts", graft)] {
        let before = survivors(&env, &proj);
        let out = sandbox(&env, &proj, &["bash", "-c", script]);
        let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(out.status.success(), "{what}: {said}");
        let main = env.output(&[
            "git",
            "-C",
            proj.to_str().unwrap(),
            "--shallow-file",
            "",
            "-c",
            "advice.graftFileDeprecated=false",
            "log",
            "--format=%s",
            "main",
        ]);
        let fsck = env.output(&[
            "git",
            "-C",
            proj.to_str().unwrap(),
            "--shallow-file",
            "",
            "fsck",
            "--connectivity-only",
        ]);
        assert!(
            !proj.join(".git/info/grafts").exists() && !proj.join(".git/shallow").exists(),
            "{what}: left in the repository (main: {}; fsck: {}{}): {said}",
            text(&main.stdout),
            text(&fsck.stdout),
            text(&fsck.stderr)
        );
        assert_eq!(
            survivors(&env, &proj),
            before,
            "{what}: main moved: {}; fsck: {}{}; {said}",
            text(&main.stdout),
            text(&fsck.stdout),
            text(&fsck.stderr)
        );
        assert!(!said.contains("WROTE-GRAFTS"), "{what}: {said}");
        assert!(
            fsck.status.success(),
            "{what}: git fsck: {}{}",
            text(&fsck.stdout),
            text(&fsck.stderr)
        );
    }
}

/// Attack: the program replaces its worktree's HEAD (in the writable admin
/// dir) with a FIFO, which nerdr and host git (`git worktree list`) read
/// at the end: `nerdr sandbox` must not hang once the program is gone. It
/// says so; the program's work stays in its private copy.
#[test]
fn a_fifo_for_head_does_not_hang_the_end_of_the_run() {
    let Some(env) = setup() else { return };
    let home = env.home().to_path_buf();
    let proj = home.join("proj");
    linked_worktree(&env, &proj);
    let work = r#"git commit -q --allow-empty -m before-fifo
H="$(git rev-parse --git-dir)/HEAD"; rm -f "$H" && mkfifo "$H" && echo PLANTED"#;
    let mut c = env.user_cmd(&[
        "timeout", "-s", "KILL", "60", "nerdr", "sandbox", "--", "sh", "-c", work,
    ]);
    c.current_dir(home.join("linked"));
    let out = crate::support::sysenv::output_of(&mut c);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(said.contains("PLANTED"), "the FIFO was not planted: {said}");
    assert!(out.status.success(), "nerdr sandbox hung or failed: {said}");
    assert!(said.contains("HEAD is not a file"), "{said}");
    let left = private_copies_dir(&home);
    assert_eq!(private_copies(&left), 1, "the private copy is gone: {said}");
}

/// Attack: what is said on stderr at the end names what the program made
/// (a link in its object store named with terminal escapes, a branch so
/// named): escaped, not sent raw to the person's terminal.
#[test]
fn names_with_terminal_escapes_are_shown_escaped() {
    let Some(env) = setup() else { return };
    let home = env.home().to_path_buf();
    let proj = home.join("proj");
    linked_worktree(&env, &proj);
    let work = r#"git commit -q --allow-empty -m x
C="$(git rev-parse --git-common-dir)"; G="$(git rev-parse --git-dir)"
N="$(printf '\033]0;pwned\007x')"
ln -s /nowhere "$C/objects/$N" && echo PLANTED"#;
    let out = sandbox(&env, &home.join("linked"), &["sh", "-c", work]);
    let stderr = text(&out.stderr);
    assert!(text(&out.stdout).contains("PLANTED"), "{stderr}");
    assert!(stderr.contains("pwned"), "nothing said of it: {stderr}");
    assert!(
        !stderr.contains('\u{1b}') && !stderr.contains('\u{7}'),
        "raw escapes on the terminal: {stderr:?}"
    );
}

/// Attack: an earlier run left its worktree's HEAD naming
/// `refs/heads/../../..`: the next run watches the branch it starts on in
/// its private copy, and must not make (or watch) a folder outside it.
#[test]
fn a_branch_name_climbing_out_of_the_private_copy_makes_nothing_outside() {
    let Some(env) = setup() else { return };
    let home = env.home().to_path_buf();
    let proj = home.join("proj");
    linked_worktree(&env, &proj);
    let planted = home.join("made-by-nerdr");
    let head = proj.join(".git/worktrees/linked/HEAD");
    let climb = format!(
        "ref: refs/heads/{}{}/x\n",
        "../".repeat(30),
        planted.display().to_string().trim_start_matches('/')
    );
    env.write_user_file(head.strip_prefix(&home).unwrap().to_str().unwrap(), &climb);
    let out = sandbox(&env, &home.join("linked"), &["true"]);
    assert!(
        !planted.exists(),
        "{} made outside the private copy: {}",
        planted.display(),
        text(&out.stderr)
    );
}

/// Attack, while the program runs: its worktree's HEAD replaced by a FIFO
/// (a link to `/dev/zero` works the same way, and would eat the host's
/// memory), then its branch moved by writing the ref. Host git bringing
/// the branch home must not read that HEAD (`git worktree list` did, and
/// waited): the commit comes home while the program runs.
#[test]
fn a_fifo_for_head_does_not_stop_the_branch_coming_home_while_running() {
    let Some(env) = setup() else { return };
    let home = env.home().to_path_buf();
    let proj = home.join("proj");
    linked_worktree(&env, &proj);
    let work = r#"G="$(git rev-parse --git-dir)"; R="$(git rev-parse --git-common-dir)/refs/heads/nerdr"
C=$(git commit-tree -p HEAD -m after-fifo "$(git rev-parse 'HEAD^{tree}')")
rm -f "$G/HEAD" && mkfifo "$G/HEAD" && echo "$C" > "$R/t1.lock" && mv "$R/t1.lock" "$R/t1"
exec sleep 60"#;
    assert_t1_comes_home_while_running(&env, &proj, work, "after-fifo");
}

/// Attack, main checkout: the other worktrees' admin dirs are in its
/// writable `.git`. Pointing a tab's worktree at the user's `main` would
/// have that tab's next commit (an unsandboxed agent's, or the user's)
/// move `main`. They are read-only inside.
#[test]
fn a_main_checkout_run_cannot_switch_another_worktree() {
    let Some(env) = setup() else { return };
    let home = env.home().to_path_buf();
    let proj = home.join("proj");
    linked_worktree(&env, &proj);
    let head = proj.join(".git/worktrees/linked/HEAD");
    let before = std::fs::read_to_string(&head).unwrap();
    let work = "echo 'ref: refs/heads/main' > .git/worktrees/linked/HEAD && echo SWITCHED; mkdir .git/worktrees/planted && echo PLANTED; true";
    let out = sandbox(&env, &proj, &["sh", "-c", work]);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{said}");
    assert_eq!(std::fs::read_to_string(&head).unwrap(), before, "{said}");
    assert!(
        !said.contains("SWITCHED") && !said.contains("PLANTED"),
        "{said}"
    );
    assert!(!proj.join(".git/worktrees/planted").exists());
}
