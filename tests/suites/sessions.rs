//! Sessions by repository, with the real binary: a session found from a
//! subfolder and from inside a tab's worktree (from the user's shell, from
//! the tab itself and by the window); `--folder` in every position; tab
//! numbers and names counted in the caller's session; `nerdr sessions`;
//! `nerdr attach NAME` in tmux; internal commands hidden from `--help`.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::git::git;
use crate::support::local::Local;
use crate::support::tmux::have_tmux;
use crate::support::tmux::Tmux;

const SHELL_AGENT: &str = "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n";

/// `nerdr ARGS` run in `dir`.
fn run_in(l: &Local, dir: &Path, args: &[&str]) -> Output {
    l.cmd(args).current_dir(dir).output().unwrap()
}

/// [`run_in`] that must succeed: its trimmed stdout.
fn ok_in(l: &Local, dir: &Path, args: &[&str]) -> String {
    let out = run_in(l, dir, args);
    assert!(
        out.status.success(),
        "nerdr {args:?} in {}: {}\ncore log:\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr),
        l.core_log()
    );
    String::from_utf8_lossy(&out.stdout).trim_end().to_string()
}

/// [`run_in`] that must fail: its stderr.
fn fails_in(l: &Local, dir: &Path, args: &[&str]) -> String {
    let out = run_in(l, dir, args);
    assert!(!out.status.success(), "nerdr {args:?} succeeded: {out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The ids `nerdr tabs --json` lists, run in `dir` with `extra`.
fn ids_in(l: &Local, dir: &Path, extra: &[&str]) -> Vec<String> {
    let text = ok_in(l, dir, &[&["tabs", "--json"], extra].concat());
    let tabs: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    tabs.iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

/// The work folder as a repository with one commit and a subfolder.
fn repo(l: &Local) -> PathBuf {
    let r = l.work();
    std::fs::create_dir_all(r.join("src/deep")).unwrap();
    std::fs::write(r.join("src/deep/file.txt"), "hello\n").unwrap();
    git(&r, &["init", "-q"]);
    git(&r, &["add", "."]);
    git(&r, &["commit", "-q", "-m", "first"]);
    r.canonicalize().unwrap()
}

fn dir(l: &Local, rel: &str) -> PathBuf {
    let d = l.path(rel);
    std::fs::create_dir_all(&d).unwrap();
    d.canonicalize().unwrap()
}

#[test]
fn a_session_is_found_from_a_subfolder_and_from_a_tabs_worktree() {
    let l = Local::started();
    l.write_config(SHELL_AGENT);
    let r = repo(&l);
    let first = l.ok(&["agent", "sh"]);
    let tabs = l.tabs_json(&[]);
    let wt = PathBuf::from(tabs[0]["worktree"].as_str().expect("a worktree"));
    assert!(
        !wt.starts_with(&r),
        "the worktree is outside the repository"
    );

    // From a subfolder, however deep: the repository's session.
    let deep = r.join("src/deep");
    assert_eq!(ids_in(&l, &deep, &[]), [first.as_str()]);
    // A new agent started there joins it (no session of its own).
    let out = run_in(&l, &deep, &["agent", "sh"]);
    assert!(out.status.success(), "{out:?}");
    let second = String::from_utf8_lossy(&out.stdout).trim().to_string();
    // And says so: the tab works at the repository, not where it was asked.
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("(the nearest session around it), so the tab joined that session"),
        "{said}"
    );
    assert_eq!(l.tabs_json(&[]).len(), 2);
    assert_eq!(l.tabs_json(&["--all"]).len(), 2, "one session only");
    // From the tab's worktree, and a folder inside it.
    assert_eq!(ids_in(&l, &wt, &[]), [first.clone(), second.clone()]);
    assert_eq!(
        ids_in(&l, &wt.join("src/deep"), &[]),
        [first.clone(), second.clone()]
    );
    // Numbers count there too.
    l.ok(&["send", &second, "echo second-$((20+22))"]);
    l.wait_screen(&second, "second-42");
    assert!(ok_in(&l, &wt.join("src"), &["read", "2"]).contains("second-42"));

    // Inside the tab (the program works in its worktree): its session.
    let out = l.path("inside.json");
    l.ok(&[
        "send",
        &first,
        &format!(
            "\"$NERDR_BIN\" tabs --json > {} && echo inside-$?",
            out.display()
        ),
    ]);
    l.wait_screen(&first, "inside-0");
    let inside: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let inside: Vec<&str> = inside.iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(inside, [first.as_str(), second.as_str()]);

    // A folder that only shares the prefix is in no session.
    let beside = PathBuf::from(format!("{}x", r.display()));
    std::fs::create_dir(&beside).unwrap();
    assert!(ids_in(&l, &beside, &[]).is_empty());

    // The window: `cd src/deep && nerdr` shows the repository's tabs.
    if !have_tmux() {
        return;
    }
    let t = Tmux::start(&l, 100, 24, "sh -c 'cd src/deep && exec nerdr'");
    t.wait(
        "the session's two tabs on the status line",
        |s: &[String]| {
            s.last()
                .is_some_and(|l| l.contains("1:sh") && l.contains("2:sh"))
        },
    );
    t.text("echo typed-from-a-subfolder");
    t.keys(&["Enter"]);
    l.wait_screen(&first, "typed-from-a-subfolder");
}

#[test]
fn folder_works_in_every_position() {
    let l = Local::started();
    l.write_config(SHELL_AGENT);
    let other = dir(&l, "other");
    let o = other.to_str().unwrap();
    let here = l.ok(&["agent", "sh"]);
    // `agent`: before the command and after it.
    let a = l.ok(&["--folder", o, "agent", "sh"]);
    let b = l.ok(&["agent", "sh", "--folder", o]);
    // `tabs`: both positions list the other session, not this one.
    let before = l.ok(&["--folder", o, "tabs"]);
    let after = l.ok(&["tabs", "--folder", o]);
    assert_eq!(before, after);
    assert_eq!(
        ids_in(&l, &l.work(), &["--folder", o]),
        [a.clone(), b.clone()]
    );
    let both: Vec<serde_json::Value> =
        serde_json::from_str(&l.ok(&["--folder", o, "tabs", "--json"])).unwrap();
    assert_eq!(both.len(), 2);
    assert_eq!(ids_in(&l, &l.work(), &[]), [here.as_str()]);
    // `read` (and `send`): the folder scopes the tab's number.
    l.ok(&["send", "--folder", o, "2", "echo other-two-$((1+1))"]);
    l.wait_screen(&b, "other-two-2");
    assert!(l.ok(&["read", "--folder", o, "2"]).contains("other-two-2"));
    assert!(l.ok(&["--folder", o, "read", "2"]).contains("other-two-2"));
    assert!(!l.ok(&["read", "1"]).contains("other-two-2"), "here's #1");
    // A folder that does not exist is named; a command with no use for
    // one says so.
    let err = l.fails(&["read", "--folder", "/no/such/dir", "1"]);
    assert!(err.contains("/no/such/dir does not exist"), "{err}");
    let err = l.fails(&["--folder", o, "approvals"]);
    assert!(
        err.contains("approval queue is one for every session"),
        "{err}"
    );
}

#[test]
fn numbers_and_names_count_in_the_callers_session() {
    let l = Local::started();
    l.write_config(SHELL_AGENT);
    let other = dir(&l, "other");
    let outside = dir(&l, "outside");
    let here = l.ok(&["agent", "sh"]);
    let there = l.ok(&["agent", "sh", "--folder", other.to_str().unwrap()]);
    // Each session has a `1` and an `sh-1`: from each, its own.
    l.ok(&["send", "1", "echo i-am-here"]);
    ok_in(&l, &other, &["send", "sh-1", "echo i-am-there"]);
    l.wait_screen(&here, "i-am-here");
    l.wait_screen(&there, "i-am-there");
    assert!(!l.ok(&["read", &here]).contains("i-am-there"));
    assert!(!l.ok(&["read", &there]).contains("i-am-here"));
    assert!(l.ok(&["read", "sh-1"]).contains("i-am-here"));
    assert!(ok_in(&l, &other, &["read", "1"]).contains("i-am-there"));
    l.ok(&["rename", "1", "review"]);
    ok_in(&l, &other, &["rename", "1", "review"]);
    assert!(l.ok(&["read", "review"]).contains("i-am-here"));
    assert!(ok_in(&l, &other, &["read", "review"]).contains("i-am-there"));
    // A name this session does not have is no tab here, whoever has it
    // elsewhere (from a session, only its own names count).
    ok_in(&l, &other, &["rename", "review", "only-there"]);
    let err = l.fails(&["read", "only-there"]);
    assert!(err.contains("no tab `only-there`"), "{err}");
    // An id prefix works from anywhere: a third folder, in no session.
    let prefix = (2..=there.len())
        .map(|n| &there[..n])
        .find(|p| !here.starts_with(p))
        .unwrap();
    assert!(ok_in(&l, &outside, &["read", prefix]).contains("i-am-there"));
    assert!(l.ok(&["read", prefix]).contains("i-am-there"));
    // From a folder in no session a number two sessions have names both.
    let err = fails_in(&l, &outside, &["read", "1"]);
    assert!(err.contains("`1` names 2 tabs"), "{err}");
}

#[test]
fn sessions_lists_each_session_with_its_counts() {
    let l = Local::started();
    l.write_config(SHELL_AGENT);
    assert!(l.ok(&["sessions"]).starts_with("no sessions"));
    let a = dir(&l, "a/proj");
    let b = dir(&l, "b/proj");
    for _ in 0..2 {
        l.ok(&["agent", "sh", "--folder", a.to_str().unwrap()]);
    }
    let gone = l.ok(&["agent", "sh", "--folder", b.to_str().unwrap()]);
    l.ok(&["send", &gone, "exit 3"]);
    crate::support::wait_until(
        "the tab to exit",
        std::time::Duration::from_secs(10),
        || {
            l.tabs_json(&["--all"])
                .iter()
                .any(|t| t["id"] == gone.as_str() && t["state"] == "exited")
        },
    );
    let list: Vec<serde_json::Value> =
        serde_json::from_str(&l.ok(&["sessions", "--json"])).unwrap();
    let row = |s: &serde_json::Value| {
        (
            s["name"].as_str().unwrap().to_string(),
            PathBuf::from(s["folder"].as_str().unwrap()),
            s["tabs"].as_u64().unwrap(),
            s["running"].as_u64().unwrap(),
        )
    };
    let rows: Vec<_> = list.iter().map(row).collect();
    assert_eq!(
        rows,
        [
            ("proj".to_string(), a.clone(), 2, 2),
            ("proj-2".to_string(), b.clone(), 1, 0),
        ]
    );
    // The table: one aligned line each, the states in words.
    let table = l.ok(&["sessions"]);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "{table}");
    assert!(lines[0].starts_with("NAME"), "{table}");
    let at = lines[0].find("FOLDER").unwrap();
    for line in &lines[1..] {
        assert_eq!(line.find('/'), Some(at), "{table}");
    }
    assert!(lines[1].contains("2 running"), "{table}");
    assert!(lines[2].contains("0 running, 1 not running"), "{table}");
    assert!(!table.contains('\x1b'), "no colour off a terminal");
}

#[test]
fn attach_takes_a_session_by_name_from_anywhere() {
    let l = Local::started();
    l.write_config(SHELL_AGENT);
    let other = dir(&l, "elsewhere/other");
    l.ok(&["agent", "sh"]);
    let there = l.ok(&["agent", "sh", "--folder", other.to_str().unwrap()]);
    let err = l.fails(&["attach", "nosuch"]);
    assert!(
        err.contains("no session `nosuch`")
            && err.contains(&format!("other ({})", other.display())),
        "{err}"
    );
    if !have_tmux() {
        return;
    }
    // From the work folder (a session of its own), by name.
    let t = Tmux::start(&l, 100, 24, "nerdr attach other");
    t.wait("the other session's tab", |s: &[String]| {
        s.last()
            .is_some_and(|l| l.contains("1:sh") && !l.contains("2:"))
    });
    t.text("echo typed-into-other");
    t.keys(&["Enter"]);
    l.wait_screen(&there, "typed-into-other");
    t.keys(&["C-b", "d"]);
    t.wait_text("EXITED=0");
}

#[test]
fn help_lists_no_internal_commands() {
    let l = Local::empty();
    let help = l.ok(&["--help"]);
    let commands: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(commands.contains(&"sessions"), "{help}");
    assert!(commands.contains(&"attach"), "{help}");
    for hidden in ["pane", "hook", "core", "holder"] {
        assert!(!commands.contains(&hidden), "{hidden} listed:\n{help}");
        // Still there for whoever runs it.
        l.ok(&[hidden, "--help"]);
    }
}
