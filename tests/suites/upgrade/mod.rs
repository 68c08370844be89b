//! An upgrade that changes the holder protocol, as a person would do it:
//! replace the binary, restart the service. Two real builds of this source
//! (the second with another `HOLDER_VERSION`), a real private
//! `systemd --user` (and, once, no service manager at all), real programs
//! on real PTYs, a window in tmux.

mod review;
mod screens;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::next_build::next_build;
use crate::support::sysenv::{wait_until, SystemdEnv, NERDR_BIN};

/// A full-screen program: coloured lines on the main screen, then a UI in
/// the alternate screen that answers each line typed, and leaves the
/// alternate screen on `leave`.
const UI: &str = r#"printf '\033[1;31mred bold\033[0m plain\n\033[44mblue back\033[0m\nbefore the ui\n'
printf '\033[?1049h\033[2J\033[H\033[42;30m FULL SCREEN \033[0m\033[3;5H\033[4munderlined\033[0m\033[6;2H'
n=0
while IFS= read -r line; do
  [ "$line" = leave ] && printf '\033[?1049l'
  n=$((n+1))
  printf '\033[%d;1H\033[35mgot: %s\033[0m\033[6;2H' $((8+n)) "$line"
done
"#;

fn text(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).trim_end().to_string()
}

fn installed() -> Option<SystemdEnv> {
    let env = SystemdEnv::start()?;
    env.run(&["nerdr", "service", "install"]);
    let ui = env.write_user_file("ui.sh", UI);
    env.write_user_file(
        ".config/nerdr/config.toml",
        format!(
            "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n\
             [agents.ui]\ncommand = [\"sh\", \"{}\"]\n",
            ui.display()
        ),
    );
    env.write_user_file("work/.keep", "");
    Some(env)
}

fn nerdr(env: &SystemdEnv, args: &[&str]) -> String {
    let mut cmd = env.user_cmd(&[&["nerdr"], args].concat());
    cmd.current_dir(env.home().join("work"));
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "nerdr {args:?} failed: {}\ncore.log:\n{}",
        String::from_utf8_lossy(&out.stderr),
        log(env, "core.log"),
    );
    text(&out)
}

fn log(env: &SystemdEnv, name: &str) -> String {
    std::fs::read_to_string(env.home().join(".local/state/nerdr").join(name)).unwrap_or_default()
}

fn tabs(env: &SystemdEnv) -> Vec<serde_json::Value> {
    serde_json::from_str(&nerdr(env, &["tabs", "--json"])).unwrap()
}

fn tab<'a>(tabs: &'a [serde_json::Value], id: &str) -> &'a serde_json::Value {
    tabs.iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("no tab {id} in {tabs:?}"))
}

fn wait_screen(env: &SystemdEnv, id: &str, needle: &str) -> String {
    let mut last = String::new();
    let ok = crate::support::poll(Duration::from_secs(15), || {
        last = nerdr(env, &["read", id]);
        last.contains(needle)
    });
    assert!(ok, "screen of {id} never showed {needle:?}:\n{last}");
    last
}

/// The holder's PID, and the inode of the executable it runs.
fn holder(env: &SystemdEnv) -> (u32, u64) {
    let pid: u32 = env
        .unit_prop("nerdr-holder.service", "MainPID")
        .parse()
        .unwrap();
    assert_ne!(pid, 0, "no holder runs");
    let ino = std::fs::metadata(format!("/proc/{pid}/exe")).unwrap().ino();
    (pid, ino)
}

/// Replace the installed binary as a package manager would (a new file
/// renamed over the old one; running processes keep theirs), and restart
/// the service.
fn upgrade_to(env: &SystemdEnv, build: &Path) {
    let installed = env.nerdr();
    let fresh = installed.with_extension("new");
    std::fs::copy(build, &fresh).unwrap();
    std::fs::rename(&fresh, &installed).unwrap();
    let t0 = std::time::Instant::now();
    env.systemctl(&["restart", "nerdr.service"]);
    // For the record: the restart, hand-over included.
    eprintln!("UPGRADE: restart with hand-over took {:?}", t0.elapsed());
}

/// A window: `nerdr` attached in a tmux pane of the given size.
struct Window<'a> {
    env: &'a SystemdEnv,
    sock: PathBuf,
}

impl<'a> Window<'a> {
    fn open(env: &'a SystemdEnv, cols: u16, rows: u16) -> Self {
        let sock = env.home().join("tmux.sock");
        let w = Window { env, sock };
        let work = env.home().join("work");
        let (c, r) = (cols.to_string(), rows.to_string());
        w.tmux(&["-f", "/dev/null", "new-session", "-d", "-x", &c, "-y", &r])
            .arg(format!("cd {} && nerdr; sleep 600", work.display()))
            .output()
            .map(|o| assert!(o.status.success(), "tmux: {o:?}"))
            .unwrap();
        // Keys typed before the window is up would be lost.
        w.wait_for("C-b ? help");
        w
    }

    fn tmux(&self, args: &[&str]) -> std::process::Command {
        let mut cmd = self
            .env
            .user_cmd(&[&["tmux", "-S", self.sock.to_str().unwrap()], args].concat());
        cmd.env("TERM", "xterm-256color");
        cmd
    }

    fn keys(&self, keys: &[&str]) {
        let out = self
            .tmux(&[&["send-keys", "-t", "0"], keys].concat())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }

    /// The pane, colours included, and where its cursor is.
    fn capture(&self) -> String {
        let cells = self
            .tmux(&["capture-pane", "-p", "-e", "-t", "0"])
            .output()
            .unwrap();
        let cursor = self
            .tmux(&["display", "-p", "-t", "0", "#{cursor_x},#{cursor_y}"])
            .output()
            .unwrap();
        // Rows re-encoded from their cells: how a row's end reaches tmux
        // (cells written blank, or never written) depends on the frames
        // painted before, not on what the person sees.
        let cells = text(&cells);
        let rows = crate::support::twin::normalise(&cells.lines().collect::<Vec<_>>());
        format!("{}\ncursor {}", rows.join("\n"), text(&cursor))
    }

    fn wait_for(&self, needle: &str) -> String {
        let mut last = String::new();
        let ok = crate::support::poll(Duration::from_secs(15), || {
            last = self.capture();
            last.contains(needle)
        });
        assert!(ok, "the window never showed {needle:?}:\n{last}");
        last
    }

    /// Show tab number `n` and wait until `needle` is on screen.
    fn show(&self, n: &str, needle: &str) -> String {
        let shown = format!(" {n}:");
        let mut last = String::new();
        let ok = crate::support::poll(Duration::from_secs(15), || {
            last = self.capture();
            let status = last.lines().rev().find(|l| l.contains("C-b ? help"));
            let here = status
                .and_then(|l| l.split(&shown).nth(1))
                .is_some_and(|rest| {
                    rest.split_whitespace()
                        .next()
                        .is_some_and(|w| w.ends_with('*'))
                });
            if !here {
                self.keys(&["C-b", n]);
                std::thread::sleep(Duration::from_millis(200));
            }
            here && last.contains(needle)
        });
        assert!(
            ok,
            "the window never showed tab {n} with {needle:?}:\n{last}"
        );
        last
    }

    fn close(self) {
        let _ = self.tmux(&["kill-server"]).output();
    }
}

#[test]
fn an_upgrade_to_another_holder_protocol_keeps_programs_screens_and_input() {
    let next = next_build();
    let Some(env) = installed() else { return };
    let sh = nerdr(&env, &["agent", "sh"]);
    let ui = nerdr(&env, &["agent", "ui"]);
    nerdr(&env, &["send", &sh, "echo one-$((0+1))"]);
    wait_screen(&env, &sh, "one-1");
    wait_screen(&env, &ui, "FULL SCREEN");
    nerdr(&env, &["send", &ui, "first"]);
    wait_screen(&env, &ui, "got: first");

    let before = tabs(&env);
    let pids: Vec<u64> = [&sh, &ui]
        .iter()
        .map(|id| tab(&before, id)["pid"].as_u64().unwrap())
        .collect();
    let (holder_pid, old_exe) = holder(&env);
    let window = Window::open(&env, 100, 30);
    let window_ui = window.show("2", "got: first");
    let window_sh = window.show("1", "one-1");
    window.close();
    let screens: Vec<String> = [&sh, &ui]
        .iter()
        .map(|id| nerdr(&env, &["read", id]))
        .collect();

    // 1. Upgrade: a core of holder protocol NEXT_VERSION meets this holder.
    upgrade_to(&env, &next);
    let after = tabs(&env);
    for (id, pid) in [&sh, &ui].iter().zip(&pids) {
        let t = tab(&after, id);
        assert_eq!(
            t["state"],
            "running",
            "{t}\ncore.log:\n{}",
            log(&env, "core.log")
        );
        assert_eq!(
            t["pid"].as_u64(),
            Some(*pid),
            "another process runs tab {id}"
        );
    }
    let (pid_now, exe_now) = holder(&env);
    assert_eq!(
        pid_now, holder_pid,
        "the holder was replaced, not handed over"
    );
    assert_ne!(exe_now, old_exe, "the holder still runs the old build");
    assert_eq!(
        exe_now,
        std::fs::metadata(env.nerdr()).unwrap().ino(),
        "the holder runs the new build"
    );
    assert!(
        log(&env, "holder.log").contains("re-executed for a hand-over"),
        "{}",
        log(&env, "holder.log")
    );
    // The screens come back exactly: as text, and in a window, colours and
    // cursor included.
    for (id, screen) in [&sh, &ui].iter().zip(&screens) {
        assert_eq!(&nerdr(&env, &["read", id]), screen, "tab {id}");
    }
    let window = Window::open(&env, 100, 30);
    assert_eq!(window.show("2", "got: first"), window_ui);
    assert_eq!(window.show("1", "one-1"), window_sh);

    // Typing reaches the programs, from a command and from the window.
    nerdr(&env, &["send", &sh, "echo two-$((1+1))"]);
    wait_screen(&env, &sh, "two-2");
    window.show("2", "got: first");
    window.keys(&["typed here", "Enter"]);
    window.wait_for("got: typed here");
    // The terminal follows the window's size.
    window.show("1", "two-2");
    nerdr(&env, &["send", &sh, "stty size"]);
    let sized = wait_screen(&env, &sh, " 100\n");
    assert!(sized.lines().any(|l| l.ends_with(" 100")), "{sized}");
    window.close();

    // New programs start under the re-executed holder, in their scopes.
    let fresh = nerdr(&env, &["agent", "sh"]);
    nerdr(&env, &["send", &fresh, "cat /proc/self/cgroup"]);
    wait_screen(&env, &fresh, &format!("nerdr-agent-{fresh}.scope"));

    // 2. And back: a core of the first build takes over again.
    upgrade_to(&env, Path::new(NERDR_BIN));
    let back = tabs(&env);
    for (id, pid) in [&sh, &ui].iter().zip(&pids) {
        assert_eq!(tab(&back, id)["pid"].as_u64(), Some(*pid), "tab {id}");
    }
    assert_eq!(holder(&env).0, holder_pid);
    wait_screen(&env, &ui, "got: typed here");
    // Behind the alternate screen, the main screen came through both
    // hand-overs too: leaving shows it, colours and all.
    nerdr(&env, &["send", &ui, "leave"]);
    let main = wait_screen(&env, &ui, "before the ui");
    assert!(
        main.starts_with("red bold plain\nblue back\nbefore the ui"),
        "{main}"
    );
    let window = Window::open(&env, 100, 30);
    let shown = window.show("2", "before the ui");
    assert!(
        shown.contains("\u{1b}[0;1;31mred bold") && shown.contains("\u{1b}[0;44mblue back"),
        "colours lost: {shown:?}"
    );
    window.close();

    // The adopted programs still end as they should: with their own exit
    // code (still the holder's children), or by their scope on close.
    nerdr(&env, &["send", &sh, "exit 7"]);
    wait_until("the shell to exit", Duration::from_secs(15), || {
        tab(&tabs(&env), &sh)["state"] == "exited"
    });
    assert_eq!(tab(&tabs(&env), &sh)["exit_code"], 7);
    nerdr(&env, &["close", &ui]);
    assert!(!crate::support::local::pid_alive(pids[1] as u32));
    let scopes = env.systemctl(&[
        "list-units",
        "--all",
        "--plain",
        "--no-legend",
        "nerdr-agent-*",
    ]);
    assert!(
        !scopes.contains(&format!("nerdr-agent-{ui}")),
        "the closed tab's scope is left:\n{scopes}"
    );
    nerdr(&env, &["quit"]);
}

/// The holder's abstract socket name, as `protocol::holder::socket_name` makes it.
fn holder_socket(env: &SystemdEnv) -> String {
    let state = env.home().join(".local/state/nerdr");
    let mut h: u64 = 0xcbf29ce484222325;
    for b in state.as_os_str().as_encoded_bytes() {
        h = (h ^ *b as u64).wrapping_mul(0x100000001b3);
    }
    format!("nerdr-holder-{}-{h:016x}", env.uid())
}

#[test]
fn a_program_in_a_tab_cannot_make_the_holder_hand_over() {
    let Some(env) = installed() else { return };
    let sh = nerdr(&env, &["agent", "sh"]);
    let (holder_pid, exe) = holder(&env);
    // From inside the tab: a hello of another version, then the hand-over
    // request, exactly as a core would send them.
    let hello = r#"{"type":"hello","version":99}"#;
    let ask = r#"{"type":"hand_over","handover":1}"#;
    let frame = |j: &str| format!("\\000\\000\\000\\{:03o}\\001{j}", j.len() + 1);
    // Once to hear the answer, once to say the words (the holder hangs up
    // before reading any, so one connection cannot do both reliably).
    let script = format!(
        "socat -u ABSTRACT-CONNECT:{name} CREATE:asked.out; \
         printf '{}{}' | socat -u - ABSTRACT-CONNECT:{name} 2>/dev/null; echo asked-$((40+2))",
        frame(hello),
        frame(ask),
        name = holder_socket(&env),
    );
    nerdr(&env, &["send", &sh, &script]);
    wait_screen(&env, &sh, "asked-42");
    let answer = std::fs::read(env.home().join("work/asked.out")).unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        // Refused on who it is (here: a program's scope), before reading a word.
        answer.contains(r#""type":"refused""#) && answer.contains("a program's scope"),
        "{answer:?}\nholder.log: {}",
        log(&env, "holder.log")
    );
    assert!(!answer.contains("re_executing"), "{answer}");
    // Nothing changed hands: the same holder, the same build, still serving.
    assert_eq!(holder(&env), (holder_pid, exe));
    nerdr(&env, &["send", &sh, "echo still-$((2+2))"]);
    wait_screen(&env, &sh, "still-4");
    // Both connections were refused, and no hand-over was asked.
    let holder_log = log(&env, "holder.log");
    assert_eq!(
        holder_log.matches("refused a connection").count(),
        2,
        "{holder_log}"
    );
    assert!(!holder_log.contains("hand-over"), "{holder_log}");
    nerdr(&env, &["quit"]);
}

/// `l`'s core started as `program FIRST... core ARGS` (a next build, or
/// a next build through another program), in `l`'s environment, silent.
fn start_core_through(l: &mut crate::support::local::Local, program: &Path, first: &[&Path]) {
    let same = l.cmd(&["core"]);
    let mut core = std::process::Command::new(program);
    core.args(first)
        .args(same.get_args())
        .env_clear()
        .envs(same.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .current_dir(same.get_current_dir().unwrap())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    l.core = Some(core.spawn().unwrap());
}

/// A bash tab in `l` that has printed `before-42`; its id.
fn a_bash_tab_that_said_before_42(l: &crate::support::local::Local) -> String {
    l.write_config("[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n");
    let tab = l.ok(&["agent", "sh"]);
    l.ok(&["send", &tab, "echo before-$((40+2))"]);
    l.wait_screen(&tab, "before-42");
    tab
}

#[test]
fn without_a_service_manager_an_upgrade_keeps_programs_too() {
    use crate::support::local::{pid_alive, Local};
    let next = next_build();
    let mut l = Local::started();
    let tab = a_bash_tab_that_said_before_42(&l);
    let pid = l.tabs_json(&[])[0]["pid"].as_u64().unwrap();
    let holder = l.holder_pid().expect("a holder runs the programs");
    let screen = l.ok(&["read", &tab]);

    // The next build's core, in the same environment.
    l.stop_core();
    start_core_through(&mut l, &next, &[]);
    let sock = l.client_socket();
    wait_until("the new core", Duration::from_secs(20), || {
        std::os::unix::net::UnixStream::connect(&sock).is_ok() && l.run(&["tabs"]).status.success()
    });

    let t = &l.tabs_json(&[])[0];
    assert_eq!(t["state"], "running", "{t}\n{}", l.core_log());
    assert_eq!(t["pid"].as_u64(), Some(pid));
    assert_eq!(l.holder_pid(), Some(holder));
    assert_eq!(
        std::fs::metadata(format!("/proc/{holder}/exe"))
            .unwrap()
            .ino(),
        std::fs::metadata(&next).unwrap().ino(),
        "the holder does not run the next build"
    );
    assert_eq!(l.ok(&["read", &tab]), screen);
    l.ok(&["send", &tab, "echo after-$((50+5))"]);
    l.wait_screen(&tab, "after-55");
    // Still the holder's child: its own exit code is reported.
    l.ok(&["send", &tab, "exit 3"]);
    wait_until("the shell to exit", Duration::from_secs(15), || {
        l.tabs_json(&[])[0]["state"] == "exited"
    });
    assert_eq!(l.tabs_json(&[])[0]["exit_code"], 3);
    assert!(!pid_alive(pid as u32));
}

/// Names created in a folder from now on, as inotify reports them.
struct Watch {
    fd: std::os::fd::OwnedFd,
}

impl Watch {
    fn new(dir: &Path) -> Self {
        use std::os::fd::FromRawFd;
        use std::os::unix::ffi::OsStrExt;
        // SAFETY: plain syscalls; results checked.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        assert!(
            fd >= 0,
            "inotify_init1: {}",
            std::io::Error::last_os_error()
        );
        let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
        let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).unwrap();
        let w = unsafe {
            libc::inotify_add_watch(
                std::os::fd::AsRawFd::as_raw_fd(&fd),
                path.as_ptr(),
                libc::IN_CREATE | libc::IN_MOVED_TO,
            )
        };
        assert!(
            w >= 0,
            "inotify_add_watch: {}",
            std::io::Error::last_os_error()
        );
        Watch { fd }
    }

    fn created(&self) -> Vec<String> {
        let mut names = Vec::new();
        let mut buf = vec![0u8; 64 << 10];
        loop {
            // SAFETY: reads into a buffer of its length.
            let n = unsafe {
                libc::read(
                    std::os::fd::AsRawFd::as_raw_fd(&self.fd),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                )
            };
            if n <= 0 {
                return names;
            }
            let mut at = 0;
            while at < n as usize {
                let head = std::mem::size_of::<libc::inotify_event>();
                let len = u32::from_ne_bytes(buf[at + 12..at + 16].try_into().unwrap()) as usize;
                let name = &buf[at + head..at + head + len];
                let end = name.iter().position(|b| *b == 0).unwrap_or(len);
                names.push(String::from_utf8_lossy(&name[..end]).into_owned());
                at += head + len;
            }
        }
    }
}
