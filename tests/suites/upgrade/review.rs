//! The review's confirmed findings about the hand-over, replayed end to end.

use super::*;

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
    a_bash_tab_that_said_before_42(&l);
    let pid = l.tabs_json(&[])[0]["pid"].as_u64().unwrap() as u32;
    let holder = l.holder_pid().expect("a holder runs the programs");
    let exe = std::fs::metadata(format!("/proc/{holder}/exe"))
        .unwrap()
        .ino();
    l.stop_core();
    start_core_through(&mut l, ld_so, &[&next]);
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
