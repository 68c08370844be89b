//! `nerdr usage [--json]` through the real binary, on recorded files: a
//! codex session log from a real codex 0.171.0 turn whose model server
//! sent the `x-codex-primary-*`/`x-codex-secondary-*` headers
//! (tests/fixtures/usage/codex-rollout.jsonl), and the `claude-limits.json`
//! that the status-line command `nerdr integration install claude
//! --status-line` puts in
//! claude's settings writes, run as claude runs it with the payload a real
//! Claude Code 2.1.197 gave its status-line command (tests/fixtures/usage/
//! claude-statusline.json, recorded with an OAuth token against a model
//! server sending the `anthropic-ratelimit-unified-*` headers; the reset
//! times made placeholders). Plus the "unknown" cases: no files, malformed
//! ones, numbers whose window has reset since.
//!
//! The recorded reset times are moved to now-relative ones (the text is
//! otherwise the recorded one), so the test means the same on any day.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::support::local::BIN;

const CODEX_LOG: &str = include_str!("../fixtures/usage/codex-rollout.jsonl");
const STATUSLINE: &str = include_str!("../fixtures/usage/claude-statusline.json");
/// The reset times codex was sent in the recorded turn.
const RECORDED_5H: &str = "1796297873";
const RECORDED_7D: &str = "1796631953";
const LOG_DIR: &str = ".codex/sessions/2026/12/03";
const LOG_NAME: &str = "rollout-2026-12-03T08-25-53-01a23b02-8ed3-7920-ac0a-fa782d72288d.jsonl";

struct Home {
    root: tempfile::TempDir,
}

impl Home {
    fn new() -> Self {
        let root = tempfile::Builder::new()
            .prefix("nerdr-u")
            .tempdir()
            .unwrap();
        std::fs::create_dir_all(root.path().join("home")).unwrap();
        Home { root }
    }

    fn home(&self, rel: &str) -> PathBuf {
        self.root.path().join("home").join(rel)
    }

    fn limits_file(&self) -> PathBuf {
        self.root
            .path()
            .join("state/nerdr/sessions/claude-limits.json")
    }

    fn write(&self, path: &PathBuf, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args)
            .env_clear()
            .env("HOME", self.home(""))
            .env("XDG_STATE_HOME", self.root.path().join("state"))
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("TZ", "UTC")
            .stdin(Stdio::null());
        c
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.cmd(args).output().unwrap();
        assert!(out.status.success(), "nerdr {args:?}:\n{}", said(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.ok(&["usage", "--json"])).unwrap()
    }

    /// The recorded codex log, its reset times at `five` and `week`.
    fn codex_log(&self, five: i64, week: i64) {
        let text = CODEX_LOG
            .replace(RECORDED_5H, &five.to_string())
            .replace(RECORDED_7D, &week.to_string());
        self.write(&self.home(&format!("{LOG_DIR}/{LOG_NAME}")), &text);
    }

    /// Runs the status-line command install put in claude's settings, the
    /// way claude runs it (`sh -c`, the payload on stdin).
    fn status_line(&self, payload: &str) -> Output {
        let settings: Value = serde_json::from_str(
            &std::fs::read_to_string(self.home(".claude/settings.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(settings["statusLine"]["type"], "command", "{settings}");
        let cmd = settings["statusLine"]["command"].as_str().unwrap();
        let mut child = Command::new("sh")
            .args(["-c", cmd])
            .env_clear()
            .env("HOME", self.home(""))
            .env("XDG_STATE_HOME", self.root.path().join("state"))
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("NERDR_BIN", BIN)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
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

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

fn agent<'a>(all: &'a Value, name: &str) -> &'a Value {
    all["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["agent"] == name)
        .unwrap_or_else(|| panic!("no {name} in {all}"))
}

fn statusline_payload(five: i64, week: i64) -> String {
    STATUSLINE
        .replace("RESET_5H", &five.to_string())
        .replace("RESET_7D", &week.to_string())
}

/// The unknown reason of `window` of `name`, or a panic saying what it was.
fn reason(all: &Value, name: &str, window: &str) -> String {
    let w = &agent(all, name)[window];
    assert_eq!(w["state"], "unknown", "{name} {window}: {all}");
    w["reason"].as_str().unwrap().to_string()
}

#[test]
fn usage_reads_codexs_log_and_the_limits_claudes_status_line_kept() {
    let h = Home::new();
    let t = now();
    let (five, week) = (t + 3 * 3600 + 12 * 60 + 30, t + 4 * 86_400 + 3600 + 1800);
    h.codex_log(five, week);
    h.ok(&["integration", "install", "claude"]);
    let settings = std::fs::read_to_string(h.home(".claude/settings.json")).unwrap();
    assert!(!settings.contains("statusLine"), "{settings}");
    h.ok(&["integration", "install", "claude", "--status-line"]);

    let out = h.status_line(&statusline_payload(five, week));
    assert!(out.status.success(), "{}", said(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Sonnet 5 · 5h 42% · wk 13%\n",
        "{}",
        said(&out)
    );
    let file = h.limits_file();
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{}", file.display());
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(kept["version"], 1);
    assert_eq!(kept["five_hour"]["used_percent"], 42.0);
    assert_eq!(kept["five_hour"]["resets_at"], five);
    assert_eq!(kept["seven_day"]["resets_at"], week);

    // The same numbers again (claude runs its status line after every
    // message) are not written again within the minute; new ones are.
    let again = h.status_line(&statusline_payload(five, week));
    assert!(again.status.success(), "{}", said(&again));
    let kept_again: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(kept_again, kept);
    let moved =
        statusline_payload(five, week).replace("\"used_percentage\":42", "\"used_percentage\":43");
    h.status_line(&moved);
    let kept_moved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        kept_moved["five_hour"]["used_percent"], 43.0,
        "{kept_moved}"
    );
    h.status_line(&statusline_payload(five, week));

    let all = h.json();
    for (name, used5, used7) in [("claude", 42.0, 13.0), ("codex", 42.5, 13.0)] {
        let a = agent(&all, name);
        assert_eq!(a["five_hour"]["state"], "known", "{all}");
        assert_eq!(a["five_hour"]["used_percent"], used5, "{all}");
        assert_eq!(a["five_hour"]["resets_at"], five, "{all}");
        assert_eq!(a["weekly"]["used_percent"], used7, "{all}");
        assert_eq!(a["weekly"]["resets_at"], week, "{all}");
    }
    assert!(
        agent(&all, "codex")["source"]
            .as_str()
            .unwrap()
            .ends_with(LOG_NAME),
        "{all}"
    );
    let text = h.ok(&["usage"]);
    for want in [
        "claude: (from ",
        "5-hour  42% used, resets ",
        "(in 3h 12m)",
        "weekly  13% used, resets ",
        "(in 4d 1h)",
        "codex: (from ",
    ] {
        assert!(text.contains(want), "{want:?} not in:\n{text}");
    }

    // A payload without limits (an API key, or before the first reply)
    // keeps what was kept, and the line is the model alone.
    let bare = r#"{"model":{"id":"m","display_name":"Opus 4.5"}}"#;
    let out = h.status_line(bare);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Opus 4.5\n");
    assert_eq!(agent(&h.json(), "claude")["five_hour"]["state"], "known");
}

#[test]
fn usage_says_unknown_and_why() {
    let h = Home::new();
    // Nothing yet.
    let all = h.json();
    assert!(
        reason(&all, "claude", "five_hour").contains("claude-limits.json yet"),
        "{all}"
    );
    assert!(
        reason(&all, "codex", "weekly").contains("no codex session logs under"),
        "{all}"
    );
    let text = h.ok(&["usage"]);
    assert!(text.contains("claude: unknown: no "), "{text}");

    // Malformed: the file is named, and what is wrong with it.
    h.write(&h.limits_file(), "{\"version\":1,");
    h.write(
        &h.home(&format!("{LOG_DIR}/{LOG_NAME}")),
        "not json\n{\"type\":\"session_meta\",\"payload\":{}}\n",
    );
    let all = h.json();
    let r = reason(&all, "claude", "weekly");
    assert!(
        r.contains("claude-limits.json: not nerdr's limits file"),
        "{r}"
    );
    let r = reason(&all, "codex", "five_hour");
    assert!(
        r.contains(LOG_NAME) && r.contains("line 1 of its last 256 KiB is not JSON"),
        "{r}"
    );

    // An API key's log: codex records null limits.
    let api_key = CODEX_LOG
        .lines()
        .map(|l| {
            if l.contains("\"token_count\"") {
                let mut v: Value = serde_json::from_str(l).unwrap();
                v["payload"]["rate_limits"] = Value::Null;
                v.to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    h.write(&h.home(&format!("{LOG_DIR}/{LOG_NAME}")), &api_key);
    let r = reason(&h.json(), "codex", "weekly");
    assert!(r.contains("no rate-limit entry"), "{r}");

    // Too old: the 5-hour windows reset a minute ago; the weekly ones hold.
    let t = now();
    h.codex_log(t - 60, t + 86_400);
    h.write(
        &h.limits_file(),
        &format!(
            r#"{{"version":1,"observed_at":{},"five_hour":{{"used_percent":90.0,"resets_at":{}}},"seven_day":{{"used_percent":20.0,"resets_at":{}}}}}"#,
            t - 3 * 3600,
            t - 60,
            t + 86_400
        ),
    );
    let all = h.json();
    for name in ["claude", "codex"] {
        let r = reason(&all, name, "five_hour");
        assert!(
            r.starts_with("too old: the 5-hour window reset at"),
            "{name}: {r}"
        );
        assert_eq!(agent(&all, name)["weekly"]["state"], "known", "{all}");
    }
    // Every time shown is local, its zone named (the reasons' once said UTC
    // beside local resets). A POSIX TZ needs no zone files.
    let out = h.cmd(&["usage"]).env("TZ", "CET-1").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("UTC"), "{text}");
    for want in [" CET and nothing newer was recorded", " CET (in "] {
        assert!(text.contains(want), "{want:?} not in:\n{text}");
    }

    // Too large to be nerdr's.
    h.write(&h.limits_file(), &" ".repeat(64 * 1024));
    let r = reason(&h.json(), "claude", "five_hour");
    assert!(r.contains("larger than 16384 bytes"), "{r}");
}

/// Inside a sandbox nerdr's state folder and codex's logs are hidden:
/// their numbers are unknown there, saying so, and a sandboxed claude's
/// status line keeps none.
#[test]
fn in_a_sandbox_claudes_limits_are_neither_read_nor_kept() {
    let h = Home::new();
    h.ok(&["integration", "install", "claude", "--status-line"]);
    let t = now();
    let mut c = h.cmd(&["hook", "claude-statusline"]);
    let mut child = c
        .env("NERDR_SANDBOXED", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(statusline_payload(t + 60, t + 120).as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Sonnet 5 · 5h 42% · wk 13%\n"
    );
    assert!(
        !h.limits_file().exists(),
        "a sandboxed status line kept its numbers"
    );
    let out = h
        .cmd(&["usage", "--json"])
        .env("NERDR_SANDBOXED", "1")
        .output()
        .unwrap();
    let all: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = reason(&all, "claude", "five_hour");
    assert!(r.contains("cannot be read in this sandbox"), "{r}");
    // codex's logs are hidden there too: that is the reason, not that codex
    // wrote none.
    let r = reason(&all, "codex", "five_hour");
    assert!(
        r.contains("cannot be read in this sandbox") && !r.contains("no codex session logs"),
        "{r}"
    );
}

#[test]
fn install_leaves_the_users_own_status_line_and_says_so() {
    let h = Home::new();
    let before = "{\n  \"statusLine\": {\"type\": \"command\", \"command\": \"~/bin/line\"}\n}\n";
    let file = h.home(".claude/settings.json");
    h.write(&file, before);
    // Not by default: claude shows a status line in place of the footer
    // hints nerdr's screen rules read.
    h.ok(&["integration", "install", "claude"]);
    let plain: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(plain["statusLine"]["command"], "~/bin/line");
    let out = h
        .cmd(&["integration", "install", "codex", "--status-line"])
        .output()
        .unwrap();
    assert!(
        !out.status.success() && said(&out).contains("--status-line is claude's"),
        "{}",
        said(&out)
    );
    let said = h.ok(&["integration", "install", "claude", "--status-line"]);
    assert!(
        said.contains("left your statusLine") && said.contains("~/bin/line"),
        "{said}"
    );
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(after["statusLine"]["command"], "~/bin/line");
    h.ok(&["integration", "uninstall", "claude"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
}

/// A statusLine nerdr set and the person edited since is theirs: uninstall
/// keeps it, names it, and so keeps the file install had created.
#[test]
fn uninstall_keeps_a_status_line_edited_since_install() {
    let h = Home::new();
    let file = h.home(".claude/settings.json");
    h.ok(&["integration", "install", "claude", "--status-line"]);
    let text = std::fs::read_to_string(&file).unwrap();
    let edited = text.replace(
        "hook claude-statusline",
        "hook claude-statusline; echo mine",
    );
    assert_ne!(edited, text);
    std::fs::write(&file, &edited).unwrap();
    let out = h
        .cmd(&["integration", "uninstall", "claude"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", said(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("kept the statusLine (") && stdout.contains("echo mine"),
        "{}",
        said(&out)
    );
    assert!(!stdout.contains("install had created it"), "{}", said(&out));
    assert!(out.stderr.is_empty(), "{}", said(&out));
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        after,
        serde_json::json!({"statusLine": {
            "type": "command",
            "command": "\"${NERDR_BIN:-nerdr}\" hook claude-statusline; echo mine"
        }})
    );
}

/// The window's status line ends with the shown codex tab's figure, read
/// from codex's log when the window draws (here a shell stands in for
/// codex under its name; the figure is the plan's, not the program's).
#[test]
fn the_window_shows_the_shown_codex_tabs_usage() {
    use crate::support::local::Local;
    use crate::support::tmux::{have_tmux, Tmux};
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config(
        "[agents.codex]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n\
         [agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n",
    );
    let t = now();
    let text = CODEX_LOG
        .replace(RECORDED_5H, &(t + 3 * 3600).to_string())
        .replace(RECORDED_7D, &(t + 4 * 86_400).to_string());
    let log = l.path(&format!("home/{LOG_DIR}/{LOG_NAME}"));
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    std::fs::write(&log, text).unwrap();
    l.ok(&["agent", "codex"]);
    l.ok(&["agent", "sh"]);
    let w = Tmux::start(&l, 100, 24, "nerdr");
    let last = |s: &[String]| s.last().cloned().unwrap_or_default();
    w.wait("codex's figure", |s: &[String]| {
        last(s).contains("1:codex-1") && last(s).contains("| 5h 42% wk 13% | C-b ? help")
    });
    // A shell's tab has no plan: no figure.
    w.keys(&["C-b", "n"]);
    w.wait("the shell's tab without one", |s: &[String]| {
        last(s).contains("2:sh-1*") && !last(s).contains("5h ")
    });
}
