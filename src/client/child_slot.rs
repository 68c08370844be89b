//! Ending our own child (a window's reconnecting ssh) from outside the
//! thread that waits on it, without a PID race: the slot holds a pidfd,
//! which names that process and no other even once it is reaped, and
//! `pidfd_send_signal` ends it. The window drops an attempt it no longer
//! wants (it detached, or switched session) while the attempt's thread
//! still waits for the far end's greeting; without this the ssh would
//! outlive the window.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::{Arc, Mutex};

#[derive(Clone, Default)]
pub struct ChildSlot(Arc<Mutex<Slot>>);

#[derive(Default)]
struct Slot {
    pidfd: Option<OwnedFd>,
    ended: bool,
}

impl ChildSlot {
    /// The spawner's: hold `pid` (our child, not reaped) to be ended on
    /// request. False when the slot was ended already: the spawner ends
    /// the child itself.
    pub fn hold(&self, pid: u32) -> bool {
        let mut slot = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if slot.ended {
            return false;
        }
        slot.pidfd = super::deadline::pidfd(pid);
        true
    }

    /// The child is the link's now: ending the slot no longer ends it.
    pub fn release(&self) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).pidfd = None;
    }

    /// End the child held (if any), and any the spawner holds later.
    pub fn end(&self) {
        let mut slot = self.0.lock().unwrap_or_else(|e| e.into_inner());
        slot.ended = true;
        if let Some(fd) = slot.pidfd.take() {
            send_kill(&fd);
        }
    }
}

#[cfg(target_os = "linux")]
fn send_kill(pidfd: &OwnedFd) {
    // SAFETY: pidfd_send_signal takes a pidfd, a signal, a null siginfo
    // and flags; it touches no memory of ours.
    unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            libc::SIGKILL,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        );
    }
}

#[cfg(not(target_os = "linux"))]
fn send_kill(_pidfd: &OwnedFd) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ended_slot_ends_its_child_and_refuses_a_later_one() {
        let mut child = std::process::Command::new("sleep")
            .arg("600")
            .spawn()
            .unwrap();
        let slot = ChildSlot::default();
        assert!(slot.hold(child.id()));
        slot.end();
        let status = child.wait().unwrap();
        assert!(!status.success(), "{status:?}");
        let mut later = std::process::Command::new("true").spawn().unwrap();
        assert!(!slot.hold(later.id()), "an ended slot takes no child");
        later.wait().unwrap();
    }

    #[test]
    fn a_released_child_is_not_ended() {
        let mut child = std::process::Command::new("sleep")
            .arg("0.2")
            .spawn()
            .unwrap();
        let slot = ChildSlot::default();
        assert!(slot.hold(child.id()));
        slot.release();
        slot.end();
        assert!(child.wait().unwrap().success());
    }
}
