//! Config tests: each case is config text and the exact result, so a
//! changed message or a moved location fails by name. The error table is in
//! `errors.rs`; parsing that succeeds, resolution and loading are here.

mod errors;
mod hosts;
mod notify;

use std::collections::BTreeMap;
use std::path::Path;

use super::*;

const PATH: &str = "/cfg/config.toml";
const BUILTINS: &str = "claude, opencode, copilot, codex, cursor, gemini, agy, grok";
const AGENT_KEYS: &str =
    "command, args, env, sandboxed, resume_args, detect, config_model, notify, program, install, data_dir";

fn parse_ok(text: &str) -> Config {
    parse(text, Path::new(PATH)).unwrap_or_else(|e| panic!("{text:?} should parse, got: {e}"))
}

fn strings(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

#[test]
fn empty_and_comment_only_files_are_the_defaults() {
    for text in ["", "\n", "# nothing here\n"] {
        let config = parse_ok(text);
        assert_eq!(
            config,
            Config {
                source: Some(PATH.into()),
                ..Config::default()
            }
        );
        assert_eq!(config.client.prefix, "C-b");
        assert_eq!(config.review, ReviewConfig::default());
    }
}

#[test]
fn the_design_example_parses_into_plain_data() {
    let config = parse_ok(
        r#"
[agents.claude]
args = ["--model", "opus"]
sandboxed = true
command = ["nerdr", "sandbox", "--", "claude"]
env = { FOO = "bar" }

[agents.my-agent]
command = ["my-agent"]
resume_args = ["--continue"]
detect = "amp"

[agents.opencode]
config_model = "anthropic/claude-sonnet"

[client]
prefix = "C-A"

[review]
agent = "codex"
automatic = true

[review.args]
codex = ["--full-auto"]
claude = []
"#,
    );
    assert_eq!(
        config.agents["claude"],
        AgentConfig {
            command: Some(strings(&["nerdr", "sandbox", "--", "claude"])),
            args: strings(&["--model", "opus"]),
            env: BTreeMap::from([("FOO".to_owned(), "bar".to_owned())]),
            sandboxed: true,
            ..AgentConfig::default()
        }
    );
    assert_eq!(
        config.agents["my-agent"],
        AgentConfig {
            command: Some(strings(&["my-agent"])),
            resume_args: Some(strings(&["--continue"])),
            detect: Some("amp".to_owned()),
            ..AgentConfig::default()
        }
    );
    assert_eq!(
        config.agents["opencode"].config_model.as_deref(),
        Some("anthropic/claude-sonnet")
    );
    assert_eq!(config.client.prefix, "C-a", "prefix letter is lowercased");
    assert_eq!(
        config.review,
        ReviewConfig {
            agent: Some("codex".to_owned()),
            automatic: true,
            args: BTreeMap::from([
                ("codex".to_owned(), strings(&["--full-auto"])),
                ("claude".to_owned(), Vec::new()),
            ]),
        }
    );
    assert_eq!(config.review.args_for("codex"), ["--full-auto"]);
    assert!(config.review.args_for("gemini").is_empty());
}

#[test]
fn review_may_name_an_agent_defined_later_in_the_file() {
    let config = parse_ok(
        "[review]\nagent = \"amp\"\n[review.args]\namp = [\"-r\"]\n[agents.amp]\ncommand = [\"amp\"]\n",
    );
    assert_eq!(config.review.agent.as_deref(), Some("amp"));
    assert_eq!(config.review.args_for("amp"), ["-r"]);
}

#[test]
fn review_defaults_to_the_authors_agent_and_by_hand() {
    let config = parse_ok("[review]\n");
    assert_eq!(config.review.agent, None);
    assert!(!config.review.automatic);
}

#[test]
fn agents_resolve_to_full_argv() {
    // (case, config text, agent, argv, sandboxed, builtin, detect)
    type Case<'a> = (
        &'a str,
        &'a str,
        &'a str,
        &'a [&'a str],
        bool,
        bool,
        &'a str,
    );
    let cases: &[Case] = &[
        ("claude, no config", "", "claude", &["claude"], false, true, "claude"),
        ("opencode, no config", "", "opencode", &["opencode"], false, true, "opencode"),
        ("copilot, no config", "", "copilot", &["copilot"], false, true, "copilot"),
        ("codex, no config", "", "codex", &["codex"], false, true, "codex"),
        ("cursor runs cursor-agent", "", "cursor", &["cursor-agent"], false, true, "cursor"),
        ("gemini, no config", "", "gemini", &["gemini"], false, true, "gemini"),
        ("agy, no config", "", "agy", &["agy"], false, true, "agy"),
        ("grok, no config", "", "grok", &["grok"], false, true, "grok"),
        (
            "args only keeps the built-in command",
            "[agents.claude]\nargs = [\"--model\", \"opus\"]\n",
            "claude",
            &["claude", "--model", "opus"],
            false,
            true,
            "claude",
        ),
        (
            "command override with a wrapper, args last",
            "[agents.claude]\ncommand = [\"nerdr\", \"sandbox\", \"--\", \"claude\"]\nargs = [\"--model\", \"opus\"]\nsandboxed = true\n",
            "claude",
            &["nerdr", "sandbox", "--", "claude", "--model", "opus"],
            true,
            true,
            "claude",
        ),
        (
            "custom agent with detect",
            "[agents.my-agent]\ncommand = [\"my-agent\", \"--tui\"]\nargs = [\"-v\"]\ndetect = \"amp\"\n",
            "my-agent",
            &["my-agent", "--tui", "-v"],
            false,
            false,
            "amp",
        ),
        (
            "custom agent detects as itself by default",
            "[agents.amp]\ncommand = [\"amp\"]\n",
            "amp",
            &["amp"],
            false,
            false,
            "amp",
        ),
    ];
    for (case, text, name, argv, sandboxed, builtin, detect) in cases {
        let got = parse_ok(text)
            .resolve_agent(name)
            .unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_eq!(got.name, *name, "{case}");
        assert_eq!(got.command, strings(argv), "{case}");
        assert_eq!(got.sandboxed, *sandboxed, "{case}");
        assert_eq!(got.builtin, *builtin, "{case}");
        assert_eq!(got.detect, *detect, "{case}");
    }
}

#[test]
fn command_words_mark_where_args_begin() {
    let cases: &[(&str, &str, &str, usize)] = &[
        ("built-in default, no args", "", "claude", 1),
        (
            "built-in default with args",
            "[agents.claude]\nargs = [\"--model\", \"opus\"]\n",
            "claude",
            1,
        ),
        (
            "wrapper command with args",
            "[agents.codex]\ncommand = [\"nerdr\", \"sandbox\", \"--\", \"codex\"]\nargs = [\"-m\", \"o3\"]\n",
            "codex",
            4,
        ),
        (
            "custom agent",
            "[agents.amp]\ncommand = [\"amp\", \"--tui\"]\nargs = [\"-v\"]\n",
            "amp",
            2,
        ),
    ];
    for (case, text, name, words) in cases {
        let got = parse_ok(text).resolve_agent(name).unwrap();
        assert_eq!(got.command_words, *words, "{case}");
    }
}

#[test]
fn resolved_agents_carry_env_resume_args_and_config_model() {
    let config = parse_ok(
        "[agents.amp]\ncommand = [\"amp\"]\nresume_args = [\"--continue\"]\nenv.FOO = \"bar\"\n\
         [agents.opencode]\nconfig_model = \"anthropic/claude-sonnet\"\n",
    );
    let amp = config.resolve_agent("amp").unwrap();
    assert_eq!(amp.resume_args, Some(strings(&["--continue"])));
    assert_eq!(
        amp.env,
        BTreeMap::from([("FOO".to_owned(), "bar".to_owned())])
    );
    let opencode = config.resolve_agent("opencode").unwrap();
    assert_eq!(
        opencode.config_model.as_deref(),
        Some("anthropic/claude-sonnet")
    );
    assert_eq!(opencode.resume_args, None);
}

#[test]
fn unknown_agents_say_what_exists_and_where_to_add_one() {
    let hint = "unknown agent \"amp\"";
    let cases: &[(&str, Config, String)] = &[
        (
            "parsed config names its file",
            parse_ok(""),
            format!("{hint} (agents: {BUILTINS}; or add [agents.amp] with a `command` to {PATH})"),
        ),
        (
            "config built in code",
            Config::default(),
            format!("{hint} (agents: {BUILTINS}; or add [agents.amp] with a `command` to the config file)"),
        ),
        (
            "the config's own agents are listed after the built-in ones, overrides once",
            parse_ok("[agents.sbsh]\ncommand = [\"bash\"]\n[agents.claude]\nargs = [\"-x\"]\n"),
            format!("{hint} (agents: {BUILTINS}, sbsh; or add [agents.amp] with a `command` to {PATH})"),
        ),
    ];
    for (case, config, want) in cases {
        let got = config.resolve_agent("amp").unwrap_err().to_string();
        assert_eq!(&got, want, "{case}");
        assert!(!got.contains('\n'), "{case}: one line");
    }
    // `nerdr agent NAME` says how to run NAME as a program; a spinoff's or
    // a switch's agent has to be an agent, so theirs does not.
    let hinted = ConfigError::UnknownAgent {
        name: "amp".into(),
        path: None,
        configured: vec![],
        run_hint: true,
    };
    assert_eq!(
        hinted.to_string(),
        format!(
            "unknown agent \"amp\"; to run a program that is not an agent: nerdr agent -- amp \
             (agents: {BUILTINS}; or add [agents.amp] with a `command` to the config file)"
        )
    );
}

#[test]
fn a_custom_agents_program_names_it_and_its_screen_rules() {
    let config = parse_ok(
        "[agents.sbsh]\nprogram = \"bash\"\ncommand = [\"nerdr\", \"sandbox\", \"--\", \"/bin/bash\"]\n\
         sandboxed = true\n[agents.own]\ncommand = [\"bash\"]\nprogram = \"bash\"\ndetect = \"claude\"\n\
         [agents.plain]\ncommand = [\"bash\"]\n",
    );
    // (agent, program, detect)
    let rows: &[(&str, Option<&str>, &str)] = &[
        ("sbsh", Some("bash"), "bash"),
        ("own", Some("bash"), "claude"),
        ("plain", None, "plain"),
    ];
    for (name, program, detect) in rows {
        let a = config.resolve_agent(name).unwrap();
        assert_eq!(a.program.as_deref(), *program, "{name}");
        assert_eq!(a.detect, *detect, "{name}");
    }
}

#[test]
fn a_program_run_as_it_is_is_an_unsandboxed_agent_named_after_it() {
    // (word, name, detect)
    let rows: &[(&str, &str, &str)] = &[
        ("bash", "bash", "bash"),
        ("/usr/bin/python3.12", "python3.12", "python3-12"),
        ("./run.sh", "run.sh", "run-sh"),
    ];
    for (word, name, detect) in rows {
        let a = crate::config::program_agent(word).unwrap();
        assert_eq!(
            (a.name.as_str(), a.detect.as_str(), &a.command[..]),
            (*name, *detect, &[word.to_string()][..]),
            "{word}"
        );
        assert!(!a.sandboxed && !a.builtin && a.command_words == 1, "{word}");
    }
    for bad in ["", "dir/", "a\0b"] {
        let e = crate::config::program_agent(bad).unwrap_err();
        assert!(e.contains("is not a program"), "{bad:?}: {e}");
    }
}

#[test]
fn a_custom_agent_built_in_code_without_command_does_not_resolve() {
    let mut config = Config::default();
    config
        .agents
        .insert("amp".to_owned(), AgentConfig::default());
    assert_eq!(
        config.resolve_agent("amp").unwrap_err().to_string(),
        format!("[agents.amp] is not a built-in agent ({BUILTINS}), so it needs a `command`; add one, e.g. command = [\"amp\"]")
    );
}

#[test]
fn a_missing_file_is_the_defaults_and_remembers_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    let config = load(&path).unwrap();
    assert_eq!(
        config,
        Config {
            source: Some(path),
            ..Config::default()
        }
    );
}

#[test]
fn load_reads_and_parses_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(
        &path,
        "[agents.claude]\nargs = [\"--model\", \"opus\"]\nbogus = 1\n",
    )
    .unwrap();
    let err = load(&path).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "{}:3:1: unknown key `bogus` in [agents.claude]; valid keys: {AGENT_KEYS}",
            path.display()
        )
    );
}

#[test]
fn an_unreadable_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let not_utf8 = dir.path().join("latin1.toml");
    std::fs::write(&not_utf8, b"# caf\xe9\n").unwrap();
    // A directory where the file should be: unreadable even as root.
    for path in [dir.path().to_path_buf(), not_utf8] {
        let err = load(&path).unwrap_err();
        assert!(matches!(err, ConfigError::Read { .. }), "{err:?}");
        let msg = err.to_string();
        assert!(
            msg.starts_with(&format!("cannot read config file {}: ", path.display())),
            "{msg}"
        );
        assert!(
            msg.ends_with("; make it a readable UTF-8 file, or move it away to run with the built-in defaults"),
            "{msg}"
        );
    }
}

#[test]
fn a_worktree_install_resolves_to_its_data_folder() {
    let rows: &[(&str, Option<&str>)] = &[
        ("", None),
        ("install = \"home\"\n", None),
        ("install = \"worktree\"\n", Some(".nerdr")),
        (
            "data_dir = \"state/reports\"\ninstall = \"worktree\"\n",
            Some("state/reports"),
        ),
        (
            "install = \"worktree\"\ndata_dir = \".agent.d\"\n",
            Some(".agent.d"),
        ),
    ];
    for (body, want) in rows {
        let text = format!("[agents.claude]\n{body}");
        let got = parse_ok(&text).resolve_agent("claude").unwrap();
        assert_eq!(got.worktree_data_dir.as_deref(), *want, "{text:?}");
    }
}
