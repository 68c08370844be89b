//! Which settings files may loosen the sandbox, the audit trail, and
//! what happens when the sandbox cannot run.

use std::path::PathBuf;
use std::time::Duration;

use super::{sandbox, setup, text};
use crate::support::sysenv::describe;

/// A project's settings cannot loosen (warned, not applied); the user's
/// own can. And every decision is one line of the audit file and one
/// journal entry.
#[test]
fn project_settings_only_tighten_and_every_decision_is_audited() {
    let Some(env) = setup() else { return };
    let home = env.home().to_path_buf();
    let proj = home.join("proj");
    env.write_user_file("cache/.keep", "");
    let loosen = r#"{"sandbox": {"filesystem": {"allowWrite": ["~/cache"]}}}"#;
    env.write_user_file("proj/.claude/settings.local.json", loosen);
    let out = sandbox(
        &env,
        &proj,
        &["touch", &format!("{}/cache/x", home.display())],
    );
    assert!(!out.status.success(), "a project loosened the sandbox");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("settings.local.json:1: sandbox.filesystem.allowWrite: ignored: a project's settings can only tighten"),
        "{stderr}"
    );

    env.write_user_file(".config/nerdr/sandbox.json", loosen);
    let out = sandbox(
        &env,
        &proj,
        &["touch", &format!("{}/cache/x", home.display())],
    );
    assert!(
        out.status.success(),
        "the user's own settings did not loosen: {}",
        text(&out.stderr)
    );
    assert!(home.join("cache/x").exists());

    // The audit file of that last run: start, the project's ignored key, exit.
    let dir = home.join(".local/share/nerdr/audit");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    files.sort_by_key(|f| std::fs::metadata(f).unwrap().modified().unwrap());
    let last = files.pop().unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&last).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(
        std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&last)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let events: Vec<&str> = lines.iter().map(|l| l["event"].as_str().unwrap()).collect();
    assert_eq!(events, ["setting", "start", "exit"], "{lines:?}");
    assert_eq!(lines[1]["bwrap_version"], "0.8.0");
    assert!(lines[1]["kernel_features"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f == "seccomp"));
    assert_eq!(lines[1]["settings_hash"].as_str().unwrap().len(), 64);
    assert_eq!(lines[2]["code"], 0);
    let session = lines[0]["session"].as_str().unwrap().to_string();

    let field = format!("NERDR_SANDBOX_SESSION={session}");
    let mut journal = Vec::new();
    crate::support::wait_until("the journal entries", Duration::from_secs(10), || {
        journal = env.journal(&[&field]);
        journal.len() >= lines.len()
    });
    assert_eq!(journal.len(), lines.len());
    for (entry, line) in journal.iter().zip(&lines) {
        assert_eq!(entry["MESSAGE_ID"], "6f3c1e2a9b7d4c58a1e0f2b3c4d5e607");
        let mirrored: serde_json::Value =
            serde_json::from_str(entry["NERDR_AUDIT_JSON"].as_str().unwrap()).unwrap();
        assert_eq!(&mirrored, line);
    }
}

/// No bubblewrap: refuse, say how to fix it, exit 125.
#[test]
fn without_bubblewrap_it_refuses_and_says_what_to_do() {
    let Some(env) = setup() else { return };
    let proj = env.home().join("proj");
    let nerdr_dir = env.nerdr().parent().unwrap().to_path_buf();
    let mut c = env.user_cmd(&["nerdr", "sandbox", "--", "/bin/true"]);
    c.current_dir(&proj).env("PATH", &nerdr_dir);
    let out = crate::support::sysenv::output_of(&mut c);
    assert_eq!(out.status.code(), Some(125), "{}", describe(&c, &out));
    assert!(
        text(&out.stderr).contains("apt install bubblewrap"),
        "{}",
        describe(&c, &out)
    );
}

/// `sandbox.enabled = false` in the user's own settings runs the program
/// without a sandbox, loudly and on the record; in a project's it is
/// ignored.
#[test]
fn disabled_by_the_user_runs_unsandboxed_on_the_record() {
    let Some(env) = setup() else { return };
    let home = env.home().to_path_buf();
    let proj = home.join("proj");
    let off = r#"{"sandbox": {"enabled": false}}"#;
    let escape = format!("{}/outside", home.display());

    env.write_user_file("proj/.claude/settings.json", off);
    let out = sandbox(&env, &proj, &["touch", &escape]);
    assert!(!out.status.success(), "a project turned the sandbox off");
    assert!(
        text(&out.stderr).contains("sandbox.enabled: ignored"),
        "{}",
        text(&out.stderr)
    );

    env.write_user_file(".claude/settings.json", off);
    let out = sandbox(&env, &proj, &["touch", &escape]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("WITHOUT a sandbox"),
        "{}",
        text(&out.stderr)
    );
    let audit = home.join(".local/share/nerdr/audit");
    let all: String = std::fs::read_dir(&audit)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert!(all.contains(r#""event":"unsandboxed""#), "{all}");
}

/// `nerdr doctor` says whether the sandbox can run here.
#[test]
fn doctor_reports_bubblewrap() {
    let Some(env) = setup() else { return };
    let out = env.output(&["nerdr", "doctor", "--json"]);
    let checks: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("doctor --json: {e}: {}", text(&out.stdout)));
    let b = checks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "bubblewrap")
        .unwrap_or_else(|| panic!("no bubblewrap check: {checks}"));
    assert_eq!(b["status"], "ok", "{b}");
    assert!(
        b["detail"].as_str().unwrap().contains("namespaces work"),
        "{b}"
    );
}
