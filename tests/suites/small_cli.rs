//! The small commands as a person or a script meets them: `nerdr tabs`
//! lined up with a long state on a terminal and in a pipe, `nerdr read
//! --lines 0`, `nerdr close` saying what it closed, and `nerdr restart`
//! asking before it stops a running tab (or refusing without `--force`
//! when nobody can be asked).

use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use crate::support::local::{pid_alive, Local};
use crate::support::tmux::have_tmux;
use crate::support::tmux::Tmux;
use crate::support::wait_until;

const SH: &str = "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n";

fn pid_of(l: &Local, tab: &str) -> Option<u64> {
    l.tabs_json(&[])
        .into_iter()
        .find(|t| t["id"] == tab)
        .and_then(|t| t["pid"].as_u64())
}

/// Every row's cells start where the header's do (the columns before the
/// folder, which is last).
fn assert_aligned(rows: &[String], what: &str) {
    let header = rows
        .iter()
        .position(|r| r.starts_with("# TAB ") || r.starts_with(" # TAB "))
        .unwrap_or_else(|| panic!("{what}: no header:\n{}", rows.join("\n")));
    let head = &rows[header];
    let pid_end = head.find("PID").unwrap() + 3;
    let tab_at = head.find("TAB").unwrap();
    let starts: Vec<usize> = ["TAB", "NAME", "AGENT", "STATE"]
        .iter()
        .map(|h| head.find(h).unwrap())
        .collect();
    let table: Vec<&String> = rows[header + 1..]
        .iter()
        .take_while(|r| r.len() > tab_at + 8 && r.as_bytes()[tab_at + 8] == b' ')
        .collect();
    assert!(table.len() >= 2, "{what}:\n{}", rows.join("\n"));
    for r in table {
        for &at in &starts {
            let b = r.as_bytes();
            assert!(
                b[at - 1] == b' ' && b[at] != b' ',
                "{what}: a cell does not start at column {at}:\n{}",
                rows.join("\n")
            );
        }
        let pid = r[..pid_end.min(r.len())].rsplit(' ').next().unwrap();
        assert!(
            pid == "-" || pid.parse::<u32>().is_ok(),
            "{what}: PID column off ({pid:?}):\n{}",
            rows.join("\n")
        );
    }
}

#[test]
fn the_tabs_table_lines_up_with_a_resumable_tab_in_a_pipe_and_on_a_terminal() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config(SH);
    // A claude stand-in that takes a session id: killed, its tab is
    // `exited, resumable`, the widest state.
    let path = l.stand_in(
        "claude",
        "#!/bin/sh\ncase \"$1\" in --help) echo '  --session-id <uuid>  Use a specific session ID'; \
         exit 0;; esac\nexec sleep 1000\n",
    );
    let out = l
        .cmd(&["agent", "claude"])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let claude = String::from_utf8_lossy(&out.stdout).trim().to_string();
    l.ok(&["agent", "sh"]);
    let sh = l.ok(&["agent", "sh"]);
    l.ok(&["rename", &sh, "a-rather-long-name"]);
    let pid = pid_of(&l, &claude).expect("claude's pid");
    kill(Pid::from_raw(pid as i32), Signal::SIGKILL).unwrap();
    wait_until("claude to exit", Duration::from_secs(10), || {
        !pid_alive(pid as u32)
    });
    wait_until("the tab resumable", Duration::from_secs(10), || {
        l.ok(&["tabs"]).contains("exited, resumable")
    });
    let piped: Vec<String> = l.ok(&["tabs"]).lines().map(str::to_string).collect();
    assert_aligned(&piped, "in a pipe");
    let t = Tmux::start(&l, 120, 20, "nerdr tabs");
    let screen = t.wait_text("EXITED=0");
    assert!(
        screen.iter().any(|r| r.contains("exited, resumable")),
        "{}",
        screen.join("\n")
    );
    assert_aligned(&screen, "on a terminal");
}

#[test]
fn read_lines_0_prints_nothing() {
    let l = Local::started();
    l.write_config(SH);
    let tab = l.ok(&["agent", "sh"]);
    l.ok(&["send", &tab, "echo hi-$((3*4))"]);
    l.wait_screen(&tab, "hi-12");
    let out = l.run(&["read", &tab, "--lines", "0"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{out:?}");
    let out = l.run(&["read", &tab, "--lines", "1"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.ends_with('\n') && text.lines().count() == 1,
        "{text:?}"
    );
}

#[test]
fn close_says_which_tab_it_closed() {
    let l = Local::started();
    l.write_config(SH);
    let tab = l.ok(&["agent", "sh"]);
    let out = l.run(&["close", "sh-1"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        format!("closed tab {tab} (sh-1)")
    );
    assert!(l.tabs_json(&[]).is_empty());
}

#[test]
fn restart_asks_before_stopping_a_running_tab_and_a_script_needs_force() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config(SH);
    let tab = l.ok(&["agent", "sh"]);
    let pid = pid_of(&l, &tab).expect("a pid");
    // No terminal to ask on: refused, naming the flag; nothing stopped.
    let err = l.fails(&["restart", "1"]);
    assert!(
        err.contains("is running") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(pid_of(&l, &tab), Some(pid));
    // On a terminal: asked; no keeps it.
    let t = Tmux::start(&l, 100, 20, "nerdr restart sh-1");
    t.wait_text("is running: stop its program and start it again? [y/N]");
    t.keys(&["n", "Enter"]);
    t.wait_text("not restarted");
    t.wait_text("EXITED=1");
    assert_eq!(pid_of(&l, &tab), Some(pid));
    // Yes restarts it, in the same tab.
    t.respawn(&l, "nerdr restart sh-1");
    t.wait_text("[y/N]");
    t.keys(&["y", "Enter"]);
    t.wait_text("EXITED=0");
    wait_until("a new program", Duration::from_secs(10), || {
        pid_of(&l, &tab).is_some_and(|p| p != pid)
    });
    // And --force restarts it without asking.
    let before = pid_of(&l, &tab);
    assert_eq!(l.ok(&["restart", "--force", "1"]), tab);
    wait_until("another new program", Duration::from_secs(10), || {
        pid_of(&l, &tab).is_some_and(|p| Some(p) != before)
    });
}

/// As tmux: a window is not drawn into a file, nor on a terminal that
/// cannot move its cursor (either would resize the session's tabs for
/// nothing).
#[test]
fn a_window_refuses_an_output_that_is_not_a_terminal_and_term_dumb() {
    let l = Local::started();
    l.write_config(SH);
    let tab = l.ok(&["agent", "sh"]);
    let err = l.fails(&[]);
    assert!(err.contains("standard output is not a terminal"), "{err}");
    if !have_tmux() {
        return;
    }
    let t = Tmux::start(&l, 100, 30, "TERM=dumb nerdr");
    let s = t.wait_text("EXITED=1");
    assert!(
        s.iter().any(|r| r.contains("TERM is dumb")),
        "{}",
        s.join("\n")
    );
    assert_eq!(l.tabs_json(&[]).len(), 1, "{tab}");
}
