//! The attach window driven as a person would, through tmux: pick an agent
//! (several keys in one write), type, detach, re-attach to the same screen; full-screen programs; history
//! in scroll mode; Ctrl-C and the prefix; quit; refusal inside a tab.

use std::time::Duration;

use crate::support::local::{pid_alive, Local};
use crate::support::tmux::have_tmux;
use crate::support::tmux::Tmux;
use crate::support::wait_until;

const CONFIG: &str = "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n";

/// The pane area (all rows but the status line).
fn pane(screen: &[String]) -> Vec<String> {
    screen[..screen.len() - 1].to_vec()
}

#[test]
fn pick_an_agent_type_detach_and_reattach_to_the_same_screen() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config(CONFIG);
    let t = Tmux::start(&l, 100, 30, "nerdr");
    // A session with no tabs offers the picker; sh is a configured agent.
    let s = t.wait_text("Start an agent");
    let n = s
        .iter()
        .find(|l| l.contains(". sh"))
        .expect("sh in the picker")
        .trim()
        .trim_start_matches('>')
        .trim()
        .split('.')
        .next()
        .unwrap()
        .to_string();
    t.keys(&[&n, "Enter"]);
    t.wait("the status line to show tab 1", |s: &[String]| {
        s.last().is_some_and(|l| l.contains("1:sh-1*"))
    });
    t.text("printf '\\033[1;31mred\\033[0m and plain %s\\n' $((6*7))");
    t.keys(&["Enter"]);
    t.wait_text("red and plain 42");
    // The prompt after the line may come a frame later: wait until the
    // screen holds still before taking it as the one to come back to.
    let mut before = t.screen_styled();
    for _ in 0..30 {
        std::thread::sleep(Duration::from_millis(300));
        let now = t.screen_styled();
        if now == before {
            break;
        }
        before = now;
    }
    t.keys(&["C-b", "d"]);
    t.wait_text("[detached]");
    t.wait_text("EXITED=0");
    t.respawn(&l, "nerdr");
    t.wait_text("red and plain 42");
    wait_until("the same screen", Duration::from_secs(10), || {
        t.screen_styled() == before
    });
    assert!(l.tabs_json(&[])[0]["state"] == "running");
}

/// Issue 17: a program on the alternate screen when the window detached
/// leaves it after a re-attach: the window shows the main screen behind
/// it, as `nerdr read` does. (It kept the alternate screen's lines: the
/// redraw it was sent had no main screen behind them.)
#[test]
fn leaving_the_alternate_screen_after_a_reattach_shows_the_main_screen() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config(CONFIG);
    let tab = l.ok(&["agent", "sh"]);
    let t = Tmux::start(&l, 100, 30, "nerdr");
    t.wait("tab 1 shown", |s: &[String]| {
        s.last().is_some_and(|l| l.contains("1:sh-1*"))
    });
    t.text("echo main-$((6*7))");
    t.keys(&["Enter"]);
    t.wait_text("main-42");
    // Draws on the alternate screen, waits for a key, leaves it.
    t.text(concat!(
        "printf '\\033[?1049h\\033[2J\\033[5;3Halt-%s' $((5*5)); read -rsn1; ",
        "printf '\\033[?1049l'; echo back-$((2*2))"
    ));
    t.keys(&["Enter"]);
    t.wait_text("alt-25");
    t.keys(&["C-b", "d"]);
    t.wait_text("EXITED=0");
    t.respawn(&l, "nerdr");
    t.wait_text("alt-25");
    t.keys(&["x"]);
    let s = t.wait_text("back-4");
    let read = l.ok(&["read", &tab]);
    assert!(
        read.contains("main-42") && !read.contains("alt-25"),
        "nerdr read:\n{read}"
    );
    let shown = pane(&s).join("\n");
    assert!(
        shown.contains("main-42") && !shown.contains("alt-25"),
        "the window:\n{shown}"
    );
}

/// The picker's entry for `agent` on `screen`: its number, and whether it
/// is the selected one (`>`).
fn entry(screen: &[String], agent: &str) -> Option<(String, bool)> {
    let line = screen
        .iter()
        .find(|l| l.trim_end().ends_with(&format!(". {agent}")))?;
    let line = line.trim();
    let selected = line.starts_with('>');
    let n = line.trim_start_matches('>').trim().split('.').next()?;
    Some((n.to_string(), selected))
}

#[test]
fn the_picker_takes_every_key_of_one_write_and_enter_starts() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    // `reader` reports the first line it reads: an Enter that leaked from
    // the picker would show as `got:[]`.
    l.write_config(concat!(
        "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n",
        "[agents.reader]\ncommand = [\"bash\", \"--norc\", \"--noprofile\", \"-c\", ",
        "'read -r l; echo \"got:[$l]\"; exec bash --norc --noprofile']\n",
    ));
    let t = Tmux::start(&l, 100, 40, "nerdr");
    let s = t.wait_text("Start an agent");
    assert!(s.len() > 4);
    let first = s
        .iter()
        .find_map(|l| l.trim().strip_prefix("> 1. "))
        .unwrap_or_else(|| panic!("entry 1 selected:\n{}", s.join("\n")))
        .trim()
        .to_string();
    // Down Down in one write moves twice.
    t.keys(&["Down", "Down"]);
    let s = t.wait("entry 3 selected", |s: &[String]| {
        s.iter().any(|l| l.trim().starts_with("> 3. "))
    });
    assert!(
        s.iter().any(|l| l.trim() == format!("1. {first}")),
        "{}",
        s.join("\n")
    );
    // A number selects and starts nothing; with Enter in the same write it
    // starts that entry, and the Enter stays the picker's.
    let (n, _) = entry(&s, "reader").expect("reader in the picker");
    t.text(&n);
    let s = t.wait("reader selected", |s: &[String]| {
        entry(s, "reader").is_some_and(|(_, sel)| sel)
    });
    assert!(s.iter().any(|l| l.contains("Start an agent")));
    assert!(l.tabs_json(&[]).is_empty(), "a number alone started a tab");
    t.keys(&["Up", &n, "Enter"]);
    t.wait(
        "the status line to show the reader tab",
        |s: &[String]| s.last().is_some_and(|l| l.contains("1:reader-1*")),
    );
    t.text("typed");
    t.keys(&["Enter"]);
    let s = t.wait_text("got:[typed]");
    assert!(
        !s.iter().any(|l| l.contains("got:[]")),
        "the picker's Enter reached the agent:\n{}",
        s.join("\n")
    );
    assert_eq!(l.tabs_json(&[]).len(), 1);
}

#[test]
fn the_answer_written_with_its_command_answers_it() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config(CONFIG);
    l.ok(&["agent", "sh"]);
    l.ok(&["agent", "sh"]);
    let t = Tmux::start(&l, 80, 24, "nerdr");
    t.wait("the status line to show two tabs", |s: &[String]| {
        s.last().is_some_and(|l| l.contains("2:sh"))
    });
    // The `y` comes in the same write as `C-b x`: it answers the question
    // and is not typed into the shell.
    t.keys(&["C-b", "x", "y"]);
    wait_until("one tab left", Duration::from_secs(10), || {
        l.tabs_json(&[]).len() == 1
    });
    // The tab left keeps its number, as tmux's windows do.
    t.wait("the status line to show one tab", |s: &[String]| {
        s.last()
            .is_some_and(|l| l.contains("2:sh-2*") && !l.contains("1:sh"))
    });
    let s = t.screen();
    assert!(
        !s.iter().any(|l| l.contains("close tab")),
        "{}",
        s.join("\n")
    );
}

#[test]
fn full_screen_programs_survive_reattach_and_resize() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config(CONFIG);
    let lines: String = (1..=300).map(|i| format!("row {i}\n")).collect();
    std::fs::write(l.work().join("file.txt"), lines).unwrap();
    let tab = l.ok(&["agent", "sh"]);
    l.ok(&["send", &tab, "less file.txt"]);
    let t = Tmux::start(&l, 90, 25, "nerdr");
    // The pane is one row short of the window: less shows 23 rows + prompt
    // (which may come a paced frame after the rows).
    let s = t.wait("less's first page and prompt", |s: &[String]| {
        s.len() > 24 && s[22] == "row 23" && (s[23].starts_with(':') || s[23].contains("file.txt"))
    });
    assert_eq!(s[0], "row 1");
    assert!(s[24].contains("1:sh-1*"), "status line: {}", s[24]);
    t.keys(&["C-b", "d"]);
    t.wait_text("EXITED=0");
    t.respawn(&l, "nerdr");
    let again = t.wait_text("row 23");
    assert_eq!(pane(&again)[..23], pane(&s)[..23]);
    // Smaller window: less redraws for the new size.
    t.resize(70, 15);
    // The shrink first moves the old screen up (the cursor's line stays in
    // view), then less redraws from its top: wait for the redraw.
    let small = t.wait("less redrawn at 14 rows", |s: &[String]| {
        s.len() == 15 && s[13].starts_with(':') && s[0] == "row 1"
    });
    assert_eq!(small[0], "row 1");
    assert_eq!(small[12], "row 13");
    // Paging works through the window, and q leaves less.
    t.keys(&["Space"]);
    t.wait_text("row 14");
    t.keys(&["q"]);
    t.wait("the shell prompt", |s: &[String]| {
        s.iter().any(|l| l.starts_with("bash"))
    });
}

#[test]
fn output_made_while_detached_is_all_in_scroll_mode() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config(CONFIG);
    let tab = l.ok(&["agent", "sh"]);
    l.ok(&[
        "send",
        &tab,
        "for i in $(seq 1 10000); do echo \"numbered $i\"; done; echo ALL-DONE",
    ]);
    l.wait_screen(&tab, "ALL-DONE");
    let t = Tmux::start(&l, 80, 20, "nerdr");
    t.wait_text("ALL-DONE");
    t.keys(&["C-b", "["]);
    t.wait_text("scroll ");
    t.keys(&["g"]);
    // "numbered 1" is also in "numbered 10000", on screen before `g` acts.
    let top = t.wait("the first lines at the top", |s: &[String]| {
        s.iter().any(|l| l == "numbered 1")
    });
    let i = top.iter().position(|l| l == "numbered 1").unwrap();
    assert_eq!(top[i + 1], "numbered 2", "{}", top.join("\n"));
    t.text("/");
    t.text("numbered 5000");
    t.keys(&["Enter"]);
    let found = t.wait("line 5000 at the top", |s: &[String]| {
        s[0] == "numbered 5000"
    });
    assert_eq!(found[1], "numbered 5001");
    t.keys(&["G"]);
    t.wait_text("ALL-DONE");
    t.keys(&["q"]);
    t.wait("the status line to show tab 1", |s: &[String]| {
        s.last().is_some_and(|l| l.contains("1:sh-1*"))
    });
}

#[test]
fn ctrl_c_and_the_prefix_reach_the_program_and_quit_stops_it() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config(CONFIG);
    let tab = l.ok(&["agent", "sh"]);
    let pid = l.tabs_json(&[])[0]["pid"].as_u64().unwrap() as u32;
    let t = Tmux::start(&l, 80, 24, "nerdr");
    t.wait("the status line to show tab 1", |s: &[String]| {
        s.last().is_some_and(|l| l.contains("1:sh-1*"))
    });
    t.text("sleep 1000");
    t.keys(&["Enter"]);
    wait_until("sleep to run", Duration::from_secs(10), || {
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
            .is_ok_and(|c| !c.trim().is_empty())
    });
    t.keys(&["C-c"]);
    // Interrupted by SIGINT: status 130.
    t.text("echo status-$?");
    t.keys(&["Enter"]);
    t.wait_text("status-130");
    // Prefix twice sends the prefix itself: cat -v shows it as ^B.
    t.text("cat -v");
    t.keys(&["Enter"]);
    t.keys(&["C-b", "C-b"]);
    t.keys(&["Enter"]);
    t.wait_text("^B");
    t.keys(&["C-c"]);
    // Quit asks, then stops the session's programs.
    t.keys(&["C-b", "q"]);
    t.wait_text("quit: stop this session's only tab? y/n");
    t.keys(&["y"]);
    t.wait_text("[quit: stopped 1 tab]");
    assert!(!pid_alive(pid), "the agent survived quit");
    assert!(l.tabs_json(&[]).is_empty());
    let _ = tab;
}

#[test]
fn attaching_from_inside_a_tab_is_refused() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config(CONFIG);
    let tab = l.ok(&["agent", "sh"]);
    l.ok(&[
        "send",
        &tab,
        "\"$NERDR_BIN\" 2>&1 | head -3; env -u NERDR_TAB \"$NERDR_BIN\" 2>&1 | head -3",
    ]);
    let screen = l.wait_screen(&tab, "runs inside tab");
    assert!(
        screen.contains("refusing to attach from inside a nerdr tab"),
        "{screen}"
    );
}

#[test]
fn a_terminal_opens_in_the_tab_folder_in_its_own_tab() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config(CONFIG);
    let agent = l.ok(&["agent", "sh"]);
    let t = Tmux::start(&l, 80, 24, "SHELL=/bin/bash nerdr");
    t.wait("tab 1 shown", |s: &[String]| {
        s.last().is_some_and(|l| l.contains("1:sh-1*"))
    });
    t.keys(&["C-b", "t"]);
    t.wait("the terminal's tab shown", |s: &[String]| {
        s.last().is_some_and(|l| l.contains("2:terminal-1*"))
    });
    t.text("pwd; echo term-$((3*3))");
    t.keys(&["Enter"]);
    t.wait_text("term-9");
    let tabs = l.tabs_json(&[]);
    let term = tabs
        .iter()
        .find(|t| t["kind"] == "terminal")
        .expect("a terminal tab");
    assert_eq!(term["parent"], agent.as_str());
    let screen = t.screen();
    assert!(
        screen
            .iter()
            .any(|s| *s == l.work().canonicalize().unwrap().display().to_string()),
        "{}",
        screen.join("\n")
    );
    // Back to the agent with prefix 1, and the terminal closes like a tab.
    t.keys(&["C-b", "1"]);
    t.wait("tab 1 shown again", |s: &[String]| {
        s.last().is_some_and(|l| l.contains("1:sh-1*"))
    });
    l.ok(&["close", term["id"].as_str().unwrap()]);
    t.wait("one tab left", |s: &[String]| {
        s.last().is_some_and(|l| !l.contains("2:"))
    });
}

#[test]
fn the_window_announces_approvals_and_f3_answers_them() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config(CONFIG);
    l.repo_with(
        &[(
            ".nerdr.toml",
            "[worktree]\nsetup = \"echo ran > setup-ran.txt\"\n",
        )],
        "setup",
    );
    let tab = l.ok(&["agent", "sh"]);
    let t = Tmux::start(&l, 100, 24, "nerdr");
    t.wait("the approval note", |s: &[String]| {
        s.last()
            .is_some_and(|l| l.contains("1 waiting for your approval"))
    });
    t.keys(&["C-b", "F3"]);
    t.wait_text("echo ran > setup-ran.txt");
    t.keys(&["y"]);
    let wt = l.worktree_of(&tab);
    wait_until("the approved setup to run", Duration::from_secs(10), || {
        wt.join("setup-ran.txt").exists()
    });
    t.wait("the note to go", |s: &[String]| {
        s.last()
            .is_some_and(|l| !l.contains("waiting for your approval"))
    });
}
