//! The final argv of every built-in agent in each mode, with and without a
//! wrapper `command` and `args`, with reported resume commands, and of
//! custom agents. Agents come from config text through the real resolver;
//! every row asserts the whole vector and the session id.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::path::Path;

use crate::agents::kind::{Features, Kind};
use crate::agents::session::{build, ArgvError, Launch, Mode, Reported};
use crate::config::{self, builtin_names, ResolvedAgent};

/// The id the test's generator makes for a new conversation.
const NEW: &str = "11111111-2222-4333-8444-555555555555";
/// The id of an earlier conversation.
const OLD: &str = "0c9e3f4a-aaaa-4bbb-8ccc-0123456789ab";

const NONE: Features = Features {
    copilot_session_id: false,
    codex_no_daemon: false,
    opencode_standalone: false,
};
const ALL: Features = Features {
    copilot_session_id: true,
    codex_no_daemon: true,
    opencode_standalone: true,
};

/// How the agent is configured.
#[derive(Clone, Copy)]
enum Cfg {
    /// No `[agents.NAME]`: the built-in command.
    Default,
    /// `command = ["nerdr", "sandbox", "--", PROGRAM]`, `args = ["--model", "m"]`.
    Wrapped,
    /// As `Wrapped`, with `sandboxed = true`.
    Sandboxed,
    /// This config text.
    Text(&'static str),
}

fn resolve(name: &str, cfg: Cfg) -> ResolvedAgent {
    let program = config::builtin_program(name).unwrap_or(name);
    let text = match cfg {
        Cfg::Default => String::new(),
        Cfg::Wrapped | Cfg::Sandboxed => format!(
            "[agents.{name}]\ncommand = [\"nerdr\", \"sandbox\", \"--\", \"{program}\"]\n\
             args = [\"--model\", \"m\"]\nsandboxed = {}\n",
            matches!(cfg, Cfg::Sandboxed)
        ),
        Cfg::Text(text) => text.to_owned(),
    };
    config::parse(&text, Path::new("/cfg/config.toml"))
        .and_then(|c| c.resolve_agent(name))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn mode(m: &str) -> Mode {
    match m {
        "new" => Mode::New,
        "continue" => Mode::Continue,
        id => Mode::Resume(id.to_owned()),
    }
}

struct Row {
    agent: &'static str,
    cfg: Cfg,
    /// `new`, `continue`, or the id to resume.
    mode: &'static str,
    features: Features,
    reported: Option<&'static [&'static str]>,
    argv: &'static [&'static str],
    session_id: Option<&'static str>,
}

/// A row with no features and no report.
const fn row(
    agent: &'static str,
    cfg: Cfg,
    mode: &'static str,
    argv: &'static [&'static str],
    session_id: Option<&'static str>,
) -> Row {
    Row {
        agent,
        cfg,
        mode,
        features: NONE,
        reported: None,
        argv,
        session_id,
    }
}

impl Row {
    const fn with(mut self, features: Features) -> Row {
        self.features = features;
        self
    }
    const fn reported(mut self, argv: &'static [&'static str]) -> Row {
        self.reported = Some(argv);
        self
    }
}

/// Build `row`'s launch, checking the id generator ran exactly when the
/// launch names a new id.
fn run(agent: &ResolvedAgent, r: &Row) -> Result<Launch, ArgvError> {
    let called = Cell::new(false);
    let reported = r.reported.map(|words| Reported {
        argv: words.iter().map(|w| w.to_string()).collect(),
    });
    let launch = build(agent, &mode(r.mode), &r.features, reported.as_ref(), || {
        called.set(true);
        NEW.to_owned()
    });
    let named_new = launch
        .as_ref()
        .is_ok_and(|l| r.mode == "new" && l.session_id.as_deref() == Some(NEW));
    assert_eq!(
        called.get(),
        named_new,
        "{} {}: id generator",
        r.agent,
        r.mode
    );
    launch
}

#[rustfmt::skip]
const ROWS: &[Row] = {
    use Cfg::*;
    const W: &str = "--model";
    &[
        // claude: names new conversations itself.
        row("claude", Default, "new", &["claude", "--session-id", NEW], Some(NEW)),
        row("claude", Default, OLD, &["claude", "--resume", OLD], Some(OLD)),
        row("claude", Default, "continue", &["claude", "--continue"], None),
        row("claude", Wrapped, "new", &["nerdr", "sandbox", "--", "claude", W, "m", "--session-id", NEW], Some(NEW)),
        row("claude", Wrapped, OLD, &["nerdr", "sandbox", "--", "claude", W, "m", "--resume", OLD], Some(OLD)),
        row("claude", Wrapped, "continue", &["nerdr", "sandbox", "--", "claude", W, "m", "--continue"], None),
        // Other agents' features change nothing for claude.
        row("claude", Default, "new", &["claude", "--session-id", NEW], Some(NEW)).with(ALL),

        // opencode: no id for a new conversation; --standalone only where listed.
        row("opencode", Default, "new", &["opencode"], None),
        row("opencode", Default, OLD, &["opencode", "--session", OLD], Some(OLD)),
        row("opencode", Default, "continue", &["opencode", "--continue"], None),
        row("opencode", Default, "new", &["opencode", "--standalone"], None).with(ALL),
        row("opencode", Default, OLD, &["opencode", "--standalone", "--session", OLD], Some(OLD)).with(ALL),
        row("opencode", Default, "continue", &["opencode", "--standalone", "--continue"], None).with(ALL),
        row("opencode", Wrapped, "new", &["nerdr", "sandbox", "--", "opencode", W, "m", "--standalone"], None).with(ALL),
        row("opencode", Wrapped, OLD, &["nerdr", "sandbox", "--", "opencode", W, "m", "--standalone", "--session", OLD], Some(OLD)).with(ALL),
        row("opencode", Wrapped, "continue", &["nerdr", "sandbox", "--", "opencode", W, "m", "--continue"], None),

        // copilot: --session-id for new and resume when the version has it.
        row("copilot", Default, "new", &["copilot", "--session-id", NEW], Some(NEW)).with(ALL),
        row("copilot", Default, OLD, &["copilot", "--session-id", OLD], Some(OLD)).with(ALL),
        row("copilot", Default, "continue", &["copilot", "--continue"], None).with(ALL),
        row("copilot", Default, "new", &["copilot"], None),
        row("copilot", Default, OLD, &["copilot", RESUME_OLD], Some(OLD)),
        row("copilot", Default, "continue", &["copilot", "--continue"], None),
        row("copilot", Wrapped, "new", &["nerdr", "sandbox", "--", "copilot", W, "m", "--session-id", NEW], Some(NEW)).with(ALL),
        row("copilot", Wrapped, OLD, &["nerdr", "sandbox", "--", "copilot", W, "m", RESUME_OLD], Some(OLD)),
        row("copilot", Wrapped, "continue", &["nerdr", "sandbox", "--", "copilot", W, "m", "--continue"], None),

        // codex: a subcommand to resume; --no-daemon after it where listed.
        row("codex", Default, "new", &["codex"], None),
        row("codex", Default, OLD, &["codex", "resume", OLD], Some(OLD)),
        row("codex", Default, "continue", &["codex", "resume", "--last"], None),
        row("codex", Default, "new", &["codex", "--no-daemon"], None).with(ALL),
        row("codex", Default, OLD, &["codex", "resume", "--no-daemon", OLD], Some(OLD)).with(ALL),
        row("codex", Default, "continue", &["codex", "resume", "--no-daemon", "--last"], None).with(ALL),
        row("codex", Wrapped, "new", &["nerdr", "sandbox", "--", "codex", W, "m", "--no-daemon"], None).with(ALL),
        row("codex", Wrapped, OLD, &["nerdr", "sandbox", "--", "codex", W, "m", "resume", "--no-daemon", OLD], Some(OLD)).with(ALL),
        row("codex", Wrapped, "continue", &["nerdr", "sandbox", "--", "codex", W, "m", "resume", "--last"], None),

        // cursor: runs cursor-agent; no id for a new conversation.
        row("cursor", Default, "new", &["cursor-agent"], None),
        row("cursor", Default, OLD, &["cursor-agent", "--resume", OLD], Some(OLD)),
        row("cursor", Default, "continue", &["cursor-agent", "--continue"], None),
        row("cursor", Wrapped, "new", &["nerdr", "sandbox", "--", "cursor-agent", W, "m"], None),
        row("cursor", Wrapped, OLD, &["nerdr", "sandbox", "--", "cursor-agent", W, "m", "--resume", OLD], Some(OLD)),
        row("cursor", Wrapped, "continue", &["nerdr", "sandbox", "--", "cursor-agent", W, "m", "--continue"], None),

        // gemini: names new conversations; "latest" to continue.
        row("gemini", Default, "new", &["gemini", "--session-id", NEW], Some(NEW)),
        row("gemini", Default, OLD, &["gemini", "--resume", OLD], Some(OLD)),
        row("gemini", Default, "continue", &["gemini", "--resume", "latest"], None),
        row("gemini", Wrapped, "new", &["nerdr", "sandbox", "--", "gemini", W, "m", "--session-id", NEW], Some(NEW)),
        row("gemini", Wrapped, OLD, &["nerdr", "sandbox", "--", "gemini", W, "m", "--resume", OLD], Some(OLD)),
        row("gemini", Wrapped, "continue", &["nerdr", "sandbox", "--", "gemini", W, "m", "--resume", "latest"], None),

        // agy: conversations, no id for a new one.
        row("agy", Default, "new", &["agy"], None),
        row("agy", Default, OLD, &["agy", "--conversation", OLD], Some(OLD)),
        row("agy", Default, "continue", &["agy", "--continue"], None),
        row("agy", Wrapped, "new", &["nerdr", "sandbox", "--", "agy", W, "m"], None),
        row("agy", Wrapped, OLD, &["nerdr", "sandbox", "--", "agy", W, "m", "--conversation", OLD], Some(OLD)),
        row("agy", Wrapped, "continue", &["nerdr", "sandbox", "--", "agy", W, "m", "--continue"], None),

        // grok: names new conversations.
        row("grok", Default, "new", &["grok", "--session-id", NEW], Some(NEW)),
        row("grok", Default, OLD, &["grok", "--resume", OLD], Some(OLD)),
        row("grok", Default, "continue", &["grok", "--continue"], None),
        row("grok", Wrapped, "new", &["nerdr", "sandbox", "--", "grok", W, "m", "--session-id", NEW], Some(NEW)),
        row("grok", Wrapped, OLD, &["nerdr", "sandbox", "--", "grok", W, "m", "--resume", OLD], Some(OLD)),
        row("grok", Wrapped, "continue", &["nerdr", "sandbox", "--", "grok", W, "m", "--continue"], None),

        // Other id shapes pass (opencode's own ids).
        row("opencode", Default, "ses_5a1b2c3d4e", &["opencode", "--session", "ses_5a1b2c3d4e"], Some("ses_5a1b2c3d4e")),
    ]
};

/// copilot's `--resume=OLD` (a const table cannot format).
const RESUME_OLD: &str = "--resume=0c9e3f4a-aaaa-4bbb-8ccc-0123456789ab";

#[test]
fn every_builtin_in_every_mode() {
    for r in ROWS {
        let agent = resolve(r.agent, r.cfg);
        let launch = run(&agent, r).unwrap_or_else(|e| panic!("{} {}: {e}", r.agent, r.mode));
        assert_eq!(launch.argv, r.argv, "{} {} argv", r.agent, r.mode);
        assert_eq!(
            launch.session_id.as_deref(),
            r.session_id,
            "{} {} id",
            r.agent,
            r.mode
        );
    }
    // Every built-in, every mode, default command and wrapper.
    for name in builtin_names() {
        for m in ["new", OLD, "continue"] {
            for wrapped in [false, true] {
                let found = ROWS.iter().any(|r| {
                    r.agent == *name && r.mode == m && matches!(r.cfg, Cfg::Wrapped) == wrapped
                });
                assert!(found, "no row for {name} {m} wrapped={wrapped}");
            }
        }
    }
}

#[rustfmt::skip]
#[test]
fn reported_resume_commands_replace_the_built_in_resume() {
    use Cfg::*;
    const W: &str = "--model";
    let rows = [
        // Used on resume, after the configured command and args.
        row("claude", Default, OLD, &["claude", "--resume", "abc", "--fork-session"], None)
            .reported(&["claude", "--resume", "abc", "--fork-session"]),
        // A wrapper stays in place; only the words after the agent's are used.
        row("codex", Wrapped, OLD, &["nerdr", "sandbox", "--", "codex", W, "m", "resume", "xyz"], None)
            .with(ALL).reported(&["codex", "resume", "xyz"]),
        // Continue uses it too.
        row("gemini", Default, "continue", &["gemini", "--resume", "7"], None)
            .reported(&["gemini", "--resume", "7"]),
        // Matched by file name, either way round.
        row("claude", Text("[agents.claude]\ncommand = [\"/opt/bin/claude\"]\n"), OLD, &["/opt/bin/claude", "-r", "x"], None)
            .reported(&["claude", "-r", "x"]),
        row("claude", Default, OLD, &["claude", "-r", "x"], None)
            .reported(&["/usr/local/bin/claude", "-r", "x"]),
        // The agent word alone: resume with nothing more.
        row("cursor", Default, OLD, &["cursor-agent"], None).reported(&["cursor-agent"]),
        // A custom agent's report wins over its resume_args.
        row("my-agent", Text("[agents.my-agent]\ncommand = [\"my-agent\"]\nresume_args = [\"--continue\"]\n"), "continue", &["my-agent", "--resume", "ID"], None)
            .reported(&["my-agent", "--resume", "ID"]),
        // Not used for a new conversation.
        row("claude", Default, "new", &["claude", "--session-id", NEW], Some(NEW))
            .reported(&["claude", "--resume", "abc"]),
        // Ignored for a sandboxed agent, however it looks: the normal resume.
        row("claude", Sandboxed, OLD, &["nerdr", "sandbox", "--", "claude", W, "m", "--resume", OLD], Some(OLD))
            .reported(&["claude", "--dangerously-skip-permissions"]),
        row("claude", Sandboxed, "continue", &["nerdr", "sandbox", "--", "claude", W, "m", "--continue"], None)
            .reported(&["sh", "-c", "anything"]),
        row("claude", Sandboxed, OLD, &["nerdr", "sandbox", "--", "claude", W, "m", "--resume", OLD], Some(OLD))
            .reported(&[]),
    ];
    for r in &rows {
        let agent = resolve(r.agent, r.cfg);
        let launch = run(&agent, r).unwrap_or_else(|e| panic!("{} {:?}: {e}", r.agent, r.reported));
        assert_eq!(launch.argv, r.argv, "{} {:?}", r.agent, r.reported);
        assert_eq!(launch.session_id.as_deref(), r.session_id, "{} {:?}", r.agent, r.reported);
    }
}

#[rustfmt::skip]
#[test]
fn rejected_reports_say_which_word_and_which_command() {
    use Cfg::*;
    let rows: &[(Row, &str)] = &[
        (
            row("claude", Default, OLD, &[], None).reported(&["sh", "-c", "rm -rf ~"]),
            r#"agent `claude` reported a resume command for `sh`, which is not a word of its command ["claude"]; the first word must name the agent's program, e.g. `claude ...`"#,
        ),
        (
            // A word of `args` is not a word of the command.
            row("claude", Text("[agents.claude]\nargs = [\"--agent\", \"reviewer\"]\n"), OLD, &[], None).reported(&["reviewer", "--resume", "x"]),
            r#"agent `claude` reported a resume command for `reviewer`, which is not a word of its command ["claude"]; the first word must name the agent's program, e.g. `claude ...`"#,
        ),
        (
            row("codex", Wrapped, "continue", &[], None).reported(&["claude", "--resume", "x"]),
            r#"agent `codex` reported a resume command for `claude`, which is not a word of its command ["nerdr", "sandbox", "--", "codex"]; the first word must name the agent's program, e.g. `codex ...`"#,
        ),
        (
            row("claude", Default, OLD, &[], None).reported(&[]),
            "agent `claude` reported an empty resume command; report the agent's program followed by the arguments that resume it, e.g. `claude --resume ID`",
        ),
        (
            row("claude", Default, OLD, &[], None).reported(&["claude", "--resume", "a\0b"]),
            "agent `claude` reported a resume command whose word 3 (counting from 1) contains a NUL character, which cannot be passed to a program; report it without one",
        ),
        (
            row("claude", Default, "continue", &[], None).reported(&["claude\0", "--continue"]),
            "agent `claude` reported a resume command whose word 1 (counting from 1) contains a NUL character, which cannot be passed to a program; report it without one",
        ),
    ];
    for (r, want) in rows {
        let agent = resolve(r.agent, r.cfg);
        let got = run(&agent, r).expect_err(want);
        assert_eq!(got.to_string(), *want);
    }
}

#[rustfmt::skip]
#[test]
fn custom_agents_use_their_own_resume_args_whatever_they_detect_as() {
    use Cfg::*;
    const MINE: Cfg = Text("[agents.my-agent]\ncommand = [\"my-agent\", \"--tui\"]\nargs = [\"-v\"]\nresume_args = [\"--continue\"]\ndetect = \"claude\"\n");
    const AMP: Cfg = Text("[agents.amp]\ncommand = [\"amp\"]\n");
    const WRAPPED: Cfg = Text("[agents.amp]\ncommand = [\"nerdr\", \"sandbox\", \"--\", \"amp\"]\nresume_args = [\"threads\", \"continue\"]\n");
    let rows = [
        row("my-agent", MINE, "new", &["my-agent", "--tui", "-v"], None).with(ALL),
        row("my-agent", MINE, OLD, &["my-agent", "--tui", "-v", "--continue"], None),
        row("my-agent", MINE, "continue", &["my-agent", "--tui", "-v", "--continue"], None),
        // No resume_args: every start is a new conversation.
        row("amp", AMP, "new", &["amp"], None),
        row("amp", AMP, OLD, &["amp"], None),
        row("amp", AMP, "continue", &["amp"], None),
        row("amp", WRAPPED, "new", &["nerdr", "sandbox", "--", "amp"], None),
        row("amp", WRAPPED, OLD, &["nerdr", "sandbox", "--", "amp", "threads", "continue"], None),
    ];
    for r in &rows {
        let agent = resolve(r.agent, r.cfg);
        let launch = run(&agent, r).unwrap();
        assert_eq!(launch.argv, r.argv, "{} {}", r.agent, r.mode);
        assert_eq!(launch.session_id.as_deref(), r.session_id, "{} {}", r.agent, r.mode);
    }
}

#[test]
fn ids_that_could_be_read_as_options_are_refused() {
    let long = "a".repeat(129);
    let bad = [
        "--dangerously-skip-permissions",
        "-r",
        "",
        "a b",
        "id;rm",
        "café",
        long.as_str(),
    ];
    let claude = resolve("claude", Cfg::Default);
    for id in bad {
        let got = build(
            &claude,
            &Mode::Resume(id.to_owned()),
            &NONE,
            None,
            || unreachable!(),
        );
        let want = format!(
            "agent `claude`: session id {id:?} cannot be passed on a command line \
             (ids are up to 128 letters, digits, `-`, `_`, `.` or `:`, starting with a letter or digit); \
             start a new conversation instead"
        );
        assert_eq!(got.unwrap_err().to_string(), want);
    }
    // A broken generator is caught the same way.
    let got = build(&claude, &Mode::New, &NONE, None, || "-x".to_owned());
    assert!(
        matches!(got, Err(ArgvError::BadSessionId { .. })),
        "{got:?}"
    );
    // 128 characters is still fine.
    let id = "a".repeat(128);
    let got = build(
        &claude,
        &Mode::Resume(id.clone()),
        &NONE,
        None,
        || unreachable!(),
    );
    assert_eq!(got.unwrap().argv, ["claude", "--resume", id.as_str()]);
}

#[test]
fn every_builtin_has_session_rules() {
    for name in builtin_names() {
        assert!(Kind::of(name).is_some(), "{name}");
    }
    assert_eq!(Kind::of("cursor-agent"), None);
    assert_eq!(Kind::of("my-agent"), None);
}

#[test]
fn a_builtin_without_rules_is_refused_not_started_bare() {
    let agent = ResolvedAgent {
        name: "amp".into(),
        command: vec!["amp".into()],
        command_words: 1,
        env: BTreeMap::new(),
        sandboxed: false,
        builtin: true,
        detect: "amp".into(),
        resume_args: None,
        config_model: None,
        program: None,
        worktree_data_dir: None,
    };
    let got = build(&agent, &Mode::New, &ALL, None, || unreachable!());
    assert_eq!(
        got.unwrap_err().to_string(),
        "built-in agent `amp` has no session rules in nerdr; this is a bug in nerdr, please report it \
         (a custom agent with its own `command` and `resume_args` works meanwhile)"
    );
}
