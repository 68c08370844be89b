//! Which tab needs the person, seen in the attach window driven through
//! tmux as a person would: each agent state in the status line, the mark
//! on a background tab that turned blocked or done, the jump key going to
//! it, the bell mark, and the desktop notification the window passes to
//! the terminal outside tmux.
//!
//! The states come from the real claude (`$NERDR_AGENT_CLIS`) doing real
//! turns against the project's fake model, run unsandboxed as the
//! current user in a [`Local`] root: a slow answer keeps it working, a
//! command through its `Bash` tool (not pre-allowed) brings its permission
//! prompt. Bells come from a plain shell tab (`printf '\a'`): bells are
//! not agent states.
//!
//! The notification is an escape sequence (OSC 9 here: tmux's `TERM` names
//! no terminal that reads another) that `capture-pane` never shows. Inside
//! tmux the window sends it through tmux's passthrough, which tmux
//! forwards to its attached clients' terminals with `allow-passthrough
//! on`; [`Tmux::attach_outer`] attaches such a client on a
//! pseudo-terminal and keeps what it is sent.

use std::path::PathBuf;
use std::time::Duration;

use crate::support::agent_home;
use crate::support::fake_model::script::AFTER_TOOL_TEXT;
use crate::support::fake_model::{FakeModel, Turn};
use crate::support::local::Local;
use crate::support::sysenv::skip;
use crate::support::tmux::have_tmux;
use crate::support::tmux::Tmux;

const SH: &str = "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n";

/// The status line (the window's last row).
fn status(s: &[String]) -> &str {
    s.last().map(String::as_str).unwrap_or("")
}

/// Whether tab `n`'s entry in the status line is exactly `entry`
/// (`2:sh^`): entries are separated by spaces, the note by ` | `.
fn has_entry(s: &[String], entry: &str) -> bool {
    let line = status(s);
    let tabs = line.split(" | ").next().unwrap_or("");
    tabs.split_whitespace().any(|e| e == entry)
}

#[test]
fn a_bell_in_a_background_tab_is_marked_and_the_jump_key_goes_there() {
    if !have_tmux() {
        return;
    }
    let l = Local::started();
    l.write_config(SH);
    let first = l.ok(&["agent", "sh"]);
    let second = l.ok(&["agent", "sh"]);
    let t = Tmux::start(&l, 100, 24, "nerdr");
    t.wait("tab 1 shown", |s: &[String]| has_entry(s, "1:sh-1*"));
    // Nothing needs the person yet: the jump key says so.
    t.keys(&["C-b", "a"]);
    t.wait_text("no other tab needs you");
    // It answers that key only: the next one (redraw) takes it away.
    t.keys(&["C-b", "r"]);
    t.wait("the note gone", |s: &[String]| {
        !status(s).contains("no other tab needs you")
    });

    l.ok(&["send", &second, "printf 'ring\\a'"]);
    let s = t.wait("tab 2's bell mark", |s: &[String]| has_entry(s, "2:sh-2^"));
    assert!(has_entry(&s, "1:sh-1*"), "{}", status(&s));
    // Black on yellow: the styled capture has the entry in SGR 43.
    let styled = t.screen_styled();
    let last = styled.lines().last().unwrap_or("");
    assert!(
        last.contains("43m2:sh-2^"),
        "the bell mark is not coloured: {last:?}"
    );

    // The jump key goes to it, and showing it clears the mark.
    t.keys(&["C-b", "a"]);
    let s = t.wait("tab 2 shown", |s: &[String]| has_entry(s, "2:sh-2*"));
    assert!(has_entry(&s, "1:sh-1"), "{}", status(&s));
    t.wait_text("ring");

    // A bell in the tab the window shows is no news: no mark.
    l.ok(&["send", &second, "printf 'again\\a'"]);
    l.wait_screen(&second, "again");
    // And one behind its back is, on the other tab.
    l.ok(&["send", &first, "printf 'first\\a'"]);
    let s = t.wait("tab 1's bell mark", |s: &[String]| has_entry(s, "1:sh-1^"));
    assert!(has_entry(&s, "2:sh-2*"), "{}", status(&s));

    // A terminal tab's bell counts too, though nerdr tells no state of it.
    let term = l.ok(&["terminal", &first]);
    t.wait("the terminal's entry", |s: &[String]| {
        status(s).contains("3:")
    });
    l.wait_screen(&term, "#"); // root's shell prompt
    l.ok(&["send", &term, "printf 'term\\a'"]);
    let s = t.wait("the terminal's bell mark", |s: &[String]| {
        status(s)
            .split_whitespace()
            .any(|e| e.starts_with("3:") && e.ends_with('^'))
    });
    assert!(has_entry(&s, "2:sh-2*"), "{}", status(&s));
}

/// The CLIs' folder, or `None` after a loud skip.
fn clis() -> Option<PathBuf> {
    let Some(dir) = std::env::var_os("NERDR_AGENT_CLIS").map(PathBuf::from) else {
        skip(
            "NERDR_AGENT_CLIS is not set; install the CLIs as .ci/run does \
             (npm install --prefix DIR @anthropic-ai/claude-code) and set \
             NERDR_AGENT_CLIS=DIR/node_modules/.bin",
        );
        return None;
    };
    if !dir.join("claude").is_file() {
        skip(&format!(
            "NERDR_AGENT_CLIS={} holds no claude",
            dir.display()
        ));
        return None;
    }
    Some(dir)
}

/// How the window's notification reaches the terminal outside tmux (OSC
/// 9: tmux's `TERM` inside the pane names no terminal that reads another).
const NOTICE: &str = "\x1b]9;nerdr: ";

/// Node programs start slowly on a loaded machine; a turn has the
/// model's answer, the tool's run and the closing answer.
const CLAUDE: Duration = Duration::from_secs(120);

/// Words of the slow answer: at 400 ms a word, long enough to see the
/// tab working from a window that polls its screen.
const SLOW: &str = "one two three four five six seven eight nine ten eleven twelve \
                    thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty";

#[test]
fn a_background_claude_shows_each_state_and_the_jump_key_goes_to_its_prompt() {
    if !have_tmux() {
        return;
    }
    let Some(clis) = clis() else { return };
    let l = Local::started();
    l.write_config(SH);
    let model = FakeModel::start();
    model.when_user_says("SLOW-ANSWER", Turn::Slow(SLOW.into()));
    // A command that writes: claude runs read-only ones (`echo`) without
    // asking.
    model.when_user_says("RUN-TOUCH", Turn::run("touch attention-ran.txt"));
    // Trusting the whole root covers the work folder. The `Bash` tool is
    // not pre-allowed: running the command brings the permission prompt.
    let home = agent_home::claude(&model.url(), l.root.path());
    for (rel, content) in home.files.iter().filter(|(r, _)| r == ".claude.json") {
        std::fs::write(l.path("home").join(rel), content).unwrap();
    }
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", clis.display());
    let start = l
        .cmd(&["agent", "claude"])
        .env("PATH", &path)
        .env("TERM", "xterm-256color")
        .envs(home.env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap();
    assert!(start.status.success(), "nerdr agent claude: {start:?}");
    let claude = String::from_utf8_lossy(&start.stdout).trim().to_string();
    l.ok(&["agent", "sh"]);
    l.wait_screen_within(&claude, "? for shortcuts", CLAUDE);

    // The window shows the shell; claude works behind it.
    let (cols, rows) = (120, 40);
    let t = Tmux::start(&l, cols, rows, "nerdr");
    t.wait("the window", |s: &[String]| has_entry(s, "1:claude-1.*"));
    t.keys(&["C-b", "2"]);
    t.wait("tab 2 shown, claude idle", |s: &[String]| {
        has_entry(s, "2:sh-1*") && has_entry(s, "1:claude-1.")
    });
    let outer = t.attach_outer(cols, rows);

    let say = |prompt: &str| {
        l.ok(&["send", "--no-enter", &claude, prompt]);
        l.wait_screen_within(&claude, prompt, CLAUDE);
        l.ok(&["send", &claude, ""]);
    };
    // On failure: the window's status line, claude's own screen, what
    // nerdr says set its state, and what the model was asked.
    let wait_entry = |what: &str, entry: &str| {
        let mut s = Vec::new();
        let ok = crate::support::poll(CLAUDE, || {
            s = t.screen();
            has_entry(&s, entry)
        });
        assert!(
            ok,
            "timed out waiting for {what} ({entry}); status line:\n{}\nclaude's screen:\n{}\n\
             nerdr explain:\n{}\nthe fake model's log:\n{}",
            status(&s),
            l.ok(&["read", &claude]),
            String::from_utf8_lossy(&l.run(&["explain", &claude]).stdout),
            model.dump()
        );
        assert!(has_entry(&s, "2:sh-1*"), "{}", status(&s));
        s
    };

    // Each notification the terminal outside tmux was sent, in order.
    let notices = || {
        let seen = String::from_utf8_lossy(&outer.seen()).into_owned();
        seen.split(NOTICE)
            .skip(1)
            .map(|n| n.split('\x07').next().unwrap_or("").to_string())
            .collect::<Vec<_>>()
    };

    say("Please SLOW-ANSWER");
    wait_entry("claude working", "1:claude-1~");
    // The turn ends unseen: done, and marked.
    wait_entry("claude done and marked", "1:claude-1+#");
    // The core told the window, which told the terminal outside tmux.
    outer.wait_for("a notification", NOTICE.as_bytes(), CLAUDE);
    let before = notices().len();
    assert!(
        notices().iter().all(|n| n.contains("claude")),
        "{:?}",
        notices()
    );

    say("Please RUN-TOUCH");
    let s = wait_entry("claude blocked and marked", "1:claude-1!#");
    let styled = t.screen_styled();
    let last = styled.lines().last().unwrap_or("");
    // White on red: it stands out.
    assert!(
        last.contains("41m1:claude-1!#"),
        "the blocked tab does not stand out: {last:?}\n{}",
        status(&s)
    );
    let more = crate::support::poll(CLAUDE, || notices().len() > before);
    assert!(more, "no notification for the blocked tab: {:?}", notices());
    let last = notices().pop().unwrap_or_default();
    assert!(
        last.contains(&claude) && last.contains("needs you"),
        "{last:?}"
    );

    // The jump key goes to it: its permission prompt on screen.
    t.keys(&["C-b", "a"]);
    t.wait("claude shown at its prompt", |s: &[String]| {
        has_entry(s, "1:claude-1!*") && s.iter().any(|l| l.contains("Do you want to proceed?"))
    });
    // Approved through the window; the turn ends while shown: idle, not
    // done, and no mark.
    t.keys(&["Enter"]);
    t.wait("the closing answer, claude idle", |s: &[String]| {
        s.iter().any(|l| l.contains(AFTER_TOOL_TEXT)) && has_entry(s, "1:claude-1.*")
    });
    assert!(
        l.work().join("attention-ran.txt").exists(),
        "the approved command did not run"
    );
    l.ok(&["close", &claude]);
}

/// A tab that rings without pause sends its session's windows the tab
/// list about once a second, not once per bell (over `--host` those lists
/// would crowd the paint out of ssh's channel), and the last list carries
/// every bell. The window is `nerdr bridge`, as `--host` reaches a core:
/// its frames are read as they come.
#[test]
fn a_tab_ringing_without_pause_sends_the_list_about_once_a_second() {
    use std::io::{Read, Write};
    use std::process::Stdio;
    let l = Local::started();
    l.write_config("[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n");
    let tab = l.ok(&["agent", "sh"]);
    let mut bridge = l
        .cmd(&["bridge"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut to = bridge.stdin.take().unwrap();
    let mut from = bridge.stdout.take().unwrap();
    let attach = serde_json::json!({
        "type": "attach", "folder": l.work(), "rows": 24, "cols": 80, "env": [],
    })
    .to_string();
    let mut frame = ((attach.len() + 1) as u32).to_be_bytes().to_vec();
    frame.push(1);
    frame.extend_from_slice(attach.as_bytes());
    to.write_all(&frame).unwrap();
    // Every tab list, with when it came and the tab's bell count in it.
    let (tx, lists) = std::sync::mpsc::channel();
    std::thread::spawn(move || loop {
        let mut len = [0u8; 4];
        if from.read_exact(&mut len).is_err() {
            return;
        }
        let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
        if from.read_exact(&mut body).is_err() {
            return;
        }
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(&body[1..]) else {
            continue;
        };
        if v["type"] == "tabs" {
            let bells = v["tabs"][0]["bells"].as_u64().unwrap_or(0);
            if tx.send((std::time::Instant::now(), bells)).is_err() {
                return;
            }
        }
    });
    std::thread::sleep(Duration::from_millis(500));
    while lists.try_recv().is_ok() {}
    l.ok(&[
        "send",
        &tab,
        "for i in $(seq 200); do printf '\\a'; sleep 0.01; done; echo rung-$((6*7))",
    ]);
    l.wait_screen(&tab, "rung-42");
    // The one owed at the end comes within a second.
    std::thread::sleep(Duration::from_millis(1500));
    let got: Vec<(std::time::Instant, u64)> = lists.try_iter().collect();
    let _ = bridge.kill();
    let _ = bridge.wait();
    let rung = got.last().map(|(_, b)| *b);
    assert_eq!(rung, Some(200), "the last list carries every bell: {got:?}");
    let span = got.last().unwrap().0 - got[0].0;
    assert!(
        got.len() as u64 <= span.as_secs() + 3,
        "{} lists in {span:?} for 200 bells",
        got.len()
    );
}
