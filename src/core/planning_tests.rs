//! The table tests of `planning`: each row is a sentence, and each refusal
//! row names the sentence the person reads.

use std::path::{Path, PathBuf};

use super::*;
use crate::core::privilege::CallerKind::{Sandboxed, Tab, User};

const CONFIG: &str = "/home/u/.config/nerdr/config.toml";

fn agents(toml: &str, name: &str) -> ResolvedAgent {
    crate::config::parse(toml, Path::new(CONFIG))
        .unwrap()
        .resolve_agent(name)
        .unwrap()
}

fn outside() -> ResolvedAgent {
    agents(
        "[agents.tool]\ncommand = [\"tool\"]\nargs = [\"--flag\"]\n",
        "tool",
    )
}

fn inside() -> ResolvedAgent {
    agents(
        "[agents.tool]\ncommand = [\"jail\", \"tool\"]\nargs = [\"--flag\"]\nsandboxed = true\n",
        "tool",
    )
}

/// What a row expects: the value, or the refusal's code and exact words.
#[derive(Debug, PartialEq)]
enum Want<T> {
    Go(T),
    Error(ErrorCode, String),
    Denied(Operation),
}

fn got<T>(r: Result<T, Refusal>) -> Want<T> {
    match r {
        Ok(v) => Want::Go(v),
        Err(Refusal::Error(e)) => Want::Error(e.code, e.message),
        Err(Refusal::Denied { op, why }) => {
            assert!(!why.is_empty(), "a refusal says why");
            Want::Denied(op)
        }
    }
}

fn error(code: ErrorCode, message: &str) -> Want<bool> {
    Want::Error(code, message.to_string())
}

#[test]
fn admitting_a_new_agent_follows_the_table() {
    let no_agent = "no agent `nope` in /c.toml".to_string();
    /// (sentence, caller, the folder as the filesystem has it, settings
    /// and `[tabs] worktree`, not --no-worktree, what happens)
    type Row<'a> = (
        &'a str,
        CallerKind,
        Option<&'a str>,
        Result<(ResolvedAgent, bool), String>,
        bool,
        Want<bool>,
    );
    #[rustfmt::skip]
    let table: Vec<Row> = vec![
        ("a folder that does not exist is refused, naming it",
            User, None, Ok((outside(), true)), true,
            error(ErrorCode::BadRequest, "folder /asked/here does not exist or is not a folder")),
        ("a missing folder is named before a broken config",
            User, None, Err(no_agent.clone()), true,
            error(ErrorCode::BadRequest, "folder /asked/here does not exist or is not a folder")),
        ("an agent the config cannot give is refused with the config's own words",
            User, Some("/real"), Err(no_agent.clone()), true,
            error(ErrorCode::Config, "no agent `nope` in /c.toml")),
        ("a sandboxed caller cannot start an agent outside every sandbox",
            Sandboxed, Some("/real"), Ok((outside(), true)), true, Want::Denied(Operation::StartAgent)),
        ("a sandboxed caller may start a sandboxed agent",
            Sandboxed, Some("/real"), Ok((inside(), true)), true, Want::Go(true)),
        ("an unsandboxed tab may start an agent outside every sandbox",
            Tab, Some("/real"), Ok((outside(), true)), true, Want::Go(true)),
        ("the person may start an agent outside every sandbox, in a worktree",
            User, Some("/real"), Ok((outside(), true)), true, Want::Go(true)),
        ("--no-worktree starts the agent in the folder itself",
            User, Some("/real"), Ok((outside(), true)), false, Want::Go(false)),
        ("[tabs] worktree = false starts the agent in the folder itself",
            User, Some("/real"), Ok((outside(), false)), true, Want::Go(false)),
    ];
    for (sentence, caller, folder, settings, want_worktree, want) in table {
        let expected_agent = settings.as_ref().ok().map(|(a, _)| a.clone());
        let r = admit_agent(Admission {
            caller,
            asked: Path::new("/asked/here"),
            folder: folder.map(PathBuf::from),
            settings,
            want_worktree,
        });
        if let Ok(a) = &r {
            assert_eq!(
                a.folder,
                Path::new("/real"),
                "{sentence}: the canonical folder"
            );
            assert_eq!(Some(&a.agent), expected_agent.as_ref(), "{sentence}");
        }
        assert_eq!(got(r.map(|a| a.worktree)), want, "{sentence}");
    }
}

#[test]
fn admitting_a_switch_follows_the_table() {
    #[rustfmt::skip]
    let table: Vec<(&str, CallerKind, Settings, Want<bool>)> = vec![
        ("a sandboxed caller never switches to an agent outside every sandbox",
            Sandboxed, Ok(outside()), Want::Denied(Operation::Switch)),
        ("a sandboxed caller switches to a sandboxed agent", Sandboxed, Ok(inside()), Want::Go(true)),
        ("an unsandboxed tab's program switches to either", Tab, Ok(outside()), Want::Go(false)),
        ("the person switches to either (the tab's own rule is switch::rules')",
            User, Ok(outside()), Want::Go(false)),
        ("an agent the config does not give is refused with the config's own words",
            User, Err("no agent `tool` in /c.toml".into()),
            error(ErrorCode::Config, "no agent `tool` in /c.toml")),
    ];
    for (sentence, caller, settings, want) in table {
        assert_eq!(
            got(admit_switch(caller, settings).map(|a| a.sandboxed)),
            want,
            "{sentence}"
        );
    }
}

#[test]
fn admitting_a_restart_follows_the_table() {
    let outside_now = || Ok(outside());
    #[rustfmt::skip]
    let table: Vec<(&str, CallerKind, Settings, Want<bool>)> = vec![
        ("a sandboxed agent stays sandboxed on restart, even when its config no longer says so",
            Sandboxed, outside_now(), Want::Denied(Operation::Restart)),
        ("a sandboxed caller restarts a sandboxed agent", Sandboxed, Ok(inside()), Want::Go(true)),
        ("the person may restart an agent whose config took it out of its sandbox",
            User, outside_now(), Want::Go(false)),
        ("a restart whose agent the config no longer gives is refused with the config's own words",
            User, Err("no agent `tool` in /c.toml".into()),
            error(ErrorCode::Config, "no agent `tool` in /c.toml")),
    ];
    for (sentence, caller, settings, want) in table {
        assert_eq!(
            got(admit_restart(caller, settings).map(|a| a.sandboxed)),
            want,
            "{sentence}"
        );
    }
    assert_eq!(
        restartable("ab12", TabKind::Agent),
        Ok(()),
        "an agent's tab can be restarted"
    );
    let e = restartable("ab12", TabKind::Terminal).unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            ErrorCode::BadRequest,
            "tab ab12 is a terminal; open a new one with `nerdr terminal`"
        ),
        "a terminal is not restarted: it says to open a new one"
    );
}

fn command(
    agent: &ResolvedAgent,
    mode: Mode,
    program: Option<&str>,
    env: &[(String, String)],
) -> Result<AgentCommand, ApiError> {
    agent_command(CommandFacts {
        agent,
        extra_args: vec!["-x".into()],
        mode,
        reported: None,
        caller_env: env,
        path_var: "/usr/bin:/bin",
        program: program.map(PathBuf::from),
        features: Features::default(),
        new_session_id: "0b1e2c3d-0000-4000-8000-000000000001".into(),
        config_file: Path::new(CONFIG),
        program_run: false,
    })
}

/// `nerdr agent -- CMD` names no agent: its missing program is not sent
/// to a config section.
#[test]
fn a_program_run_that_is_not_on_path_says_to_install_it_or_give_its_path() {
    let agent = crate::config::program_agent("nosuchprog").unwrap();
    let e = agent_command(CommandFacts {
        agent: &agent,
        extra_args: vec![],
        mode: Mode::New,
        reported: None,
        caller_env: &[],
        path_var: "/usr/bin:/bin",
        program: None,
        features: Features::default(),
        new_session_id: "0b1e2c3d-0000-4000-8000-000000000001".into(),
        config_file: Path::new(CONFIG),
        program_run: true,
    })
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::LaunchFailed);
    assert_eq!(
        e.message,
        "`nosuchprog` is not an executable on PATH (/usr/bin:/bin); install it, or give its path \
         (`nerdr agent -- /path/to/nosuchprog`)"
    );
}

#[test]
fn an_agents_command_follows_the_table() {
    let claude = agents("", "claude");
    let opencode = agents("[agents.opencode]\nconfig_model = \"m/x\"\n", "opencode");
    let bad_json = vec![("OPENCODE_CONFIG_CONTENT".to_string(), "{nope".to_string())];
    let good_json = vec![(
        "OPENCODE_CONFIG_CONTENT".to_string(),
        "{\"a\":1}".to_string(),
    )];
    type Row<'a> = (
        &'a str,
        ResolvedAgent,
        Mode,
        Option<&'a str>,
        Vec<(String, String)>,
        Result<Vec<&'a str>, (ErrorCode, &'a str)>,
    );
    #[rustfmt::skip]
    let table: Vec<Row> = vec![
        ("an agent whose program is not on PATH is refused, naming the program, the PATH and the config file",
            outside(), Mode::New, None, vec![],
            Err((ErrorCode::LaunchFailed, "agent `tool`: `tool` is not an executable on PATH (/usr/bin:/bin); install it, or set `command` in [agents.tool] of /home/u/.config/nerdr/config.toml"))),
        ("extra arguments come after the agent's own, and the program runs as found",
            outside(), Mode::New, Some("/usr/bin/tool"), vec![],
            Ok(vec!["/usr/bin/tool", "--flag", "-x"])),
        ("a wrapper is found on PATH and the agent after it is left as written",
            inside(), Mode::New, Some("/usr/bin/jail"), vec![],
            Ok(vec!["/usr/bin/jail", "tool", "--flag", "-x"])),
        ("a new conversation of a built-in agent gets the id chosen for it, last",
            claude.clone(), Mode::New, Some("/usr/bin/claude"), vec![],
            Ok(vec!["/usr/bin/claude", "-x", "--session-id", "0b1e2c3d-0000-4000-8000-000000000001"])),
        ("a session id that could pass for an option is refused",
            claude.clone(), Mode::Resume("--dangerously-skip-permissions".into()), Some("/usr/bin/claude"), vec![],
            Err((ErrorCode::LaunchFailed, "agent `claude`: "))),
        ("a config_model the caller's OPENCODE_CONFIG_CONTENT cannot take is refused, saying what to fix",
            opencode.clone(), Mode::New, Some("/usr/bin/opencode"), bad_json,
            Err((ErrorCode::Config, "agent `opencode`: OPENCODE_CONFIG_CONTENT in your environment is not valid JSON"))),
        ("a config_model is merged into the caller's OPENCODE_CONFIG_CONTENT",
            opencode, Mode::New, Some("/usr/bin/opencode"), good_json,
            Ok(vec!["/usr/bin/opencode", "-x"])),
    ];
    for (sentence, agent, mode, program, env, want) in table {
        match (command(&agent, mode, program, &env), want) {
            (Ok(c), Ok(argv)) => {
                assert_eq!(c.argv, argv, "{sentence}");
                assert_eq!(
                    &c.display[1..],
                    &argv[1..],
                    "{sentence}: shown as configured"
                );
                assert_eq!(
                    c.display[0], agent.command[0],
                    "{sentence}: shown as configured"
                );
            }
            (Err(e), Err((code, start))) => {
                assert_eq!(e.code, code, "{sentence}: {}", e.message);
                assert!(e.message.starts_with(start), "{sentence}: {}", e.message);
            }
            (got, want) => panic!("{sentence}: got {got:?}, want {want:?}"),
        }
    }
}

#[test]
fn a_sandboxed_agent_is_checked_first_and_an_unsandboxed_one_is_not() {
    let c = command(&inside(), Mode::New, Some("/usr/bin/jail"), &[]).unwrap();
    let probe = c.probe.expect("a sandboxed agent's launch is checked");
    assert_eq!(probe.command_words, ["/usr/bin/jail", "tool"]);
    let d = c
        .deferred
        .expect("and its command is built again after the check");
    assert_eq!(d.program, "/usr/bin/jail");
    assert_eq!(d.agent.command, ["jail", "tool", "--flag", "-x"]);
    let c = command(&outside(), Mode::New, Some("/usr/bin/tool"), &[]).unwrap();
    assert!(c.probe.is_none() && c.deferred.is_none());
}

#[test]
fn a_config_model_lands_in_the_agents_environment() {
    let opencode = agents("[agents.opencode]\nconfig_model = \"m/x\"\n", "opencode");
    let env = vec![(
        "OPENCODE_CONFIG_CONTENT".to_string(),
        "{\"a\":1}".to_string(),
    )];
    let c = command(&opencode, Mode::New, Some("/usr/bin/opencode"), &env).unwrap();
    let merged: serde_json::Value =
        serde_json::from_str(&c.agent_env["OPENCODE_CONFIG_CONTENT"]).unwrap();
    assert_eq!(merged, serde_json::json!({"a": 1, "model": "m/x"}));
}

#[test]
fn settings_that_changed_while_the_launch_was_prepared_are_refused() {
    let changed = "the settings of agent `tool` in /home/u/.config/nerdr/config.toml changed \
                   while its launch was being prepared; restart the agent to use the new settings";
    #[rustfmt::skip]
    let table: Vec<(&str, Option<ResolvedAgent>, Option<&str>)> = vec![
        ("settings as they were go on", Some(outside()), None),
        ("settings changed meanwhile are refused, naming the config file", Some(inside()), Some(changed)),
        ("settings gone meanwhile (the config broke) are refused, naming the config file", None, Some(changed)),
    ];
    for (sentence, now, want) in table {
        let r = settings_unchanged(&outside(), now.as_ref(), Path::new(CONFIG));
        assert_eq!(
            r.map_err(|e| (e.code, e.message)),
            match want {
                None => Ok(()),
                Some(m) => Err((ErrorCode::Config, m.to_string())),
            },
            "{sentence}"
        );
    }
}

#[test]
fn a_new_worktrees_setup_follows_the_table() {
    let setup = Setup {
        argv: vec!["npm".into(), "ci".into()],
        hash: "h".into(),
    };
    let first = setup.clone();
    let ask = |once| SetupStep::Ask {
        setup: setup.clone(),
        once,
    };
    let unreadable = "/w/.nerdr.toml: unknown key `setpu`";
    /// (sentence, sandboxed, the setup file, tainted, approved, step)
    type Row<'a> = (
        &'a str,
        bool,
        Result<Option<Setup>, String>,
        bool,
        bool,
        Result<SetupStep, String>,
    );
    #[rustfmt::skip]
    let table: Vec<Row> = vec![
        ("a worktree without a setup starts the agent alone", false, Ok(None), false, false, Ok(SetupStep::None)),
        ("a setup file that cannot be read is refused, naming it and --no-worktree",
            false, Err(unreadable.into()), false, false,
            Err(format!("{unreadable}; fix it, or start with --no-worktree"))),
        ("a sandboxed agent's setup never runs, and it is told so", true, Ok(Some(setup.clone())), false, true, Ok(SetupStep::Skip(setup.clone()))),
        ("a sandboxed agent's setup never runs, even where sandboxed agents worked", true, Ok(Some(setup.clone())), true, true, Ok(SetupStep::Skip(setup.clone()))),
        ("an approved setup runs before the agent", false, Ok(Some(setup.clone())), false, true, Ok(SetupStep::RunFirst(first))),
        ("an approved setup is asked about again, once, where sandboxed agents worked", false, Ok(Some(setup.clone())), true, true, Ok(ask(true))),
        ("a setup not yet approved is asked about", false, Ok(Some(setup.clone())), false, false, Ok(ask(false))),
        ("a setup not yet approved where sandboxed agents worked is asked about for this run only", false, Ok(Some(setup.clone())), true, false, Ok(ask(true))),
    ];
    for (sentence, sandboxed, file, tainted, approved, want) in table {
        let r = setup_step(SetupFacts {
            sandboxed,
            setup: file,
            tainted,
            approved,
        });
        if let Err(e) = &r {
            assert_eq!(e.code, ErrorCode::Config, "{sentence}");
        }
        assert_eq!(r.map_err(|e| e.message), want, "{sentence}");
    }
}

#[test]
fn a_terminal_runs_the_callers_shell_or_says_to_set_shell() {
    let env = |shell: &str| vec![("SHELL".to_string(), shell.to_string())];
    type Row<'a> = (&'a str, Vec<(String, String)>, &'a str);
    #[rustfmt::skip]
    let table: &[Row] = &[
        ("the caller's shell, named by an absolute path, is the terminal's", env("/bin/zsh"), "/bin/zsh"),
        ("a SHELL that is not an absolute path is not searched for", env("zsh"), "/bin/sh"),
        ("without SHELL the terminal runs /bin/sh", vec![], "/bin/sh"),
    ];
    for (sentence, env, want) in table {
        assert_eq!(terminal_shell(env), *want, "{sentence}");
    }
    assert_eq!(
        terminal_program("/bin/zsh", None).unwrap_err().message,
        "terminal: the shell /bin/zsh is not an executable; set SHELL",
        "a shell that is not an executable is refused, saying to set SHELL"
    );
    assert_eq!(
        terminal_program("/bin/zsh", Some("/bin/zsh".into())).unwrap(),
        Path::new("/bin/zsh")
    );
}
