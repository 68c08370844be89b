//! The README's quick start, run as written (issue 16, acceptance 10): the
//! lines of the one ```sh block between `<!-- quickstart -->` and
//! `<!-- /quickstart -->`, each run in order as the test user of a private
//! `systemd --user`, after the install `packaging/install.sh` does. The
//! first line that fails (or hangs) fails the test, naming it. A line that
//! is `nerdr` alone is the window: it runs in a real tmux pane, waits for
//! the status line, detaches with `C-b d` as a person would, and must exit 0.
//!
//! Each line runs in the folder the previous one left (`cd` carries over,
//! as in the person's shell); `~` is the test user's fresh HOME.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use crate::support::sysenv::{describe, SystemdEnv};

const README: &str = include_str!("../../README.md");
const INSTALL_SH: &str = include_str!("../../packaging/install.sh");
const OPEN: &str = "<!-- quickstart -->";
const CLOSE: &str = "<!-- /quickstart -->";
/// The longest one line may take (a doctor, a launch, a wait).
const LINE_SECS: u64 = 60;

/// The commands of the quick start: the lines of its only ```sh block,
/// without blank lines and whole-line comments (a trailing comment is the
/// shell's business). Panics, saying what is wrong, when the markers or
/// the block are not there as the test expects.
fn quickstart(readme: &str) -> Vec<String> {
    let start = readme
        .find(OPEN)
        .unwrap_or_else(|| panic!("README.md has no {OPEN} marker"));
    let end = readme[start..]
        .find(CLOSE)
        .map(|i| start + i)
        .unwrap_or_else(|| panic!("README.md has no {CLOSE} after {OPEN}"));
    let inside = &readme[start + OPEN.len()..end];
    let fences: Vec<usize> = inside
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("```"))
        .map(|(i, _)| i)
        .collect();
    let lines: Vec<&str> = inside.lines().collect();
    assert!(
        fences.len() == 2 && lines[fences[0]].trim() == "```sh",
        "the quick start must be exactly one ```sh block between the markers, found fences at {fences:?}:\n{inside}"
    );
    let commands: Vec<String> = lines[fences[0] + 1..fences[1]]
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect();
    assert!(
        !commands.is_empty(),
        "the quick start's block holds no command"
    );
    commands
}

/// The window line: `nerdr` and nothing else but a comment.
fn is_window(line: &str) -> bool {
    line.split('#').next().unwrap_or("").trim() == "nerdr"
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What the core wrote, for a failure's report.
fn core_log(env: &SystemdEnv) -> String {
    std::fs::read_to_string(env.home().join(".local/state/nerdr/core.log")).unwrap_or_default()
}

/// Run one line as the user in `cwd`, through bash as the person's shell
/// would; returns its output and the folder it ended in.
fn run_line(env: &SystemdEnv, cwd: &Path, line: &str) -> (Output, PathBuf) {
    let cwd_file = env.home().join(".quickstart-cwd");
    let script = r#"cd -- "$1" || exit 97; eval "$2"; rc=$?; pwd >"$3"; exit $rc"#;
    let mut cmd = env.user_cmd(&[
        "timeout",
        &LINE_SECS.to_string(),
        "bash",
        "-c",
        script,
        "quickstart",
        cwd.to_str().unwrap(),
        line,
        cwd_file.to_str().unwrap(),
    ]);
    let out = crate::support::sysenv::output_of(&mut cmd);
    let after = std::fs::read_to_string(&cwd_file)
        .map(|s| PathBuf::from(s.trim_end()))
        .unwrap_or_else(|_| cwd.to_path_buf());
    let _ = std::fs::remove_file(&cwd_file);
    if !out.status.success() {
        panic!(
            "the README's quick start line `{line}` failed (in {}):{}core.log:\n{}",
            cwd.display(),
            describe(&cmd, &out),
            core_log(env)
        );
    }
    (out, after)
}

/// A tmux server of the test user's, inside the environment.
struct Pane<'a> {
    env: &'a SystemdEnv,
    sock: PathBuf,
}

impl<'a> Pane<'a> {
    /// `cd CWD && nerdr` in a new 100x30 pane; the pane stays after the
    /// window ends, printing its exit code.
    fn open(env: &'a SystemdEnv, cwd: &Path, line: &str) -> Self {
        let pane = Pane {
            env,
            sock: env.home().join(".quickstart-tmux.sock"),
        };
        // A newline, not `;`, after the line: its comment ends there.
        let shell = format!(
            "cd '{}' && {line}\necho QUICKSTART-EXIT=$?; sleep 600",
            cwd.display()
        );
        let out = pane.tmux(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-x",
            "100",
            "-y",
            "30",
            &shell,
        ]);
        assert!(out.status.success(), "tmux new-session: {out:?}");
        pane
    }

    fn tmux(&self, args: &[&str]) -> Output {
        let mut cmd = self
            .env
            .user_cmd(&[&["tmux", "-S", self.sock.to_str().unwrap()], args].concat());
        cmd.env("TERM", "xterm-256color");
        crate::support::sysenv::output_of(&mut cmd)
    }

    fn screen(&self) -> String {
        text(&self.tmux(&["capture-pane", "-p", "-t", "0"]))
    }

    fn wait_for(&self, what: &str, cond: impl Fn(&str) -> bool) -> String {
        let mut last = String::new();
        let ok = crate::support::poll(Duration::from_secs(LINE_SECS), || {
            last = self.screen();
            cond(&last)
        });
        assert!(
            ok,
            "the README's quick start: the window never showed {what}; screen:\n{last}\ncore.log:\n{}",
            core_log(self.env)
        );
        last
    }
}

impl Drop for Pane<'_> {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

/// The window, as a person uses it in the quick start: it comes up showing
/// the session's tab in its status line, and `C-b d` leaves it (exit 0)
/// with the tab still there.
fn run_window(env: &SystemdEnv, cwd: &Path, line: &str) {
    let pane = Pane::open(env, cwd, line);
    // The status line ends with the help hint once the window is drawn;
    // a window that failed prints its error and the exit code instead.
    let up = pane.wait_for("its status line", |s| {
        s.contains("? help") || s.contains("QUICKSTART-EXIT=")
    });
    assert!(
        !up.contains("QUICKSTART-EXIT="),
        "the README's quick start line `{line}` ended instead of showing the window:\n{up}\ncore.log:\n{}",
        core_log(env)
    );
    eprintln!("quick start: the window, as captured:\n{up}");
    pane.tmux(&["send-keys", "-t", "0", "C-b", "d"]);
    let left = pane.wait_for("the shell after C-b d", |s| s.contains("QUICKSTART-EXIT="));
    assert!(
        left.contains("QUICKSTART-EXIT=0"),
        "the README's quick start line `{line}` did not exit 0 after C-b d:\n{left}"
    );
}

#[test]
fn the_readme_quick_start_runs_as_written() {
    let commands = quickstart(README);
    let Some(env) = SystemdEnv::start() else {
        return;
    };
    // What packaging/install.sh does once cargo has built the binary; the
    // harness put that binary first on the user's PATH.
    let install = r#""$bin" service install --bin "$bin""#;
    assert!(
        INSTALL_SH.contains(install),
        "packaging/install.sh no longer runs `{install}`: make this test install as it does"
    );
    let bin = env.nerdr();
    env.run(&[
        "nerdr",
        "service",
        "install",
        "--bin",
        bin.to_str().unwrap(),
    ]);

    let mut cwd = env.home().to_path_buf();
    for line in &commands {
        eprintln!("quick start $ {line}");
        if is_window(line) {
            run_window(&env, &cwd, line);
            continue;
        }
        let (out, after) = run_line(&env, &cwd, line);
        eprint!("{}", text(&out));
        cwd = after;
    }
}

#[test]
fn the_quick_start_block_is_found_and_split_into_lines() {
    let readme = "intro\n<!-- quickstart -->\n```sh\n# a comment\nnerdr doctor   # checks\n\n  cd ~/x\nnerdr\n```\n<!-- /quickstart -->\n```sh\nnot this\n```\n";
    assert_eq!(
        quickstart(readme),
        ["nerdr doctor   # checks", "cd ~/x", "nerdr"]
    );
    assert!(is_window("nerdr   # the window"));
    assert!(!is_window("nerdr tabs"));
    assert!(!quickstart(README).is_empty());
}

/// The README's picture of the window, captured as its caption says:
/// codex at its sign-in (from `$NERDR_AGENT_CLIS`), a shell renamed
/// `tests`, another shell shown after `git log` and `nerdr tabs`, in an
/// 80x16 pane. Prints the capture; paste it between `<!-- window -->` and
/// `<!-- /window -->`. Ignored: it needs the real codex, and it only
/// makes the picture (`cargo test --test all capture_the_readme_window --
/// --ignored --nocapture`).
#[test]
#[ignore]
fn capture_the_readme_window() {
    let Ok(clis) = std::env::var("NERDR_AGENT_CLIS") else {
        crate::support::sysenv::skip("NERDR_AGENT_CLIS is not set (it must hold codex)");
        return;
    };
    let Some(env) = SystemdEnv::start() else {
        return;
    };
    env.run(&["nerdr", "service", "install"]);
    let shop = env.home().join("shop");
    let sh = |script: &str| {
        let mut cmd = env.user_cmd(&["sh", "-c", script]);
        let path = format!(
            "{}:{clis}:/usr/local/bin:/usr/bin:/bin",
            env.nerdr().parent().unwrap().display()
        );
        cmd.env("PATH", path);
        crate::support::sysenv::run_ok(&mut cmd)
    };
    sh(
        "mkdir -p ~/shop && cd ~/shop && git init -q && git config user.email me@example.com \
        && git config user.name me && echo '# shop' > README.md && git add . \
        && git commit -qm 'first commit'",
    );
    sh(
        "cd ~/shop && nerdr agent codex && nerdr agent -- bash && nerdr agent -- bash \
        && nerdr rename 2 tests",
    );
    let pane = Pane {
        env: &env,
        sock: env.home().join(".quickstart-tmux.sock"),
    };
    let shell = format!("cd '{}' && nerdr\nsleep 600", shop.display());
    let out = pane.tmux(&[
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-x",
        "80",
        "-y",
        "16",
        &shell,
    ]);
    assert!(out.status.success(), "tmux new-session: {out:?}");
    pane.wait_for("the status line", |s| s.contains("? help"));
    pane.wait_for("codex at its sign-in, blocked", |s| s.contains("codex-1!"));
    pane.tmux(&["send-keys", "-t", "0", "C-b", "3"]);
    pane.tmux(&["send-keys", "-t", "0", "PS1='~/shop$ '; clear", "Enter"]);
    pane.wait_for("the shell's prompt", |s| {
        s.trim_start().starts_with("~/shop$")
    });
    pane.tmux(&["send-keys", "-t", "0", "git log --format='%h %s'", "Enter"]);
    pane.wait_for("git log", |s| s.contains("first commit"));
    pane.tmux(&["send-keys", "-t", "0", "nerdr tabs", "Enter"]);
    let shot = pane.wait_for("nerdr tabs, then the prompt", |s| {
        s.contains("bash-2") && s.matches("~/shop$").count() >= 3
    });
    let lines: Vec<&str> = shot.lines().map(str::trim_end).collect();
    println!("{}", lines.join("\n"));
}
