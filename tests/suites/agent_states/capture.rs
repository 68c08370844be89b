//! The capture tool: runs the real claude and codex (`$NERDR_AGENT_CLIS`)
//! in a 120x40 tmux pane against the fake model and writes what they show
//! in each state to `tests/fixtures/screens/{claude,codex}/` as
//! `<expected>-<slug>.screen` (the corpus the screen rules are written
//! from and checked against). Ignored by default; run it by hand:
//!
//! ```sh
//! NERDR_AGENT_CLIS=/opt/nerdr-ci-agents/node_modules/.bin \
//!     cargo test --test all capture -- --ignored --nocapture
//! ```
//!
//! It overwrites the files it writes (the random parts, claude's spinner
//! verbs and Tips, differ run to run) and leaves others alone. `expect:`
//! is the state a person sees on that screen, set here by the scenario
//! (never by a rule); `rule:` is the rules' author's: empty in a new
//! file, kept from the file a capture overwrites. Review
//! the diff before committing: a new CLI version may show something the
//! scenario's waits did not expect.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::pane::{Pane, COLS, ROWS};
use super::{claude_home, clis, codex_home, ClaudeDialogs, CodexDialogs, SLOW_ANSWER, SLOW_END};
use crate::support::agent_home::AgentHome;
use crate::support::fake_model::{FakeModel, Turn};

/// Screens kept of one slow answer.
const WORKING_SHOTS: usize = 4;

/// Starting, a turn.
const START: Duration = Duration::from_secs(60);
const TURN: Duration = Duration::from_secs(90);

const CLAUDE_VERSION: &str = "Claude Code 2.1.197";
const CODEX_VERSION: &str = "codex-cli 0.171.0";

/// One captured screen and what it shows.
struct Shot {
    agent: &'static str,
    expect: &'static str,
    slug: String,
    /// The rule that must match, as the rules' author set it in an
    /// earlier capture of the same name (empty at first).
    rule: String,
    title: String,
    source: String,
    rows: Vec<String>,
}

impl Shot {
    fn text(&self) -> String {
        let mut out = format!(
            "agent: {}\nexpect: {}\nrule:{}\ntitle: {}\nsource: {}\n---\n",
            self.agent,
            self.expect,
            if self.rule.is_empty() {
                String::new()
            } else {
                format!(" {}", self.rule)
            },
            self.title,
            self.source
        );
        for r in &self.rows {
            out.push_str(r);
            out.push('\n');
        }
        out
    }
}

/// Where the shots of one CLI go, and what they have in common.
struct Camera {
    agent: &'static str,
    version: &'static str,
    dir: PathBuf,
    written: Vec<String>,
}

impl Camera {
    fn new(agent: &'static str, version: &'static str) -> Camera {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/screens")
            .join(agent);
        std::fs::create_dir_all(&dir).unwrap();
        Camera {
            agent,
            version,
            dir,
            written: Vec::new(),
        }
    }

    /// Write the pane's screen now as `<expect>-<slug>.screen`; `what`
    /// describes the scenario for the `source:` line.
    fn shoot(&mut self, pane: &Pane, expect: &'static str, slug: &str, what: &str) -> Vec<String> {
        let mut shot = Shot {
            agent: self.agent,
            expect,
            slug: slug.to_string(),
            rule: String::new(),
            title: pane.title(),
            source: format!("{}, tmux {COLS}x{ROWS}, fake model, {what}", self.version),
            rows: pane.rows(),
        };
        let name = format!("{expect}-{}.screen", shot.slug);
        let path = self.dir.join(&name);
        shot.rule = kept_rule(&path);
        std::fs::write(&path, shot.text()).unwrap();
        eprintln!("wrote {}/{name}", self.agent);
        self.written.push(name);
        shot.rows
    }
}

/// The `rule:` header of the capture at `path`, if there is one: a new
/// capture of the same screen keeps the rule its author named.
fn kept_rule(path: &Path) -> String {
    let Ok(text) = std::fs::read_to_string(path) else {
        return String::new();
    };
    text.lines()
        .take_while(|l| *l != "---")
        .find_map(|l| l.strip_prefix("rule:"))
        .map(|r| r.trim().to_string())
        .unwrap_or_default()
}

fn temp() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("nerdr-capture")
        .tempdir()
        .unwrap()
}

/// A HOME with the files `prepare` gives for it (it also gets the
/// repository's path), and a git repository `proj` to work in; `(dir,
/// home, proj, env)`.
fn home_with(
    prepare: impl FnOnce(&Path, &Path) -> AgentHome,
) -> (tempfile::TempDir, PathBuf, PathBuf, Vec<(String, String)>) {
    let dir = temp();
    let home = dir.path().join("home");
    let proj = home.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let prepared = prepare(&home, &proj);
    for (rel, content) in &prepared.files {
        let p = home.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
    let ok = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&proj)
        .status()
        .unwrap()
        .success();
    assert!(ok, "git init in {}", proj.display());
    (dir, home, proj, prepared.env)
}

/// The variables every CLI gets: HOME, PATH (the CLIs first), and the
/// CLI's own.
fn base_env(home: &Path, clis: &Path, extra: &[(String, String)]) -> Vec<(String, String)> {
    let mut env = vec![
        ("HOME".to_string(), home.display().to_string()),
        (
            "PATH".to_string(),
            format!("{}:/usr/local/bin:/usr/bin:/bin", clis.display()),
        ),
        ("LANG".to_string(), "C.UTF-8".to_string()),
    ];
    env.extend(extra.iter().cloned());
    env
}

/// Capture screens while a slow answer streams: one every `every` until the
/// answer is all there (at most [`WORKING_SHOTS`]), each different from
/// the last.
fn working_shots(
    cam: &mut Camera,
    pane: &Pane,
    prefix: &str,
    every: Duration,
    what: &str,
    finished: impl Fn(&str) -> bool,
) -> usize {
    let end = Instant::now() + TURN;
    let mut last: Vec<String> = Vec::new();
    let mut n = 0;
    std::thread::sleep(Duration::from_millis(1500));
    while Instant::now() < end && n < WORKING_SHOTS {
        let rows = pane.rows();
        let screen = rows.join("\n");
        if finished(&screen) {
            break;
        }
        if rows != last {
            n += 1;
            let mut slug = format!("{prefix}-{n}");
            if rows.iter().any(|r| r.contains("Tip:")) {
                slug.push_str("-tip");
            }
            last = cam.shoot(pane, "working", &slug, what);
        }
        std::thread::sleep(every);
    }
    n
}

/// The prompt that makes the model ask for a command: shoot the CLI's
/// question (`blocked`), approve it with Enter, shoot the turn's end.
fn ask_and_approve(
    pane: &Pane,
    cam: &mut Camera,
    question: &str,
    (slug, what): (&str, &str),
    finished: &str,
) {
    pane.prompt("Please RUN-ASKING");
    pane.wait("the approval prompt", TURN, |s| s.contains(question));
    std::thread::sleep(Duration::from_millis(800));
    cam.shoot(pane, "blocked", slug, what);
    pane.keys(&["Enter"]);
    pane.wait("the closing answer", TURN, |s| {
        s.contains("The command ran; done.") && s.contains("? for shortcuts")
    });
    std::thread::sleep(Duration::from_millis(500));
    cam.shoot(pane, "done", "after-tool", finished);
}

#[test]
#[ignore = "writes tests/fixtures/screens; run by hand (see the module docs)"]
fn capture_claude_screens() {
    let Some(clis) = clis() else { return };
    let mut cam = Camera::new("claude", CLAUDE_VERSION);
    let model = FakeModel::start();
    model.when_user_says("GO-SLOW", Turn::Slow(SLOW_ANSWER.into()));
    // A command that writes: claude runs read-only ones (`echo`) without
    // asking.
    model.when_user_says("RUN-ASKING", Turn::run("echo ran > asked.txt"));

    // A turn, a slow turn, a permission prompt, in one session.
    {
        let (dir, home, proj, env) = home_with(|home, _| {
            claude_home(
                &model.url(),
                home,
                ClaudeDialogs {
                    bash_allowed: false,
                    ..ClaudeDialogs::none()
                },
            )
        });
        let pane = Pane::start(
            dir.path(),
            &proj,
            &base_env(&home, &clis, &env),
            &["claude"],
        );
        pane.wait("the idle prompt", START, |s| s.contains("? for shortcuts"));
        std::thread::sleep(Duration::from_millis(800));
        cam.shoot(&pane, "idle", "prompt", "idle at the prompt");
        // In a detached tmux, claude adds a footer about focus-events after
        // a few seconds.
        if pane
            .poll(Duration::from_secs(15), |s| s.contains("focus"))
            .is_some()
        {
            cam.shoot(
                &pane,
                "idle",
                "prompt-focus-events",
                "idle at the prompt, the focus-events footer",
            );
        }

        pane.prompt("Say hello");
        pane.wait("the short answer", TURN, |s| {
            s.contains("Hello from the fake model.") && s.contains("? for shortcuts")
        });
        std::thread::sleep(Duration::from_millis(500));
        cam.shoot(&pane, "done", "short-answer", "a short answer just ended");

        for round in 1..=2 {
            pane.prompt(&format!("Please GO-SLOW ({round})"));
            working_shots(
                &mut cam,
                &pane,
                &format!("slow{round}"),
                Duration::from_millis(4000),
                "a slow answer streaming",
                |s| s.contains(SLOW_END) && s.contains("? for shortcuts"),
            );
            pane.wait("the slow answer's end", TURN, |s| {
                s.contains(SLOW_END) && s.contains("? for shortcuts")
            });
            std::thread::sleep(Duration::from_millis(500));
            cam.shoot(
                &pane,
                "done",
                &format!("slow{round}-finished"),
                "a slow answer just ended (the done line)",
            );
        }

        ask_and_approve(
            &pane,
            &mut cam,
            "Do you want to proceed?",
            ("permission-bash", "Bash permission prompt"),
            "the turn ended after an approved Bash command",
        );
        // The same screen with a new prompt typed: the person is back.
        pane.text("next question");
        pane.wait("the typed text", TURN, |s| s.contains("next question"));
        cam.shoot(
            &pane,
            "idle",
            "typing-after-done",
            "a prompt being typed after a turn",
        );
    }

    // The folder-trust dialog.
    {
        let (dir, home, proj, env) = home_with(|home, _| {
            claude_home(
                &model.url(),
                home,
                ClaudeDialogs {
                    trusted: false,
                    ..ClaudeDialogs::none()
                },
            )
        });
        let pane = Pane::start(
            dir.path(),
            &proj,
            &base_env(&home, &clis, &env),
            &["claude"],
        );
        pane.wait("the trust dialog", START, |s| s.contains("trust"));
        std::thread::sleep(Duration::from_millis(800));
        cam.shoot(
            &pane,
            "blocked",
            "trust-folder",
            "folder-trust dialog (no hasTrustDialogAccepted)",
        );
    }

    // A key claude has not approved yet: "use this API key?".
    {
        let (dir, home, proj, env) = home_with(|home, _| {
            claude_home(
                &model.url(),
                home,
                ClaudeDialogs {
                    key_approved: false,
                    ..ClaudeDialogs::none()
                },
            )
        });
        let pane = Pane::start(
            dir.path(),
            &proj,
            &base_env(&home, &clis, &env),
            &["claude"],
        );
        pane.wait("the API key question", START, |s| s.contains("API key"));
        std::thread::sleep(Duration::from_millis(800));
        cam.shoot(
            &pane,
            "blocked",
            "use-this-api-key",
            "a custom API key not approved yet",
        );
    }

    // An empty HOME: the welcome splash, before claude gives up and exits
    // (its first run checks api.anthropic.com whatever the base URL).
    {
        let (dir, home, proj, _) = home_with(|_, _| AgentHome::default());
        let pane = Pane::start(dir.path(), &proj, &base_env(&home, &clis, &[]), &["claude"]);
        pane.wait("the welcome", START, |s| {
            s.contains("Welcome to Claude Code")
        });
        cam.shoot(
            &pane,
            "none",
            "welcome-offline",
            "an empty HOME, offline: the welcome splash (claude exits 1 after it)",
        );
    }
    eprintln!("claude: {} screens: {:?}", cam.written.len(), cam.written);
}

#[test]
#[ignore = "writes tests/fixtures/screens; run by hand (see the module docs)"]
fn capture_codex_screens() {
    let Some(clis) = clis() else { return };
    let mut cam = Camera::new("codex", CODEX_VERSION);
    let model = FakeModel::start();
    model.when_user_says("GO-SLOW", Turn::Slow(SLOW_ANSWER.into()));
    model.when_user_says(
        "RUN-ASKING",
        Turn::Run {
            command: "echo ran > asked.txt".into(),
            escalate: true,
        },
    );

    {
        let (dir, home, proj, env) =
            home_with(|home, proj| codex_home(&model.url(), home, proj, CodexDialogs::NONE));
        let pane = Pane::start(
            dir.path(),
            &proj,
            &base_env(&home, &clis, &env),
            &["codex", "--no-daemon"],
        );
        pane.wait("the idle prompt", START, |s| s.contains("? for shortcuts"));
        std::thread::sleep(Duration::from_millis(1500));
        cam.shoot(&pane, "idle", "prompt", "idle at the composer");

        pane.prompt("Say hello");
        pane.wait("the short answer", TURN, |s| {
            s.contains("Hello from the fake model.") && s.contains("? for shortcuts")
        });
        std::thread::sleep(Duration::from_millis(500));
        cam.shoot(&pane, "done", "short-answer", "a short answer just ended");

        pane.prompt("Please GO-SLOW");
        // Its Working line shows only until the answer's first words.
        if pane
            .poll(Duration::from_secs(3), |s| s.contains("esc to interrupt"))
            .is_some()
        {
            cam.shoot(
                &pane,
                "working",
                "slow-working-line",
                "the slow answer asked, before its first words (the Working line)",
            );
        }
        working_shots(
            &mut cam,
            &pane,
            "slow",
            Duration::from_millis(3500),
            "a slow answer streaming",
            |s| s.contains(SLOW_END) && s.contains("? for shortcuts"),
        );
        pane.wait("the slow answer's end", TURN, |s| {
            s.contains(SLOW_END) && s.contains("? for shortcuts")
        });
        std::thread::sleep(Duration::from_millis(500));
        cam.shoot(&pane, "done", "slow-finished", "a slow answer just ended");

        ask_and_approve(
            &pane,
            &mut cam,
            "Would you like to run the following command?",
            (
                "approve-escalated-command",
                "approval prompt for an escalated exec_command",
            ),
            "the turn ended after an approved command",
        );
        pane.text("next question");
        pane.wait("the typed text", TURN, |s| s.contains("next question"));
        cam.shoot(
            &pane,
            "idle",
            "typing-after-done",
            "a prompt being typed after a turn",
        );

        // The conversation still open here, resumed by a second codex:
        // its lock.
        let second_dir = dir.path().join("second");
        std::fs::create_dir_all(&second_dir).unwrap();
        let second = Pane::start(
            &second_dir,
            &proj,
            &base_env(&home, &clis, &env),
            &["codex", "--no-daemon", "resume", "--last"],
        );
        second.wait("the lock", START, |s| s.contains("open in another app"));
        std::thread::sleep(Duration::from_millis(800));
        cam.shoot(
            &second,
            "blocked",
            "conversation-open-elsewhere",
            "`codex resume --last` of the conversation another codex has open",
        );
    }

    // A folder it does not trust yet: the trust question.
    {
        let (dir, home, proj, env) = home_with(|home, proj| {
            codex_home(
                &model.url(),
                home,
                proj,
                CodexDialogs {
                    trusted: false,
                    ..CodexDialogs::NONE
                },
            )
        });
        let pane = Pane::start(
            dir.path(),
            &proj,
            &base_env(&home, &clis, &env),
            &["codex", "--no-daemon"],
        );
        pane.wait("the trust question", START, |s| {
            s.contains("Trust this folder?")
        });
        std::thread::sleep(Duration::from_millis(1000));
        cam.shoot(
            &pane,
            "blocked",
            "trust-folder",
            "the folder-trust question (no trust_level for the folder)",
        );
    }

    // No custom provider: the sign-in choice.
    {
        let (dir, home, proj, env) = home_with(|home, proj| {
            codex_home(
                &model.url(),
                home,
                proj,
                CodexDialogs {
                    signed_in: false,
                    ..CodexDialogs::NONE
                },
            )
        });
        let pane = Pane::start(
            dir.path(),
            &proj,
            &base_env(&home, &clis, &env),
            &["codex", "--no-daemon"],
        );
        pane.wait("the sign-in choice", START, |s| s.contains("Sign in"));
        std::thread::sleep(Duration::from_millis(1000));
        cam.shoot(
            &pane,
            "blocked",
            "sign-in",
            "the sign-in choice (no custom provider)",
        );
    }
    eprintln!("codex: {} screens: {:?}", cam.written.len(), cam.written);
}
