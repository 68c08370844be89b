//! The seccomp filter bubblewrap installs before it runs the program.
//! It refuses `ioctl(TIOCSTI)` (push bytes into the terminal's input, so a
//! sandboxed program could type commands into the shell after it exits) and
//! `ioctl(TIOCLINUX)` (the same through the Linux console), comparing only
//! the low 32 bits of the request: the kernel reads it as a 32-bit value,
//! so a request with junk in the high bits still reaches `TIOCSTI`. Every
//! other ioctl passes, so job control (`TIOCSPGRP`) and resizes
//! (`TIOCGWINSZ`) keep working.
//!
//! Where bubblewrap has no `--disable-userns` the filter also refuses new
//! user namespaces: `unshare`/`clone` with `CLONE_NEWUSER`, and `clone3`
//! (its flags are out of the filter's reach) with `ENOSYS`, so libc falls
//! back to `clone`.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// One refused call: the syscall, the argument and the value it must
/// carry (masked to 32 bits), and the errno.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    pub syscall: i64,
    pub arg: Option<(u8, u64)>,
    pub errno: u32,
}

/// What the filter refuses; pure, so the table is tested row by row.
pub fn refusals(block_userns: bool) -> Vec<Refusal> {
    let ioctl = |request: u64| Refusal {
        syscall: libc::SYS_ioctl,
        arg: Some((1, request)),
        errno: libc::EPERM as u32,
    };
    let mut r = vec![ioctl(libc::TIOCSTI), ioctl(libc::TIOCLINUX)];
    if block_userns {
        let newuser = libc::CLONE_NEWUSER as u64;
        r.push(Refusal {
            syscall: libc::SYS_unshare,
            arg: Some((0, newuser)),
            errno: libc::EPERM as u32,
        });
        r.push(Refusal {
            syscall: libc::SYS_clone,
            arg: Some((clone_flags_arg(), newuser)),
            errno: libc::EPERM as u32,
        });
        r.push(Refusal {
            syscall: libc::SYS_clone3,
            arg: None,
            errno: libc::ENOSYS as u32,
        });
    }
    r
}

/// `clone`'s flags are its first argument on every architecture nerdr runs
/// on (x86_64, aarch64).
fn clone_flags_arg() -> u8 {
    0
}

/// The compiled programs, one per errno, as bytes bubblewrap reads from
/// `--add-seccomp-fd FD` (the kernel runs every filter; the first refusal
/// wins).
pub fn programs(block_userns: bool) -> Result<Vec<Vec<u8>>, String> {
    let arch = match std::env::consts::ARCH {
        "x86_64" => TargetArch::x86_64,
        "aarch64" => TargetArch::aarch64,
        other => return Err(format!("no seccomp filter for the {other} architecture")),
    };
    let mut by_errno: BTreeMap<u32, BTreeMap<i64, Vec<SeccompRule>>> = BTreeMap::new();
    for r in refusals(block_userns) {
        let rules = by_errno
            .entry(r.errno)
            .or_default()
            .entry(r.syscall)
            .or_default();
        if let Some((arg, value)) = r.arg {
            // ioctl: the whole low 32 bits must equal the request. Flags
            // (clone, unshare): the flag's bit must be set.
            let mask = if r.syscall == libc::SYS_ioctl {
                0xffff_ffff
            } else {
                value
            };
            let cond = SeccompCondition::new(
                arg,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::MaskedEq(mask),
                value,
            )
            .map_err(|e| e.to_string())?;
            rules.push(SeccompRule::new(vec![cond]).map_err(|e| e.to_string())?);
        }
    }
    let mut out = Vec::new();
    for (errno, rules) in by_errno {
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(errno),
            arch,
        )
        .map_err(|e| e.to_string())?;
        let prog: BpfProgram = filter
            .try_into()
            .map_err(|e: seccompiler::BackendError| e.to_string())?;
        let mut bytes = Vec::with_capacity(prog.len() * 8);
        for ins in prog {
            bytes.extend_from_slice(&ins.code.to_ne_bytes());
            bytes.push(ins.jt);
            bytes.push(ins.jf);
            bytes.extend_from_slice(&ins.k.to_ne_bytes());
        }
        out.push(bytes);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_table() {
        let tiocsti = Refusal {
            syscall: libc::SYS_ioctl,
            arg: Some((1, libc::TIOCSTI)),
            errno: libc::EPERM as u32,
        };
        let tioclinux = Refusal {
            syscall: libc::SYS_ioctl,
            arg: Some((1, libc::TIOCLINUX)),
            errno: libc::EPERM as u32,
        };
        assert_eq!(refusals(false), [tiocsti, tioclinux]);
        let with_userns = refusals(true);
        assert_eq!(with_userns[..2], [tiocsti, tioclinux]);
        assert_eq!(
            with_userns[2..],
            [
                Refusal {
                    syscall: libc::SYS_unshare,
                    arg: Some((0, libc::CLONE_NEWUSER as u64)),
                    errno: libc::EPERM as u32
                },
                Refusal {
                    syscall: libc::SYS_clone,
                    arg: Some((0, libc::CLONE_NEWUSER as u64)),
                    errno: libc::EPERM as u32
                },
                Refusal {
                    syscall: libc::SYS_clone3,
                    arg: None,
                    errno: libc::ENOSYS as u32
                },
            ]
        );
    }

    #[test]
    fn programs_compile_one_per_errno() {
        let one = programs(false).unwrap();
        assert_eq!(one.len(), 1);
        assert!(!one[0].is_empty() && one[0].len().is_multiple_of(8));
        assert_eq!(programs(true).unwrap().len(), 2);
    }
}
