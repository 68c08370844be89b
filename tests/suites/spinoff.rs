//! Spinoffs end to end (README.md, "Spinoffs"). The real claude
//! (`$NERDR_AGENT_CLIS`), offline against the fake model, runs `nerdr
//! spinoff` through its shell tool: a new claude starts in a tab and
//! worktree of its own, gets the task as its first prompt, commits and
//! runs `nerdr report-result`, and the result reaches the first claude as
//! a message, in the next request it makes. Then the sandbox rules with
//! shells: a sandboxed agent (nerdr's own sandbox) spins off only into
//! sandboxed agents and only from its own tab, its result goes only to its
//! parent, and a tab `nerdr spinoff` did not start cannot report.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::suites::agent_states::{claude_home, ClaudeDialogs};
use crate::suites::agent_turns::Turns;
use crate::support::fake_model::Turn;
use crate::support::poll;
use crate::support::sysenv::SystemdEnv;

/// claude's start behind a loaded machine, then a turn.
const START: Duration = Duration::from_secs(150);
const TURN: Duration = Duration::from_secs(150);

/// What the parent's model has it run.
const SPIN: &str = "\"${NERDR_BIN:-nerdr}\" spinoff 'CHILD-TASK-7: write child.txt'";
/// What the spun-off claude's model has it run, on its task.
const REPORT: &str = "echo from-child > child.txt && git add child.txt && \
                      git commit -q -m child-work && \
                      \"${NERDR_BIN:-nerdr}\" report-result 'RESULT-FROM-CHILD-42 all done'";

#[test]
fn claude_spins_off_a_task_and_its_result_reaches_it_as_a_message() {
    let Some(t) = Turns::setup_with_hooks("claude", |url, home| {
        claude_home(url, home, ClaudeDialogs::none())
    }) else {
        return;
    };
    // First match wins: the child's task before the parent's request (the
    // parent's result message carries neither marker).
    t.model.when_user_says("CHILD-TASK-7", Turn::run(REPORT));
    t.model.when_user_says("PLEASE-SPIN", Turn::run(SPIN));
    let parent = t.start();
    t.wait_idle(&parent);
    let parent_wt = t.tab_json(&parent)["worktree"]
        .as_str()
        .expect("the parent has a worktree")
        .to_string();
    // Something uncommitted in the parent: not carried, and counted.
    std::fs::write(
        Path::new(&parent_wt).join("README"),
        "changed, uncommitted\n",
    )
    .unwrap();
    let since = t.prompt(&parent, "PLEASE-SPIN now");
    t.wait_tool_result(&parent, since);
    assert!(
        t.a_tool_result_holds("1 uncommitted change of tab"),
        "the spinoff's output did not count the uncommitted change:\n{}",
        t.model.dump()
    );

    // A new tab, spun off from the parent, with a worktree and branch of
    // its own.
    let mut child = serde_json::Value::Null;
    let spun = poll(START, || {
        let tabs: Vec<serde_json::Value> =
            serde_json::from_str(&t.ok(&["tabs", "--json"])).unwrap();
        child = tabs
            .into_iter()
            .find(|r| r["spun_off_from"] == parent.as_str())
            .unwrap_or_default();
        !child.is_null()
    });
    assert!(spun, "no spun-off tab:\n{}", t.model.dump());
    let child_id = child["id"].as_str().unwrap().to_string();
    assert_eq!(child["agent"], "claude");
    let child_wt = child["worktree"].as_str().expect("a worktree").to_string();
    assert_ne!(child_wt, parent_wt);
    assert_eq!(
        std::fs::read_to_string(Path::new(&child_wt).join("README")).unwrap(),
        "hello\n",
        "the parent's uncommitted change was carried"
    );

    // Its first prompt is the task.
    t.model.wait_for("the spun-off agent's task", START, |r| {
        r.asked.as_ref().is_some_and(|a| {
            a.user_text.contains("CHILD-TASK-7") && a.user_text.contains("report-result")
        })
    });

    // Its result reaches the parent: the next request the parent makes
    // carries it, with the branch, the commit and the diffstat.
    let branch = format!("nerdr/{child_id}");
    let header = format!("Result 1 from spun-off tab {child_id}");
    t.model
        .wait_for("the result in the parent's request", TURN, |r| {
            r.asked.as_ref().is_some_and(|a| {
                a.user_text.contains("RESULT-FROM-CHILD-42") && a.user_text.contains(&header)
            })
        });
    let log = t.model.log();
    let asked = log
        .iter()
        .filter_map(|r| r.asked.as_ref())
        .find(|a| a.user_text.contains(&header))
        .unwrap();
    for want in [branch.as_str(), "child-work", "child.txt", "1 file changed"] {
        assert!(
            asked.user_text.contains(want),
            "{want:?} not in {}",
            asked.user_text
        );
    }
    assert!(
        !asked.user_text.contains("written in a sandbox"),
        "{}",
        asked.user_text
    );
    let mut listed = serde_json::Value::Null;
    let delivered = poll(TURN, || {
        listed = serde_json::from_str(&t.ok(&["spinoffs", "--json"])).unwrap();
        listed[0]["results"][0]["held"] == "delivered"
    });
    assert!(delivered, "{listed}");
    assert_eq!(listed[0]["tab"], child_id.as_str());
    assert_eq!(listed[0]["parent"], parent.as_str());
}

/// What the spun-off claude answers its task with, reporting nothing.
const CHILD_ANSWER: &str = "CHILD-ANSWER-99: the bug is in the parser";

#[test]
fn a_spinoff_whose_turn_ends_without_a_report_is_marked_and_the_persons_report_reaches_its_parent()
{
    let Some(t) = Turns::setup_with_hooks("claude", |url, home| {
        claude_home(url, home, ClaudeDialogs::none())
    }) else {
        return;
    };
    t.model
        .when_user_says("CHILD-TASK-8", Turn::Say(CHILD_ANSWER.into()));
    let parent = t.start();
    t.wait_idle(&parent);
    // The person spins the parent's work off; the spun-off claude answers
    // in words and never runs report-result.
    let child = t.ok(&["spinoff", "--from", &parent, "CHILD-TASK-8: look into it"]);
    let child = child.lines().next().unwrap().trim().to_string();
    t.model.wait_for("the spun-off agent's answer", START, |r| {
        r.asked
            .as_ref()
            .is_some_and(|a| a.user_text.contains("CHILD-TASK-8"))
    });
    // Its turn ended with no report: marked in the tab list.
    let mut row = serde_json::Value::Null;
    let due = poll(TURN, || {
        row = t.tab_json(&child);
        row["report_due"] == true
    });
    assert!(
        due,
        "the spun-off tab was never marked report_due: {row}\n{}",
        t.model.dump()
    );
    assert!(
        t.tab_json(&parent).get("report_due").is_none(),
        "the parent is no spinoff"
    );

    // The person reports its last answer, read from its conversation log.
    let before = t.model.log().len();
    let out = t.ok(&["report-result", "--for", &child]);
    assert!(
        out.contains(&format!("result 1 sent to tab {parent}")),
        "{out}"
    );
    let header = format!("Result 1 from spun-off tab {child}");
    t.model
        .wait_for("the result in the parent's request", TURN, |r| {
            r.asked
                .as_ref()
                .is_some_and(|a| a.user_text.contains(&header))
        });
    let log = t.model.log();
    let asked = log
        .iter()
        .skip(before)
        .filter_map(|r| r.asked.as_ref())
        .find(|a| a.user_text.contains(&header))
        .expect("the parent's request after the report");
    for want in [
        "reported by the person",
        "(its last answer, from its conversation)",
        CHILD_ANSWER,
        &format!("nerdr/{child}"),
        "No commits since",
    ] {
        assert!(
            asked.user_text.contains(want),
            "{want:?} not in {}",
            asked.user_text
        );
    }
    // Reported: no longer due.
    let cleared = poll(TURN, || t.tab_json(&child).get("report_due").is_none());
    assert!(cleared, "still report_due: {}", t.tab_json(&child));
}

/// A plain shell and a shell in nerdr's own sandbox (bubblewrap).
const CONFIG: &str = "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n\
    [agents.sh2]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n\
    [agents.jail]\ncommand = [\"nerdr\", \"sandbox\", \"--\", \"bash\"]\n\
    args = [\"--norc\", \"--noprofile\"]\nsandboxed = true\nprogram = \"bash\"\n";

struct Setup {
    env: SystemdEnv,
    repo: PathBuf,
}

impl Setup {
    fn new() -> Option<Setup> {
        let env = crate::suites::sandbox::setup()?;
        env.run(&["nerdr", "service", "install"]);
        env.write_user_file(".config/nerdr/config.toml", CONFIG);
        // What `in_tab` writes in a tab's worktree is no uncommitted work.
        let proj = env.home().join("proj");
        env.write_user_file("proj/.gitignore", ".out-*\n");
        crate::suites::sandbox::user_git(&env, &proj, &["add", ".gitignore"]);
        crate::suites::sandbox::user_git(&env, &proj, &["commit", "-q", "-m", "ignore"]);
        Some(Setup {
            repo: env.home().join("proj"),
            env,
        })
    }

    fn nerdr(&self, args: &[&str]) -> (bool, String, String) {
        let mut cmd = self.env.user_cmd(&[&["nerdr"], args].concat());
        cmd.current_dir(&self.repo);
        let out = cmd.output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn ok(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.nerdr(args);
        assert!(ok, "nerdr {args:?} failed: {err}");
        out.trim().to_string()
    }

    /// `exit` typed into tab `tab`'s shell, and its program seen ended.
    fn end_program(&self, tab: &str) {
        self.ok(&["send", tab, "exit"]);
        let exited = poll(Duration::from_secs(30), || {
            self.tabs()
                .iter()
                .any(|t| t["id"] == tab && t["state"] == "exited")
        });
        assert!(exited, "tab {tab}'s program never exited");
    }

    fn tabs(&self) -> Vec<serde_json::Value> {
        serde_json::from_str(&self.ok(&["tabs", "--json"])).unwrap()
    }

    /// `line` typed into tab `tab`'s shell; its output and exit code, from
    /// files it writes in its worktree (the one folder a sandboxed shell
    /// may write; its screen wraps).
    fn in_tab(&self, tab: &str, name: &str, line: &str) -> (i32, String) {
        let tabs = self.tabs();
        let row = tabs.iter().find(|t| t["id"] == tab).unwrap();
        // A terminal's is its agent tab's.
        let row = match row["parent"].as_str() {
            Some(p) => tabs.iter().find(|t| t["id"] == p).unwrap(),
            None => row,
        };
        let wt = PathBuf::from(row["worktree"].as_str().expect("a worktree"));
        let out = wt.join(format!(".out-{name}"));
        let o = out.display();
        self.ok(&[
            "send",
            tab,
            &format!("{line} > {o}.txt 2>&1; echo $? > {o}.tmp; mv {o}.tmp {o}.rc"),
        ]);
        let rc = out.with_extension("rc");
        let done = poll(Duration::from_secs(60), || rc.exists());
        assert!(
            done,
            "tab {tab} never ran {line:?}:\n{}",
            self.ok(&["read", tab])
        );
        let code = std::fs::read_to_string(&rc)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        (
            code,
            std::fs::read_to_string(out.with_extension("txt")).unwrap(),
        )
    }
}

#[test]
fn a_sandboxed_spinoff_uses_only_sandboxed_agents_and_reports_only_to_its_parent() {
    let Some(st) = Setup::new() else { return };
    let plain = st.ok(&["agent", "sh"]);
    let jail = st.ok(&["agent", "jail"]);

    // An agent outside every sandbox is refused, and says what is allowed.
    let (rc, out) = st.in_tab(
        &jail,
        "unsandboxed",
        "\"$NERDR_BIN\" spinoff --agent sh TASK-X",
    );
    assert_ne!(rc, 0, "{out}");
    assert!(
        out.contains("`sh` runs outside every sandbox") && out.contains("jail"),
        "{out}"
    );
    // Another tab's work is not its to spin off: an unsandboxed one reads
    // as no tab at all.
    let (rc, out) = st.in_tab(
        &jail,
        "other",
        &format!("\"$NERDR_BIN\" spinoff --from {plain} --agent jail TASK-X"),
    );
    assert_ne!(rc, 0, "{out}");
    assert!(out.contains(&format!("no tab `{plain}`")), "{out}");
    // A tab nerdr spinoff did not start reports nothing.
    let (rc, out) = st.in_tab(&jail, "not-spun", "\"$NERDR_BIN\" report-result hello");
    assert_ne!(rc, 0, "{out}");
    assert!(out.contains("was not started by `nerdr spinoff`"), "{out}");
    assert_eq!(st.tabs().len(), 2, "nothing was started");

    // By default its own agent, sandboxed.
    let (rc, out) = st.in_tab(&jail, "spin", "\"$NERDR_BIN\" spinoff 'echo TASK-TYPED'");
    assert_eq!(rc, 0, "{out}");
    assert!(out.contains("no uncommitted changes"), "{out}");
    let child = out.lines().next().unwrap().trim().to_string();
    let row = st
        .tabs()
        .into_iter()
        .find(|t| t["id"] == child.as_str())
        .unwrap_or_else(|| panic!("no tab {child}: {out}"));
    assert_eq!(row["agent"], "jail");
    assert_eq!(row["sandboxed"], true);
    assert_eq!(row["spun_off_from"], jail.as_str());
    let table = st.ok(&["tabs"]);
    assert!(
        table.contains(&format!("{child}: spun off from {jail}")),
        "{table}"
    );

    // Its result goes to its parent, sandboxed too: typed there, with the
    // note that it was written in a sandbox.
    let (rc, out) = st.in_tab(
        &child,
        "report",
        "\"$NERDR_BIN\" report-result RES-FROM-JAIL",
    );
    assert_eq!(rc, 0, "{out}");
    assert!(
        out.contains(&format!("result 1 sent to tab {jail}")),
        "{out}"
    );
    let mut screen = String::new();
    let typed = poll(Duration::from_secs(30), || {
        screen = st.ok(&["read", &jail]).replace('\n', "");
        screen.contains("RES-FROM-JAIL")
    });
    assert!(typed, "the result never reached the parent:\n{screen}");
    assert!(screen.contains("written in a sandbox"), "{screen}");
    // Nothing reached the unsandboxed tab.
    assert!(!st.ok(&["read", &plain]).contains("RES-FROM-JAIL"));
}

#[test]
fn a_result_for_a_stopped_parent_waits_and_goes_once_it_is_restarted_and_a_user_is_no_spinoff() {
    let Some(st) = Setup::new() else { return };
    let parent = st.ok(&["agent", "sh"]);
    // The user names the parent.
    let child = st.ok(&[
        "spinoff",
        "--from",
        &parent,
        "--name",
        "helper",
        "echo TASK",
    ]);
    assert_eq!(
        st.tabs()
            .iter()
            .find(|t| t["id"] == child.as_str())
            .unwrap()["name"],
        "helper"
    );
    // Its first prompt is typed once its screen settles; typing into it
    // before then would mix the two lines. The shell has run it (as a
    // command line it cannot parse) once its prompt is back.
    let ran = poll(Duration::from_secs(60), || {
        let screen = st.ok(&["read", &child]);
        screen.contains("report-result")
            && screen
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .is_some_and(|l| l.trim_end().ends_with('$'))
    });
    assert!(ran, "the task never ran: {}", st.ok(&["read", &child]));
    // The person is not a spun-off tab.
    let (ok, _, err) = st.nerdr(&["report-result", "from the user"]);
    assert!(!ok && err.contains("names no tab"), "{err}");

    // A terminal of the spun-off tab reports for it.
    let term = st.ok(&["terminal", &child]);
    let (rc, out) = st.in_tab(&term, "term", "\"$NERDR_BIN\" report-result FROM-TERMINAL");
    assert_eq!(rc, 0, "{out}");
    assert!(
        out.contains(&format!("result 1 sent to tab {parent}")),
        "{out}"
    );

    st.end_program(&parent);
    let (rc, out) = st.in_tab(&child, "kept", "\"$NERDR_BIN\" report-result KEPT-RESULT");
    assert_eq!(rc, 0, "{out}");
    assert!(
        out.contains(&format!("result 2 kept for tab {parent}")),
        "{out}"
    );
    let row = st
        .tabs()
        .into_iter()
        .find(|t| t["id"] == parent.as_str())
        .unwrap();
    assert_eq!(row["results_waiting"], 1, "{row}");
    assert!(st.ok(&["spinoffs"]).contains("WAITING for the parent"));

    st.ok(&["restart", &parent]);
    // Its shell at its prompt says so, as an agent's hooks do: the kept
    // result waits for an idle parent.
    st.ok(&["send", &parent, "\"$NERDR_BIN\" hook Stop </dev/null"]);
    let mut screen = String::new();
    let typed = poll(Duration::from_secs(60), || {
        screen = st.ok(&["read", &parent]).replace('\n', "");
        screen.contains("KEPT-RESULT")
    });
    assert!(
        typed,
        "the kept result never reached the restarted parent:\n{screen}"
    );
    // Marked delivered once typed (its Enter follows the text).
    let mut row = serde_json::Value::Null;
    let delivered = poll(Duration::from_secs(10), || {
        row = st
            .tabs()
            .into_iter()
            .find(|t| t["id"] == parent.as_str())
            .unwrap();
        row.get("results_waiting").is_none()
    });
    assert!(delivered, "{row}");
}

/// A parent whose program ended, switched to another agent: the result
/// kept for it goes to the new agent once it waits at its prompt, after
/// the handoff.
#[test]
fn a_result_kept_for_a_stopped_parent_goes_to_the_agent_it_is_switched_to() {
    let Some(st) = Setup::new() else { return };
    let parent = st.ok(&["agent", "sh"]);
    let child = st.ok(&["spinoff", "--from", &parent, "echo TASK"]);
    st.end_program(&parent);
    let (rc, out) = st.in_tab(
        &child,
        "kept",
        "\"$NERDR_BIN\" report-result KEPT-FOR-SWITCH",
    );
    assert_eq!(rc, 0, "{out}");
    assert!(out.contains("kept for tab"), "{out}");

    st.ok(&["switch", "--force", &parent, "sh2", "echo HANDED-FIRST"]);
    // The new shell at its prompt says so, as an agent's hooks do.
    let mut screen = String::new();
    let handed = poll(Duration::from_secs(60), || {
        screen = st.ok(&["read", &parent]).replace('\n', "");
        screen.contains("HANDED-FIRST")
    });
    assert!(handed, "the handoff never reached the new agent:\n{screen}");
    st.ok(&["send", &parent, "\"$NERDR_BIN\" hook Stop </dev/null"]);
    let typed = poll(Duration::from_secs(60), || {
        screen = st.ok(&["read", &parent]).replace('\n', "");
        screen.contains("KEPT-FOR-SWITCH")
    });
    assert!(
        typed,
        "the kept result never reached the switched-to agent:\n{screen}"
    );
    let handoff_at = screen.find("HANDED-FIRST").unwrap();
    assert!(
        screen.find("KEPT-FOR-SWITCH").unwrap() > handoff_at,
        "{screen}"
    );
}

#[test]
fn a_program_reports_only_for_its_own_tab_and_the_person_reports_a_custom_agents_screen() {
    let Some(st) = Setup::new() else { return };
    let parent = st.ok(&["agent", "sh"]);
    let other = st.ok(&["agent", "sh"]);
    // A task nothing of which would be typed, or too long to type, starts
    // nothing.
    st.env.write_user_file("nul-task", "\0\0\x1b[2J\0");
    st.env.write_user_file("long-task", "x".repeat(65 * 1024));
    for (file, said) in [
        ("nul-task", "the task is empty"),
        ("long-task", "over the 64 KiB limit"),
    ] {
        let path = st.env.home().join(file);
        let (ok, _, err) = st.nerdr(&[
            "spinoff",
            "--from",
            &parent,
            "--file",
            path.to_str().unwrap(),
        ]);
        assert!(!ok && err.contains(said), "{file}: {err}");
    }
    assert_eq!(st.tabs().len(), 2, "a refused task started a tab");
    let child = st.ok(&["spinoff", "--from", &parent, "echo SCREEN-WORDS-5"]);
    let ran = poll(Duration::from_secs(60), || {
        st.ok(&["read", &child]).contains("SCREEN-WORDS-5")
    });
    assert!(ran, "the task never ran: {}", st.ok(&["read", &child]));
    // Another tab's program may not report for the spun-off tab.
    let (rc, out) = st.in_tab(
        &other,
        "for-other",
        &format!("\"$NERDR_BIN\" report-result --for {child} FAKE-RESULT"),
    );
    assert_ne!(rc, 0, "{out}");
    assert!(
        out.contains("a result is reported by the spun-off agent, from its own tab"),
        "{out}"
    );
    // Nor may the parent's, for its spinoff.
    let (rc, out) = st.in_tab(
        &parent,
        "for-child",
        &format!("\"$NERDR_BIN\" report-result --for {child} FAKE-RESULT"),
    );
    assert_ne!(rc, 0, "{out}");
    assert!(!st.ok(&["read", &parent]).contains("Result 1 from"));
    // The person may: a custom agent's conversation nerdr cannot read,
    // so its last screen lines go, and the message says so.
    let out = st.ok(&["report-result", "--for", &child]);
    assert!(
        out.contains(&format!("result 1 sent to tab {parent}")),
        "{out}"
    );
    let mut screen = String::new();
    let typed = poll(Duration::from_secs(30), || {
        screen = st.ok(&["read", &parent]).replace('\n', "");
        screen.contains("SCREEN-WORDS-5") && screen.contains("reported by the person")
    });
    assert!(
        typed,
        "the person's report never reached the parent:\n{screen}"
    );
    assert!(screen.contains("its last screen lines"), "{screen}");
}

#[test]
fn a_sandboxed_spinoffs_result_for_an_unsandboxed_parent_waits_for_approval() {
    let Some(st) = Setup::new() else { return };
    let parent = st.ok(&["agent", "sh"]);
    // The person may spin an unsandboxed tab's work off into a sandbox.
    let child = st.ok(&["spinoff", "--from", &parent, "--agent", "jail", "echo TASK"]);
    let (rc, out) = st.in_tab(&child, "report", "\"$NERDR_BIN\" report-result RES-BOXED");
    assert_eq!(rc, 0, "{out}");
    assert!(out.contains("waits for the user's approval as"), "{out}");
    assert!(
        !st.ok(&["read", &parent]).contains("RES-BOXED"),
        "typed unapproved"
    );
    let listed: Vec<serde_json::Value> =
        serde_json::from_str(&st.ok(&["approvals", "--json"])).unwrap();
    let question = listed
        .iter()
        .find(|a| a["question"].as_str().unwrap_or("").contains("RES-BOXED"))
        .unwrap_or_else(|| panic!("no approval for the result: {listed:?}"));
    assert!(
        question["question"]
            .as_str()
            .unwrap()
            .contains("written in a sandbox"),
        "{question}"
    );
    st.ok(&["approvals", "approve", question["id"].as_str().unwrap()]);
    let mut screen = String::new();
    let typed = poll(Duration::from_secs(30), || {
        screen = st.ok(&["read", &parent]).replace('\n', "");
        screen.contains("RES-BOXED")
    });
    assert!(
        typed,
        "the approved result never reached the parent:\n{screen}"
    );
    // The list follows the answer: delivered, not "put to the user".
    let listed = st.ok(&["spinoffs"]);
    assert!(listed.contains("result 1 (delivered)"), "{listed}");

    // A second result, denied: never typed, and listed so.
    let (rc, out) = st.in_tab(&child, "report2", "\"$NERDR_BIN\" report-result RES-DENIED");
    assert_eq!(rc, 0, "{out}");
    let listed: Vec<serde_json::Value> =
        serde_json::from_str(&st.ok(&["approvals", "--json"])).unwrap();
    let id = listed
        .iter()
        .find(|a| a["question"].as_str().unwrap_or("").contains("RES-DENIED"))
        .and_then(|a| a["id"].as_str())
        .unwrap_or_else(|| panic!("no approval for the result: {listed:?}"))
        .to_string();
    st.ok(&["approvals", "deny", &id]);
    let listed = st.ok(&["spinoffs"]);
    assert!(
        listed.contains(&format!(
            "result 2 (denied by the user ({id}), never typed)"
        )),
        "{listed}"
    );
    assert!(!st.ok(&["read", &parent]).contains("RES-DENIED"));
}

#[test]
fn the_window_marks_a_spinoff_that_ended_its_turn_unreported_and_c_b_p_reports_it() {
    let Some(st) = Setup::new() else { return };
    if !crate::support::tmux::have_tmux() {
        return;
    }
    let parent = st.ok(&["agent", "sh"]);
    let child = st.ok(&[
        "spinoff",
        "--from",
        &parent,
        "--name",
        "helper",
        "echo WINDOW-WORDS-6",
    ]);
    // Run (as a line the shell cannot parse) once its prompt is back:
    // typed before then, the next line would join the task's.
    let ran = poll(Duration::from_secs(60), || {
        let screen = st.ok(&["read", &child]);
        screen.contains("WINDOW-WORDS-6")
            && screen
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .is_some_and(|l| l.trim_end().ends_with('$'))
    });
    assert!(ran, "the task never ran: {}", st.ok(&["read", &child]));
    let w = crate::support::user_tmux::UserTmux::start(&st.env, &st.repo, 200, 30, "nerdr");
    w.wait_text("1:sh-1");
    // Its turn ends (a shell says so as an agent's hooks do), unreported.
    st.ok(&["send", &child, "\"$NERDR_BIN\" hook Stop </dev/null"]);
    let mut row = serde_json::Value::Null;
    let due = poll(Duration::from_secs(30), || {
        row = st
            .tabs()
            .into_iter()
            .find(|t| t["id"] == child.as_str())
            .unwrap();
        row["report_due"] == true
    });
    assert!(due, "{row}\n{}", st.ok(&["read", &child]));
    let s = w.wait_text("tab 2 (helper) ended its turn unreported: C-b P reports it");
    let status = s.last().cloned().unwrap_or_default();
    assert!(status.contains("2:helper"), "{status}");
    assert!(
        status
            .split_whitespace()
            .any(|e| e.starts_with("2:helper") && e.ends_with('?')),
        "no ? mark: {status}"
    );
    // The key asks first; y sends its screen (a shell: nerdr cannot read
    // its conversation) to the parent as the person's report.
    w.keys(&["C-b", "P"]);
    w.wait_text("report tab 2 (helper)'s last answer to tab 1 (sh-1)? y/n");
    assert!(
        !st.ok(&["read", &parent]).contains("reported by the person"),
        "sent before y"
    );
    w.keys(&["y"]);
    w.wait_text("result 1 sent to tab 1 (sh-1)");
    let mut screen = String::new();
    let typed = poll(Duration::from_secs(30), || {
        screen = st.ok(&["read", &parent]).replace('\n', "");
        screen.contains("reported by the person") && screen.contains("WINDOW-WORDS-6")
    });
    assert!(typed, "the report never reached the parent:\n{screen}");
    // Reported: the mark goes.
    let row = st
        .tabs()
        .into_iter()
        .find(|t| t["id"] == child.as_str())
        .unwrap();
    assert!(row.get("report_due").is_none(), "{row}");
    // And the offer with it, once its note is read (the next key).
    w.keys(&["Enter"]);
    let s = w.wait_within(
        "the notes gone",
        Duration::from_secs(30),
        |s: &[String]| s.last().is_some_and(|l| !l.contains("result 1 sent")),
    );
    assert!(
        !s.last().unwrap().contains("ended its turn unreported"),
        "{s:?}"
    );
}
