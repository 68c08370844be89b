//! `install = "worktree"` with `nerdr sandbox --worktree-only` (issue 20,
//! item 2): the tab's program reaches nerdr only through the reports file
//! in its worktree. Its lines reach nerdr as that tab's reports (a state,
//! a reason for a change); malformed, oversized and other tabs' lines are
//! refused and journaled; nothing nerdr put in the worktree is committed;
//! a restarted core reads on.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::support::repo_session::{RepoSession, SH};

const JAIL: &str = "[agents.jail]\n\
    command = [\"nerdr\", \"sandbox\", \"--worktree-only\", \"--\", \"bash\"]\n\
    args = [\"--norc\", \"--noprofile\"]\nsandboxed = true\nprogram = \"bash\"\n\
    install = \"worktree\"\ndata_dir = \".nerdr\"\n";

fn session() -> Option<RepoSession> {
    if !Path::new("/usr/bin/bwrap").exists() {
        crate::support::sysenv::skip("bubblewrap is not installed");
        return None;
    }
    RepoSession::on_main(&format!("{SH}{JAIL}"))
}

/// `line` appended to the tab's reports file from inside, as its agent
/// would.
fn append(st: &RepoSession, tab: &str, line: &str, marker: &str) {
    let screen = st.in_tab(
        tab,
        &format!("printf '%s\\n' '{line}' >> \"$NERDR_DATA_DIR/reports.jsonl\""),
        marker,
        20,
    );
    assert!(screen.contains(&format!("rc-{marker}-0")), "{screen}");
}

/// The hook-refused journal entries that name a reports file.
fn refused_lines(st: &RepoSession) -> Vec<Value> {
    st.ok(&["log", "--hook", "--json"])
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| {
            e["message"]
                .as_str()
                .is_some_and(|m| m.contains("reports.jsonl"))
        })
        .collect()
}

fn session_of(st: &RepoSession, tab: &str) -> Value {
    st.tab_row(tab)["session_id"].clone()
}

#[test]
fn a_worktree_only_tab_reports_through_its_file_and_nothing_else() {
    let Some(st) = session() else {
        return;
    };
    let other = st.tab("sh");
    let (t, wt) = st.tab_and_worktree("jail");
    let data = wt.join(".nerdr");
    assert!(
        data.join("reports.jsonl").is_file(),
        "no reports file in {}",
        wt.display()
    );
    assert!(!wt.join(".claude").exists(), "bash gets no claude files");

    // Inside: NERDR_DATA_DIR is the worktree's folder, and the hook
    // socket is not there.
    let screen = st.in_tab(
        &t,
        "echo dd=$NERDR_DATA_DIR; test -e \"$NERDR_SOCKET\"",
        "env",
        20,
    );
    assert!(
        screen.contains(&format!("dd={}", data.display())),
        "{screen}"
    );
    assert!(
        screen.contains("rc-env-1"),
        "the hook socket is reachable: {screen}"
    );

    // A state, with the session it is of: that tab's, from its file.
    append(
        &st,
        &t,
        r#"{"kind":"state","event":"SessionStart","session_id":"from-the-file"}"#,
        "state",
    );
    let reached = crate::support::poll(Duration::from_secs(20), || {
        session_of(&st, &t) == "from-the-file"
    });
    assert!(
        reached,
        "the state line never reached nerdr: {}",
        st.tab_row(&t)
    );

    // `nerdr hook` cannot reach the socket and writes the line itself.
    let screen = st.in_tab(
        &t,
        "echo '{\"session_id\":\"from-the-hook\"}' | \"$NERDR_BIN\" hook SessionStart",
        "hook",
        20,
    );
    assert!(screen.contains("rc-hook-0"), "{screen}");
    let reached = crate::support::poll(Duration::from_secs(20), || {
        session_of(&st, &t) == "from-the-hook"
    });
    assert!(
        reached,
        "the hook's line never reached nerdr: {}",
        st.tab_row(&t)
    );

    // Other commands cannot reach nerdr here, and say so plainly instead
    // of the socket's raw error (newcomer finding B).
    let screen = st.in_tab(
        &t,
        "for c in tabs 'search word' 'why tracked.txt'; do \"$NERDR_BIN\" $c 2>&1 | grep -q 'run other nerdr commands outside the sandbox' || echo B\"\"AD=$c; done; \"$NERDR_BIN\" tabs 2>&1 | grep -c 'os error'",
        "plain",
        20,
    );
    assert!(
        !screen.contains("BAD=") && screen.contains("rc-plain-1"),
        "{screen}"
    );

    // A reason for a change, by `nerdr why add` (to the file) and by hand.
    let screen = st.in_tab(
        &t,
        "echo four >> tracked.txt && \"$NERDR_BIN\" why add --file tracked.txt --lines 4 'four: the count needs it'",
        "why",
        20,
    );
    assert!(screen.contains("rc-why-0"), "{screen}");
    assert!(screen.contains("reports.jsonl"), "{screen}");
    let wts = wt.display().to_string();
    let mut shown = String::new();
    let kept = crate::support::poll(Duration::from_secs(20), || {
        shown = st.ok(&["why", "--folder", &wts, "tracked.txt:4"]);
        shown.contains("the count needs it")
    });
    assert!(kept, "the reason never reached nerdr: {shown}");
    assert!(shown.contains("written in a sandbox"), "{shown}");

    // Refused, each journaled with the file and its line: not JSON, past
    // the size limit, and a line naming another tab.
    append(&st, &t, "not json at all", "bad");
    let screen = st.in_tab(
        &t,
        "head -c 700000 /dev/zero | tr '\\0' x >> \"$NERDR_DATA_DIR/reports.jsonl\" && echo >> \"$NERDR_DATA_DIR/reports.jsonl\"",
        "big",
        20,
    );
    assert!(screen.contains("rc-big-0"), "{screen}");
    append(
        &st,
        &t,
        &format!(
            r#"{{"kind":"state","event":"SessionStart","session_id":"stolen","tab":"{other}"}}"#
        ),
        "other",
    );
    // Well-formed, but what the same request over the socket gets: this
    // tab started no review, so its review is not taken.
    append(
        &st,
        &t,
        r#"{"kind":"review","text":"Summary: fine"}"#,
        "review",
    );
    // After them, a good line: once it is taken, every line before it was
    // read.
    append(
        &st,
        &t,
        r#"{"kind":"state","event":"SessionStart","session_id":"last-one"}"#,
        "last",
    );
    let reached = crate::support::poll(Duration::from_secs(20), || {
        session_of(&st, &t) == "last-one"
    });
    assert!(reached, "{}", st.tab_row(&t));
    assert_ne!(
        session_of(&st, &other),
        "stolen",
        "a line spoke for another tab"
    );
    let file = data.join("reports.jsonl").display().to_string();
    let mut refused = Vec::new();
    let journaled = crate::support::poll(Duration::from_secs(20), || {
        refused = refused_lines(&st);
        refused.len() >= 4
    });
    assert!(journaled, "refusals not journaled: {refused:?}");
    for (line, why) in [
        ("4", "not a JSON report"),
        ("5", "longer than 655360 bytes"),
        ("6", &format!("names tab \"{other}\"") as &str),
        ("7", "not taken: "),
    ] {
        let found = refused.iter().any(|e| {
            e["message"]
                .as_str()
                .is_some_and(|m| m.contains(&format!("line {line} of {file}")) && m.contains(why))
                && e["fields"].to_string().contains(&t)
        });
        assert!(found, "line {line} ({why}) not journaled: {refused:#?}");
    }

    // Nothing nerdr put there is committed: a commit of everything in the
    // worktree carries the work alone.
    assert_eq!(
        st.git(&wt, &["status", "--porcelain"]),
        " M tracked.txt",
        "nerdr's files show in git status"
    );
    let screen = st.in_tab(&t, "git add -A && git commit -q -m all", "commit", 30);
    assert!(screen.contains("rc-commit-0"), "{screen}");
    let branch = format!("nerdr/{t}");
    let mut files = String::new();
    let home = crate::support::poll(Duration::from_secs(30), || {
        files = st.git(&st.repo, &["show", "--name-only", "--format=%s", &branch]);
        files.starts_with("all")
    });
    assert!(home, "the commit never came home: {files}");
    assert_eq!(files, "all\n\ntracked.txt", "committed more than the work");
    let exclude = std::fs::read_to_string(st.repo.join(".git/info/exclude")).unwrap();
    assert!(exclude.contains("/.nerdr/\n"), "{exclude}");

    // A restarted core reads the file of the tab it adopts. It watches
    // from the file's end once it has read its config, so the line is
    // appended again until one is taken.
    st.env.systemctl(&["restart", "nerdr.service"]);
    let mut n = 0;
    let taken = crate::support::poll(Duration::from_secs(30), || {
        n += 1;
        append(
            &st,
            &t,
            &format!(
                r#"{{"kind":"state","event":"SessionStart","session_id":"after-restart-{n}"}}"#
            ),
            &format!("restart{n}"),
        );
        session_of(&st, &t)
            .as_str()
            .is_some_and(|s| s.starts_with("after-restart-"))
    });
    assert!(
        taken,
        "a restarted core never read the file: {}",
        st.tab_row(&t)
    );

    // The file replaced by a link to a file of the person's: not followed,
    // and said.
    let screen = st.in_tab(
        &t,
        "ln -sf /etc/hostname \"$NERDR_DATA_DIR/reports.jsonl.new\" && mv -f \"$NERDR_DATA_DIR/reports.jsonl.new\" \"$NERDR_DATA_DIR/reports.jsonl\"",
        "link",
        20,
    );
    assert!(screen.contains("rc-link-0"), "{screen}");
    let said = crate::support::poll(Duration::from_secs(20), || {
        refused_lines(&st).iter().any(|e| {
            e["message"]
                .as_str()
                .is_some_and(|m| m.contains("the file was not read"))
        })
    });
    assert!(
        said,
        "a link in the file's place was not journaled: {:#?}",
        refused_lines(&st)
    );
}

/// A file nerdr would write that git tracks is refused, not changed: the
/// launch says which and what to do, and the committed file is as it was.
#[test]
fn a_tracked_file_in_the_way_refuses_the_launch_and_stays_as_it_was() {
    if !Path::new("/usr/bin/bwrap").exists() {
        crate::support::sysenv::skip("bubblewrap is not installed");
        return;
    }
    // Never started: the install refuses first.
    let config = "[agents.jail]\n\
        command = [\"nerdr\", \"sandbox\", \"--worktree-only\", \"--\", \"claude\"]\n\
        sandboxed = true\nprogram = \"claude\"\ninstall = \"worktree\"\n";
    let Some(st) = RepoSession::start(
        config,
        &[
            crate::support::repo_session::GITCONFIG_MAIN,
            ("work/r/tracked.txt", "one\n"),
            (
                "work/r/.claude/settings.local.json",
                "{ \"model\": \"mine\" }\n",
            ),
        ],
    ) else {
        return;
    };
    let err = st.fails(&["agent", "jail"]);
    assert!(
        err.contains(".claude/settings.local.json is tracked by git")
            && err.contains("git rm --cached .claude/settings.local.json"),
        "{err}"
    );
    for wt in st.worktrees() {
        let path = wt["path"].as_str().unwrap_or_default();
        let kept = std::fs::read_to_string(format!("{path}/.claude/settings.local.json"));
        assert!(kept.is_err() || kept.unwrap() == "{ \"model\": \"mine\" }\n");
    }
    let exclude = std::fs::read_to_string(st.repo.join(".git/info/exclude")).unwrap_or_default();
    assert!(!exclude.contains("/.nerdr/"), "{exclude}");
    // No tab started, and no record of a kept branch is left for the tab
    // that never was (newcomer finding D).
    assert!(st.tabs(&[]).is_empty(), "{:#?}", st.tabs(&[]));
    let worktrees = st.env.home().join(".local/share/nerdr/worktrees");
    assert!(worktrees.is_dir(), "no {}", worktrees.display());
    let records: Vec<PathBuf> = std::fs::read_dir(&worktrees)
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .map(|f| f.path())
        .filter(|p| p.to_string_lossy().ends_with(".left.json"))
        .collect();
    assert!(records.is_empty(), "left behind: {records:?}");
    // ... nor its branch.
    let branches = st.git(&st.repo, &["branch", "--list", "nerdr/*"]);
    assert!(branches.trim().is_empty(), "{branches}");
}

/// A handoff's new tab shares the handing tab's worktree: with both
/// reporting through its file, one tab's lines would count as the other's.
/// The second is refused while the first is open.
#[test]
fn two_open_tabs_never_report_through_one_worktrees_file() {
    let Some(st) = session() else {
        return;
    };
    let (t, wt) = st.tab_and_worktree("jail");
    let (ok, out, err) = st.nerdr(&[
        "handoff",
        "--from",
        &t,
        "--to",
        "jail",
        "DONE: a start. NEXT: the rest.",
    ]);
    assert!(!ok, "a second tab reports through {}: {out}", wt.display());
    assert!(
        err.contains(&format!("already reports for tab {t}")),
        "{err}"
    );
    // The first tab still reports.
    append(
        &st,
        &t,
        r#"{"kind":"state","event":"SessionStart","session_id":"still-mine"}"#,
        "mine",
    );
    let reached = crate::support::poll(Duration::from_secs(20), || {
        session_of(&st, &t) == "still-mine"
    });
    assert!(reached, "{}", st.tab_row(&t));
}

/// `[agents.jail]` as claude to the install (its hooks and skill go into
/// `.claude`), still bash in `nerdr sandbox --worktree-only`.
const JAIL_CLAUDE: &str = "[agents.jail]\n\
    command = [\"nerdr\", \"sandbox\", \"--worktree-only\", \"--\", \"bash\"]\n\
    args = [\"--norc\", \"--noprofile\"]\nsandboxed = true\nprogram = \"bash\"\n\
    detect = \"claude\"\ninstall = \"worktree\"\n";

/// The agent's last run plants links where the install writes its
/// temporary files (`.claude/.settings.local.json.nerdr-tmp`, the skill's):
/// a restart must write neither a file of the person's outside the
/// worktree (its content the agent's own settings, nerdr's hooks merged
/// in) nor a new one where a dangling link points.
#[test]
fn a_planted_link_at_the_installs_temporary_file_writes_nothing_outside() {
    if !Path::new("/usr/bin/bwrap").exists() {
        crate::support::sysenv::skip("bubblewrap is not installed");
        return;
    }
    let Some(st) = RepoSession::on_main(&format!("{SH}{JAIL_CLAUDE}")) else {
        return;
    };
    let victim = st
        .env
        .write_user_file(".config/victim.json", "the person's file\n");
    let made = st.env.home().join(".config/made-by-the-agent");
    let (t, wt) = st.tab_and_worktree("jail");
    assert!(
        wt.join(".claude/settings.local.json").is_file(),
        "no hooks installed in {}",
        wt.display()
    );
    let screen = st.in_tab(
        &t,
        &format!(
            "printf '{{\"hooks\": {{}}, \"from\": \"the agent\"}}\\n' > .claude/settings.local.json \
             && ln -s {} .claude/.settings.local.json.nerdr-tmp \
             && rm .claude/skills/nerdr/SKILL.md \
             && ln -s {} .claude/skills/nerdr/.SKILL.md.nerdr-tmp",
            victim.display(),
            made.display()
        ),
        "plant",
        20,
    );
    assert!(screen.contains("rc-plant-0"), "{screen}");
    let restarted = st.nerdr(&["restart", "--force", &t]);
    // The install ran once the settings have nerdr's hooks again (or the
    // launch was refused): either way, it is over.
    let mut settings = String::new();
    crate::support::poll(Duration::from_secs(20), || {
        settings =
            std::fs::read_to_string(wt.join(".claude/settings.local.json")).unwrap_or_default();
        settings.contains("nerdr") || st.tab_row(&t)["state"] == "refused"
    });
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "the person's file\n",
        "the install wrote through a link the agent planted (restart: {restarted:?}, \
         settings: {settings})"
    );
    assert!(
        !made.exists(),
        "the install made a file where the agent's link pointed"
    );
}

/// A `why` line naming a FIFO of the worktree (no writer ever opens it):
/// the core must not wait on it, and the lines after it are read.
#[test]
fn a_why_line_naming_a_fifo_hangs_nothing() {
    let Some(st) = session() else {
        return;
    };
    let (t, _) = st.tab_and_worktree("jail");
    let screen = st.in_tab(&t, "mkfifo pipe", "fifo", 20);
    assert!(screen.contains("rc-fifo-0"), "{screen}");
    append(
        &st,
        &t,
        r#"{"kind":"why","text":"it pipes: the count needs it","file":"pipe"}"#,
        "why",
    );
    append(
        &st,
        &t,
        r#"{"kind":"state","event":"SessionStart","session_id":"after-the-fifo"}"#,
        "after",
    );
    let reached = crate::support::poll(Duration::from_secs(20), || {
        session_of(&st, &t) == "after-the-fifo"
    });
    assert!(
        reached,
        "a line naming a FIFO stopped the reports: {}",
        st.tab_row(&t)
    );
    // And over `nerdr why` the core answers, in words.
    let (ok, out, err) = st.nerdr(&[
        "why",
        "--folder",
        crate::support::repo_session::s(&st.worktree_of(&t)),
        "pipe",
    ]);
    assert!(!ok && err.contains("not a regular file"), "{out}{err}");
}

/// A flood of refused lines, each refused for a reason of its own words
/// (an unknown kind of its own): the journal gets a few entries a second,
/// not one a line; and emptying the file does not start its 16 MiB again.
#[test]
fn a_flood_of_refused_lines_is_journaled_a_few_times_a_second() {
    let Some(st) = session() else {
        return;
    };
    let (t, _) = st.tab_and_worktree("jail");
    let screen = st.in_tab(
        &t,
        "for i in $(seq 2000); do printf '{\"kind\":\"k%s\"}\\n' $i; done >> \"$NERDR_DATA_DIR/reports.jsonl\"",
        "flood",
        30,
    );
    assert!(screen.contains("rc-flood-0"), "{screen}");
    append(
        &st,
        &t,
        r#"{"kind":"state","event":"SessionStart","session_id":"after-the-flood"}"#,
        "after",
    );
    let reached = crate::support::poll(Duration::from_secs(30), || {
        session_of(&st, &t) == "after-the-flood"
    });
    assert!(reached, "{}", st.tab_row(&t));
    let refused = refused_lines(&st).len();
    assert!(
        (1..=40).contains(&refused),
        "{refused} journal entries for 2000 refused lines"
    );
}
