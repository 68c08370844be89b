//! The real claude and codex, installed from the npm registry into
//! `$NERDR_AGENT_CLIS` (`.ci/run` does that), started by `nerdr agent`: each
//! runs on nerdr's PTY in its own worktree, with its session arguments last
//! on its command line, `nerdr read` shows its first screen, and
//! `nerdr close` ends it and whatever it started.
//!
//! They run without credentials and, on the project's machines, without a
//! route to their APIs. What they show then (claude-code 2.1.197, codex-cli
//! 0.171.0):
//!
//! * claude with a fresh HOME: "Welcome to Claude Code v2.1.197"; offline it
//!   then says "Unable to connect to Anthropic services" and exits 1 about a
//!   second after starting. Online (not seen here: these machines cannot
//!   reach api.anthropic.com) its onboarding goes on, to a text style choice.
//! * claude once onboarding is done (`hasCompletedOnboarding` in
//!   `~/.claude.json`): "Accessing workspace:", the folder, and whether to
//!   trust it; it waits there, offline or not. The checks on its /proc entry
//!   need a program that stays, so that test starts it this way.
//! * codex: "Welcome to Codex, OpenAI's command-line coding agent" and its
//!   sign-in choices; it waits there. The npm `codex` is a node script
//!   (`node .../codex ARGS`) that runs the native binary as its child.
//!
//! Neither may phone home from a test: claude gets
//! `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1` (no telemetry, error reports
//! or update checks), codex a config without the update check or analytics.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::support::git::git;
use crate::support::local::{check, pid_alive, Local};
use crate::support::sysenv::skip;
use crate::support::wait_until;

/// The folder holding the `claude` and `codex` to test (`.bin` of an npm prefix).
const CLIS_VAR: &str = "NERDR_AGENT_CLIS";

/// Node-based programs start slowly on a loaded two-core machine.
const FIRST_SCREEN: Duration = Duration::from_secs(60);

/// The CLIs' folder, or `None` after a loud skip.
fn clis() -> Option<PathBuf> {
    let Some(dir) = std::env::var_os(CLIS_VAR).map(PathBuf::from) else {
        skip(&format!(
            "{CLIS_VAR} is not set; install the CLIs as .ci/run does \
             (npm install --prefix DIR @anthropic-ai/claude-code @openai/codex) \
             and set {CLIS_VAR}=DIR/node_modules/.bin"
        ));
        return None;
    };
    for name in ["claude", "codex"] {
        let program = dir.join(name);
        let runnable = std::fs::metadata(&program)
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false);
        if !runnable {
            skip(&format!(
                "{CLIS_VAR}={} holds no runnable {name} (expected {})",
                dir.display(),
                program.display()
            ));
            return None;
        }
    }
    Some(dir)
}

/// An agent started in a fresh repository, as `nerdr tabs --json` lists it.
struct Started {
    l: Local,
    tab: String,
    pid: u32,
    worktree: PathBuf,
    session_id: Option<String>,
    command: Vec<String>,
}

/// `nerdr agent NAME` in a repository with one commit, the CLIs first on
/// PATH, after `prepare` has set up the (isolated) HOME.
fn start(clis: &Path, name: &str, prepare: impl FnOnce(&Path)) -> Started {
    let l = Local::started();
    git(&l.work(), &["init", "-q"]);
    std::fs::write(l.work().join("README"), "a test repository\n").unwrap();
    git(&l.work(), &["add", "."]);
    git(&l.work(), &["commit", "-q", "-m", "first"]);
    prepare(&l.path("home"));

    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", clis.display());
    let out = l
        .cmd(&["agent", name])
        .env("PATH", path)
        // claude: no telemetry, error reports or update checks (the
        // variable covers DISABLE_AUTOUPDATER; that one is named too, in
        // case a version reads only it). codex ignores both.
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .output()
        .unwrap();
    check(&out, true, &format!("nerdr agent {name}"), &l);
    let tab = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let tabs = l.tabs_json(&[]);
    let t = tabs
        .iter()
        .find(|t| t["id"] == tab.as_str())
        .unwrap_or_else(|| panic!("tab {tab} not listed: {tabs:?}"));
    Started {
        tab: tab.clone(),
        pid: t["pid"].as_u64().expect("a pid") as u32,
        worktree: PathBuf::from(t["worktree"].as_str().expect("a worktree")),
        session_id: t["session_id"].as_str().map(str::to_string),
        command: serde_json::from_value(t["command"].clone()).unwrap(),
        l,
    }
}

impl Started {
    /// The process's arguments as the kernel has them.
    fn cmdline(&self) -> Vec<String> {
        let raw = std::fs::read(format!("/proc/{}/cmdline", self.pid))
            .unwrap_or_else(|e| panic!("/proc/{}/cmdline: {e}", self.pid));
        raw.split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect()
    }

    /// It runs in its worktree, and its command line is its program (an
    /// interpreter may come first) followed by exactly `session_args`.
    fn check_process(&self, name: &str, session_args: &[&str]) {
        assert!(
            pid_alive(self.pid),
            "{name} (pid {}) is not running; screen:\n{}",
            self.pid,
            self.l.ok(&["read", &self.tab])
        );
        let cwd = std::fs::read_link(format!("/proc/{}/cwd", self.pid)).unwrap();
        assert_eq!(cwd, self.worktree, "{name} runs in its worktree");
        assert!(
            self.worktree
                .starts_with(self.l.path("data/nerdr/worktrees").canonicalize().unwrap()),
            "{}",
            self.worktree.display()
        );
        let argv = self.cmdline();
        eprintln!("{name}: /proc/{}/cmdline: {argv:?}", self.pid);
        let n = session_args.len();
        assert!(
            argv.len() > n && argv[argv.len() - n..] == *session_args,
            "{name}'s command line {argv:?} does not end with {session_args:?}"
        );
        let program = Path::new(&argv[argv.len() - n - 1]);
        assert_eq!(
            program.file_name().and_then(|f| f.to_str()),
            Some(name),
            "{name}'s command line {argv:?}: the program, then only {session_args:?}"
        );
    }

    /// Close the tab; the program and everything it started are gone.
    fn close(self) {
        let family = descendants(self.pid);
        self.l.ok(&["close", &self.tab]);
        assert!(!pid_alive(self.pid), "pid {} survived close", self.pid);
        wait_until(
            "the programs the agent started to end",
            Duration::from_secs(10),
            || family.iter().all(|p| !pid_alive(*p)),
        );
    }
}

/// Every process below `pid`, from `/proc/*/task/*/children`.
fn descendants(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            for c in children.split_whitespace().filter_map(|c| c.parse().ok()) {
                found.push(c);
                todo.push(c);
            }
        }
    }
    found
}

/// Whether a `--help` text lists `flag` as an option (a line starting with
/// it, or with a short form and then it), not only mentions it.
fn lists_option(help: &str, flag: &str) -> bool {
    help.lines().any(|line| {
        let line = line.trim_start();
        let line = match line.split_once(", ") {
            Some((short, rest)) if short.len() == 2 && short.starts_with('-') => rest,
            _ => line,
        };
        let word = line.split_whitespace().next().unwrap_or("");
        word.split('=').next() == Some(flag)
    })
}

/// Text with all whitespace taken out, so a path the agent wrapped still matches.
fn squeezed(text: &str) -> String {
    text.split_whitespace().collect()
}

#[test]
fn claude_starts_in_its_worktree_with_its_session_id_last() {
    let Some(clis) = clis() else { return };
    // Onboarding done, so claude stays at its trust question instead of
    // checking its API and exiting (see the module docs).
    let a = start(&clis, "claude", |home| {
        std::fs::write(
            home.join(".claude.json"),
            "{\"hasCompletedOnboarding\": true}\n",
        )
        .unwrap();
    });
    let id = a.session_id.clone().expect("claude gets a session id");
    assert_eq!(id.len(), 36, "a UUID: {id}");
    assert_eq!(a.command, ["claude", "--session-id", id.as_str()]);

    let screen =
        a.l.wait_screen_within(&a.tab, "Accessing workspace", FIRST_SCREEN);
    assert!(
        squeezed(&screen).contains(&squeezed(&a.worktree.to_string_lossy())),
        "claude names its worktree {}:\n{screen}",
        a.worktree.display()
    );
    a.check_process("claude", &["--session-id", &id]);
    a.close();
}

#[test]
fn a_fresh_claude_shows_its_welcome_screen() {
    let Some(clis) = clis() else { return };
    let a = start(&clis, "claude", |_| {});
    // Offline it exits about a second later, with the screen left readable;
    // online its onboarding waits for a choice (see the module docs).
    let mut screen =
        a.l.wait_screen_within(&a.tab, "Welcome to Claude Code", FIRST_SCREEN);
    let exited = || a.l.tabs_json(&[])[0]["state"] == "exited";
    crate::support::poll(Duration::from_secs(15), || {
        screen = a.l.ok(&["read", &a.tab]);
        exited() || screen.contains("text style")
    });
    if exited() {
        let t = a.l.tabs_json(&[]);
        assert_eq!(t[0]["exit_code"], 1, "{t:?}");
        assert!(
            screen.contains("Unable to connect to Anthropic services"),
            "claude exited without saying why:\n{screen}"
        );
    }
    eprintln!("claude, fresh (exited: {}):\n{screen}", exited());
    a.l.ok(&["close", &a.tab]);
    assert!(!pid_alive(a.pid));
}

#[test]
fn codex_starts_in_its_worktree_and_alone() {
    let Some(clis) = clis() else { return };
    let a = start(&clis, "codex", |home| {
        std::fs::create_dir(home.join(".codex")).unwrap();
        std::fs::write(
            home.join(".codex/config.toml"),
            "check_for_update_on_startup = false\n\n[analytics]\nenabled = false\n",
        )
        .unwrap();
    });
    // The test's own reading of `codex --help`, run the way nerdr runs it.
    let help = Command::new(clis.join("codex"))
        .arg("--help")
        .env_clear()
        .env("HOME", a.l.path("home"))
        .env(
            "PATH",
            format!("{}:/usr/local/bin:/usr/bin:/bin", clis.display()),
        )
        .env("NO_COLOR", "1")
        .current_dir("/")
        .output()
        .unwrap();
    assert!(help.status.success(), "codex --help: {help:?}");
    let help = String::from_utf8_lossy(&help.stdout);
    let session_args: &[&str] = if lists_option(&help, "--no-daemon") {
        &["--no-daemon"]
    } else {
        &[]
    };
    let mut want = vec!["codex"];
    want.extend_from_slice(session_args);
    assert_eq!(a.command, want, "codex --help:\n{help}");

    a.l.wait_screen_within(&a.tab, "Welcome to Codex", FIRST_SCREEN);
    a.l.wait_screen(&a.tab, "Sign in");
    a.check_process("codex", session_args);
    let family = descendants(a.pid);
    assert!(
        !family.is_empty(),
        "the npm codex runs the native codex as its child"
    );
    a.close();
}

#[test]
fn lists_option_needs_the_option_itself() {
    let help = "Options:\n  -c, --config <key=value>\n      --no-daemon\n  see --resume-last\n";
    assert!(lists_option(help, "--no-daemon"));
    assert!(lists_option(help, "--config"));
    assert!(!lists_option(help, "--resume-last"));
    assert!(!lists_option(help, "--no"));
}
