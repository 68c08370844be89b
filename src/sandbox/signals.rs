//! Waiting for the sandboxed program the way a shell's `system()` does.
//! The terminal's signals (Ctrl-C, Ctrl-\) reach the program directly (it
//! shares our process group and terminal), so we only keep them from ending
//! us first, which would cut the audit trail short. SIGTERM and SIGHUP sent
//! to us alone are passed on to bubblewrap, which ends the sandbox with
//! them. Stops (Ctrl-Z) keep their default: we stop with the program, so
//! the shell's job control sees one job.

use std::process::{Child, ExitStatus};
use std::sync::atomic::{AtomicI32, Ordering};

static CHILD: AtomicI32 = AtomicI32::new(0);

extern "C" fn forward(sig: libc::c_int) {
    let pid = CHILD.load(Ordering::SeqCst);
    if pid > 0 {
        // SAFETY: kill is async-signal-safe; pid is our unreaped child.
        unsafe { libc::kill(pid, sig) };
    }
}

extern "C" fn ignore(_sig: libc::c_int) {}

/// Handlers, unlike SIG_IGN, are reset by exec, so the program still gets
/// the default dispositions.
fn install(sig: libc::c_int, handler: extern "C" fn(libc::c_int)) {
    // SAFETY: a zeroed sigaction with a valid handler and empty mask.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler as usize;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(sig, &sa, std::ptr::null_mut());
    }
}

/// Wait for `child`, forwarding SIGTERM/SIGHUP to it and outliving the
/// terminal's SIGINT/SIGQUIT.
pub fn wait_forwarding(mut child: Child) -> std::io::Result<ExitStatus> {
    CHILD.store(child.id() as i32, Ordering::SeqCst);
    install(libc::SIGINT, ignore);
    install(libc::SIGQUIT, ignore);
    install(libc::SIGTERM, forward);
    install(libc::SIGHUP, forward);
    let status = child.wait();
    CHILD.store(0, Ordering::SeqCst);
    status
}
