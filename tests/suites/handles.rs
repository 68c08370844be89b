//! Tab handles with the real binary: a tab taken by a unique id prefix,
//! its number in its session and its name on `read` and `send`; a handle
//! several tabs answer to is an error listing them; `nerdr rename`, and a
//! name that outlives the core.

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use crate::support::local::Local;

const SHELL_AGENT: &str = "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n";

/// The shortest prefix (two characters at least) of `id` no other id has.
fn unique_prefix(id: &str, others: &[&str]) -> String {
    (2..=id.len())
        .map(|n| &id[..n])
        .find(|p| others.iter().all(|o| !o.starts_with(p)))
        .expect("ids differ")
        .to_string()
}

fn names(l: &Local, extra: &[&str]) -> Vec<(String, String)> {
    l.tabs_json(extra)
        .iter()
        .map(|t| {
            (
                t["id"].as_str().unwrap().to_string(),
                t["name"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_tab_is_taken_by_id_prefix_number_and_name() {
    let l = Local::started();
    l.write_config(SHELL_AGENT);
    let first = l.ok(&["agent", "sh"]);
    let second = l.ok(&["agent", "sh"]);
    assert_eq!(
        names(&l, &[]),
        [
            (first.clone(), "sh-1".into()),
            (second.clone(), "sh-2".into())
        ]
    );
    let table = l.ok(&["tabs"]);
    assert!(table.lines().next().unwrap().contains("NAME"), "{table}");
    assert!(table.contains("sh-2"), "{table}");

    // By prefix: send, then read.
    let prefix = unique_prefix(&first, &[&second]);
    l.ok(&["send", &prefix, "echo by-prefix-$((40+2))"]);
    assert!(l
        .wait_screen(&first, "by-prefix-42")
        .contains("by-prefix-42"));
    assert!(l.ok(&["read", &prefix]).contains("by-prefix-42"));

    // By number in the session (as the window's status line has it).
    l.ok(&["send", "2", "echo by-number-$((1+1))"]);
    l.wait_screen(&second, "by-number-2");
    assert!(l.ok(&["read", "2"]).contains("by-number-2"));
    assert!(!l.ok(&["read", &first]).contains("by-number-2"));

    // By name.
    l.ok(&["send", "sh-1", "echo by-name-$((3*3))"]);
    l.wait_screen(&first, "by-name-9");
    assert!(l.ok(&["read", "sh-1"]).contains("by-name-9"));

    // Nothing: the same "no tab" as an unknown id.
    for handle in ["3", "sh-9", "zz"] {
        let err = l.fails(&["read", handle]);
        assert!(
            err.contains(&format!("no tab `{handle}`")),
            "{handle}: {err}"
        );
    }
}

/// From outside every session, a number or a name two sessions have names
/// two tabs: an error that lists both, and nothing is typed anywhere.
#[test]
fn a_handle_of_several_tabs_is_an_error_listing_them() {
    let l = Local::started();
    l.write_config(SHELL_AGENT);
    let other = l.path("other");
    let outside = l.path("outside");
    std::fs::create_dir(&other).unwrap();
    std::fs::create_dir(&outside).unwrap();
    let here = l.ok(&["agent", "sh"]);
    let there = l.ok(&["agent", "sh", "--folder", other.to_str().unwrap()]);
    for handle in ["1", "sh-1"] {
        let out = l
            .cmd(&["send", handle, "echo should-not-run"])
            .current_dir(&outside)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("`{handle}` names 2 tabs")), "{err}");
        assert!(err.contains(&here) && err.contains(&there), "{err}");
    }
    for tab in [&here, &there] {
        assert!(!l.ok(&["read", tab]).contains("should-not-run\n"));
    }
}

#[test]
fn a_renamed_tab_answers_to_its_name_after_a_core_restart() {
    let mut l = Local::started();
    l.write_config(SHELL_AGENT);
    let first = l.ok(&["agent", "sh"]);
    let second = l.ok(&["agent", "sh"]);

    // Names are plain words, unique in the session.
    let err = l.fails(&["rename", "1", "sh-2"]);
    assert!(
        err.contains("another tab of this session is named `sh-2`"),
        "{err}"
    );
    let err = l.fails(&["rename", "1", "two words"]);
    assert!(err.contains("a tab name is a plain word"), "{err}");
    let err = l.fails(&["rename", "nosuch", "review"]);
    assert!(err.contains("no tab `nosuch`"), "{err}");

    l.ok(&["rename", &unique_prefix(&first, &[&second]), "review"]);
    l.ok(&["send", "review", "echo renamed-$((7*6))"]);
    l.wait_screen(&first, "renamed-42");
    assert_eq!(
        names(&l, &[]),
        [
            (first.clone(), "review".into()),
            (second.clone(), "sh-2".into())
        ]
    );

    // The core dies without a word; the holder's record is from the
    // tab's start, the name is from after it.
    kill(Pid::from_raw(l.core_pid() as i32), Signal::SIGKILL).unwrap();
    l.stop_core();
    l.start_core();
    assert_eq!(
        names(&l, &[]),
        [
            (first.clone(), "review".into()),
            (second.clone(), "sh-2".into())
        ]
    );
    assert!(l.ok(&["read", "review"]).contains("renamed-42"));
    // A new tab takes the lowest free default.
    let third = l.ok(&["agent", "sh"]);
    assert_eq!(names(&l, &[])[2], (third, "sh-1".into()));
}

/// The trial's case: a closed tab's number is not passed on. `send 2`
/// after closing tab 1 still reaches `sh-2`; `tabs` shows each number
/// (`#`, `number`), across a core restart, and a new tab takes the lowest
/// free one.
#[test]
fn numbers_stay_with_their_tabs_after_a_close() {
    let mut l = Local::started();
    l.write_config(SHELL_AGENT);
    let first = l.ok(&["agent", "sh"]);
    let second = l.ok(&["agent", "sh"]);
    let third = l.ok(&["agent", "sh"]);
    let numbers = |l: &Local| -> Vec<(String, u64)> {
        l.tabs_json(&[])
            .iter()
            .map(|t| {
                let id = t["id"].as_str().unwrap().to_string();
                (id, t["number"].as_u64().expect("a number"))
            })
            .collect()
    };
    l.ok(&["close", &first]);
    assert_eq!(numbers(&l), [(second.clone(), 2), (third.clone(), 3)]);

    l.ok(&["send", "2", "echo to-two-$((1+1))"]);
    l.wait_screen(&second, "to-two-2");
    assert!(!l.ok(&["read", &third]).contains("to-two-2"));
    let err = l.fails(&["read", "1"]);
    assert!(err.contains("no tab `1`"), "{err}");

    let table = l.ok(&["tabs"]);
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().take(3).collect())
        .collect();
    assert_eq!(rows[0], ["#", "TAB", "NAME"], "{table}");
    assert_eq!(rows[1], ["2", second.as_str(), "sh-2"], "{table}");
    assert_eq!(rows[2], ["3", third.as_str(), "sh-3"], "{table}");

    kill(Pid::from_raw(l.core_pid() as i32), Signal::SIGKILL).unwrap();
    l.stop_core();
    l.start_core();
    assert_eq!(numbers(&l), [(second.clone(), 2), (third.clone(), 3)]);
    let fourth = l.ok(&["agent", "sh"]);
    assert_eq!(numbers(&l), [(fourth, 1), (second, 2), (third, 3)]);
}

/// `nerdr agent --name`: the tab starts with that name; a name `rename`
/// would refuse is refused with `rename`'s words, and no tab is started.
#[test]
fn an_agent_starts_with_the_name_given() {
    let l = Local::started();
    l.write_config(SHELL_AGENT);
    let id = l.ok(&["agent", "sh", "--name", "helper"]);
    assert_eq!(names(&l, &[]), [(id.clone(), "helper".into())]);
    l.ok(&["send", "helper", "echo named-$((6*7))"]);
    l.wait_screen(&id, "named-42");

    let err = l.fails(&["agent", "sh", "--name", "helper"]);
    assert!(
        err.contains("another tab of this session is named `helper`"),
        "{err}"
    );
    let err = l.fails(&["agent", "sh", "--name", "two words"]);
    assert!(err.contains("a tab name is a plain word"), "{err}");
    assert_eq!(names(&l, &[]).len(), 1);
    // The default again without --name.
    let next = l.ok(&["agent", "sh"]);
    assert_eq!(names(&l, &[])[1], (next, "sh-1".into()));
}

/// A mistyped tab name or agent gets the one it most likely meant, and
/// nothing runs.
#[test]
fn a_typo_gets_a_did_you_mean() {
    let l = Local::started();
    l.write_config(SHELL_AGENT);
    let id = l.ok(&["agent", "sh"]);
    let err = l.fails(&["send", "sh1", "echo should-not-run"]);
    assert!(err.contains("no tab `sh1`; did you mean `sh-1`?"), "{err}");
    assert!(!l.ok(&["read", &id]).contains("should-not-run\n"));
    let err = l.fails(&["agent", "shh"]);
    assert!(
        err.contains("unknown agent \"shh\" (did you mean `sh`?)"),
        "{err}"
    );
    assert_eq!(names(&l, &[]).len(), 1);
}
