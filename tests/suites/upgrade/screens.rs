//! The holder parses nothing: it keeps the core's last snapshot of each
//! screen and the output after it. Every screen still comes back exactly
//! after a restart, a crash of the core, and a flood of output while no
//! core ran (when the holder compacts on its own).

use std::time::Duration;

use super::{installed, log, nerdr, wait_screen, Window};
use crate::support::sysenv::{wait_until, SystemdEnv};

/// Every tab's text, and every tab as a window shows it (colours, cursor).
fn seen(env: &SystemdEnv, tabs: &[(&str, &str, &str)]) -> (Vec<String>, Vec<String>) {
    let window = Window::open(env, 100, 30);
    let shown = tabs
        .iter()
        .map(|(n, _, needle)| window.show(n, needle))
        .collect();
    window.close();
    let ids: Vec<&str> = tabs.iter().map(|(_, id, _)| *id).collect();
    (texts(env, &ids), shown)
}

fn texts(env: &SystemdEnv, ids: &[&str]) -> Vec<String> {
    ids.iter().map(|id| nerdr(env, &["read", id])).collect()
}

fn crash(env: &SystemdEnv) {
    let pid = env.unit_prop("nerdr.service", "MainPID");
    assert_ne!(pid, "0", "no core runs");
    env.run(&["sh", "-c", &format!("kill -KILL {pid}")]);
    wait_until("the core to die", Duration::from_secs(10), || {
        env.unit_prop("nerdr.service", "MainPID") != pid
    });
}

fn disrupt(env: &SystemdEnv, how: &str) {
    match how {
        "restart" => {
            env.systemctl(&["restart", "nerdr.service"]);
        }
        _ => crash(env),
    }
}

#[test]
fn a_restart_and_a_crash_give_every_screen_back_exactly() {
    let Some(env) = installed() else { return };
    let sh = nerdr(&env, &["agent", "sh"]);
    let ui = nerdr(&env, &["agent", "ui"]);
    nerdr(
        &env,
        &[
            "send",
            &sh,
            "printf '\\033[1;33myellow\\033[0m-%d\\n' $((1+1))",
        ],
    );
    wait_screen(&env, &sh, "yellow-2");
    wait_screen(&env, &ui, "FULL SCREEN");
    for (i, how) in ["restart", "crash"].iter().enumerate() {
        // Seen at leisure: the core's snapshots (after the window's
        // resizes, after a quiet second) are what the holder keeps.
        let line = format!("{how}-{i}");
        nerdr(&env, &["send", &ui, &line]);
        let got = format!("got: {line}");
        let tabs = [("2", ui.as_str(), got.as_str()), ("1", &sh, "yellow")];
        let before = seen(&env, &tabs);
        disrupt(&env, how);
        assert_eq!(seen(&env, &tabs), before, "after a {how}");

        // Seen at once: the output after the last snapshot comes raw from
        // the holder.
        let line = format!("then-{how}");
        nerdr(&env, &["send", &ui, &line]);
        nerdr(
            &env,
            &["send", &sh, "printf '\\033[44mblue\\033[0m-%d\\n' 7"],
        );
        wait_screen(&env, &ui, &format!("got: {line}"));
        wait_screen(&env, &sh, "blue-7");
        let before = texts(&env, &[&ui, &sh]);
        disrupt(&env, how);
        assert_eq!(
            texts(&env, &[&ui, &sh]),
            before,
            "right after a {how}\ncore.log:\n{}",
            log(&env, "core.log")
        );
    }
    // The core's snapshots were all taken where the holder's output was.
    let holder_log = log(&env, "holder.log");
    assert!(
        !holder_log.contains("ignored a core's snapshot"),
        "{holder_log}"
    );
    // Behind the alternate screen, the main screen came through too.
    nerdr(&env, &["send", &ui, "leave"]);
    let main = wait_screen(&env, &ui, "before the ui");
    assert!(
        main.starts_with("red bold plain\nblue back\nbefore the ui"),
        "{main}"
    );
    nerdr(&env, &["quit"]);
}

/// Waits for `go` in its folder, then writes `LINES` coloured lines (well
/// over the holder's compaction size) and a full-screen UI over them, and
/// says `done`; leaves the UI on a line `leave`.
const FLOOD: &str = r#"import os, sys, time
print("flood ready", flush=True)
while not os.path.exists("go"):
    time.sleep(0.05)
out = sys.stdout
for i in range(LINES):
    out.write("\033[3%dmflood %05d \033[1mbold\033[0m %s\n" % (i % 7 + 1, i, "x" * 50))
out.write("\033[?1049h\033[2J\033[H\033[42;30m ALT UI \033[0m\033[3;5Hover the flood\033[5;1H")
out.flush()
open("done", "w").close()
for line in sys.stdin:
    if line.strip() == "leave":
        out.write("\033[?1049l")
        out.flush()
"#;

const LINES: usize = 20_000;

#[test]
fn a_flood_while_no_core_runs_comes_back_exactly() {
    let Some(env) = installed() else { return };
    let flood = env.write_user_file("flood.py", FLOOD.replace("LINES", &LINES.to_string()));
    let config = std::fs::read_to_string(env.home().join(".config/nerdr/config.toml")).unwrap();
    env.write_user_file(
        ".config/nerdr/config.toml",
        format!(
            "{config}[agents.flood]\ncommand = [\"python3\", \"{}\"]\n",
            flood.display()
        ),
    );
    let tab = nerdr(&env, &["agent", "flood"]);
    wait_screen(&env, &tab, "flood ready");
    // No core from here on: nothing takes snapshots.
    env.systemctl(&[
        "stop",
        "nerdr-client.socket",
        "nerdr-hook.socket",
        "nerdr.service",
    ]);
    env.write_user_file("work/go", "");
    wait_until("the flood to end", Duration::from_secs(60), || {
        env.home().join("work/done").exists()
    });
    let holder_log = log(&env, "holder.log");
    assert!(
        holder_log.contains("compacted a screen no core snapshots"),
        "the holder never compacted:\n{holder_log}"
    );
    env.systemctl(&["start", "nerdr-client.socket", "nerdr-hook.socket"]);

    let ui = wait_screen(&env, &tab, "over the flood");
    assert_eq!(ui, " ALT UI\n\n    over the flood");
    // Behind it, the flood's last lines, as a terminal of the tab's size
    // (24 rows: no window has changed it) shows them.
    nerdr(&env, &["send", &tab, "leave"]);
    let last = format!("flood {:05}", LINES - 1);
    let main = wait_screen(&env, &tab, &last);
    let want: Vec<String> = (LINES - 23..LINES)
        .map(|i| format!("flood {i:05} bold {}", "x".repeat(50)))
        .collect();
    assert_eq!(main, want.join("\n"));
    let window = Window::open(&env, 80, 25);
    let shown = window.show("1", &last);
    let colour = (LINES - 1) % 7 + 1;
    assert!(
        shown.contains(&format!(
            "\u{1b}[0;3{colour}m{last} \u{1b}[0;1;3{colour}mbold"
        )),
        "colours lost: {shown:?}"
    );
    window.close();
    nerdr(&env, &["quit"]);
}
