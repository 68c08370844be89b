//! `ssh_link` against stand-ins for ssh (a shell script run as the
//! program, with ssh's arguments ignored): a far end that stalls before
//! greeting or before a reply is given up on at the deadline, naming the
//! host; what the far end says reaches the person without escapes.

use std::time::{Duration, Instant};

use super::*;
use crate::protocol::api::ListSessions;

fn host() -> Target {
    Target {
        name: "devbox".into(),
        destination: "me@devbox".into(),
        folder: None,
        nerdr: "nerdr".into(),
        configured: true,
    }
}

const QUICK: Patience = Patience {
    greeting: Duration::from_millis(300),
    reply: Duration::from_millis(300),
};

/// Open with `sh SCRIPT` standing in for ssh (the script is not executed
/// itself: a file just written can be busy for exec in a test process).
/// `said` is what the far end writes first, kept beside the script.
fn open_sh(script: &str, said: &[u8]) -> (anyhow::Result<SshLink>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let said_file = dir.path().join("said");
    std::fs::write(&said_file, said).unwrap();
    let path = dir.path().join("ssh.sh");
    std::fs::write(
        &path,
        script.replace("SAID", &said_file.display().to_string()),
    )
    .unwrap();
    let path = path.display().to_string();
    (
        open_with(
            "sh".as_ref(),
            host(),
            &[&path],
            QUICK,
            Terminal::Shared,
            None,
        ),
        dir,
    )
}

fn frames(msgs: &[serde_json::Value]) -> Vec<u8> {
    msgs.iter()
        .flat_map(|m| Frame::control(m).encode())
        .collect()
}

fn greeting(nerdr: &str) -> serde_json::Value {
    let mut g = serde_json::to_value(Greeting::ours(None, Vec::new())).unwrap();
    g["nerdr"] = nerdr.into();
    g
}

fn welcome() -> serde_json::Value {
    serde_json::to_value(Verdict::Welcome {
        core_pid: 7,
        ack_every: None,
    })
    .unwrap()
}

#[test]
fn a_far_end_that_never_greets_is_given_up_on_naming_the_host() {
    let started = Instant::now();
    let (opened, _dir) = open_sh("exec sleep 30\n", b"");
    let e = format!("{:#}", opened.err().expect("no greeting"));
    assert!(
        e.contains("nerdr on devbox did not answer within 0.3 s"),
        "{e}"
    );
    assert!(started.elapsed() < Duration::from_secs(10), "it waited");
}

#[test]
fn a_reply_that_never_comes_is_given_up_on() {
    let said = frames(&[greeting("0.1.0 (abc)"), welcome()]);
    let (opened, _dir) = open_sh("cat SAID; exec sleep 30\n", &said);
    let mut link = opened.expect("greeted");
    let started = Instant::now();
    let e = format!("{:#}", link.ask(ListSessions.into()).unwrap_err());
    assert!(
        e.contains("nerdr on devbox did not answer within 0.3 s"),
        "{e}"
    );
    assert!(started.elapsed() < Duration::from_secs(10), "it waited");
}

#[test]
fn what_the_far_end_says_is_shown_without_escapes() {
    let osc = "\u{1b}]52;c;ZXZpbA==\u{7}";
    // The core's refusal there.
    let refused = serde_json::json!({"type": "refused", "message": format!("no{osc} way\r")});
    let said = frames(&[greeting("0.1.0 (abc)"), refused]);
    let (opened, _dir) = open_sh("cat SAID\n", &said);
    let e = format!("{:#}", opened.err().unwrap());
    assert_eq!(e, "nerdr on devbox: no way");

    // Another protocol's greeting, its version a sequence.
    let mut other = greeting(&format!("9.9{osc}"));
    other["protocol"] = 999.into();
    let (opened, _dir) = open_sh("cat SAID\n", &frames(&[other]));
    let e = format!("{:#}", opened.err().unwrap());
    assert!(e.contains("9.9"), "{e}");
    assert!(!e.contains('\u{1b}') && !e.contains('\u{7}'), "{e:?}");

    // ssh's own last words.
    let (opened, _dir) = open_sh(&format!("printf '{osc}boom\\n' >&2; exit 255\n"), b"");
    let e = format!("{:#}", opened.err().unwrap());
    assert!(e.contains("boom"), "{e}");
    assert!(!e.contains('\u{1b}') && !e.contains('\u{7}'), "{e:?}");
}

#[test]
fn a_remote_replys_strings_lose_escapes_and_keep_lines() {
    let mut v = serde_json::json!({
        "name": "\u{1b}]52;c;Y3VybCBldmls\u{7}tab",
        "rows": ["a\nb\tc", "\u{9b}2Jx"],
        "n": 3
    });
    untrusted_text(&mut v);
    assert_eq!(
        v,
        serde_json::json!({"name": "tab", "rows": ["a\nb\tc", "2Jx"], "n": 3})
    );
}

#[test]
fn a_far_end_that_keeps_the_channel_after_answering_is_ended() {
    let said = frames(&[greeting("0.1.0 (abc)"), welcome()]);
    // Reads nothing more and never ends: stdin closing does not end it.
    let (opened, _dir) = open_sh("cat SAID; exec sleep 60\n", &said);
    let link = opened.expect("greeted");
    let started = Instant::now();
    link.finish(true);
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "finish waited {:?} for an ssh the far end held open",
        started.elapsed()
    );
}

#[test]
fn a_link_without_terminal_runs_ssh_in_a_session_of_its_own() {
    let said = frames(&[greeting("0.1.0 (abc)"), welcome()]);
    let dir = tempfile::tempdir().unwrap();
    let said_file = dir.path().join("said");
    std::fs::write(&said_file, &said).unwrap();
    let out = dir.path().join("sid");
    let script = dir.path().join("ssh.sh");
    std::fs::write(
        &script,
        format!(
            "ps -o sid= -p $$ > {out}; echo \"$SSH_ASKPASS_REQUIRE\" >> {out}; cat {said}; exec sleep 1\n",
            out = out.display(),
            said = said_file.display()
        ),
    )
    .unwrap();
    let path = script.display().to_string();
    let link =
        open_with("sh".as_ref(), host(), &[&path], QUICK, Terminal::None, None).expect("greeted");
    let pid = link.child.id();
    link.finish(false);
    let seen = std::fs::read_to_string(&out).unwrap();
    let mut lines = seen.lines();
    assert_eq!(
        lines.next().map(str::trim),
        Some(pid.to_string().as_str()),
        "{seen}"
    );
    assert_eq!(lines.next(), Some("never"), "{seen}");
}
