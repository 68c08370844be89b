//! `nerdr integration install|uninstall` on real files in a temporary HOME,
//! and `nerdr hook` as the agents run it: the hooks install writes are run
//! the way each agent runs them, against a stand-in hook socket.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::support::local::BIN;

struct Home {
    root: tempfile::TempDir,
}

impl Home {
    fn new() -> Self {
        let root = tempfile::Builder::new()
            .prefix("nerdr-i")
            .tempdir()
            .unwrap();
        std::fs::create_dir_all(root.path().join("home")).unwrap();
        Home { root }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.path().join(rel)
    }

    fn home(&self, rel: &str) -> PathBuf {
        self.path("home").join(rel)
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.home(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    /// The binary with a scrubbed environment: this HOME, its state folder.
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args)
            .env_clear()
            .env("HOME", self.home(""))
            .env("XDG_STATE_HOME", self.path("state"))
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .stdin(Stdio::null());
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "nerdr {args:?} failed:\n{}",
            said(&out)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn record(&self, agent: &str) -> PathBuf {
        self.path(&format!("state/nerdr/integrations/{agent}.json"))
    }
}

fn said(out: &Output) -> String {
    format!(
        "status: {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

const CLAUDE_SETTINGS: &str = r#"{
	// the model I like
	"model":   "opus",
	"permissions": { "allow": ["Bash(git log:*)"] },

	"hooks": {
		"Stop": [ {"matcher": "", "hooks": [ {"type": "command", "command": "notify-send 'claude done'"} ]} ],
		"PreToolUse": [
			{ "matcher": "Bash", "hooks": [ { "type": "command", "command": "./check.sh" } ] }
		]
	},
	"env": {"B": "2", "A": "1"}
}"#;

const CODEX_CONFIG: &str = "# codex settings
model = \"gpt-5\"   # the default
approval_policy =    \"on-request\"

[tui]
notifications = [ \"agent-turn-complete\" ]

[projects.\"/home/me/work\"]
trust_level = \"trusted\"
";

#[test]
fn claude_install_then_uninstall_leaves_the_file_byte_identical() {
    let h = Home::new();
    let file = h.write(".claude/settings.json", CLAUDE_SETTINGS);
    let said = h.ok(&["integration", "install", "claude"]);
    assert!(said.contains(&file.display().to_string()), "{said}");
    let installed = read(&file);
    for ev in [
        "SessionStart",
        "UserPromptSubmit",
        "Stop",
        "Notification",
        "PostToolUse",
    ] {
        assert!(
            installed.contains(&format!("\"\\\"${{NERDR_BIN:-nerdr}}\\\" hook {ev}\"")),
            "no {ev} hook in:\n{installed}"
        );
    }
    assert!(installed.contains("notify-send 'claude done'"));

    let again = h.ok(&["integration", "install", "claude"]);
    assert!(again.contains("already"), "{again}");
    assert_eq!(read(&file), installed, "a second install changed the file");

    h.ok(&["integration", "uninstall", "claude"]);
    assert_eq!(read(&file), CLAUDE_SETTINGS);
    assert!(
        !h.record("claude").exists(),
        "the install record is left behind"
    );
}

#[test]
fn a_crlf_claude_settings_file_gets_crlf_hooks_and_comes_back_byte_identical() {
    let h = Home::new();
    let text = CLAUDE_SETTINGS.replace('\n', "\r\n");
    let file = h.write(".claude/settings.json", &text);
    h.ok(&["integration", "install", "claude"]);
    let installed = read(&file);
    assert!(installed.contains("hook Stop"), "{installed}");
    assert_eq!(
        installed.matches('\n').count(),
        installed.matches("\r\n").count(),
        "a line of nerdr's ends in a bare line feed:\n{installed}"
    );
    h.ok(&["integration", "uninstall", "claude"]);
    assert_eq!(read(&file), text);
}

#[test]
fn a_blank_line_inside_the_claude_settings_object_is_kept_and_comes_back_byte_identical() {
    // jsonc-parser's CST drops a blank line just inside the object it
    // appends to; install keeps the user's bytes instead of refusing.
    let h = Home::new();
    let text = "{\n\n  \"model\": \"opus\"\n}\n";
    let file = h.write(".claude/settings.json", text);
    h.ok(&["integration", "install", "claude"]);
    let installed = read(&file);
    assert!(
        installed.starts_with("{\n\n  \"model\": \"opus\",\n"),
        "{installed}"
    );
    assert!(installed.contains("hook Stop"), "{installed}");
    let again = h.ok(&["integration", "install", "claude"]);
    assert!(again.contains("already"), "{again}");
    h.ok(&["integration", "uninstall", "claude"]);
    assert_eq!(read(&file), text);
}

#[test]
fn a_claude_settings_file_with_trailing_commas_gets_the_hooks_once() {
    // nerdr's entries come out with trailing commas like the file's; a
    // second install must still see them as nerdr's.
    let h = Home::new();
    let text = "{\n  \"model\": \"opus\",\n}\n";
    let file = h.write(".claude/settings.json", text);
    h.ok(&["integration", "install", "claude"]);
    let installed = read(&file);
    assert!(installed.contains("hook Stop\",\n"), "{installed}");
    let again = h.ok(&["integration", "install", "claude"]);
    assert!(again.contains("already"), "{again}");
    assert_eq!(read(&file), installed, "a second install changed the file");
    h.ok(&["integration", "uninstall", "claude"]);
    assert_eq!(read(&file), text);
}

#[test]
fn codex_install_then_uninstall_leaves_the_file_byte_identical() {
    let h = Home::new();
    let file = h.write(".codex/config.toml", CODEX_CONFIG);
    h.ok(&["integration", "install", "codex"]);
    let installed = read(&file);
    let parsed: toml::Table = installed.parse().unwrap();
    let notify = parsed["notify"].as_array().unwrap();
    assert_eq!(notify[0].as_str(), Some("sh"), "{installed}");
    assert_eq!(
        parsed["tui"]["notifications"][0].as_str(),
        Some("agent-turn-complete")
    );
    h.ok(&["integration", "install", "codex"]);
    assert_eq!(read(&file), installed);
    h.ok(&["integration", "uninstall", "codex"]);
    assert_eq!(read(&file), CODEX_CONFIG);
}

#[test]
fn codex_home_and_claude_config_dir_are_honoured() {
    let h = Home::new();
    let codex = h.write("elsewhere/codex/config.toml", "model = \"o3\"\n");
    let out = h
        .cmd(&["integration", "install", "codex"])
        .env("CODEX_HOME", h.home("elsewhere/codex"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", said(&out));
    assert!(read(&codex).contains("notify = "));
    assert!(!h.home(".codex").exists());

    let out = h
        .cmd(&["integration", "install", "claude"])
        .env("CLAUDE_CONFIG_DIR", h.home("elsewhere/claude"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", said(&out));
    assert!(h.home("elsewhere/claude/settings.json").is_file());
    assert!(!h.home(".claude").exists());
}

#[test]
fn a_missing_settings_file_is_created_and_removed_again() {
    let h = Home::new();
    for (agent, rel, dir) in [
        ("claude", ".claude/settings.json", ".claude"),
        ("codex", ".codex/config.toml", ".codex"),
        ("copilot", ".copilot/hooks/nerdr.json", ".copilot"),
    ] {
        h.ok(&["integration", "install", agent]);
        let file = h.home(rel);
        assert!(
            read(&file).contains("hook Stop"),
            "{agent}: {}",
            read(&file)
        );
        let skill = h.home(&format!("{dir}/skills/nerdr/SKILL.md"));
        assert!(read(&skill).contains("name: nerdr"), "{agent}: the skill");
        h.ok(&["integration", "uninstall", agent]);
        assert!(!file.exists(), "{agent}: {} is left behind", file.display());
        assert!(
            !h.home(dir).exists(),
            "{agent}: the folder install made is left behind"
        );
    }
    assert_eq!(std::fs::read_dir(h.home("")).unwrap().count(), 0);
}

#[test]
fn a_file_changed_after_install_loses_only_nerdrs_entries() {
    let h = Home::new();
    let before = "{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"Stop\": []\n  }\n}\n";
    let file = h.write(".claude/settings.json", before);
    h.ok(&["integration", "install", "claude"]);
    // The user adds a setting above, and a hook of their own after nerdr's.
    let installed = read(&file);
    let edited = installed
        .replacen("{\n", "{\n  \"theme\": \"dark\",\n", 1)
        .replacen(
            "\n    ],\n    \"SessionStart\"",
            ",\n      {\"hooks\": [{\"type\": \"command\", \"command\": \"mine\"}]}\n    ],\n    \"SessionStart\"",
            1,
        );
    assert_ne!(edited, installed);
    std::fs::write(&file, &edited).unwrap();
    let said = h.ok(&["integration", "uninstall", "claude"]);
    assert!(said.contains("changed since the install"), "{said}");
    assert_eq!(
        read(&file),
        "{\n  \"theme\": \"dark\",\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"Stop\": [\n      {\"hooks\": [{\"type\": \"command\", \"command\": \"mine\"}]}\n    ]\n  }\n}\n"
    );
}

/// codex's one `notify` holding the person's program is left as it is,
/// and said so (and what that costs); the skill, which needs no notify, is
/// installed all the same.
#[test]
fn codex_leaves_a_notify_that_is_not_nerdrs_and_installs_the_skill() {
    let h = Home::new();
    let text = "notify = [\"notify-send\", \"codex\"]\n";
    let file = h.write(".codex/config.toml", text);
    let out = h.run(&["integration", "install", "codex"]);
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    for want in [
        format!("left `notify` in {} (line 1) as it is", file.display()),
        "codex does not tell nerdr when its turns end".to_string(),
        "remove that line".to_string(),
    ] {
        assert!(stdout.contains(&want), "{want:?} not in:\n{}", said(&out));
    }
    assert_eq!(read(&file), text);
    assert!(!h.record("codex").exists());
    let skill = h.home(".codex/skills/nerdr/SKILL.md");
    assert!(skill.exists(), "{}", said(&out));
    let out = h.run(&["integration", "uninstall", "codex"]);
    assert!(out.status.success(), "{}", said(&out));
    assert!(!skill.exists(), "{}", said(&out));
    assert_eq!(read(&file), text);
}

#[test]
fn hook_outside_nerdr_prints_nothing_and_exits_0() {
    let h = Home::new();
    for args in [
        vec!["hook", "Stop"],
        vec![
            "hook",
            "Stop",
            r#"{"type":"agent-turn-complete","thread-id":"t"}"#,
        ],
        vec!["hook"],
    ] {
        let mut child = h
            .cmd(&args)
            .env("NERDR_TAB", "")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Outside nerdr the hook may exit before reading: a broken pipe
        // here is its business, not a failure.
        let wrote = child
            .stdin
            .take()
            .unwrap()
            .write_all(br#"{"session_id":"s1","hook_event_name":"Stop"}"#);
        assert!(
            wrote.is_ok()
                || wrote
                    .as_ref()
                    .is_err_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe),
            "{wrote:?}"
        );
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", said(&out));
        assert!(
            out.stdout.is_empty() && out.stderr.is_empty(),
            "{args:?}: {}",
            said(&out)
        );
    }
}

#[test]
fn hook_inside_nerdr_without_a_core_says_so_on_stderr_and_exits_0() {
    let h = Home::new();
    let out = h
        .cmd(&["hook", "Stop"])
        .env("NERDR_TAB", "secret")
        .env("NERDR_SOCKET", h.path("no-such.sock"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    assert!(out.stdout.is_empty(), "{}", said(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot reach the nerdr hook socket"), "{err}");
}

/// A stand-in for the core's hook socket: answers each request and hands
/// over the request lines it got.
fn fake_core(sock: &Path) -> std::sync::mpsc::Receiver<serde_json::Value> {
    let listener = UnixListener::bind(sock).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            let mut line = String::new();
            BufReader::new(&conn).read_line(&mut line).unwrap();
            let req: serde_json::Value = serde_json::from_str(&line).unwrap();
            let reply = serde_json::json!({"id": req["id"], "result": null});
            conn.write_all(format!("{reply}\n").as_bytes()).unwrap();
            if tx.send(req).is_err() {
                break; // the test is over
            }
        }
    });
    rx
}

/// Run a hook command the way the agents do: claude and copilot through a
/// shell with the payload on stdin, codex's notify argv with the payload
/// appended, all with a tab's environment.
fn run_as_agent(h: &Home, sock: &Path, argv: &[String], stdin: &str) -> Output {
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", h.home(""))
        .env("NERDR_TAB", "tab-secret")
        .env("NERDR_BIN", BIN)
        .env("NERDR_SOCKET", sock)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn installed_hooks_report_the_session_and_turns_to_the_tab() {
    let h = Home::new();
    let sock = h.path("hook.sock");
    let reports = fake_core(&sock);
    let wait = || {
        reports
            .recv_timeout(std::time::Duration::from_secs(10))
            .unwrap()
    };
    for agent in ["claude", "codex", "copilot"] {
        h.ok(&["integration", "install", agent]);
    }

    // claude: settings.json, payload on stdin.
    let settings: serde_json::Value =
        serde_json::from_str(&read(&h.home(".claude/settings.json"))).unwrap();
    for ev in [
        "SessionStart",
        "UserPromptSubmit",
        "Stop",
        "Notification",
        "PostToolUse",
    ] {
        let cmd = settings["hooks"][ev][0]["hooks"][0]["command"]
            .as_str()
            .unwrap();
        let payload = format!(
            r#"{{"session_id":"c-1","hook_event_name":"{ev}","transcript_path":"/t.jsonl"}}"#
        );
        let out = run_as_agent(&h, &sock, &["sh".into(), "-c".into(), cmd.into()], &payload);
        assert_eq!(out.status.code(), Some(0), "{}", said(&out));
        assert!(
            out.stdout.is_empty(),
            "claude reads hook stdout: {}",
            said(&out)
        );
        let req = wait();
        assert_eq!(req["tab"], "tab-secret");
        assert_eq!(req["method"], "report");
        assert_eq!(req["params"]["event"], ev);
        assert_eq!(req["params"]["session_id"], "c-1");
        assert_eq!(req["params"]["data"]["transcript_path"], "/t.jsonl");
        // Stamped with the monotonic time the hook started.
        assert!(
            req["params"]["seq"].as_u64().is_some_and(|s| s > 0),
            "{req}"
        );
    }

    // codex: the notify argv, the JSON as one more argument.
    let config: toml::Table = read(&h.home(".codex/config.toml")).parse().unwrap();
    let mut argv: Vec<String> = config["notify"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    argv.push(r#"{"type":"agent-turn-complete","thread-id":"x-9","turn-id":"1"}"#.into());
    let out = run_as_agent(&h, &sock, &argv, "");
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    let req = wait();
    assert_eq!(req["params"]["event"], "Stop");
    assert_eq!(req["params"]["session_id"], "x-9");
    assert_eq!(req["params"]["data"]["turn-id"], "1");

    // copilot: its own hook file, camelCase payloads on stdin.
    let hooks: serde_json::Value =
        serde_json::from_str(&read(&h.home(".copilot/hooks/nerdr.json"))).unwrap();
    assert_eq!(hooks["version"], 1);
    for (ev, nerdr_ev) in [
        ("sessionStart", "SessionStart"),
        ("userPromptSubmitted", "UserPromptSubmit"),
        ("agentStop", "Stop"),
        ("postToolUse", "PostToolUse"),
    ] {
        let cmd = hooks["hooks"][ev][0]["bash"].as_str().unwrap();
        let out = run_as_agent(
            &h,
            &sock,
            &["bash".into(), "-c".into(), cmd.into()],
            r#"{"sessionId":"p-3","timestamp":1,"cwd":"/w"}"#,
        );
        assert_eq!(out.status.code(), Some(0), "{}", said(&out));
        let req = wait();
        assert_eq!(req["params"]["event"], nerdr_ev);
        assert_eq!(req["params"]["session_id"], "p-3");
    }

    // Outside a tab codex's notify runs nothing at all.
    assert_eq!(argv[0], "sh");
    let out = Command::new("/bin/sh")
        .args(&argv[1..])
        .env_clear()
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        said(&out)
    );
}
