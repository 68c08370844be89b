//! The real claude and codex (from `$NERDR_AGENT_CLIS`, as `.ci/run`
//! installs them) started by `nerdr agent` under `nerdr sandbox`, doing
//! real turns against the project's fake model server: a prompt typed
//! with `nerdr send` makes the model run a command through the CLI's own
//! shell tool inside the sandbox, and the test checks the result on the
//! host once the agent has exited.
//! - `claude`, `codex`: a `git commit` lands on the tab's branch; after
//!   `nerdr restart` the CLI comes back signed in (no dialog) with what it
//!   wrote to its config folder, and does another turn; codex asks before
//!   an escalated command and Enter (through `nerdr send`) approves it;
//!   config the agent writes that would make the host start a program
//!   (MCP servers, plugins, `notify`) does not survive the run.
//!
//! The sandbox's network namespace has only its own loopback: the CLIs
//! reach the fake model on the host's 127.0.0.1 through nerdr's proxy.
//! Neither needs anything for that (Claude Code 2.1.197, codex-cli
//! 0.171.0): both send their plain-HTTP requests through `HTTP_PROXY`
//! (`NO_PROXY` is empty inside), the proxy allows loopback by default
//! (`allowLocalBinding`), and each test checks the audit trail's record of
//! the connection. With `allowLocalBinding: false` the turns fail.
//!
//! Tests that show a missing protection fail on purpose, naming what
//! survived: `*_config_writes_that_start_programs_do_not_survive_the_run`
//! (nothing guards the agents' config files yet) and
//! `what_claude_writes_to_its_claude_json_in_the_sandbox_is_kept` (see it).

mod claude;
mod codex;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use crate::suites::sandbox::{audit_lines, setup, text, user_git};
use crate::support::agent_home::AgentHome;
use crate::support::fake_model::script::{AFTER_TOOL_TEXT, DEFAULT_TEXT};
use crate::support::fake_model::{FakeModel, Logged, Turn};
use crate::support::poll;
use crate::support::sysenv::{skip, SystemdEnv};

/// Node programs start slowly on a loaded two-core machine, behind
/// nerdr's sandbox check.
const START: Duration = Duration::from_secs(90);
/// One turn: the model's answer, the tool's run, the closing answer.
const TURN: Duration = Duration::from_secs(90);
/// The agent's exit, and nerdr's work after it (its sandbox's end).
const EXIT: Duration = Duration::from_secs(60);

/// Both CLIs show this footer at their idle prompt.
const IDLE: &str = "? for shortcuts";

/// The CLIs' folder, or `None` after a loud skip.
pub fn clis() -> Option<PathBuf> {
    let Some(dir) = std::env::var_os("NERDR_AGENT_CLIS").map(PathBuf::from) else {
        skip(
            "NERDR_AGENT_CLIS is not set; install the CLIs as .ci/run does \
             (npm install --prefix DIR @anthropic-ai/claude-code @openai/codex) \
             and set NERDR_AGENT_CLIS=DIR/node_modules/.bin",
        );
        return None;
    };
    for name in ["claude", "codex"] {
        if !dir.join(name).is_file() {
            skip(&format!(
                "NERDR_AGENT_CLIS={} holds no {name}",
                dir.display()
            ));
            return None;
        }
    }
    Some(dir)
}

/// One CLI under `nerdr sandbox` in a private `systemd --user`, with a fake
/// model to talk to.
pub struct Turns {
    pub env: SystemdEnv,
    pub model: FakeModel,
    /// The agent's name in nerdr's config (and its program).
    pub agent: &'static str,
    path: String,
    agent_env: Vec<(String, String)>,
}

impl Turns {
    /// `None` after a loud skip. `home` says what the CLI's HOME needs, from
    /// the model's URL and the test user's HOME.
    pub fn setup(agent: &'static str, home: impl FnOnce(&str, &Path) -> AgentHome) -> Option<Self> {
        Self::setup_as(agent, true, home)
    }

    /// Like [`Self::setup`], but the built-in agent runs unsandboxed, with
    /// nerdr's integration (`nerdr integration install AGENT`: its hooks
    /// report turns to nerdr) added to the HOME `home` prepared.
    pub fn setup_with_hooks(
        agent: &'static str,
        home: impl FnOnce(&str, &Path) -> AgentHome,
    ) -> Option<Self> {
        let t = Self::setup_as(agent, false, home)?;
        t.ok(&["integration", "install", agent]);
        Some(t)
    }

    fn setup_as(
        agent: &'static str,
        sandboxed: bool,
        home: impl FnOnce(&str, &Path) -> AgentHome,
    ) -> Option<Self> {
        let clis = clis()?;
        let env = setup()?;
        env.run(&["nerdr", "service", "install"]);
        if sandboxed {
            env.write_user_file(
                ".config/nerdr/config.toml",
                format!(
                    "[agents.{agent}]\ncommand = [\"nerdr\", \"sandbox\", \"--\", \"{agent}\"]\n\
                     sandboxed = true\n"
                ),
            );
        }
        let model = FakeModel::start();
        let prepared = home(&model.url(), env.home());
        for (rel, content) in &prepared.files {
            env.write_user_file(rel, content);
        }
        let path = format!(
            "{}:{}:/usr/local/bin:/usr/bin:/bin",
            env.nerdr().parent().unwrap().display(),
            clis.display()
        );
        Some(Turns {
            env,
            model,
            agent,
            path,
            agent_env: prepared.env,
        })
    }

    pub fn proj(&self) -> PathBuf {
        self.env.home().join("proj")
    }

    /// `nerdr ARGS` as the user in the repository, with the CLI's
    /// variables (they reach the agent from the command that starts it).
    pub fn nerdr(&self, args: &[&str]) -> Output {
        let mut cmd = self.user_cmd(&[&["nerdr"], args].concat());
        crate::support::sysenv::output_of(&mut cmd)
    }

    /// `argv` as the user in the repository, with nerdr and the CLIs on
    /// `PATH` and the CLI's variables.
    pub fn user_cmd(&self, argv: &[&str]) -> std::process::Command {
        let mut cmd = self.env.user_cmd(argv);
        cmd.current_dir(self.proj())
            .env("PATH", &self.path)
            .env("TERM", "xterm-256color")
            .envs(self.agent_env.iter().map(|(k, v)| (k, v)));
        cmd
    }

    /// Like [`Self::nerdr`], requiring success; trimmed stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.nerdr(args);
        assert!(
            out.status.success(),
            "nerdr {args:?}: {}\n{}\nthe fake model's log:\n{}",
            out.status,
            text(&out.stderr),
            self.model.dump()
        );
        text(&out.stdout).trim_end().to_string()
    }

    /// `nerdr agent AGENT`; the tab's id.
    pub fn start(&self) -> String {
        self.ok(&["agent", self.agent]).trim().to_string()
    }

    pub fn screen(&self, tab: &str) -> String {
        self.ok(&["read", tab])
    }

    pub fn tab_json(&self, tab: &str) -> serde_json::Value {
        self.tab_json_of(&["tabs", "--json"], tab)
    }

    /// Like [`Self::tab_json`], for a tab of `folder`'s session.
    pub fn tab_json_in(&self, folder: &str, tab: &str) -> serde_json::Value {
        self.tab_json_of(&["tabs", "--json", "--folder", folder], tab)
    }

    fn tab_json_of(&self, args: &[&str], tab: &str) -> serde_json::Value {
        let tabs: Vec<serde_json::Value> = serde_json::from_str(&self.ok(args)).unwrap();
        tabs.into_iter()
            .find(|t| t["id"] == tab)
            .unwrap_or_else(|| panic!("no tab {tab} in nerdr tabs"))
    }

    /// Poll the screen until `cond` holds; panics with the screen, the
    /// model's log and `what` after `timeout`.
    pub fn wait_screen(
        &self,
        tab: &str,
        what: &str,
        timeout: Duration,
        cond: impl Fn(&str) -> bool,
    ) -> String {
        let mut last = String::new();
        let ok = poll(timeout, || {
            last = self.screen(tab);
            cond(&last)
        });
        assert!(
            ok,
            "{}: {what} never came within {timeout:?}; screen:\n{last}\nthe fake model's log:\n{}",
            self.agent,
            self.model.dump()
        );
        last
    }

    /// Wait for the idle prompt; fails at once on a dialog the prepared
    /// HOME should have answered.
    pub fn wait_idle(&self, tab: &str) -> String {
        let screen = self.wait_screen(tab, "the idle prompt", START, |s| {
            s.contains(IDLE) || DIALOGS.iter().any(|d| s.contains(d))
        });
        let dialog = DIALOGS.iter().find(|d| screen.contains(*d));
        assert!(
            dialog.is_none(),
            "{}: a dialog ({dialog:?}) instead of the prompt:\n{screen}",
            self.agent
        );
        screen
    }

    /// Type `prompt` and press Enter separately (a CR in the same write
    /// would be taken as part of a paste). Returns the length of the
    /// model's log before Enter: what the turn asks comes after it.
    pub fn prompt(&self, tab: &str, prompt: &str) -> usize {
        self.ok(&["send", "--no-enter", tab, prompt]);
        self.wait_screen(tab, "the typed prompt", TURN, |s| s.contains(prompt));
        let before = self.model.log().len();
        self.ok(&["send", tab, ""]);
        before
    }

    /// Wait until the model has the result of a command it asked for in
    /// a request logged at `since` or later, saying yes (Enter: the first
    /// choice) to each permission prompt the CLI shows on the way; how
    /// many it answered.
    pub fn wait_tool_result(&self, tab: &str, since: usize) -> usize {
        let mut approved = 0;
        let mut last = String::new();
        let done = poll(TURN, || {
            if self.model.log().iter().skip(since).any(|r| r.after_tool()) {
                return true;
            }
            last = self.screen(tab);
            if PERMISSION_PROMPTS.iter().any(|p| last.contains(p)) {
                self.ok(&["send", tab, ""]);
                approved += 1;
                // Until the prompt is gone, so one prompt gets one Enter.
                poll(TURN, || {
                    let s = self.screen(tab);
                    !PERMISSION_PROMPTS.iter().any(|p| s.contains(p))
                });
            }
            false
        });
        assert!(
            done,
            "{}: the command's result never reached the model within {TURN:?}; screen:\n{last}\n\
             the fake model's log:\n{}",
            self.agent,
            self.model.dump()
        );
        approved
    }

    /// Start the CLI, have the model run `command` through its shell tool
    /// on `marker`, wait for the turn's end, and leave with `exit`. The
    /// tab's id.
    pub fn one_turn(&self, marker: &str, command: &str, exit: &str) -> String {
        self.model.when_user_says(marker, Turn::run(command));
        let tab = self.start();
        self.wait_idle(&tab);
        let since = self.prompt(&tab, &format!("Please {marker}"));
        let approved = self.wait_tool_result(&tab, since);
        eprintln!(
            "{} asked {approved} time(s) before running {command:?}",
            self.agent
        );
        self.wait_closing_answer(&tab);
        self.exit(&tab, exit);
        tab
    }

    /// Wait for the model's closing answer after the tool's result, and
    /// the idle prompt after it.
    pub fn wait_closing_answer(&self, tab: &str) {
        self.wait_screen(tab, "the closing answer", TURN, |s| {
            s.contains(AFTER_TOOL_TEXT) && s.contains(IDLE)
        });
    }

    /// Whether a request carrying a tool's result to the model holds `needle`.
    pub fn a_tool_result_holds(&self, needle: &str) -> bool {
        self.model
            .log()
            .iter()
            .any(|r| r.after_tool() && r.body.contains(needle))
    }

    /// `nerdr restart` the tab, wait for the idle prompt (no dialog), and
    /// have another turn: the model's request that carries it.
    pub fn restart_and_say_hello_again(&self, tab: &str) -> Logged {
        self.ok(&["restart", "--force", tab]);
        self.wait_idle(tab);
        let before = self.prompt(tab, "hello again");
        self.wait_screen(tab, "the second answer", TURN, |s| s.contains(DEFAULT_TEXT));
        let log = self.model.log();
        log[before..]
            .iter()
            .find(|r| {
                r.asked
                    .as_ref()
                    .is_some_and(|a| a.user_text.contains("hello again"))
            })
            .cloned()
            .unwrap_or_else(|| {
                panic!(
                    "the second turn never reached the model:\n{}",
                    self.model.dump()
                )
            })
    }

    /// End the CLI from its prompt and wait until nerdr saw it exit.
    pub fn exit(&self, tab: &str, command: &str) {
        self.prompt(tab, command);
        let mut last = serde_json::Value::Null;
        let exited = poll(EXIT, || {
            last = self.tab_json(tab);
            last["state"] == "exited"
        });
        assert!(
            exited,
            "{}: never exited after {command}: {last}\nscreen:\n{}",
            self.agent,
            self.screen(tab)
        );
    }

    /// The subjects on branch `nerdr/<tab>`, polled until one is `subject`
    /// (the commit may reach the repository only as the sandbox ends).
    pub fn wait_commit(&self, tab: &str, subject: &str) {
        let branch = format!("nerdr/{tab}");
        let mut log = String::new();
        let found = poll(EXIT, || {
            log = user_git(&self.env, &self.proj(), &["log", "--format=%s", &branch]);
            log.lines().any(|l| l == subject)
        });
        assert!(
            found,
            "{}: no commit {subject:?} on {branch} in the repository; its log:\n{log}\n\
             the fake model's log:\n{}",
            self.agent,
            self.model.dump()
        );
    }

    /// The sandbox's audit trail has an allowed connection to the fake
    /// model: the CLI reached it through nerdr's proxy (the sandbox's
    /// loopback is its own), not around it.
    pub fn assert_reached_through_the_proxy(&self) {
        let lines = audit_lines(&self.env);
        let port = self.model.port();
        assert!(
            lines.iter().any(|l| l["event"] == "net"
                && l["phase"] == "opened"
                && l["host"] == "127.0.0.1"
                && l["port"] == port),
            "{}: no connection to 127.0.0.1:{port} through the proxy in the audit trail:\n{lines:#?}",
            self.agent
        );
    }

    pub fn home_file(&self, rel: &str) -> PathBuf {
        self.env.home().join(rel)
    }
}

/// Each CLI's question before it runs a command.
const PERMISSION_PROMPTS: &[&str] = &[
    "Do you want to proceed?",
    "Would you like to run the following command?",
];

/// Text of the dialogs the prepared HOMEs pre-answer (sign-in, API key,
/// folder trust, onboarding).
const DIALOGS: &[&str] = &[
    "Sign in",
    "Do you want to use this API key",
    "Detected a custom API key",
    "Do you trust",
    "trust this folder",
    "Choose the text style",
    "Select login method",
    "Welcome to Codex",
];
