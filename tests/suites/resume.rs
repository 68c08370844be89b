//! Built-in agents get their session arguments, and a tab listed after a
//! full stop comes back in its conversation with `nerdr restart`. A
//! stand-in `claude` on PATH records how it was started.

use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use crate::support::local::{pid_alive, Local};
use crate::support::wait_until;

/// A `claude` that answers `--help` like the real one (the flags nerdr
/// looks for) and otherwise runs until stopped.
fn fake_claude(l: &Local) -> String {
    l.stand_in(
        "claude",
        "#!/bin/sh\ncase \"$1\" in --help) echo '  --session-id <uuid>  Use a specific session ID'; exit 0;; esac\necho \"started with: $*\"\nexec sleep 1000\n",
    )
}

#[test]
fn a_new_claude_gets_a_session_id_and_restart_resumes_it_after_a_full_stop() {
    let mut l = Local::started();
    l.write_config("[agents.claude]\nargs = [\"--model\", \"opus\"]\n");
    let path = fake_claude(&l);
    let out = l
        .cmd(&["agent", "claude"])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let tab = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let tabs = l.tabs_json(&[]);
    let id = tabs[0]["session_id"]
        .as_str()
        .expect("a session id")
        .to_string();
    assert_eq!(id.len(), 36, "a UUID: {id}");
    let pid = tabs[0]["pid"].as_u64().unwrap() as u32;
    // Session arguments come last, after command and args: as the agent
    // saw them, and as nerdr recorded them.
    l.wait_screen(
        &tab,
        &format!("started with: --model opus --session-id {id}"),
    );
    assert_eq!(
        tabs[0]["command"],
        serde_json::json!(["claude", "--model", "opus", "--session-id", id])
    );

    // A full stop: the core and the holder go.
    let holder = l.holder_pid().unwrap();
    l.stop_core();
    kill(Pid::from_raw(holder as i32), Signal::SIGKILL).unwrap();
    wait_until(
        "the agent to lose its terminal",
        Duration::from_secs(10),
        || !pid_alive(pid),
    );
    l.start_core();
    let listed = l.tabs_json(&[]);
    assert_eq!(listed[0]["id"], tab.as_str());
    assert_eq!(listed[0]["resumable"], true, "{listed:?}");
    assert!(l.ok(&["tabs"]).contains("resumable"));

    let out = l
        .cmd(&["restart", &tab])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let back = l.tabs_json(&[]);
    assert_eq!(back[0]["id"], tab.as_str(), "the same tab comes back");
    assert_eq!(back[0]["state"], "running");
    assert_eq!(
        back[0]["command"],
        serde_json::json!(["claude", "--model", "opus", "--resume", id])
    );
    l.wait_screen(&tab, &format!("started with: --model opus --resume {id}"));
}

#[test]
fn a_custom_agent_resumes_with_its_reported_command() {
    let l = Local::started();
    l.write_config("[agents.mine]\ncommand = [\"sh\", \"-c\", \"echo \\\"args: $*\\\"; exec sleep 1000\", \"mine\"]\nresume_args = [\"--continue\"]\n");
    let tab = l.ok(&["agent", "mine"]);
    l.wait_screen(&tab, "args:");
    // Without a report, a custom agent resumes with its resume_args.
    l.ok(&["restart", "--force", &tab]);
    l.wait_screen(&tab, "args: --continue");
    // The agent reports its own resume command: the words after the agent's
    // word are used after its command.
    l.ok(&["pane", "report-agent", &tab, "--", "sh", "--session", "abc"]);
    l.ok(&["restart", "--force", &tab]);
    l.wait_screen(&tab, "args: --session abc");
    // A report naming a program that is not in the command is refused.
    l.ok(&["pane", "report-agent", &tab, "--", "evil", "--x"]);
    let err = l.fails(&["restart", "--force", &tab]);
    assert!(err.contains("evil"), "{err}");
}

#[test]
fn opencode_config_model_is_merged_into_the_users_config_content() {
    let l = Local::started();
    l.write_config("[agents.opencode]\nconfig_model = \"anthropic/claude-sonnet\"\n");
    let path = l.stand_in(
        "opencode",
        "#!/bin/sh\ncase \"$1\" in --help) echo '  -s, --session'; exit 0;; esac\necho \"content: $OPENCODE_CONFIG_CONTENT\"\nexec sleep 1000\n",
    );
    let out = l
        .cmd(&["agent", "opencode"])
        .env("PATH", &path)
        .env("OPENCODE_CONFIG_CONTENT", r#"{"theme":"dark"}"#)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let tab = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let screen = l.wait_screen(&tab, "content:");
    let json = screen
        .lines()
        .find_map(|l| l.strip_prefix("content: "))
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"theme": "dark", "model": "anthropic/claude-sonnet"})
    );
}

#[test]
fn a_launch_whose_settings_change_meanwhile_is_refused() {
    let l = Local::started();
    l.write_config("[agents.codex]\nargs = [\"--one\"]\n");
    // A codex whose --help (asked to detect --no-daemon) takes a moment.
    let path = l.stand_in(
        "codex",
        "#!/bin/sh\ncase \"$1\" in --help) sleep 2; echo '      --no-daemon  Run without the server'; exit 0;; esac\nexec sleep 1000\n",
    );
    let agent = l
        .cmd(&["agent", "codex"])
        .env("PATH", &path)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    l.write_config("[agents.codex]\nargs = [\"--two\"]\n");
    let out = agent.wait_with_output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("restart the agent to use the new settings"),
        "{err}"
    );
    assert!(l.tabs_json(&[]).is_empty());
    // With the settings settled, it starts (and the answer was cached).
    let ok = l
        .cmd(&["agent", "codex"])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(ok.status.success(), "{ok:?}");
    let t = &l.tabs_json(&[])[0];
    assert_eq!(
        t["command"],
        serde_json::json!(["codex", "--two", "--no-daemon"])
    );
}
