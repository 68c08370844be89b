//! Adversarial review of issue 19 (`nerdr spinoff`, `report-result`,
//! `handoff`, `switch`), with the real binary against a hand-started core
//! (`Local`) and tabs in a bubblewrap sandbox of their own (`tab_ops`).
//! Each test asserts the safe behaviour. Findings, since fixed: a switch
//! dropped the tab's line of starters, so a tab a sandboxed author started
//! was no longer held as that author (F4); a result kept for a stopped
//! parent was delivered by its spinoff's record, not by where it was
//! written, so a sandboxed agent's result reached an unsandboxed parent
//! without the user's approval, and so did the person's report of a
//! switched spinoff's last words (taken as the person's); control characters in a spinoff's task or
//! result were typed into the other agent as keys (^U, then a command);
//! `report-result` and the client's requests had no bound of their own;
//! a sandboxed agent's `nerdr send` into another sandboxed tab typed keys
//! (the recheck's finding).

use std::time::Duration;

use crate::support::git::git;
use crate::support::local::Local;
use crate::support::poll;
use crate::support::tab_ops::{boxed_config, bwrap_missing, new_tab, op, repo, BASH};

/// A commit in `tab`'s worktree (a review needs one).
fn commit_in(l: &Local, tab: &str, line: &str) {
    let wt = l.worktree_of(tab);
    std::fs::write(wt.join("file.txt"), format!("hello\n{line}\n")).unwrap();
    git(&wt, &["commit", "-q", "-am", line]);
}

/// The tab the person spins off from `parent` with agent `agent` and task
/// `task`, once its shell has run the task (as a command line it cannot
/// parse) and is back at its prompt.
fn spun_off(l: &Local, parent: &str, agent: &str, task: &str) -> String {
    let child = l.ok(&["spinoff", "--from", parent, "--agent", agent, task]);
    let ran = poll(Duration::from_secs(60), || {
        let screen = l.ok(&["read", &child]);
        screen.contains("report-result")
            && screen
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .is_some_and(|l| l.trim_end().ends_with(['$', '#']))
    });
    assert!(ran, "the task never ran: {}", l.ok(&["read", &child]));
    child
}

/// Tab `tab` switched by the person to agent `to`, with no handoff, once
/// the new agent runs.
fn switched(l: &Local, tab: &str, to: &str) {
    l.ok(&["switch", "--force", tab, to, "--no-handoff"]);
    let running = poll(Duration::from_secs(30), || {
        let row = l.tab(tab);
        row["agent"] == to && row["state"] == "running"
    });
    assert!(running, "tab {tab} never ran {to}: {}", l.tab(tab));
    l.wait_screen(tab, "bash");
}

/// F4 through switch: a sandboxed author A starts a helper H (held as A:
/// it may not type into A's reviewer R); the person switches H to another
/// sandboxed agent. Safe: H is still held as A.
#[test]
fn rev19_a_switch_keeps_the_tabs_line_of_starters() {
    if bwrap_missing() {
        return;
    }
    let l = Local::started();
    repo(&l);
    boxed_config(&l, "");
    // A second sandboxed agent: the same bubblewrap'd bash by another name.
    let config = l.path("config/nerdr/config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    let bash2 = text.replacen("[agents.bash]", "[agents.bash2]", 1);
    l.write_config(&format!("{text}\n{bash2}program = \"bash\"\n"));
    let a = l.ok(&["agent", "bash"]);
    l.wait_screen(&a, "bash");
    commit_in(&l, &a, "author work");
    let r = l.ok(&["request-review", &a, "--reviewer", "bash"]);
    l.wait_screen(&r, "bash-");
    let (rc, out) = op(&l, &a, "start-helper", "\"$NERDR_BIN\" agent bash");
    assert_eq!(rc, 0, "{out}");
    let h = new_tab(&l, &[&a, &r]);
    let (rc, out) = op(
        &l,
        &h,
        "before-switch",
        &format!("\"$NERDR_BIN\" send {r} 'echo steered-before'"),
    );
    assert_ne!(rc, 0, "the author's helper typed into its reviewer: {out}");

    switched(&l, &h, "bash2");
    let (rc, out) = op(
        &l,
        &h,
        "after-switch",
        &format!("\"$NERDR_BIN\" send {r} 'echo steered-after-$((40+2))'"),
    );
    let steered = poll(Duration::from_secs(5), || {
        l.ok(&["read", &r]).contains("steered-after-42")
    });
    assert!(
        rc != 0 && !steered,
        "tab {h}, started by author {a} and then switched, typed into the author's reviewer \
         {r} (rc {rc}: {out})"
    );
    assert!(out.contains("reviewer answers to the user"), "{out}");
}

/// A result kept for a stopped parent is delivered when the parent is
/// started again. The person spins an unsandboxed `sh` off an
/// unsandboxed parent, then switches the spinoff to a sandboxed agent,
/// which reports while the parent is stopped. Safe: once the parent runs
/// again, the result (written in a sandbox) waits for the user's approval,
/// as it would have had the parent been running.
#[test]
fn rev19_a_kept_result_goes_as_it_was_written_not_as_its_spinoff_started() {
    if bwrap_missing() {
        return;
    }
    let l = Local::started();
    repo(&l);
    boxed_config(&l, &format!("[agents.sh]\n{BASH}"));
    let parent = l.ok(&["agent", "sh"]);
    l.wait_screen(&parent, "bash");
    let child = spun_off(&l, &parent, "sh", "echo TASK");
    switched(&l, &child, "bash");
    assert_eq!(l.tab(&child)["sandboxed"], true, "{}", l.tab(&child));

    l.ok(&["send", &parent, "exit"]);
    let exited = poll(Duration::from_secs(30), || {
        l.tab(&parent)["state"] == "exited"
    });
    assert!(exited, "the parent never exited: {}", l.tab(&parent));
    let (rc, out) = op(
        &l,
        &child,
        "kept",
        "\"$NERDR_BIN\" report-result KEPT-FROM-BOX",
    );
    assert_eq!(rc, 0, "{out}");
    assert!(out.contains(&format!("kept for tab {parent}")), "{out}");

    l.ok(&["restart", &parent]);
    l.wait_screen(&parent, "bash");
    // At its prompt, as an agent's hooks say: kept results wait for that.
    l.ok(&["send", &parent, "\"$NERDR_BIN\" hook Stop </dev/null"]);
    let asked = || l.ok(&["approvals", "--json"]).contains("KEPT-FROM-BOX");
    let typed = || {
        l.ok(&["read", &parent])
            .replace('\n', "")
            .contains("KEPT-FROM-BOX")
    };
    let went = poll(Duration::from_secs(60), || asked() || typed());
    assert!(
        went,
        "the kept result went nowhere: {}",
        l.ok(&["spinoffs"])
    );
    assert!(
        asked() && !typed(),
        "a sandboxed agent's kept result was typed into the unsandboxed parent unapproved:\n{}",
        l.ok(&["read", &parent])
    );
    // The parent's agent has no screen rules (a shell, here): the person
    // is told what Enter would do in one.
    let question = l.ok(&["approvals"]);
    assert!(
        question.contains(
            "nerdr has no screen rules for sh: if it is a shell, this runs as a command line"
        ),
        "{question}"
    );
}

/// The person reports a spun-off tab's last words (`report-result --for
/// TAB` with no text; the window's C-b P): the text is its agent's. The
/// person spins an unsandboxed `sh` off an unsandboxed parent and switches
/// the spinoff to a sandboxed agent, whose screen then holds its words.
/// Safe: the result is one written in a sandbox (the note, and the user's
/// approval before an unsandboxed parent gets it), as the agent's own
/// report would be.
#[test]
fn rev19_the_persons_report_of_a_sandboxed_agents_last_words_waits_for_approval() {
    if bwrap_missing() {
        return;
    }
    let l = Local::started();
    repo(&l);
    boxed_config(&l, &format!("[agents.sh]\n{BASH}"));
    let parent = l.ok(&["agent", "sh"]);
    l.wait_screen(&parent, "bash");
    let child = spun_off(&l, &parent, "sh", "echo TASK");
    switched(&l, &child, "bash");
    l.ok(&["send", &child, "echo BOXED-$((40+2))-WORDS"]);
    l.wait_screen(&child, "BOXED-42-WORDS");
    let out = l.ok(&["report-result", "--for", &child]);
    let typed = poll(Duration::from_secs(5), || {
        l.ok(&["read", &parent])
            .replace('\n', "")
            .contains("BOXED-42-WORDS")
    });
    assert!(
        out.contains("waits for the user's approval") && !typed,
        "a sandboxed agent's last words went to the unsandboxed parent as the person's: \
         {out}\n{}",
        l.ok(&["read", &parent])
    );
}

/// A spinoff's task is the parent's words, its result the spinoff's, each
/// typed into the other agent. `x`, ^U (erase the line typed so far), then
/// a command and `#` (the rest a comment): typed as they are into a shell,
/// the command runs. Safe: the control character is no key; the line is
/// one command line nerdr wrote, which the shell cannot run.
#[test]
fn rev19_an_agents_control_characters_are_no_keys_in_another_agent() {
    let l = Local::started();
    repo(&l);
    l.write_config(&format!("[agents.sh]\n{BASH}"));
    let parent = l.ok(&["agent", "sh"]);
    l.wait_screen(&parent, "bash");
    let child = spun_off(
        &l,
        &parent,
        "sh",
        "x\u{15}echo task-pwned-$((40+2)) #\u{1b}[201~",
    );
    let task_ran = l.ok(&["read", &child]).contains("task-pwned-42");

    let (rc, out) = op(
        &l,
        &child,
        "report",
        "\"$NERDR_BIN\" report-result \"$(printf 'x\\025echo result-pwned-$((40+2)) #')\"",
    );
    assert_eq!(rc, 0, "{out}");
    assert!(out.contains(&format!("sent to tab {parent}")), "{out}");
    let screen = || l.ok(&["read", &parent]);
    // The shell ran the line: one it cannot run, or the planted command.
    let ran = poll(Duration::from_secs(30), || {
        let s = screen();
        ["command not found", "syntax error", "result-pwned-42"]
            .iter()
            .any(|said| s.contains(said))
    });
    assert!(ran, "the result never reached the parent:\n{}", screen());
    let result_ran = screen().contains("result-pwned-42");
    assert!(
        !task_ran && !result_ran,
        "control characters typed as keys: the task's command ran {task_ran}, the result's \
         {result_ran}\nchild:\n{}\nparent:\n{}",
        l.ok(&["read", &child]),
        screen()
    );
}

/// `report-result` takes at most 256 KiB, and no client sends a request
/// over 1 MiB (from a tab, through the hook socket, or the person's):
/// each refusal names the size, the limit and what to do.
#[test]
fn rev19_report_result_and_requests_are_bounded_saying_so() {
    let l = Local::started();
    repo(&l);
    l.write_config(&format!("[agents.sh]\n{BASH}"));
    let parent = l.ok(&["agent", "sh"]);
    l.wait_screen(&parent, "bash");
    let child = spun_off(&l, &parent, "sh", "echo TASK");
    let out_dir = l.path("out");
    let big = out_dir.join("big.txt");
    let (rc, out) = op(
        &l,
        &child,
        "big-report",
        &format!(
            "head -c 300000 /dev/zero | tr '\\0' a > {b}; \"$NERDR_BIN\" report-result --file {b}",
            b = big.display()
        ),
    );
    assert_ne!(rc, 0, "a 300000-byte result was taken: {out}");
    for want in ["300000 bytes", "over the 256 KiB limit", "commit it"] {
        assert!(out.contains(want), "{want:?}: {out}");
    }

    let huge = out_dir.join("huge.txt");
    std::fs::write(&huge, "a".repeat(2 << 20)).unwrap();
    let (rc, out) = op(
        &l,
        &child,
        "big-send",
        &format!("\"$NERDR_BIN\" send {parent} --file {}", huge.display()),
    );
    assert_ne!(rc, 0, "a 2 MiB request went: {out}");
    assert!(out.contains("over the 1 MiB limit"), "{out}");
    let said = l.fails(&["send", &parent, "--file", huge.to_str().unwrap()]);
    assert!(said.contains("over the 1 MiB limit"), "{said}");
    assert!(
        !l.ok(&["read", &parent]).contains("aaaaaaaaaaaaaaaa"),
        "typed anyway"
    );
}

/// `nerdr report-result --help`: its paragraphs wrap as clap wraps them,
/// with no run of spaces inside a sentence.
#[test]
fn rev19_report_result_help_reads_evenly() {
    let l = Local::empty();
    let help = l.ok(&["report-result", "--help"]);
    let odd: Vec<&str> = help
        .lines()
        .filter(|line| line.trim_start().split("  ").count() > 1)
        // Option rows: the name, then its help in a column.
        .filter(|line| !line.trim_start().starts_with('-') && !line.trim_start().starts_with('['))
        .collect();
    assert!(
        odd.is_empty(),
        "odd spacing in:\n{}\n---\n{help}",
        odd.join("\n")
    );
    assert!(help.contains("256 KiB"), "{help}");
}

/// Recheck finding: `nerdr send` from a sandboxed tab into another
/// sandboxed tab typed its text as it came: escape sequences, ^C, Enter,
/// a paste's end, enough to drive the other agent's prompts. Safe: text
/// only, and whole (with Enter); `--no-enter` is refused.
#[test]
fn rev19_a_sandboxed_agents_send_types_text_never_keys() {
    if bwrap_missing() {
        return;
    }
    let l = Local::started();
    repo(&l);
    boxed_config(&l, "");
    let a = l.ok(&["agent", "bash"]);
    l.wait_screen(&a, "bash");
    let b = l.ok(&["agent", "bash"]);
    l.wait_screen(&b, "bash");
    // B shows what it gets: `cat -v` writes control characters visibly.
    let got = l.path("out/got.txt");
    l.ok(&["send", &b, &format!("cat -v > {}", got.display())]);
    std::thread::sleep(Duration::from_millis(300));
    let (rc, out) = op(
        &l,
        &a,
        "keys",
        &format!("\"$NERDR_BIN\" send {b} \"$(printf 'hi\\033[31mred\\003\\033[201~ end')\""),
    );
    assert_eq!(rc, 0, "{out}");
    let arrived = poll(Duration::from_secs(20), || {
        std::fs::read_to_string(&got).is_ok_and(|t| t.contains("end"))
    });
    let text = std::fs::read_to_string(&got).unwrap_or_default();
    assert!(
        arrived,
        "the message never arrived: {text:?}\n{}",
        l.ok(&["read", &b])
    );
    assert_eq!(text, "hired end\n", "keys typed into another sandboxed tab");
    let (rc, out) = op(
        &l,
        &a,
        "half",
        &format!("\"$NERDR_BIN\" send --no-enter {b} half"),
    );
    assert_ne!(rc, 0, "{out}");
    assert!(out.contains("goes whole, with Enter"), "{out}");
}
