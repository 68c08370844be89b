//! An upgrade that changes the holder protocol, as a person would do it:
//! replace the binary, restart the service. Two real builds of this source
//! (the second with another `HOLDER_VERSION`), a real private
//! `systemd --user` (and, once, no service manager at all), real programs
//! on real PTYs, a window in tmux.

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
        format!("{}\ncursor {}", text(&cells), text(&cursor))
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
        shown.contains("\u{1b}[1m\u{1b}[31mred bold") && shown.contains("\u{1b}[44mblue back"),
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

/// The holder's abstract socket name, as `holder::socket_name` makes it.
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

#[test]
fn without_a_service_manager_an_upgrade_keeps_programs_too() {
    use crate::support::local::{pid_alive, Local};
    let next = next_build();
    let mut l = Local::started();
    l.write_config("[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n");
    let tab = l.ok(&["agent", "sh"]);
    l.ok(&["send", &tab, "echo before-$((40+2))"]);
    l.wait_screen(&tab, "before-42");
    let pid = l.tabs_json(&[])[0]["pid"].as_u64().unwrap();
    let holder = l.holder_pid().expect("a holder runs the programs");
    let screen = l.ok(&["read", &tab]);

    // The next build's core, in the same environment.
    l.stop_core();
    let same = l.cmd(&["core"]);
    let mut core = std::process::Command::new(&next);
    core.args(same.get_args())
        .env_clear()
        .envs(same.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .current_dir(same.get_current_dir().unwrap())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    l.core = Some(core.spawn().unwrap());
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

/// The hand-over's state holds every tab's screen; the state dir is
/// readable by every program of the user, sandboxed agents included (read
/// only, but readable). While the state file had a name there, even for
/// the moment between creating and unlinking it, a program waiting for it
/// could open it and read every screen written after. Now it never has a
/// name: nothing appears in the state dir, and nothing can be opened.
#[test]
fn the_hand_over_state_never_appears_where_a_program_could_open_it() {
    use std::io::Read;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let next = next_build();
    let Some(env) = installed() else { return };
    let sh = nerdr(&env, &["agent", "sh"]);
    nerdr(&env, &["send", &sh, "echo secret-$((6*7))"]);
    wait_screen(&env, &sh, "secret-42");
    let (holder_pid, _) = holder(&env);
    let state = env.home().join(".local/state/nerdr");
    let watch = Watch::new(&state);
    // A program racing for the old name, as an agent in another tab could.
    let stop = Arc::new(AtomicBool::new(false));
    let racer = std::thread::spawn({
        let (stop, path) = (
            stop.clone(),
            state.join(format!("holder-handover.{holder_pid}")),
        );
        move || {
            while !stop.load(Ordering::Relaxed) {
                if let Ok(f) = std::fs::File::open(&path) {
                    return Some(f);
                }
            }
            None
        }
    });
    upgrade_to(&env, &next);
    assert!(
        log(&env, "holder.log").contains("re-executed for a hand-over"),
        "{}",
        log(&env, "holder.log")
    );
    stop.store(true, Ordering::Relaxed);
    if let Some(mut f) = racer.join().unwrap() {
        let mut got = Vec::new();
        let _ = f.read_to_end(&mut got);
        panic!(
            "opened the hand-over state; it holds the screens: {:?}",
            String::from_utf8_lossy(&got)
        );
    }
    let named: Vec<String> = watch
        .created()
        .into_iter()
        .filter(|n| n.contains("handover"))
        .collect();
    assert!(named.is_empty(), "the state had a name: {named:?}");
    wait_screen(&env, &sh, "secret-42");
    // A program started after the hand-over inherits none of what crossed
    // it: the state, the listening socket, other tabs' terminals.
    let fresh = nerdr(&env, &["agent", "sh"]);
    // `ls` lists the shell's own descriptors (the shell opens none for it).
    let list = r#"ls -l /proc/$$/fd | sed -n "s/.* \([0-9]*\) -> /fd \1 /p"; echo fds-$((3*3))"#;
    nerdr(&env, &["send", &fresh, list]);
    let screen = wait_screen(&env, &fresh, "fds-9");
    let fds: Vec<&str> = screen.lines().filter(|l| l.starts_with("fd ")).collect();
    assert!(fds.len() >= 3, "{screen}");
    for fd in fds {
        assert!(fd.contains(" /dev/pts/"), "inherited: {fd}\n{screen}");
    }
    nerdr(&env, &["quit"]);
}

/// A program may ask to die with its parent (`PR_SET_PDEATHSIG`, as
/// `bwrap --die-with-parent` or `setpriv --pdeathsig` do). Linux sends that
/// signal when the parent *thread* that forked it ends, and an `exec` ends
/// every thread of the holder but the one calling it. The holder keeps
/// its PID and stays the parent, so such a program must survive too.
#[test]
fn a_program_that_dies_with_its_parent_survives_an_upgrade() {
    let next = next_build();
    let Some(env) = installed() else { return };
    env.write_user_file(
        ".config/nerdr/config.toml",
        "[agents.sh]\ncommand = [\"perl\", \"-e\", \
         \"syscall(157, 1, 9) == 0 or die; exec 'bash', '--norc', '--noprofile'\"]\n",
    );
    let tabs_before: Vec<String> = (0..3).map(|_| nerdr(&env, &["agent", "sh"])).collect();
    for t in &tabs_before {
        nerdr(
            &env,
            &["send", t, "grep PDeath /proc/$$/status; echo up-$((1+1))"],
        );
        wait_screen(&env, t, "up-2");
    }
    upgrade_to(&env, &next);
    let after = tabs(&env);
    for t in &tabs_before {
        assert_eq!(
            tab(&after, t)["state"],
            "running",
            "tab {t} was killed by the hand-over: {}",
            tab(&after, t)
        );
    }
    // And programs started after it, by the next hand-over.
    let fresh = nerdr(&env, &["agent", "sh"]);
    nerdr(&env, &["send", &fresh, "echo fresh-$((2+2))"]);
    wait_screen(&env, &fresh, "fresh-4");
    upgrade_to(&env, Path::new(NERDR_BIN));
    let back = tabs(&env);
    for t in tabs_before.iter().chain([&fresh]) {
        assert_eq!(
            tab(&back, t)["state"],
            "running",
            "tab {t}: {}",
            tab(&back, t)
        );
    }
    nerdr(&env, &["quit"]);
}

/// `holder --handover-fd N` is how a holder re-executing for a hand-over
/// finds its state. Given by a program in a tab, with a state it made and a
/// listening socket of its own, it recorded that program as the holder
/// (`holder.pid`), so the next core refused the real one and showed every
/// tab as exited. Only the holder's own socket is taken back now.
#[test]
fn a_program_in_a_tab_cannot_pose_as_a_re_executed_holder() {
    let Some(env) = installed() else { return };
    let sh = nerdr(&env, &["agent", "sh"]);
    let victim = nerdr(&env, &["agent", "sh"]);
    nerdr(&env, &["send", &victim, "echo victim-$((1+1))"]);
    wait_screen(&env, &victim, "victim-2");
    let state = env.home().join(".local/state/nerdr");
    let before = std::fs::read_to_string(state.join("holder.pid")).unwrap();
    let script = env.write_user_file(
        "rogue.pl",
        format!(
            r#"use Socket; use Fcntl;
socket(my $s, AF_UNIX, SOCK_STREAM, 0) or die "socket $!";
bind($s, pack_sockaddr_un("\0rogue-$$")) or die "bind $!";
listen($s, 5) or die "listen $!";
fcntl($s, F_SETFD, 0) or die "fcntl $!";
my $fd = fileno($s);
my $json = qq({{"handover":1,"from_version":1,"listener_fd":$fd,"scopes":false,"programs":[{{"tab":"zz","pid":1,"start_time":1,"exit_code":null,"rows":24,"cols":80,"scope":null,"meta":null,"pty_fd":null}}]}});
open(my $st, '>', "$ENV{{HOME}}/state.bin") or die; print $st pack("N", length $json), $json, pack("N", 0); close $st;
open(STDIN, '<', "$ENV{{HOME}}/state.bin") or die;
exec "{}", "holder", "--handover-fd", "0";
"#,
            env.nerdr().display()
        ),
    );
    nerdr(
        &env,
        &[
            "send",
            &sh,
            &format!(
                "perl {} > rogue.out 2>&1 & echo started-$((2+3))",
                script.display()
            ),
        ],
    );
    wait_screen(&env, &sh, "started-5");
    let out = env.home().join("work/rogue.out");
    let ok = crate::support::poll(Duration::from_secs(15), || {
        std::fs::read_to_string(&out).is_ok_and(|o| !o.is_empty())
    });
    let said = std::fs::read_to_string(&out).unwrap_or_default();
    assert!(
        ok && said.contains("is not the holder's listening socket"),
        "the posing holder ran: {said:?}\nholder.pid {:?}",
        std::fs::read_to_string(state.join("holder.pid"))
    );
    assert_eq!(
        std::fs::read_to_string(state.join("holder.pid")).unwrap(),
        before,
        "another process recorded itself as the holder"
    );
    // The next core finds the real holder and every program.
    env.systemctl(&["restart", "nerdr.service"]);
    let now = tabs(&env);
    for t in [&sh, &victim] {
        assert_eq!(
            tab(&now, t)["state"],
            "running",
            "{}\n{}",
            tab(&now, t),
            log(&env, "core.log")
        );
    }
    wait_screen(&env, &victim, "victim-2");
    nerdr(&env, &["quit"]);
}

/// Programs that end around a hand-over (before the freeze, while frozen,
/// across the exec, right after): each is reaped once, by the image that
/// holds it then, and reported with its own exit code.
#[test]
fn programs_ending_during_an_upgrade_report_their_own_exit_codes() {
    let next = next_build();
    let Some(env) = installed() else { return };
    let mut config = String::new();
    for i in 1..=10 {
        config += &format!(
            "[agents.e{i}]\ncommand = [\"sh\", \"-c\", \"sleep {}; exit {i}\"]\n",
            0.55 + 0.03 * i as f64
        );
    }
    env.write_user_file(".config/nerdr/config.toml", config);
    let ids: Vec<(String, i64)> = (1..=10)
        .map(|i| (nerdr(&env, &["agent", &format!("e{i}")]), i))
        .collect();
    upgrade_to(&env, &next);
    for (id, code) in &ids {
        wait_until("every program to end", Duration::from_secs(15), || {
            tab(&tabs(&env), id)["state"] == "exited"
        });
        assert_eq!(tab(&tabs(&env), id)["exit_code"], *code, "tab {id}");
    }
    nerdr(&env, &["quit"]);
}

/// A core run through another program (here `ld.so`; valgrind or an
/// emulator alike) runs that program's file, which is what `/proc/PID/exe`
/// names. The holder became `ld.so`, which could not take the state: the
/// holder ended and its programs with their terminals. It now hands over
/// only to a file that holds the frozen flag, and carries on otherwise.
#[test]
fn a_core_run_through_another_program_does_not_turn_the_holder_into_it() {
    use crate::support::local::{pid_alive, Local};
    let ld_so = Path::new("/lib64/ld-linux-x86-64.so.2");
    if !ld_so.exists() {
        eprintln!("skipped: no {}", ld_so.display());
        return;
    }
    let next = next_build();
    let mut l = Local::started();
    l.write_config("[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n");
    let tab = l.ok(&["agent", "sh"]);
    l.ok(&["send", &tab, "echo before-$((40+2))"]);
    l.wait_screen(&tab, "before-42");
    let pid = l.tabs_json(&[])[0]["pid"].as_u64().unwrap() as u32;
    let holder = l.holder_pid().expect("a holder runs the programs");
    let exe = std::fs::metadata(format!("/proc/{holder}/exe"))
        .unwrap()
        .ino();
    l.stop_core();
    let same = l.cmd(&["core"]);
    let mut core = std::process::Command::new(ld_so);
    core.arg(&next)
        .args(same.get_args())
        .env_clear()
        .envs(same.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .current_dir(same.get_current_dir().unwrap())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    l.core = Some(core.spawn().unwrap());
    wait_until(
        "the core to give up on the holder",
        Duration::from_secs(20),
        || l.core_log().contains("the holder cannot be used"),
    );
    assert!(
        l.core_log().contains("not a nerdr that takes a hand-over"),
        "{}",
        l.core_log()
    );
    assert!(pid_alive(holder), "the holder ended");
    assert!(pid_alive(pid), "the program ended with the holder");
    assert_eq!(
        std::fs::metadata(format!("/proc/{holder}/exe"))
            .unwrap()
            .ino(),
        exe,
        "the holder runs another file"
    );
}
