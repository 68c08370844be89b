//! Spinoffs' rules with shells (README.md, "Spinoffs"): a sandboxed agent
//! (nerdr's own sandbox) spins off only into sandboxed agents and only
//! from its own tab, its result goes only to its parent, a result for a
//! stopped parent waits, and a tab `nerdr spinoff` did not start cannot
//! report. The real claude's spinoffs are in `spinoff.rs`.

use std::path::PathBuf;
use std::time::Duration;

use crate::support::poll;
use crate::support::sysenv::SystemdEnv;

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
