//! What the real claude and codex (`$NERDR_AGENT_CLIS`) show in each agent
//! state, against the project's fake model:
//! - `claude`, `codex`: each under nerdr (`nerdr sandbox`, as in
//!   `agent_turns`) goes through the states a person sees, and nerdr says
//!   so in `nerdr tabs --json`, `nerdr wait` and `nerdr explain`
//!   (`observe`): idle at its prompt, working while a slow answer streams
//!   (codex shows no Working line then), done after the turn while no
//!   window shows the tab, blocked at its permission prompt (`nerdr wait
//!   --until blocked` returns), done again once `nerdr send` approved and
//!   the command ran, idle once a window shows the tab; and blocked at
//!   claude's folder-trust dialog and codex's sign-in choice.
//! - `capture` (ignored; run by hand) records their screens in a tmux pane
//!   (`pane`) as the corpus `tests/fixtures/screens/{claude,codex}/`.
//!
//! The dialogs a test wants to see are chosen here ([`ClaudeDialogs`],
//! [`CodexDialogs`]) on top of `support::agent_home`, which removes them
//! all.

mod capture;
mod claude;
mod codex;
mod observe;
mod pane;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::suites::agent_turns::Turns;
use crate::support::agent_home::{self, AgentHome, CodexAsks};
use crate::support::fake_model::script::{AFTER_TOOL_TEXT, SLOW_WORD};
use crate::support::fake_model::Turn;
use observe::{
    agent_state, explained_by_a_rule, report, wait_returns, wait_state, Findings, Window,
};

pub use crate::suites::agent_turns::clis;

/// A slow answer (one word every `script::SLOW_WORD`, about 18 s): long
/// enough to look at the CLI while it streams. Its last words tell the
/// answer is all there.
pub const SLOW_ANSWER: &str = "This answer streams slowly, one word at a time, so that \
    the terminal shows the agent at work for a good while: first a few words, then a \
    few more, while the spinner turns and the clock runs, and nobody has to wait for \
    anything else to happen before the end of the slow answer.";

/// The last word of [`SLOW_ANSWER`], the only one with a full stop: on
/// screen, the answer is all there (a word: however the terminal's width
/// wraps the answer).
pub const SLOW_END: &str = "answer.";

/// Which of claude's questions stay in the way.
#[derive(Debug, Clone, Copy)]
pub struct ClaudeDialogs {
    /// The HOME (and so every folder under it) is trusted: no folder-trust
    /// dialog.
    pub trusted: bool,
    /// `Bash` is allowed: no "Do you want to proceed?" before a command.
    pub bash_allowed: bool,
    /// The key's last 20 characters are approved: no "use this API key?".
    pub key_approved: bool,
}

impl ClaudeDialogs {
    /// No question in the way.
    pub fn none() -> Self {
        ClaudeDialogs {
            trusted: true,
            bash_allowed: true,
            key_approved: true,
        }
    }
}

/// claude's HOME against `url`, with the dialogs `dialogs` keeps.
pub fn claude_home(url: &str, home: &Path, dialogs: ClaudeDialogs) -> AgentHome {
    let mut prepared = agent_home::claude(url, home);
    for (rel, content) in &mut prepared.files {
        let mut doc: Value = serde_json::from_str(content).unwrap();
        match rel.as_str() {
            ".claude.json" if !dialogs.trusted || !dialogs.key_approved => {
                if !dialogs.trusted {
                    for p in doc["projects"].as_object_mut().unwrap().values_mut() {
                        p.as_object_mut().unwrap().remove("hasTrustDialogAccepted");
                    }
                }
                if !dialogs.key_approved {
                    doc["customApiKeyResponses"]["approved"] = json!([]);
                }
            }
            ".claude/settings.json" if !dialogs.bash_allowed => doc = json!({}),
            _ => continue,
        }
        *content = format!("{doc:#}\n");
    }
    prepared
}

/// Which of codex's questions stay in the way (it always asks before an
/// escalated command: `CodexAsks::OnEscalation`).
#[derive(Debug, Clone, Copy)]
pub struct CodexDialogs {
    /// A custom provider with a key: no sign-in choice.
    pub signed_in: bool,
    /// `home` and `proj` trusted: no folder-trust question at the start.
    pub trusted: bool,
}

impl CodexDialogs {
    /// Signed in and trusting: only the approval prompt is left.
    pub const NONE: CodexDialogs = CodexDialogs {
        signed_in: true,
        trusted: true,
    };
}

/// codex's HOME against `url`, trusting `home` and `proj`, with the
/// dialogs `dialogs` keeps.
pub fn codex_home(url: &str, home: &Path, proj: &Path, dialogs: CodexDialogs) -> AgentHome {
    let mut prepared = agent_home::codex(url, home, &[proj], CodexAsks::OnEscalation);
    if !dialogs.trusted {
        // The `[projects."..."]` tables come last: cut them.
        for (_, config) in &mut prepared.files {
            if let Some(at) = config.find("\n[projects.") {
                config.truncate(at + 1);
            }
        }
    }
    if dialogs.signed_in {
        return prepared;
    }
    // The same settings without the provider (and its key): codex falls
    // back to OpenAI's, which needs a sign-in.
    let mut config =
        String::from("check_for_update_on_startup = false\n\n[analytics]\nenabled = false\n");
    for dir in [home, proj].into_iter().filter(|_| dialogs.trusted) {
        config.push_str(&format!(
            "\n[projects.{}]\ntrust_level = \"trusted\"\n",
            json!(dir.display().to_string())
        ));
    }
    AgentHome {
        files: vec![(".codex/config.toml".into(), config)],
        env: Vec::new(),
    }
}

/// Node programs start slowly on a loaded two-core machine, behind
/// nerdr's sandbox check.
const START: Duration = Duration::from_secs(90);
/// One turn, or the state a screen leads to.
const TURN: Duration = Duration::from_secs(90);

/// What the command the person approves prints: the command's text does
/// not hold it (`printf` assembles it), so a tool result that does shows
/// the command ran.
const RAN: &str = "ran-approved";

/// A command that asks first: it writes a file (claude runs read-only
/// commands without asking) and, for codex, asks for escalation.
fn asking_command() -> Turn {
    Turn::Run {
        command: "printf 'ran-%s\\n' approved > asked.txt && cat asked.txt".into(),
        escalate: true,
    }
}

/// The whole of one agent's turn states, in one session (see the module
/// docs); `question` is the CLI's permission question. A wrong state is
/// a finding and the scenario goes on; what the scenario itself needs
/// (the prompt, the model's requests) fails at once.
pub fn states_of_a_turn(t: &Turns, question: &str) {
    let mut f = Findings::default();
    t.model
        .when_user_says("GO-SLOW", Turn::Slow(SLOW_ANSWER.into()));
    t.model.when_user_says("RUN-ASKING", asking_command());
    let tab = t.start();
    t.wait_idle(&tab);
    if wait_state(t, &tab, "idle", TURN, &mut f) {
        explained_by_a_rule(t, &tab, "idle", "", &mut f);
    }

    // Working for the whole time the answer streams, not just at its
    // start (codex hides its Working line once words come).
    t.prompt(&tab, "Please GO-SLOW");
    let asked = Instant::now();
    let streams = SLOW_WORD * SLOW_ANSWER.split(' ').count() as u32;
    if wait_state(t, &tab, "working", streams / 2, &mut f) {
        let mut looks = 0;
        while asked.elapsed() < streams - Duration::from_secs(3) {
            let state = agent_state(t, &tab);
            if state != "working" {
                f.add(format!(
                    "{}: {state} {:?} after the slow answer began (it streams for {streams:?})\n{}",
                    t.agent,
                    asked.elapsed(),
                    report(t, &tab)
                ));
                break;
            }
            looks += 1;
            std::thread::sleep(Duration::from_millis(700));
        }
        eprintln!(
            "{}: working at each of {looks} looks until {:?} into {streams:?} of streaming",
            t.agent,
            asked.elapsed()
        );
    }

    // The turn ends and no window shows the tab: done.
    t.wait_screen(&tab, "the slow answer's end", TURN, |s| {
        s.contains(SLOW_END)
    });
    wait_returns(t, &tab, "done", TURN, &mut f);

    // The permission question: blocked, and `nerdr wait` says so.
    let since = t.prompt(&tab, "Please RUN-ASKING");
    t.wait_screen(&tab, question, TURN, |s| s.contains(question));
    if wait_returns(t, &tab, "blocked", TURN, &mut f) {
        explained_by_a_rule(t, &tab, "blocked", question, &mut f);
    }
    assert!(
        !t.model.log()[since..].iter().any(|r| r.after_tool()),
        "{}: the command ran before anyone approved it:\n{}",
        t.agent,
        t.model.dump()
    );

    // Approved through `nerdr send` (Enter picks "Yes"): the command runs,
    // the turn ends, unseen: done.
    t.ok(&["send", &tab, ""]);
    t.model
        .wait_for("the approved command's result", TURN, |r| {
            r.after_tool() && r.body.contains(RAN)
        });
    t.wait_screen(&tab, "the closing answer", TURN, |s| {
        s.contains(AFTER_TOOL_TEXT)
    });
    wait_returns(t, &tab, "done", TURN, &mut f);

    // A window shows the tab: idle.
    let w = Window::open(t);
    w.shows(AFTER_TOOL_TEXT, TURN);
    wait_returns(t, &tab, "idle", TURN, &mut f);
    drop(w);
    f.finish(t.agent);
}

/// The CLI stopped at a dialog before its prompt: blocked, `nerdr wait`
/// returns, and `nerdr explain` names the rule and shows `needle`.
pub fn blocked_at_a_dialog(t: &Turns, needle: &str) {
    let mut f = Findings::default();
    let tab = t.start();
    t.wait_screen(&tab, needle, START, |s| s.contains(needle));
    if wait_returns(t, &tab, "blocked", TURN, &mut f) {
        explained_by_a_rule(t, &tab, "blocked", needle, &mut f);
    }
    f.finish(t.agent);
}
