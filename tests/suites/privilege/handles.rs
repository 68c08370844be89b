//! Handles from a sandboxed caller: a tab it may not see reads as "no such
//! tab" by its prefix, number or name as by its id; its own tab answers to
//! all of them.

use super::*;

#[test]
fn a_hidden_tab_is_no_tab_by_any_handle() {
    let Some(s) = Setup::new() else { return };
    let plain = s.ok(&["agent", "sh"]);
    let boxed = s.ok(&["agent", "boxed"]);
    let term = s.ok(&["terminal", &plain]);
    s.screen_shows(&boxed, "$");
    // A process holding the sandboxed tab's secret is a sandboxed caller.
    let as_boxed = |args: &[&str]| s.as_tab(&boxed, args);
    let prefix = |id: &str| {
        let others: Vec<&str> = [&plain, &boxed, &term]
            .into_iter()
            .map(String::as_str)
            .filter(|o| *o != id)
            .collect();
        (2..=id.len())
            .map(|n| id[..n].to_string())
            .find(|p| others.iter().all(|o| !o.starts_with(p.as_str())))
            .unwrap()
    };
    let names: Vec<String> = s
        .tabs()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["sh-1", "boxed-1", "terminal-1"]);

    // The unsandboxed agent (#1) and the terminal (#3), by every handle.
    for handle in [
        plain.clone(),
        prefix(&plain),
        "1".into(),
        "sh-1".into(),
        term.clone(),
        prefix(&term),
        "3".into(),
        "terminal-1".into(),
    ] {
        let out = as_boxed(&["read", &handle]);
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{handle}: {out:?}");
        assert_eq!(
            said.trim(),
            format!("nerdr: no tab `{handle}` (see `nerdr tabs --all` for the tabs that exist)"),
            "{handle}"
        );
    }
    // Its own tab, by every handle.
    for handle in [prefix(&boxed), "2".into(), "boxed-1".into()] {
        let out = as_boxed(&["read", &handle]);
        assert!(out.status.success(), "{handle}: {out:?}");
    }
}

/// A sandboxed agent cannot take the name another agent's next tab would
/// get by default (or a closed one had), so a message the person sends to
/// `sh-2` never reaches it instead of the unsandboxed `sh` started next.
#[test]
fn a_sandboxed_agent_cannot_squat_another_agents_default_name() {
    let Some(s) = Setup::new() else { return };
    let plain = s.ok(&["agent", "sh"]);
    let boxed = s.ok(&["agent", "boxed"]);
    s.screen_shows(&boxed, "$");
    let as_boxed = |args: &[&str]| s.as_tab(&boxed, args);
    // The names an unsandboxed agent's or a terminal's tab gets by default
    // (and any of the form, its own agent's too).
    for name in ["sh-2", "sh-1", "terminal-1", "claude-1", "boxed-7"] {
        let out = as_boxed(&["rename", &boxed, name]);
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{name}: {out:?}");
        assert!(said.contains("default name"), "{name}: {said}");
    }
    // A plain word it may take.
    let out = as_boxed(&["rename", &boxed, "helper"]);
    assert!(out.status.success(), "{out:?}");
    // The next sh is sh-2, and sh-2 names it.
    let next = s.ok(&["agent", "sh"]);
    let names: Vec<(String, String)> = s
        .tabs()
        .iter()
        .map(|t| {
            (
                t["id"].as_str().unwrap().to_string(),
                t["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(names.contains(&(next.clone(), "sh-2".into())), "{names:?}");
    assert!(names.contains(&(plain.clone(), "sh-1".into())), "{names:?}");
    s.ok(&["send", "sh-2", "echo reached-$((40+2))"]);
    s.screen_shows(&next, "reached-42");
    // The person may still name any tab so.
    s.ok(&["rename", &boxed, "sh-9"]);
}

/// A sandboxed caller's `--folder` naming another session does not move
/// its handles there: `boxed-1` and `1` stay its own session's, and the
/// other session's sandboxed `boxed-1` is neither read nor renamed.
#[test]
fn a_sandboxed_callers_folder_does_not_reach_another_sessions_handles() {
    let Some(s) = Setup::new() else { return };
    let _plain = s.ok(&["agent", "sh"]);
    let boxed = s.ok(&["agent", "boxed"]);
    let elsewhere = s.env.home().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    crate::support::sysenv::run_ok(std::process::Command::new("chown").args([
        &format!("{}:{}", s.env.uid(), s.env.gid()),
        elsewhere.to_str().unwrap(),
    ]));
    let other = s.ok(&["agent", "boxed", "--folder", elsewhere.to_str().unwrap()]);
    s.screen_shows(&boxed, "$");
    s.ok(&["send", &other, "echo other-$((6*7))"]);
    s.screen_shows(&other, "other-42");
    let as_boxed = |args: &[&str]| s.as_tab(&boxed, args);
    let dir = elsewhere.to_str().unwrap();
    for args in [
        vec!["--folder", dir, "read", "boxed-1"],
        vec!["read", "--folder", dir, "boxed-1"],
    ] {
        let out = as_boxed(&args);
        let screen = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{args:?}: {out:?}");
        assert!(
            !screen.contains("other-42"),
            "{args:?}: read the other session's tab"
        );
    }
    // Tab 1 there is the other session's sandboxed agent; here, the
    // unsandboxed sh: hidden.
    let out = as_boxed(&["--folder", dir, "read", "1"]);
    assert!(!out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no tab `1`"),
        "{out:?}"
    );
    let out = as_boxed(&["--folder", dir, "rename", "boxed-1", "mine"]);
    assert!(out.status.success(), "{out:?}");
    let names: Vec<(String, String)> =
        serde_json::from_str::<Vec<serde_json::Value>>(&s.ok(&["tabs", "--all", "--json"]))
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["id"].as_str().unwrap().to_string(),
                    t["name"].as_str().unwrap().to_string(),
                )
            })
            .collect();
    assert!(names.contains(&(boxed.clone(), "mine".into())), "{names:?}");
    assert!(
        names.contains(&(other.clone(), "boxed-1".into())),
        "{names:?}"
    );
}

/// A sandboxed caller's new agent cannot be placed in another session
/// through a link it made in its own folder, nor a `..` path: the folder
/// is placed as it resolves, and refused.
#[test]
fn a_sandboxed_callers_link_to_another_session_is_that_session() {
    let Some(s) = Setup::new() else { return };
    let boxed = s.ok(&["agent", "boxed"]);
    let elsewhere = s.env.home().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    crate::support::sysenv::run_ok(std::process::Command::new("chown").args([
        &format!("{}:{}", s.env.uid(), s.env.gid()),
        elsewhere.to_str().unwrap(),
    ]));
    let other = s.ok(&["agent", "boxed", "--folder", elsewhere.to_str().unwrap()]);
    s.screen_shows(&boxed, "$");
    let link = s.work.join("link");
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    let as_boxed = |args: &[&str]| s.as_tab(&boxed, args);
    let dotdot = s.work.join("../elsewhere");
    for folder in [link.to_str().unwrap(), dotdot.to_str().unwrap()] {
        let out = as_boxed(&["agent", "boxed", "--folder", folder]);
        assert!(!out.status.success(), "{folder}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("own session's folder"),
            "{folder}: {out:?}"
        );
    }
    let all: Vec<serde_json::Value> =
        serde_json::from_str(&s.ok(&["tabs", "--all", "--json"])).unwrap();
    assert_eq!(all.len(), 2, "{all:?}");
    let _ = other;
}
