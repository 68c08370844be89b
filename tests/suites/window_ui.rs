//! The window's status line, prompts and pickers, driven through tmux as
//! a person would: the overflow marks of a crowded line, tab names and
//! the rename prompt, the key hint of a stopped tab, a config error cut at
//! a word, keys written with the command that opens an overlay, and the
//! session picker.

use std::time::Duration;

use crate::support::local::Local;
use crate::support::tmux::have_tmux;
use crate::support::tmux::Tmux;
use crate::support::wait_until;

const SH: &str = "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n";

/// `sh`, and `reader`, which reports the first line it reads: a key that
/// leaked past an overlay shows as `got:[...]` with it in.
const SH_AND_READER: &str = concat!(
    "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n",
    "[agents.reader]\ncommand = [\"bash\", \"--norc\", \"--noprofile\", \"-c\", ",
    "'read -r l; echo \"got:[$l]\"; exec bash --norc --noprofile']\n",
);

/// The status line (the window's last row).
fn status(s: &[String]) -> String {
    s.last().cloned().unwrap_or_default()
}

/// The status line's entries before the note.
fn entries(s: &[String]) -> Vec<String> {
    let line = status(s);
    let tabs = line.split(" | ").next().unwrap_or("").to_string();
    tabs.split_whitespace().map(str::to_string).collect()
}

fn has_entry(s: &[String], entry: &str) -> bool {
    entries(s).iter().any(|e| e == entry)
}

/// The tab `id`'s field `key` as `nerdr tabs --json` has it.
fn field(l: &Local, id: &str, key: &str) -> serde_json::Value {
    l.tabs_json(&[])
        .into_iter()
        .find(|t| t["id"] == id)
        .map(|t| t[key].clone())
        .unwrap_or(serde_json::Value::Null)
}

#[test]
fn thirteen_tabs_in_80_columns_keep_the_shown_one_and_mark_the_hidden() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config(SH);
    let ids: Vec<String> = (0..13).map(|_| l.ok(&["agent", "sh"])).collect();
    let t = Tmux::start(&l, 80, 24, "nerdr");
    let s = t.wait("tab 1 shown", |s: &[String]| has_entry(s, "1:sh-1*"));
    // The hidden tabs are counted on the right, and the help stays.
    let e = entries(&s);
    let right = e.last().cloned().unwrap_or_default();
    assert!(
        right.starts_with('>') && !e.iter().any(|x| x.starts_with("13:")),
        "{}",
        status(&s)
    );
    let hidden: usize = right[1..].parse().expect("a count");
    assert_eq!(hidden + e.len() - 1, 13, "{}", status(&s));
    assert!(status(&s).contains("C-b ? help"), "{}", status(&s));
    // A bell in a hidden tab shows on the mark that hides it.
    l.ok(&["send", &ids[12], "printf 'ring\\a'"]);
    let s = t.wait("the bell on the right mark", |s: &[String]| {
        entries(s)
            .last()
            .is_some_and(|m| m.starts_with('>') && m.ends_with('^'))
    });
    assert!(has_entry(&s, "1:sh-1*"), "{}", status(&s));
    // The last tab shown: the line moves with it; the first are counted
    // on the left.
    t.keys(&["C-b", "p"]);
    let s = t.wait("tab 13 shown", |s: &[String]| has_entry(s, "13:sh-13*"));
    let e = entries(&s);
    assert!(
        e[0].starts_with('<') && !has_entry(&s, "1:sh-1"),
        "{}",
        status(&s)
    );
    assert!(!e.last().unwrap().starts_with('>'), "{}", status(&s));
    // Through the middle: marks on both sides.
    for _ in 0..6 {
        t.keys(&["C-b", "p"]);
    }
    let s = t.wait("tab 7 shown", |s: &[String]| has_entry(s, "7:sh-7*"));
    let e = entries(&s);
    assert!(
        e[0].starts_with('<') && e.last().unwrap().starts_with('>'),
        "{}",
        status(&s)
    );
}

#[test]
fn comma_renames_the_shown_tab_and_the_cores_refusal_shows() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config(SH);
    let first = l.ok(&["agent", "sh"]);
    l.ok(&["agent", "sh"]);
    let t = Tmux::start(&l, 100, 24, "nerdr");
    t.wait("tab 1 shown by name", |s: &[String]| {
        has_entry(s, "1:sh-1*")
    });
    t.keys(&["C-b", ","]);
    t.wait_text("new name for tab 1 (sh-1):");
    t.text("review");
    t.keys(&["Enter"]);
    t.wait("the new name", |s: &[String]| has_entry(s, "1:review*"));
    assert_eq!(field(&l, &first, "name"), "review");
    // A name the session has: the core's refusal shows, the name stays.
    t.keys(&["C-b", ",", "s", "h", "-", "2", "Enter"]);
    let s = t.wait("the refusal", |s: &[String]| status(s).contains("sh-2"));
    assert!(has_entry(&s, "1:review*"), "{}", status(&s));
    assert!(!status(&s).contains("new name for"), "{}", status(&s));
    assert_eq!(field(&l, &first, "name"), "review");
    // Escape cancels, and what was typed reaches no program.
    t.keys(&["C-b", ","]);
    t.wait_text("new name for tab 1 (review):");
    t.text("zzz");
    t.keys(&["Escape"]);
    t.wait("the prompt gone", |s: &[String]| has_entry(s, "1:review*"));
    t.text("echo still-$((6*7))");
    t.keys(&["Enter"]);
    let s = t.wait_text("still-42");
    assert!(!s.iter().any(|x| x.contains("zzz")), "{}", s.join("\n"));
    assert_eq!(field(&l, &first, "name"), "review");
}

#[test]
fn a_stopped_tab_says_which_keys_bring_it_back_and_r_restarts_it() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config(SH);
    let tab = l.ok(&["agent", "sh"]);
    let t = Tmux::start(&l, 100, 24, "nerdr");
    t.wait("tab 1 shown", |s: &[String]| has_entry(s, "1:sh-1*"));
    t.text("exit 3");
    t.keys(&["Enter"]);
    let hint = "sh-1 exited(3): C-b R restarts, C-b x closes";
    t.wait_text(hint);
    // Typing at it says so again instead of vanishing.
    t.text("ls");
    t.keys(&["C-b", "r"]);
    t.text("x");
    t.wait_text(hint);
    // A running tab is restarted only after a yes.
    t.keys(&["C-b", "R"]);
    wait_until("the tab running again", Duration::from_secs(10), || {
        field(&l, &tab, "state") == "running"
    });
    t.wait("the hint gone", |s: &[String]| {
        !status(s).contains("exited")
    });
    let pid = field(&l, &tab, "pid");
    t.keys(&["C-b", "R"]);
    t.wait_text("restart tab 1 (sh-1): stop its program and start it again? y/n");
    t.keys(&["n"]);
    t.wait("the question gone", |s: &[String]| has_entry(s, "1:sh-1*"));
    assert_eq!(field(&l, &tab, "pid"), pid);
    t.text("echo back-$((2*3))");
    t.keys(&["Enter"]);
    t.wait_text("back-6");
}

#[test]
fn a_config_error_in_the_window_is_cut_at_a_word_and_names_doctor() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config(SH);
    l.ok(&["agent", "sh"]);
    // A key nerdr does not know: the error names it, its file and line.
    l.write_config(&format!("{SH}review_everything_before_it_runs = true\n"));
    let t = Tmux::start(&l, 100, 24, "nerdr");
    let s = t.wait("the config error", |s: &[String]| {
        status(s).contains("config error")
    });
    let line = status(&s);
    assert!(line.contains("config error (see nerdr doctor): "), "{line}");
    assert!(
        line.trim_end().ends_with(" ..."),
        "cut without a mark: {line:?}"
    );
    // The last word shown is a whole word of the error.
    let doctor = l.run(&["doctor"]);
    let full = String::from_utf8_lossy(&doctor.stdout).to_string()
        + &String::from_utf8_lossy(&doctor.stderr);
    let shown = line.trim_end().trim_end_matches(" ...");
    assert!(
        !shown.ends_with("doctor):"),
        "no word of the error shows: {line:?}"
    );
    let last = shown.rsplit(' ').next().unwrap();
    assert!(
        full.split_whitespace().any(|w| w == last),
        "cut mid-word at {last:?}: {line:?}\ndoctor:\n{full}"
    );
}

/// The picker's number for `agent` on `screen`.
fn number(screen: &[String], agent: &str) -> String {
    let line = screen
        .iter()
        .find(|l| l.trim_end().ends_with(&format!(". {agent}")))
        .unwrap_or_else(|| panic!("{agent} in the picker:\n{}", screen.join("\n")));
    let line = line.trim().trim_start_matches('>').trim();
    line.split('.').next().unwrap().to_string()
}

#[test]
fn keys_written_with_the_command_that_opens_an_overlay_reach_it() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config(SH_AND_READER);
    l.ok(&["agent", "reader"]);
    let t = Tmux::start(&l, 100, 40, "nerdr");
    t.wait("tab 1 shown", |s: &[String]| has_entry(s, "1:reader-1*"));
    // Learn the picker's number for sh, then leave it.
    t.keys(&["C-b", "c"]);
    let s = t.wait_text("Start an agent");
    let n = number(&s, "sh");
    t.keys(&["Escape"]);
    t.wait("the picker gone", |s: &[String]| {
        has_entry(s, "1:reader-1*")
    });
    // The command, the number and Enter in one write: the picker opens on
    // the core's reply, and takes them.
    let mut keys = vec!["C-b", "c"];
    keys.extend(n.split("").filter(|d| !d.is_empty()));
    keys.push("Enter");
    t.keys(&keys);
    t.wait("the sh tab started and shown", |s: &[String]| {
        has_entry(s, "2:sh-1*")
    });
    assert_eq!(l.tabs_json(&[]).len(), 2);
    // Scroll mode and its `q` in one write: the `q` leaves it, and is not
    // typed into the reader.
    t.keys(&["C-b", "1"]);
    t.wait("tab 1 shown", |s: &[String]| has_entry(s, "1:reader-1*"));
    t.keys(&["C-b", "[", "q"]);
    t.text("typed");
    t.keys(&["Enter"]);
    let s = t.wait_text("got:[");
    assert!(
        s.iter().any(|x| x.contains("got:[typed]")),
        "keys leaked past the overlay:\n{}",
        s.join("\n")
    );
}

#[test]
fn the_session_picker_switches_the_window_to_another_session() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config(SH);
    let other = l.path("other");
    std::fs::create_dir_all(&other).unwrap();
    let other_s = other.to_str().unwrap();
    l.ok(&["agent", "sh"]);
    let there = l.ok(&["agent", "sh", "--folder", other_s]);
    let t = Tmux::start(&l, 100, 24, "nerdr");
    t.wait("this session's tab", |s: &[String]| has_entry(s, "1:sh-1*"));
    // The picker lists both; this window's session is selected.
    t.keys(&["C-b", "s"]);
    let s = t.wait_text("Switch to a session");
    assert!(
        s.iter()
            .any(|x| x.trim_start().starts_with('>') && x.contains("(this window)")),
        "{}",
        s.join("\n")
    );
    let line = s
        .iter()
        .find(|x| x.contains(other_s))
        .unwrap_or_else(|| panic!("the other session listed:\n{}", s.join("\n")));
    let n = line.trim().trim_start_matches('>').trim();
    let n = n.split('.').next().unwrap().to_string();
    assert!(line.contains("1 tab"), "{line}");
    // Its number and Enter in one write.
    t.keys(&[&n, "Enter"]);
    t.wait("the other session's tab", |s: &[String]| {
        has_entry(s, "1:sh-1*") && !s.iter().any(|x| x.contains("Switch to a session"))
    });
    t.text("echo there-$((5*5)); pwd");
    t.keys(&["Enter"]);
    let s = t.wait_text("there-25");
    assert!(s.iter().any(|x| x.trim() == other_s), "{}", s.join("\n"));
    wait_until(
        "the typing reached the other session's tab",
        Duration::from_secs(10),
        || l.ok(&["read", &there]).contains("there-25"),
    );
}
