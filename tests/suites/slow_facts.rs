//! A fact that is slow to gather (a folder on a hung mount) delays only the
//! request that needs it: the core keeps answering everyone else. The debug
//! core is told that one folder is slow (`NERDR_TEST_SLOW_PATH`, see
//! `src/core/edge.rs`): every fact it gathers about that folder takes 10 s.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::local::Local;
use crate::support::wait_until;

const SHELL_AGENT: &str = "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n";
const SLOW: Duration = Duration::from_secs(10);

#[test]
fn a_launch_waiting_on_a_slow_folder_does_not_stall_other_tabs() {
    let mut l = Local::empty();
    l.write_config(SHELL_AGENT);
    // Outside the session's folder: a folder in it would be placed in
    // that session, and its launch would not be in the slow folder.
    let slow = l.path("on-a-hung-mount");
    std::fs::create_dir(&slow).unwrap();
    let ms = SLOW.as_millis().to_string();
    l.start_core_with(&[
        ("NERDR_TEST_SLOW_PATH", slow.to_str().unwrap()),
        ("NERDR_TEST_SLOW_MS", &ms),
    ]);
    let a = l.ok(&["agent", "sh"]);
    let b = l.ok(&["agent", "sh"]);

    // Tab a starts an agent in the slow folder: its launch waits on it.
    l.ok(&[
        "send",
        &a,
        &format!("cd {} && \"$NERDR_BIN\" agent sh", slow.display()),
    ]);
    let launched = Instant::now();
    // Time for the shell to run it and the request to reach the core.
    std::thread::sleep(Duration::from_millis(500));

    let answered = others_answer(&l, &b);
    all_quick(&answered, "a launch waited on a slow folder");
    assert!(
        launched.elapsed() < SLOW - Duration::from_secs(2),
        "the checks ran after the slow launch could have ended: they prove nothing"
    );
    l.wait_screen(&b, "\nstill-here");

    // The launch itself still happens, once its facts are in.
    // Placing the folder in its session and the launch each gather a fact
    // about it.
    wait_until("the slow launch to finish", SLOW * 3, || {
        l.tabs_json(&["--all"])
            .iter()
            .any(|t| t["folder"].as_str() == Some(&slow.display().to_string()))
    });
    assert!(
        launched.elapsed() >= SLOW - Duration::from_millis(500),
        "the launch did not wait for its slow folder ({:?}): the test's slow path is not in effect",
        launched.elapsed()
    );
}

/// The service manager's notify socket is one more place the core writes
/// to, and a manager that stops reading it (busy, stopped) makes each send
/// block: the core's status line must wait for it alone, never with the
/// state held or on the workers that answer requests.
#[test]
fn a_service_manager_that_stops_reading_does_not_stall_the_core() {
    use std::os::unix::net::UnixDatagram;

    let mut l = Local::empty();
    l.write_config(SHELL_AGENT);
    let manager_path = l.path("notify.sock");
    let manager = UnixDatagram::bind(&manager_path).unwrap();
    manager.set_nonblocking(true).unwrap();
    l.start_core_with(&[("NOTIFY_SOCKET", manager_path.to_str().unwrap())]);
    let a = l.ok(&["agent", "sh"]);
    let drain = || {
        let mut buf = [0u8; 4096];
        let mut got = Vec::new();
        while let Ok(n) = manager.recv(&mut buf) {
            got.push(String::from_utf8_lossy(&buf[..n]).into_owned());
        }
        got
    };
    // The manager heard from the core: the test's socket is the one it uses.
    wait_until("the core's READY", Duration::from_secs(5), || {
        drain().iter().any(|m| m.contains("READY=1"))
    });

    // The manager stops reading: its queue fills, and every later send to
    // it blocks until it reads again.
    let filler = UnixDatagram::unbound().unwrap();
    filler.set_nonblocking(true).unwrap();
    while filler.send_to(b"STATUS=busy", &manager_path).is_ok() {}

    // A launch changes the tab list, so the core tells the manager.
    let mut launch = l
        .cmd(&["agent", "sh"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let answered = others_answer(&l, &a);
    let launched = crate::support::poll(Duration::from_secs(5), || {
        matches!(launch.try_wait(), Ok(Some(_)))
    });
    if !launched {
        let _ = launch.kill();
    }
    let _ = launch.wait();
    // The manager reads again, so the core can stop cleanly.
    drain();
    all_quick(&answered, "the service manager did not read its socket");
    assert!(
        launched,
        "the launch did not finish while the service manager did not read its socket"
    );
    drain();
}

/// The tab list (`tabs.json`) is written on every change, before the
/// request that changed it is answered. A state dir on a disk that stops
/// answering (here: the file it writes first is a FIFO no one reads, so
/// opening it waits) delays those requests only: the core's async workers
/// keep answering the others.
#[test]
fn a_tab_list_write_that_hangs_does_not_stall_the_core() {
    let (l, a, tmp) = a_tab_and_a_fifo_at("state/nerdr/tabs.json.tmp");

    // Two launches: each changes the list (as does each program's start),
    // so the writes queue on the FIFO.
    let mut launches: Vec<_> = (0..2)
        .map(|_| {
            l.cmd(&["agent", "sh"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1000));
    let answered = others_answer(&l, &a);
    // The disk answers again: the waiting write goes through.
    let reader = {
        let tmp = tmp.clone();
        std::thread::spawn(move || {
            let mut f = std::fs::File::open(&tmp).unwrap();
            let mut buf = Vec::new();
            std::io::Read::read_to_end(&mut f, &mut buf).unwrap();
            buf
        })
    };
    // A write that never comes would leave the reader's open waiting for
    // ever: after a minute, open the FIFO for writing ourselves to end it,
    // and fail, rather than hang the suite.
    let came = crate::support::poll(Duration::from_secs(60), || reader.is_finished());
    if !came {
        let _ = std::fs::OpenOptions::new().write(true).open(&tmp);
    }
    let written = reader.join().unwrap();
    assert!(
        came,
        "the core never wrote its tab list while two launches changed it"
    );
    for c in &mut launches {
        let finished = crate::support::poll(Duration::from_secs(10), || {
            matches!(c.try_wait(), Ok(Some(_)))
        });
        if !finished {
            let _ = c.kill();
        }
        let _ = c.wait();
    }
    all_quick(&answered, "the tab list's write hung");
    assert!(
        String::from_utf8_lossy(&written).contains(&a),
        "the write that hung was not the tab list's: the test proves nothing"
    );
    // Once the disk answers, the list on disk has every tab. The write
    // that waited may have gone into the FIFO, which the core then renamed
    // over tabs.json: one more change writes the list anew.
    l.ok(&["rename", &a, "after-the-fifo"]);
    wait_until(
        "tabs.json to list all three tabs",
        Duration::from_secs(10),
        || {
            // The core renames what it wrote over tabs.json: the FIFO
            // itself, the first time, which a read would wait on for ever.
            let list = l.path("state/nerdr/tabs.json");
            std::fs::metadata(&list).is_ok_and(|m| m.is_file())
                && std::fs::read_to_string(&list).is_ok_and(|s| s.matches("\"id\"").count() == 3)
        },
    );
}

/// A request on the hook socket that names no tab is refused, and the
/// refusal goes to the audit trail. A program can send many of those; an
/// audit file on a disk that stops answering (here: a FIFO no one reads,
/// so opening it waits) must delay those refusals only, never the core's
/// async workers and with them everyone else's requests.
#[test]
fn refusals_whose_audit_entry_hangs_do_not_stall_the_core() {
    let (l, a, audit) = a_tab_and_a_fifo_at("state/nerdr/audit.jsonl");

    let mut strangers: Vec<_> = (0..3)
        .map(|_| {
            l.cmd(&["tabs"])
                .env("NERDR_TAB", "0".repeat(64))
                .env("NERDR_SOCKET", l.hook_socket())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1000));
    let answered = others_answer(&l, &a);
    // The disk answers again: a reader lets the waiting writers through.
    let mut read = Vec::new();
    {
        use std::io::Read;
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
            .open(&audit)
            .unwrap();
        let until = Instant::now() + Duration::from_secs(3);
        let mut buf = [0u8; 4096];
        while Instant::now() < until {
            if let Ok(n) = f.read(&mut buf) {
                read.extend_from_slice(&buf[..n]);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    for c in &mut strangers {
        let finished = crate::support::poll(Duration::from_secs(5), || {
            matches!(c.try_wait(), Ok(Some(_)))
        });
        if !finished {
            let _ = c.kill();
        }
        let _ = c.wait();
    }
    all_quick(&answered, "the audit file's writes hung");
    assert!(
        String::from_utf8_lossy(&read).contains("NERDR_TAB names no open tab"),
        "the write that hung was not the refusals' audit entry: the test proves nothing"
    );
}

/// `nerdr tabs`, `read` and `send` on tab `tab`, each with how long it
/// took; one that has not answered in 3 s is ended (and counts 3 s).
fn others_answer(l: &Local, tab: &str) -> Vec<(&'static str, Duration)> {
    let mut answered = Vec::new();
    for (what, args) in [
        ("nerdr tabs", vec!["tabs", "--all"]),
        ("nerdr read", vec!["read", tab]),
        ("nerdr send", vec!["send", tab, "echo still-here"]),
        ("nerdr read", vec!["read", tab]),
    ] {
        let t = Instant::now();
        let mut c = l
            .cmd(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let done = crate::support::poll(Duration::from_secs(3), || {
            matches!(c.try_wait(), Ok(Some(_)))
        });
        if !done {
            let _ = c.kill();
        }
        let status = c.wait().unwrap();
        assert!(!done || status.success(), "{what} on tab {tab} failed");
        answered.push((what, t.elapsed()));
    }
    answered
}

/// Each answered within a second `while` the fact hung.
fn all_quick(answered: &[(&str, Duration)], while_: &str) {
    for (what, took) in answered {
        assert!(
            *took < Duration::from_secs(1),
            "{what} took {took:?} while {while_}"
        );
    }
}

/// A core with one shell tab, and a FIFO no one reads where the core's
/// state file `rel` goes: opening it to write waits, as on a hung disk.
fn a_tab_and_a_fifo_at(rel: &str) -> (Local, String, std::path::PathBuf) {
    let mut l = Local::empty();
    l.write_config(SHELL_AGENT);
    l.start_core();
    let tab = l.ok(&["agent", "sh"]);
    let fifo = l.path(rel);
    let _ = std::fs::remove_file(&fifo);
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    (l, tab, fifo)
}
