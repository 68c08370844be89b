//! What nerdr needs from the operating system beyond std, behind identical
//! signatures per platform.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub use linux::*;

#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
pub use macos::*;

/// `pid` and its ancestors up to PID 1, nearest first. Stops early at a
/// process that is gone or unreadable.
pub fn ancestry(pid: u32) -> Vec<u32> {
    let mut chain = vec![pid];
    let mut cur = pid;
    while cur > 1 && chain.len() < 4096 {
        match parent_pid(cur) {
            Ok(p) if p != 0 && !chain.contains(&p) => {
                chain.push(p);
                cur = p;
            }
            _ => break,
        }
    }
    chain
}
