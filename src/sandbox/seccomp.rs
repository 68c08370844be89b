//! The seccomp filter bubblewrap installs before it runs the program.
//! It refuses `ioctl(TIOCSTI)` (push bytes into the terminal's input, so a
//! sandboxed program could type commands into the shell after it exits) and
//! `ioctl(TIOCLINUX)` (the same through the Linux console), comparing only
//! the low 32 bits of the request: the kernel reads it as a 32-bit value,
//! so a request with junk in the high bits still reaches `TIOCSTI`. Every
//! other ioctl passes, so job control (`TIOCSPGRP`) and resizes
//! (`TIOCGWINSZ`) keep working.
//!
//! On x86_64 every filter first refuses x32 calls (numbers with bit
//! `0x40000000` set) with `ENOSYS`: they carry the x86_64 architecture tag,
//! so the architecture check lets them through, and the rules compare plain
//! numbers, so `ioctl` as an x32 call would not match.
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
    let x32 = arch_is_x86_64(arch);
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
        // Prepended: the program's jumps are relative, so they stay valid.
        let prog: Vec<_> = if x32 {
            refuse_x32().into_iter().chain(prog).collect()
        } else {
            prog
        };
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

/// The x32 ABI's bit in the syscall number.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

fn arch_is_x86_64(arch: TargetArch) -> bool {
    matches!(arch, TargetArch::x86_64)
}

/// `nr & X32_SYSCALL_BIT` → `ENOSYS` (as where x32 is off), else on.
fn refuse_x32() -> [seccompiler::sock_filter; 3] {
    use seccompiler::sock_filter;
    const BPF_LD_W_ABS: u16 = 0x20;
    const BPF_JMP_JSET_K: u16 = 0x45;
    const BPF_RET_K: u16 = 0x06;
    [
        // A = seccomp_data.nr
        sock_filter {
            code: BPF_LD_W_ABS,
            jt: 0,
            jf: 0,
            k: 0,
        },
        // if (A & bit) fall through to refuse, else skip it
        sock_filter {
            code: BPF_JMP_JSET_K,
            jt: 0,
            jf: 1,
            k: X32_SYSCALL_BIT,
        },
        sock_filter {
            code: BPF_RET_K,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32,
        },
    ]
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

    /// A classic-BPF interpreter for what seccompiler and [`refuse_x32`]
    /// emit, so the compiled programs are tested for what they decide.
    fn run(prog: &[u8], nr: u32, arch: u32, args: [u64; 6]) -> u32 {
        let mut data = Vec::new();
        data.extend_from_slice(&nr.to_ne_bytes());
        data.extend_from_slice(&arch.to_ne_bytes());
        data.extend_from_slice(&0u64.to_ne_bytes());
        for a in args {
            data.extend_from_slice(&a.to_ne_bytes());
        }
        let ins: Vec<(u16, u8, u8, u32)> = prog
            .chunks(8)
            .map(|c| {
                (
                    u16::from_ne_bytes([c[0], c[1]]),
                    c[2],
                    c[3],
                    u32::from_ne_bytes([c[4], c[5], c[6], c[7]]),
                )
            })
            .collect();
        let (mut a, mut pc) = (0u32, 0usize);
        loop {
            let (code, jt, jf, k) = ins[pc];
            pc += 1;
            let jump = |cond: bool| if cond { jt as usize } else { jf as usize };
            match code {
                0x20 => {
                    let o = k as usize;
                    a = u32::from_ne_bytes(data[o..o + 4].try_into().unwrap());
                }
                0x54 => a &= k,
                0x05 => pc += k as usize,
                0x15 => pc += jump(a == k),
                0x25 => pc += jump(a > k),
                0x35 => pc += jump(a >= k),
                0x45 => pc += jump(a & k != 0),
                0x06 => return k,
                other => panic!("opcode {other:#x} not interpreted"),
            }
        }
    }

    /// What the kernel decides: every program runs, the strictest wins
    /// (here: any refusal over allow).
    fn decide(progs: &[Vec<u8>], nr: i64, args: [u64; 6]) -> u32 {
        const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
        const AUDIT_ARCH_AARCH64: u32 = 0xc000_00b7;
        let arch = if cfg!(target_arch = "x86_64") {
            AUDIT_ARCH_X86_64
        } else {
            AUDIT_ARCH_AARCH64
        };
        progs
            .iter()
            .map(|p| run(p, nr as u32, arch, args))
            .min_by_key(|r| {
                if *r == libc::SECCOMP_RET_ALLOW {
                    u32::MAX
                } else {
                    *r
                }
            })
            .unwrap()
    }

    #[test]
    fn the_programs_decide_as_the_table_says() {
        let allow = libc::SECCOMP_RET_ALLOW;
        let eperm = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
        let enosys = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
        let x32 = |nr: i64| nr | X32_SYSCALL_BIT as i64;
        let ioctl = libc::SYS_ioctl;
        let newuser = libc::CLONE_NEWUSER as u64;
        let with = |i: usize, v: u64| {
            let mut a = [0u64; 6];
            a[i] = v;
            a
        };
        type Row = (&'static str, bool, i64, [u64; 6], u32);
        let mut rows: Vec<Row> = vec![
            ("TIOCSTI", false, ioctl, with(1, libc::TIOCSTI), eperm),
            (
                "TIOCSTI, high bits",
                false,
                ioctl,
                with(1, libc::TIOCSTI | 1 << 32),
                eperm,
            ),
            ("TIOCLINUX", false, ioctl, with(1, libc::TIOCLINUX), eperm),
            ("TIOCGWINSZ", false, ioctl, with(1, libc::TIOCGWINSZ), allow),
            ("TIOCSPGRP", false, ioctl, with(1, libc::TIOCSPGRP), allow),
            ("read", false, libc::SYS_read, [0; 6], allow),
            (
                "unshare(NEWUSER), bwrap blocks it",
                false,
                libc::SYS_unshare,
                with(0, newuser),
                allow,
            ),
            (
                "unshare(NEWUSER)",
                true,
                libc::SYS_unshare,
                with(0, newuser),
                eperm,
            ),
            (
                "unshare(NEWNS)",
                true,
                libc::SYS_unshare,
                with(0, libc::CLONE_NEWNS as u64),
                allow,
            ),
            (
                "clone(NEWUSER)",
                true,
                libc::SYS_clone,
                with(0, newuser),
                eperm,
            ),
            ("clone3", true, libc::SYS_clone3, [0; 6], enosys),
            (
                "TIOCSTI with userns rules",
                true,
                ioctl,
                with(1, libc::TIOCSTI),
                eperm,
            ),
        ];
        if cfg!(target_arch = "x86_64") {
            rows.extend([
                (
                    "x32 ioctl(TIOCSTI)",
                    false,
                    x32(ioctl),
                    with(1, libc::TIOCSTI),
                    enosys,
                ),
                ("x32 read", false, x32(libc::SYS_read), [0; 6], enosys),
                (
                    "x32 unshare(NEWUSER)",
                    true,
                    x32(libc::SYS_unshare),
                    with(0, newuser),
                    enosys,
                ),
            ] as [Row; 3]);
        }
        for (name, block_userns, nr, args, want) in rows {
            let progs = programs(block_userns).unwrap();
            assert_eq!(decide(&progs, nr, args), want, "{name}");
        }
    }

    #[test]
    fn programs_compile_one_per_errno() {
        let one = programs(false).unwrap();
        assert_eq!(one.len(), 1);
        assert!(!one[0].is_empty() && one[0].len().is_multiple_of(8));
        assert_eq!(programs(true).unwrap().len(), 2);
    }
}
