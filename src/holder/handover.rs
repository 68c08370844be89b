//! The holder's side of the frozen hand-over (`protocol::handover`): turn
//! this process into the asking core's executable without letting go of
//! anything, and, in the new image, take it all back.
//!
//! Giving: freeze the terminal readers, reapers and launches
//! ([`PtyHost::freeze`]), let the event loop take in what they delivered,
//! write every program's record and the bytes that redraw its screen
//! exactly (`Replay::redraw`) to a file with no name
//! (a memfd), clear close-on-exec on that file, the listening socket
//! and the PTY masters, and `fexecve` the file the core's verified PID
//! runs. Programs stay children of this PID, so the new image reaps them
//! and reports their real exit codes; their terminals never close. If
//! anything fails before the exec, the flags are put back and this holder
//! carries on as it was.
//!
//! Taking back (`holder --handover-fd N`): read the state, set close-on-exec
//! again (no program launched later may inherit a terminal or the
//! socket), adopt each program with its screen's bytes as its snapshot at
//! offset 0 (an older holder sends its vt100 redraw: the same thing).

use std::collections::BTreeMap;
use std::io::{Read, Seek, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;

use tokio::net::UnixListener;

use super::state::{HandOverRequest, Holder, Kept};
use crate::host::pty::{Adoption, PtyHost};
use crate::protocol::frame::{write_frame, Frame};
use crate::protocol::handover::{
    decode_state, encode_state, Answer, Program, State, HANDOVER_FLAG, HANDOVER_VERSION,
};
use crate::protocol::holder::HOLDER_VERSION;

/// Hand over to the core's executable. Returns only if that failed; the
/// core is told why.
pub async fn hand_over(
    h: &Holder,
    listener: &UnixListener,
    mut req: HandOverRequest,
) -> Result<(), String> {
    let result = prepare_and_exec(h, listener, &mut req).await;
    let message = match &result {
        Ok(never) => match *never {},
        Err(e) => format!("the holder could not hand over: {e}"),
    };
    let _ = write_frame(
        &mut req.stream,
        &Frame::control(&Answer::Refused { message }),
    )
    .await;
    result.map(|never| match never {})
}

async fn prepare_and_exec(
    h: &Holder,
    listener: &UnixListener,
    req: &mut HandOverRequest,
) -> Result<std::convert::Infallible, String> {
    // The file the core runs, opened before anything changes here.
    let exe = crate::platform::open_exe(req.core.pid).map_err(|e| {
        format!(
            "cannot open the executable of core pid {}: {e}",
            req.core.pid
        )
    })?;
    if crate::platform::proc_start_time(req.core.pid).ok() != req.core.start_time {
        return Err(format!(
            "core pid {} ended during the hand-over",
            req.core.pid
        ));
    }
    // A core run through another program (`ld.so`, valgrind, an emulator)
    // runs that program's file: the holder would become it, it could not
    // take the state, and every terminal would close with it. Every build
    // that takes a hand-over holds the frozen flag's bytes.
    match holds(&exe, HANDOVER_FLAG.as_bytes(), 1 << 20) {
        Ok(true) => {}
        Ok(false) => {
            return Err(format!(
                "the executable of core pid {} is not a nerdr that takes a hand-over \
                 (no {HANDOVER_FLAG} in it): is the core run through another program?",
                req.core.pid
            ))
        }
        Err(e) => return Err(format!("cannot read the core's executable: {e}")),
    }
    let frozen = h.host.freeze().await;
    h.drained().await;
    let (state, screens) = snapshot(h, listener.as_raw_fd());
    let file = state_file(h, &encode_state(&state, &screens))?;
    let mut inherit: Vec<RawFd> = vec![file.as_raw_fd(), state.listener_fd];
    inherit.extend(state.programs.iter().filter_map(|p| p.pty_fd));
    let mut cleared = Vec::new();
    let mut result = Ok(());
    for fd in &inherit {
        match set_cloexec(*fd, false) {
            Ok(()) => cleared.push(*fd),
            Err(e) => {
                result = Err(format!("cannot pass descriptor {fd} on: {e}"));
                break;
            }
        }
    }
    if result.is_ok() {
        result = write_frame(
            &mut req.stream,
            &Frame::control(&Answer::ReExecuting {
                handover: HANDOVER_VERSION,
            }),
        )
        .await
        .map_err(|e| format!("cannot answer the core: {e}"));
    }
    if result.is_ok() {
        tracing::info!(
            programs = state.programs.len(),
            core = req.core.pid,
            "handing over: re-executing as the core's executable"
        );
        // On the main thread: the thread every program was forked by, so
        // none gets a parent-death signal from the threads exec ends.
        let (exe_fd, state_fd) = (exe.as_raw_fd(), file.as_raw_fd());
        result = Err(crate::host::main_thread::on_main(move || {
            exec(exe_fd, state_fd)
        }));
    }
    // Still here: put every flag back, so no program started later inherits
    // a terminal or the socket, and carry on.
    for fd in cleared {
        let _ = set_cloexec(fd, true);
    }
    drop(frozen);
    Err(result.err().unwrap_or_default())
}

/// Every kept program's record and screen, from the frozen host.
fn snapshot(h: &Holder, listener_fd: RawFd) -> (State, Vec<Vec<u8>>) {
    let handed = h.host.handed();
    let kept = h.kept.lock().unwrap();
    let mut programs = Vec::with_capacity(kept.len());
    let mut screens = Vec::with_capacity(kept.len());
    for (tab, k) in kept.iter() {
        let from_host = handed.get(tab);
        let (rows, cols) = k.screen.size();
        programs.push(Program {
            tab: tab.clone(),
            // The host knows a launch's PID before the record here does.
            pid: from_host.map_or(k.pid, |p| p.pid),
            start_time: from_host.map_or(k.start_time, |p| p.start_time),
            exit_code: k.exit_code,
            rows,
            cols,
            scope: from_host.and_then(|p| p.scope.clone()),
            meta: k.meta.clone(),
            pty_fd: from_host.and_then(|p| p.master),
        });
        screens.push(k.screen.redraw());
    }
    let state = State {
        handover: HANDOVER_VERSION,
        from_version: HOLDER_VERSION,
        listener_fd,
        scopes: h.scopes,
        programs,
    };
    (state, screens)
}

/// The state in a file nobody else can open: on Linux an anonymous memory
/// file (no name in any folder, so nothing, not even a sandboxed agent that
/// can read the state dir, can open it while it is written).
fn state_file(h: &Holder, bytes: &[u8]) -> Result<std::fs::File, String> {
    let mut f = crate::platform::private_file(&h.paths.state_dir, "nerdr-holder-handover")
        .map_err(|e| format!("cannot create the hand-over state file: {e}"))?;
    f.write_all(bytes)
        .and_then(|()| f.rewind())
        .map_err(|e| format!("cannot write the hand-over state: {e}"))?;
    Ok(f)
}

/// Whether `file` holds `needle`, read `chunk` bytes at a time from its
/// start (without moving its offset).
fn holds(file: &std::fs::File, needle: &[u8], chunk: usize) -> std::io::Result<bool> {
    use std::os::unix::fs::FileExt;
    let keep = needle.len().saturating_sub(1);
    let mut buf = vec![0u8; keep + chunk.max(1)];
    // Bytes at the start of `buf` carried over from the previous read.
    let mut carried = 0;
    let mut at = 0u64;
    loop {
        let n = match file.read_at(&mut buf[carried..], at) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            return Ok(false);
        }
        let have = carried + n;
        if memchr::memmem::find(&buf[..have], needle).is_some() {
            return Ok(true);
        }
        at += n as u64;
        carried = keep.min(have);
        buf.copy_within(have - carried..have, 0);
    }
}

fn set_cloexec(fd: RawFd, on: bool) -> nix::Result<()> {
    use nix::fcntl::{fcntl, FcntlArg, FdFlag};
    let flags = if on {
        FdFlag::FD_CLOEXEC
    } else {
        FdFlag::empty()
    };
    fcntl(fd, FcntlArg::F_SETFD(flags)).map(drop)
}

/// Become `exe`, telling it where the state is. Returns only on failure.
fn exec(exe: RawFd, state_fd: RawFd) -> String {
    use std::ffi::CString;
    let argv0 = std::fs::read_link(format!("/proc/self/fd/{exe}"))
        .map(|p| p.into_os_string())
        .unwrap_or_else(|_| "nerdr".into());
    let cstr = |b: &[u8]| CString::new(b).map_err(|e| e.to_string());
    let argv: Result<Vec<CString>, String> = [
        argv0.as_bytes(),
        b"holder",
        HANDOVER_FLAG.as_bytes(),
        state_fd.to_string().as_bytes(),
    ]
    .into_iter()
    .map(cstr)
    .collect();
    let env: Result<Vec<CString>, String> = std::env::vars_os()
        .map(|(k, v)| cstr(&[k.as_bytes(), b"=", v.as_bytes()].concat()))
        .collect();
    let (argv, env) = match (argv, env) {
        (Ok(a), Ok(e)) => (a, e),
        (Err(e), _) | (_, Err(e)) => return format!("cannot build the command line: {e}"),
    };
    match nix::unistd::fexecve(exe, &argv, &env) {
        Ok(never) => match never {},
        Err(e) => format!("cannot execute the core's executable: {e}"),
    }
}

/// What a re-executed holder starts from.
pub struct Restored {
    pub listener: std::os::unix::net::UnixListener,
    pub scopes: bool,
    pub from_version: u32,
    programs: Vec<(Program, Vec<u8>, Option<OwnedFd>)>,
}

/// Read the state the previous image left at `fd`. Only the holder's own
/// listening socket, on `name`, passes: `--handover-fd` given by anyone
/// else (a program in a tab, with a state it made) ends here, before this
/// process records itself as the holder or adopts anything.
pub fn restore(fd: RawFd, name: &str) -> anyhow::Result<Restored> {
    use anyhow::Context;
    // SAFETY: the previous image of this process opened this descriptor
    // for this purpose alone and passed its number on the command line.
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .with_context(|| format!("cannot read the hand-over state from descriptor {fd}"))?;
    drop(file);
    let (state, screens) = decode_state(&bytes).map_err(anyhow::Error::msg)?;
    if state.listener_fd == fd {
        anyhow::bail!("the hand-over state names its own descriptor as the listening socket");
    }
    set_cloexec(state.listener_fd, true).with_context(|| {
        format!(
            "the listening socket {} was not passed on",
            state.listener_fd
        )
    })?;
    // SAFETY: the previous image passed its listening socket at this number.
    let listener = unsafe { std::os::unix::net::UnixListener::from_raw_fd(state.listener_fd) };
    if !crate::platform::listens_as(&listener, name) {
        // Not ours to close: whatever it is belongs to whoever passed it.
        let _ = std::os::fd::IntoRawFd::into_raw_fd(listener);
        anyhow::bail!(
            "descriptor {} is not the holder's listening socket @{name}: \
             --handover-fd is only for a holder re-executing itself",
            state.listener_fd
        );
    }
    let mut programs = Vec::with_capacity(state.programs.len());
    for (p, screen) in state.programs.into_iter().zip(screens) {
        let master = p.pty_fd.and_then(|fd| match set_cloexec(fd, true) {
            // SAFETY: the previous image passed this PTY master at this
            // number; nothing else here refers to it.
            Ok(()) => Some(unsafe { OwnedFd::from_raw_fd(fd) }),
            Err(e) => {
                tracing::error!(tab = %p.tab, fd, error = %e, "a terminal was not passed on");
                None
            }
        });
        programs.push((p, screen, master));
    }
    Ok(Restored {
        listener,
        scopes: state.scopes,
        from_version: state.from_version,
        programs,
    })
}

impl Restored {
    /// Give each program to `host`, and rebuild its kept record and screen.
    pub fn adopt(self, host: &PtyHost) -> BTreeMap<String, Kept> {
        let mut kept = BTreeMap::new();
        for (mut p, screen_bytes, master) in self.programs {
            let screen = super::replay::Replay::adopt(p.rows, p.cols, screen_bytes);
            if p.pid == 0 {
                // A launch that had not produced a process (it failed as the
                // hand-over began): nothing to adopt, and PID 0 must never
                // reach waitpid or kill, where it means our own group.
                p.exit_code.get_or_insert(-1);
                drop(master);
                kept.insert(
                    p.tab,
                    Kept {
                        meta: p.meta,
                        pid: 0,
                        start_time: 0,
                        exit_code: p.exit_code,
                        // Not in the frozen state: the core that asked for
                        // the hand-over hears 0 in its welcome.
                        generation: 0,
                        screen,
                    },
                );
                continue;
            }
            let adoption = Adoption {
                tab: p.tab.clone(),
                pid: p.pid,
                start_time: p.start_time,
                scope: p.scope,
                master,
                exited: p.exit_code.is_some(),
            };
            if let Err(e) = host.adopt(adoption) {
                tracing::error!(tab = %p.tab, error = %e, "cannot adopt a program's terminal");
            }
            kept.insert(
                p.tab,
                Kept {
                    meta: p.meta,
                    pid: p.pid,
                    start_time: p.start_time,
                    exit_code: p.exit_code,
                    generation: 0,
                    screen,
                },
            );
        }
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::IntoRawFd;

    /// A state naming `listener_fd`, in a file of its own; its descriptor.
    fn state_at(listener_fd: RawFd) -> RawFd {
        let state = State {
            handover: HANDOVER_VERSION,
            from_version: HOLDER_VERSION,
            listener_fd,
            scopes: false,
            programs: Vec::new(),
        };
        let mut f = crate::platform::private_file(&std::env::temp_dir(), "test-state").unwrap();
        f.write_all(&encode_state(&state, &[])).unwrap();
        f.rewind().unwrap();
        f.into_raw_fd()
    }

    #[test]
    fn an_executable_takes_a_hand_over_only_if_it_holds_the_flag() {
        let flag = HANDOVER_FLAG.as_bytes();
        let with = |before: usize, after: usize| {
            [vec![b'x'; before], flag.to_vec(), vec![b'y'; after]].concat()
        };
        let rows: Vec<(&str, Vec<u8>, usize, bool)> = vec![
            ("empty", Vec::new(), 8, false),
            ("at the start", with(0, 100), 8, true),
            ("at the end", with(100, 0), 8, true),
            ("across two reads", with(5, 5), 8, true),
            ("across many reads", with(1000, 3), 3, true),
            ("read in one byte at a time", with(7, 7), 1, true),
            ("in one big read", with(50, 50), 1 << 20, true),
            (
                "all but its last byte",
                flag[..flag.len() - 1].to_vec(),
                4,
                false,
            ),
            (
                "another program",
                b"ld.so holder --handover".repeat(50),
                16,
                false,
            ),
        ];
        for (what, bytes, chunk, want) in rows {
            let mut f = crate::platform::private_file(&std::env::temp_dir(), "t").unwrap();
            f.write_all(&bytes).unwrap();
            assert_eq!(holds(&f, flag, chunk).unwrap(), want, "{what}");
        }
        // This very build holds it, as every build that takes a hand-over.
        let me = std::fs::File::open(std::env::current_exe().unwrap()).unwrap();
        assert!(holds(&me, flag, 1 << 20).unwrap());
    }

    #[test]
    fn only_the_holders_own_listening_socket_is_taken_back() {
        let name = format!("nerdr-test-restore-{}", std::process::id());
        let ours = crate::platform::abstract_listener(&name).unwrap();
        let other = crate::platform::abstract_listener(&format!("{name}-other")).unwrap();
        let file = std::fs::File::open("/dev/null").unwrap();
        let rows: Vec<(&str, RawFd, Result<(), &str>)> = vec![
            ("the holder's socket", ours.as_raw_fd(), Ok(())),
            (
                "a socket of its own (a program in a tab)",
                other.as_raw_fd(),
                Err("is not the holder's listening socket"),
            ),
            (
                "not a socket",
                file.as_raw_fd(),
                Err("is not the holder's listening socket"),
            ),
            ("nothing there", 999, Err("was not passed on")),
        ];
        for (what, fd, want) in rows {
            match (restore(state_at(fd), &name), want) {
                // The descriptor still belongs to this test.
                (Ok(r), Ok(())) => drop(r.listener.into_raw_fd()),
                (Err(e), Err(w)) => assert!(format!("{e:#}").contains(w), "{what}: {e:#}"),
                (Ok(_), Err(w)) => panic!("{what}: taken back, want {w:?}"),
                (Err(e), Ok(())) => panic!("{what}: {e:#}"),
            }
        }
        // Refused descriptors were left open, to their owner.
        assert!(other.local_addr().is_ok());
        assert!(file.metadata().is_ok());
    }
}
