//! Issue 19's marks and questions, seen as a person sees them: a tab whose
//! agent handed its work to the person (`nerdr handoff --to-me`) is marked
//! `&` in the window and `handed_to_you` in `nerdr tabs --json`, until
//! `nerdr handoffs --clear`; `nerdr switch` asks before it stops a
//! running agent (on a terminal) or refuses without `--force` (without).

use crate::support::local::Local;
use crate::support::tmux::have_tmux;
use crate::support::tmux::Tmux;

const SH: &str = "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n\
                  [agents.sh2]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n";

/// The status line's entries before the note.
fn entries(s: &[String]) -> Vec<String> {
    let line = s.last().cloned().unwrap_or_default();
    let tabs = line.split(" | ").next().unwrap_or("").to_string();
    tabs.split_whitespace().map(str::to_string).collect()
}

/// Whether `nerdr tabs --json` says tab `id` handed its work to the
/// person (the key is there only when it did).
fn handed(l: &Local, id: &str) -> bool {
    let row = l.tab(id);
    match row.get("handed_to_you") {
        None => false,
        Some(v) => v.as_bool().unwrap_or_else(|| panic!("not a bool: {row}")),
    }
}

#[test]
fn a_handoff_to_the_person_marks_its_tab_until_cleared() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config(SH);
    let first = l.ok(&["agent", "sh"]);
    let second = l.ok(&["agent", "sh"]);
    assert!(!handed(&l, &second));
    let t = Tmux::start(&l, 100, 24, "nerdr");
    t.wait("both tabs", |s: &[String]| {
        entries(s).iter().any(|e| e.starts_with("2:sh-2"))
    });
    l.ok(&[
        "handoff",
        "--to-me",
        "--from",
        &second,
        "the parser is done; the printer is next",
    ]);
    let s = t.wait("the & mark", |s: &[String]| {
        entries(s)
            .iter()
            .any(|e| e.starts_with("2:sh-2") && e.ends_with('&'))
    });
    assert!(
        !entries(&s)
            .iter()
            .any(|e| e.starts_with("1:") && e.contains('&')),
        "{s:?}"
    );
    assert!(handed(&l, &second));
    assert!(!handed(&l, &first));
    // The help lists the mark.
    t.keys(&["C-b", "?"]);
    t.wait_text("& work handed to you");
    t.keys(&["q"]);
    l.ok(&["handoffs", "--clear"]);
    t.wait("the mark gone", |s: &[String]| {
        entries(s)
            .iter()
            .any(|e| e.starts_with("2:sh-2") && !e.contains('&'))
    });
    assert!(!handed(&l, &second));
}

#[test]
fn switch_asks_on_a_terminal_and_refuses_without_one_unless_forced() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config(SH);
    let tab = l.ok(&["agent", "sh"]);
    let pid = l.tab(&tab)["pid"].clone();
    // No terminal: refused, saying how, and nothing stopped.
    let err = l.fails(&["switch", &tab, "sh2", "--no-handoff"]);
    assert!(err.contains("tab 1 (sh-1) runs sh"), "{err}");
    assert!(err.contains("add --force"), "{err}");
    assert_eq!(l.tab(&tab)["pid"], pid);
    assert_eq!(l.tab(&tab)["agent"], "sh");
    // A terminal: asked, naming the tab and both agents; no keeps it.
    let t = Tmux::start(&l, 120, 10, "nerdr switch 1 sh2 --no-handoff");
    t.wait_text("switch tab 1 (sh-1) from sh to sh2? sh is stopped");
    t.text("n");
    t.keys(&["Enter"]);
    t.wait_text("EXITED=1");
    assert!(t.screen().iter().any(|l| l.contains("not switched")));
    assert_eq!(l.tab(&tab)["pid"], pid);
    // Yes switches.
    t.respawn(&l, "nerdr switch 1 sh2 --no-handoff");
    t.wait_text("switch tab 1 (sh-1) from sh to sh2?");
    t.text("y");
    t.keys(&["Enter"]);
    t.wait_text("EXITED=0");
    assert_eq!(l.tab(&tab)["agent"], "sh2");
}

#[test]
fn spinoffs_says_a_closed_parent_is_closed_and_why_its_result_is_kept() {
    let l = Local::started();
    l.write_config(SH);
    l.repo_with(&[("a.txt", "a\n")], "first");
    let parent = l.ok(&["agent", "sh"]);
    let child = l.ok(&["spinoff", "--from", &parent, "echo TASK"]);
    let open = l.ok(&["spinoffs"]);
    assert!(
        open.contains(&format!("{child} from {parent}: sh")),
        "{open}"
    );
    l.ok(&["close", &parent]);
    l.ok(&["report-result", "--for", &child, "THE-RESULT"]);
    let listed = l.ok(&["spinoffs"]);
    assert!(
        listed.contains(&format!("{child} from {parent} (closed): sh")),
        "{listed}"
    );
    assert!(
        listed.contains("result 1 (kept: the parent tab is closed)"),
        "{listed}"
    );
    assert!(!listed.contains("WAITING"), "{listed}");
    let rows: Vec<serde_json::Value> =
        serde_json::from_str(&l.ok(&["spinoffs", "--json"])).unwrap();
    assert_eq!(rows[0]["parent_open"], false, "{rows:?}");
}

/// The recheck's finding: a result kept for a stopped parent whose agent's
/// rules cannot say idle (a custom shell agent) was never typed after
/// `nerdr restart`, which waited for an idle that never comes. Now it goes
/// once the restarted parent's screen has settled, as a first prompt does.
#[test]
fn a_kept_result_reaches_a_restarted_parent_without_idle_rules() {
    let l = Local::started();
    l.write_config(SH);
    l.repo_with(&[("a.txt", "a\n")], "first");
    let parent = l.ok(&["agent", "sh"]);
    l.wait_screen(&parent, "bash");
    let child = l.ok(&["spinoff", "--from", &parent, "echo TASK"]);
    l.ok(&["send", &parent, "exit"]);
    let ended = crate::support::poll(std::time::Duration::from_secs(20), || {
        l.tab(&parent)["state"] != "running"
    });
    assert!(ended, "the parent never ended: {}", l.tab(&parent));
    let kept = l.ok(&[
        "report-result",
        "--for",
        &child,
        "echo KEPT-RESULT-$((40+2))",
    ]);
    assert!(kept.contains("kept"), "{kept}");
    l.ok(&["restart", &parent]);
    // Typed into the shell (which cannot run it: it is a message).
    l.wait_screen(&parent, "KEPT-RESULT-$((40+2))");
}
