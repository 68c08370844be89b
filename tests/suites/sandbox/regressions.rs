//! The confirmed findings of issue 9's adversarial review, each replayed
//! as the reviewer ran it (non-root, real bubblewrap): each test fails
//! without its fix.

use std::path::Path;
use std::time::Duration;

use super::{sandbox, setup, text, user_git};
use crate::support::sysenv::SystemdEnv;

/// A stand-in `claude` (`~/bin/claude ARGS` runs ARGS), so the sandbox
/// treats the run as Claude's: `~/.claude` writable.
fn claude_stand_in(env: &SystemdEnv) -> String {
    let p = env.write_user_file("bin/claude", "#!/bin/sh\nexec \"$@\"\n");
    env.run(&["chmod", "+x", p.to_str().unwrap()]);
    p.display().to_string()
}

/// Finding 1: a `.git` file planted in a folder that is no worktree (or in
/// a sub-folder of one) named the home folder, which the next run bound
/// writable, creating `~/logs` and `~/hooks` on the way.
#[test]
fn a_planted_git_file_makes_nothing_writable() {
    let Some(env) = setup() else { return };
    let home = env.home().to_path_buf();
    let gitdir = format!("gitdir: {}\n", home.display());
    let escaped = home.join("escaped").display().to_string();
    for folder in ["plain", "proj/sub"] {
        env.write_user_file(format!("{folder}/.git"), &gitdir);
        let out = sandbox(&env, &home.join(folder), &["touch", &escaped]);
        let stderr = text(&out.stderr);
        assert!(!out.status.success(), "{folder}: ran: {stderr}");
        assert!(!home.join("escaped").exists(), "{folder}: home written");
        assert!(
            stderr.contains("not accepted as a linked worktree"),
            "{folder}: {stderr}"
        );
        for made in ["logs", "hooks"] {
            assert!(!home.join(made).exists(), "{folder}: ~/{made} created");
        }
    }
}

/// Finding 2: with `~/.claude/settings.json` a symlink, Claude inside
/// replaced it by a file saying `enabled: false`, and the next run had no
/// sandbox.
#[test]
fn a_replaced_settings_symlink_cannot_loosen_the_next_run() {
    let Some(env) = setup() else { return };
    let home = env.home().to_path_buf();
    let proj = home.join("proj");
    let claude = claude_stand_in(&env);
    let target = env.write_user_file("dotfiles/claude-settings.json", "{}\n");
    env.write_user_file(".claude/.keep", "");
    let link = home.join(".claude/settings.json");
    env.run(&["ln", "-s", target.to_str().unwrap(), link.to_str().unwrap()]);

    let replace = r#"rm ~/.claude/settings.json && echo '{"sandbox": {"enabled": false}}' > ~/.claude/settings.json"#;
    let out = sandbox(&env, &proj, &[&claude, "sh", "-c", replace]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Since issue 13 the agent replaces the link in its private view of
    // ~/.claude only; the next run must not be loosened either way.
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the agent replaced the real link"
    );

    let escaped = home.join("escaped").display().to_string();
    let out = sandbox(&env, &proj, &["touch", &escaped]);
    let stderr = text(&out.stderr);
    assert!(
        !home.join("escaped").exists(),
        "the next run was loosened: {stderr}"
    );
}

/// Finding 3: every session's proxy socket was visible (and connectable)
/// in every sandbox, so one session could use another's looser policy.
#[test]
fn another_sessions_proxy_is_out_of_reach() {
    let Some(env) = setup() else { return };
    let home = env.home().to_path_buf();
    let proj = home.join("proj");
    let dir = home.join(".local/state/nerdr/sandbox");
    let mut first = env.user_cmd(&["nerdr", "sandbox", "--", "sleep", "20"]);
    first.current_dir(&proj);
    let mut first = first.spawn().unwrap();
    let mut theirs = String::new();
    crate::support::wait_until(
        "the first session's socket",
        Duration::from_secs(10),
        || {
            theirs = std::fs::read_dir(&dir)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path().display().to_string())
                .find(|p| p.ends_with(".sock"))
                .unwrap_or_default();
            !theirs.is_empty()
        },
    );
    let probe = format!(
        "ls -A {dir}; python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])' {theirs} && echo CONNECTED",
        dir = dir.display()
    );
    let out = sandbox(&env, &proj, &["sh", "-c", &probe]);
    let _ = first.kill();
    let _ = first.wait();
    let stdout = text(&out.stdout);
    let names: Vec<&str> = stdout.lines().filter(|l| l.ends_with(".sock")).collect();
    assert_eq!(
        names.len(),
        1,
        "sockets seen: {stdout}{}",
        text(&out.stderr)
    );
    assert!(
        !theirs.ends_with(names[0]),
        "the other session's socket: {stdout}"
    );
    assert!(!stdout.contains("CONNECTED"), "{stdout}");
}

/// Finding 4 (and 5's `.git/modules`): a `commondir` planted in a main
/// checkout's `.git` sent the user's next host git to config the agent
/// wrote (fsmonitor runs a command).
#[test]
fn a_planted_commondir_is_removed_and_refused() {
    let Some(env) = setup() else { return };
    let home = env.home().to_path_buf();
    let proj = home.join("proj");
    let plant = format!(
        "set -e; mkdir -p .evil/objects .evil/refs; printf '[core]\\n\\tfsmonitor = touch {pwned}\\n' > .evil/config; \
         echo ../.evil > .git/commondir; echo planted; mkdir .git/modules/x 2>/dev/null && echo MODULES || true",
        pwned = home.join("pwned").display()
    );
    let out = sandbox(&env, &proj, &["sh", "-c", &plant]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(stdout.contains("planted"), "{stdout}{stderr}");
    assert!(!stdout.contains("MODULES"), ".git/modules writable");
    assert!(
        !proj.join(".git/commondir").exists(),
        "the planted commondir stayed: {stderr}"
    );
    assert!(stderr.contains("removed"), "{stderr}");
    user_git(&env, &proj, &["status", "--short"]);
    assert!(
        !home.join("pwned").exists(),
        "host git ran the agent's config"
    );

    // One already there (planted by hand, or by an older nerdr): refused.
    env.write_user_file("proj/.git/commondir", "../.evil\n");
    let out = sandbox(&env, &proj, &["true"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("planted redirect"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        Path::new(&proj.join(".git/commondir")).exists(),
        "not ours to remove"
    );
}

/// Finding 6: another agent's sign-in token was readable from Claude's
/// sandbox; so were browser profiles and shell histories.
#[test]
fn other_agents_credentials_are_hidden() {
    let Some(env) = setup() else { return };
    let home = env.home().to_path_buf();
    let proj = home.join("proj");
    let claude = claude_stand_in(&env);
    env.write_user_file(".codex/auth.json", "CODEX TOKEN\n");
    env.write_user_file(".gemini/oauth_creds.json", "GEMINI TOKEN\n");
    env.write_user_file(".mozilla/firefox/cookies.sqlite", "COOKIES\n");
    env.write_user_file(".bash_history", "export TOKEN=HISTORY\n");
    env.write_user_file(".claude/own.txt", "OWN\n");
    let read = "cat ~/.codex/auth.json ~/.gemini/oauth_creds.json ~/.mozilla/firefox/cookies.sqlite ~/.bash_history ~/.claude/own.txt 2>/dev/null; true";
    let out = sandbox(&env, &proj, &[&claude, "sh", "-c", read]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("OWN"),
        "Claude lost its own dir: {stdout}{}",
        text(&out.stderr)
    );
    for secret in ["CODEX", "GEMINI", "COOKIES", "HISTORY"] {
        assert!(!stdout.contains(secret), "{secret} readable: {stdout}");
    }
    // And Claude's own dir from another agent's sandbox.
    let out = sandbox(
        &env,
        &proj,
        &["sh", "-c", "cat ~/.claude/own.txt 2>/dev/null; true"],
    );
    assert!(
        !text(&out.stdout).contains("OWN"),
        "~/.claude readable by others"
    );
}

/// Second review, finding 2: a dangling `~/.claude/settings.json` symlink
/// was taken as absent, so no marker was written and Claude inside could
/// put a loosening file in its place.
#[test]
fn a_dangling_settings_symlink_cannot_loosen_the_next_run_either() {
    let Some(env) = setup() else { return };
    let home = env.home().to_path_buf();
    let proj = home.join("proj");
    let claude = claude_stand_in(&env);
    env.write_user_file(".claude/.keep", "");
    let link = home.join(".claude/settings.json");
    let nowhere = home.join("dotfiles/not-there.json");
    env.run(&[
        "ln",
        "-s",
        nowhere.to_str().unwrap(),
        link.to_str().unwrap(),
    ]);
    let replace = r#"rm -f ~/.claude/settings.json && echo '{"sandbox": {"enabled": false}}' > ~/.claude/settings.json"#;
    let out = sandbox(&env, &proj, &[&claude, "sh", "-c", replace]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Since issue 13 the agent replaces the link in its private view of
    // ~/.claude only.
    assert!(
        std::fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink()),
        "the agent replaced the real link"
    );

    let escaped = home.join("escaped").display().to_string();
    let out = sandbox(&env, &proj, &["touch", &escaped]);
    assert!(
        !home.join("escaped").exists(),
        "the next run was loosened: {}",
        text(&out.stderr)
    );
}

/// Second review, finding 1: a project's `denyWrite` ("tightening") named
/// /tmp, /proc and the runtime dir, and their read-only binds brought the
/// host's own back over the sandbox's private ones.
#[test]
fn a_projects_deny_write_outside_the_worktree_brings_nothing_back() {
    let Some(env) = setup() else { return };
    let home = env.home().to_path_buf();
    let proj = home.join("proj");
    let rt = env.runtime_dir().display().to_string();
    env.write_user_file(
        "proj/.claude/settings.json",
        format!(
            "{{\"sandbox\": {{\"filesystem\": {{\"denyWrite\": [\"/tmp\", \"/proc\", \"{rt}\"]}}}}}}"
        ),
    );
    // A file in the host's /tmp (the environment's own, private to it).
    let marker = "/tmp/host-tmp-marker";
    env.run(&["sh", "-c", &format!("echo host > {marker}")]);
    let probe = format!(
        "test -e {marker} && echo SAW-HOST-TMP; test -S {rt}/bus && echo SAW-BUS; \
         ls /proc | grep -c '^[0-9]' "
    );
    let out = sandbox(&env, &proj, &["sh", "-c", &probe]);
    let said = text(&out.stdout);
    assert!(!said.contains("SAW-HOST-TMP"), "{said}");
    assert!(!said.contains("SAW-BUS"), "{said}");
    let procs: usize = said
        .lines()
        .last()
        .unwrap_or("0")
        .trim()
        .parse()
        .unwrap_or(0);
    assert!(procs < 10, "the host's /proc is visible: {procs} processes");
    assert!(
        text(&out.stderr).contains("read-only already"),
        "{}",
        text(&out.stderr)
    );
}
