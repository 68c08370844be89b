//! Waiting for the sandboxed program the way a shell's `system()` does.
//! The terminal's signals (Ctrl-C, Ctrl-\) reach the program directly (it
//! shares our process group and terminal), so we only keep them from ending
//! us first, which would cut the audit trail short. SIGTERM and SIGHUP sent
//! to us alone are passed on to bubblewrap, which ends the sandbox with
//! them. Stops (Ctrl-Z) keep their default: we stop with the program, so
//! the shell's job control sees one job.

use std::ffi::c_int;
use std::process::{Child, ExitStatus};
use std::sync::atomic::{AtomicI32, Ordering};

use nix::sys::signal::{kill, sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
use nix::unistd::Pid;

static CHILD: AtomicI32 = AtomicI32::new(0);

extern "C" fn forward(sig: c_int) {
    let pid = CHILD.load(Ordering::SeqCst);
    // kill(2) is async-signal-safe, and so is nix's wrapper (no allocation,
    // reads errno); `Signal::try_from` is a match. pid is our unreaped child.
    if let (true, Ok(sig)) = (pid > 0, Signal::try_from(sig)) {
        let _ = kill(Pid::from_raw(pid), sig);
    }
}

extern "C" fn ignore(_sig: c_int) {}

/// Handlers, unlike SIG_IGN, are reset by exec, so the program still gets
/// the default dispositions.
fn install(sig: Signal, handler: extern "C" fn(c_int)) {
    let action = SigAction::new(
        SigHandler::Handler(handler),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    // SAFETY: both handlers only load an atomic and call kill(2), which are
    // async-signal-safe.
    let _ = unsafe { sigaction(sig, &action) };
}

/// Wait for `child`, forwarding SIGTERM/SIGHUP to it and outliving the
/// terminal's SIGINT/SIGQUIT.
pub fn wait_forwarding(mut child: Child) -> std::io::Result<ExitStatus> {
    CHILD.store(child.id() as i32, Ordering::SeqCst);
    install(Signal::SIGINT, ignore);
    install(Signal::SIGQUIT, ignore);
    install(Signal::SIGTERM, forward);
    install(Signal::SIGHUP, forward);
    let status = child.wait();
    CHILD.store(0, Ordering::SeqCst);
    status
}
