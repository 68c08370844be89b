//! A tab's program starts with the signal state a program started from a
//! login shell has, whatever the core was started with: a core started in
//! the background of a script has SIGINT and SIGQUIT ignored, and an
//! ignore survives exec, so without a reset Ctrl-C could not stop
//! anything in its tabs.

use std::os::unix::process::CommandExt;

use crate::support::local::Local;

#[test]
fn a_tabs_program_does_not_inherit_the_cores_ignored_signals() {
    let mut l = Local::empty();
    let mut core = l.cmd(&["core"]);
    // SAFETY: signal(2) and sigprocmask(2) are async-signal-safe.
    unsafe {
        core.pre_exec(|| {
            use nix::sys::signal::{signal, sigprocmask, SigHandler, SigSet, SigmaskHow, Signal};
            for sig in [Signal::SIGINT, Signal::SIGQUIT, Signal::SIGHUP] {
                signal(sig, SigHandler::SigIgn)?;
            }
            let mut blocked = SigSet::empty();
            blocked.add(Signal::SIGUSR1);
            sigprocmask(SigmaskHow::SIG_BLOCK, Some(&blocked), None)?;
            Ok(())
        });
    }
    l.start_core_from(core);
    let tab = l.ok(&[
        "agent",
        "--",
        "sh",
        "-c",
        "grep -E '^Sig(Ign|Blk):' /proc/self/status; echo listed; exec sleep 600",
    ]);
    let screen = l.wait_screen(&tab, "listed");
    let field = |name: &str| {
        let line = screen
            .lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .unwrap_or_else(|| panic!("no {name} on the screen:\n{screen}"));
        u64::from_str_radix(line.trim(), 16).unwrap()
    };
    // The standard signals only: 32 and 33 are glibc's own.
    assert_eq!(
        (
            field("SigIgn:") & 0x7fff_ffff,
            field("SigBlk:") & 0x7fff_ffff
        ),
        (0, 0),
        "the tab's program inherited the core's ignored or blocked signals:\n{screen}"
    );
}
