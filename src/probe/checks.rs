//! The probe's side, run inside the sandbox (`nerdr probe`): try each check
//! of the plan and report, on stdout, what got through. It leaves no trace:
//! every file it makes is removed at once, every connection and descriptor
//! closed, a process it attaches to is let go before it goes on.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

use super::findings::{Finding, Findings};
use super::plan::{Check, FileId, Plan, ProcWay, Try};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The per-launch nonce the report line must carry
    #[arg(long)]
    pub nonce: String,
    /// What to try, as JSON (made by the core)
    #[arg(long)]
    pub plan: String,
}

pub fn run(args: Args) -> anyhow::Result<std::process::ExitCode> {
    let plan: Plan = serde_json::from_str(&args.plan)
        .map_err(|e| anyhow::anyhow!("the probe's --plan is not a plan: {e}"))?;
    let mut findings = try_all(&plan, &args.nonce);
    findings.nerdr_missing = nerdr_missing(
        std::env::var_os("NERDR_SOCKET").as_deref(),
        std::env::var_os("NERDR_BIN").as_deref(),
    );
    // One write of the whole line, so a wrapper's own output cannot split it.
    let line = format!("{}\n", findings.line(&args.nonce));
    use std::io::Write;
    std::io::stdout().lock().write_all(line.as_bytes())?;
    Ok(std::process::ExitCode::SUCCESS)
}

pub fn try_all(plan: &Plan, nonce: &str) -> Findings {
    let table = std::fs::read_to_string("/proc/self/mountinfo").map_err(errno);
    let mounts = table
        .as_deref()
        .map(super::mounts::parse)
        .unwrap_or_default();
    Findings {
        nerdr_missing: Vec::new(),
        findings: plan
            .checks
            .iter()
            .map(|c| {
                let (reached, detail) = match (&c.try_, &table) {
                    (Try::MountTable, Ok(_)) => (false, "read".into()),
                    (Try::MountTable, Err(e)) => (true, e.clone()),
                    _ => try_everywhere(c, nonce, &mounts),
                };
                Finding {
                    id: c.id.clone(),
                    reached,
                    detail,
                }
            })
            .collect(),
    }
}

type Got = (bool, String);

/// What of nerdr an agent needs and cannot reach from here, with the
/// launch's `$NERDR_SOCKET` and `$NERDR_BIN`: the hook socket (connected,
/// then closed without a word) and nerdr's program (an executable file).
pub fn nerdr_missing(
    socket: Option<&std::ffi::OsStr>,
    bin: Option<&std::ffi::OsStr>,
) -> Vec<String> {
    let mut missing = Vec::new();
    match socket {
        None => missing.push("$NERDR_SOCKET, unset inside".to_string()),
        Some(s) => {
            if let Err(e) = std::os::unix::net::UnixStream::connect(s) {
                missing.push(format!(
                    "the hook socket {}: {}",
                    Path::new(s).display(),
                    errno(e)
                ));
            }
        }
    }
    match bin {
        None => missing.push("$NERDR_BIN, unset inside".to_string()),
        Some(b) => {
            let runnable = std::fs::metadata(b)
                .map(|m| m.is_file() && m.mode() & 0o111 != 0)
                .map_err(errno);
            match runnable {
                Ok(true) => {}
                Ok(false) => missing.push(format!(
                    "$NERDR_BIN {}: not an executable file inside",
                    Path::new(b).display()
                )),
                Err(e) => missing.push(format!("$NERDR_BIN {}: {e}", Path::new(b).display())),
            }
        }
    }
    missing
}

/// The check at the target's usual path, then at each other path its
/// filesystem shows it at in this sandbox: reached if reached anywhere.
fn try_everywhere(check: &Check, nonce: &str, mounts: &[super::mounts::Mount]) -> Got {
    let first = try_one(check, nonce);
    let Some(target) = target_of(&check.try_) else {
        return first;
    };
    let Some(spot) = &target.mount else {
        return first;
    };
    let mut details = vec![first.1];
    if first.0 {
        return (true, details.remove(0));
    }
    for path in super::mounts::aliases(mounts, spot, &target.path) {
        let mut moved = check.clone();
        if let Some(t) = target_of_mut(&mut moved.try_) {
            t.path = path.clone();
        }
        let (reached, detail) = try_one(&moved, nonce);
        if reached {
            return (true, format!("at {}: {detail}", path.display()));
        }
        details.push(format!("at {}: {detail}", path.display()));
    }
    (false, details.join("; "))
}

fn target_of(t: &Try) -> Option<&FileId> {
    match t {
        Try::ListDir { dir } | Try::CreateIn { dir } => Some(dir),
        Try::Connect { socket } => Some(socket),
        Try::Read { file } | Try::OpenForWrite { file } => Some(file),
        Try::MountTable | Try::Process { .. } => None,
    }
}

fn target_of_mut(t: &mut Try) -> Option<&mut FileId> {
    match t {
        Try::ListDir { dir } | Try::CreateIn { dir } => Some(dir),
        Try::Connect { socket } => Some(socket),
        Try::Read { file } | Try::OpenForWrite { file } => Some(file),
        Try::MountTable | Try::Process { .. } => None,
    }
}

fn try_one(check: &Check, nonce: &str) -> Got {
    match &check.try_ {
        Try::ListDir { dir } => same(dir).and_then(|()| {
            std::fs::read_dir(&dir.path)
                .map(|_| (true, "listed".into()))
                .map_err(errno)
        }),
        Try::Connect { socket } => same(socket).and_then(|()| {
            std::os::unix::net::UnixStream::connect(&socket.path)
                .map(|s| {
                    drop(s);
                    (true, "connected".into())
                })
                .map_err(errno)
        }),
        Try::Read { file } => {
            open_same(file, std::fs::OpenOptions::new().read(true)).and_then(|mut f| {
                let mut b = [0u8; 1];
                f.read(&mut b).map(|_| (true, "read".into())).map_err(errno)
            })
        }
        Try::CreateIn { dir } => same(dir).and_then(|()| {
            create_and_remove(&dir.path, nonce).or_else(|e| changeable(&dir.path).ok_or(e))
        }),
        Try::OpenForWrite { file } => open_same(
            file,
            // No truncate, no create, no byte written: the file is unchanged.
            std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY),
        )
        .map(|_| (true, "opened for writing".into()))
        .or_else(busy_but_writable(&file.path))
        .or_else(|e| {
            changeable(&file.path)
                .or_else(|| replaceable(&file.path))
                .ok_or(e)
        }),
        Try::Process {
            pid,
            start_time,
            way,
            ..
        } => process(*pid, *start_time, *way),
        Try::MountTable => Err("answered by try_all".into()),
    }
    .unwrap_or_else(|why| (false, why))
}

fn errno(e: std::io::Error) -> String {
    e.to_string()
}

/// A running program cannot be opened for writing (`ETXTBSY`), but the
/// kernel says so only after the permission check passed (and before the
/// mount's read-only flag is looked at): on a writable mount, it can be
/// written once it stops. The error text is what `open_same` gave.
fn busy_but_writable(path: &Path) -> impl FnOnce(String) -> Result<Got, String> + '_ {
    move |e| {
        let busy = std::io::Error::from_raw_os_error(libc::ETXTBSY).to_string();
        if e == busy && !read_only_mount(path) {
            Ok((true, "writable (busy running now)".into()))
        } else {
            Err(e)
        }
    }
}

/// Is the path inside the sandbox the one the core meant? A different
/// folder in its place (a tmpfs, an empty bind) is not nerdr's, and what
/// the probe can do there reaches nothing.
fn same(want: &FileId) -> Result<(), String> {
    let m = std::fs::symlink_metadata(&want.path).map_err(errno)?;
    if (m.dev(), m.ino()) == (want.dev, want.ino) {
        Ok(())
    } else {
        Err("not the same file as outside the sandbox".into())
    }
}

fn open_same(want: &FileId, opts: &std::fs::OpenOptions) -> Result<File, String> {
    same(want)?;
    let f = opts.open(&want.path).map_err(errno)?;
    let m = f.metadata().map_err(errno)?;
    if (m.dev(), m.ino()) == (want.dev, want.ino) {
        Ok(f)
    } else {
        Err("not the same file as outside the sandbox".into())
    }
}

fn create_and_remove(dir: &Path, nonce: &str) -> Result<Got, String> {
    let name = dir.join(format!(".nerdr-probe-{nonce}"));
    let made = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&name)
        .map_err(errno)?;
    drop(made);
    match std::fs::remove_file(&name) {
        Ok(()) => Ok((true, "created a file and removed it".into())),
        Err(e) => Ok((
            true,
            format!("created {} and could not remove it: {e}", name.display()),
        )),
    }
}

/// What is not writable as it stands but is the sandbox's own to change: a
/// file or folder it owns, on a mount it may write, can be given back its
/// write permission (`chmod`), so a read-only mode is no protection.
fn changeable(path: &Path) -> Option<Got> {
    let m = std::fs::symlink_metadata(path).ok()?;
    let owner = m.uid() == nix::unistd::geteuid().as_raw();
    (owner && !read_only_mount(path)).then(|| {
        (
            true,
            "its owner here, on a writable mount: its mode can be changed".into(),
        )
    })
}

/// A file whose folder the sandbox may write can be replaced (a new file
/// renamed over it) unless it is a mount of its own, which cannot be.
fn replaceable(path: &Path) -> Option<Got> {
    let parent = path.parent()?;
    // access(2) also says EROFS for a read-only mount.
    nix::unistd::access(parent, nix::unistd::AccessFlags::W_OK).ok()?;
    (!mount_root(path)).then(|| {
        (
            true,
            "its folder is writable: the file can be replaced".into(),
        )
    })
}

fn read_only_mount(path: &Path) -> bool {
    nix::sys::statvfs::statvfs(path)
        .map(|s| s.flags().contains(nix::sys::statvfs::FsFlags::ST_RDONLY))
        // Unknown: assume writable, so the check errs towards refusing.
        .unwrap_or(false)
}

/// Whether `path` is itself a mount point (a file bound read-only over the
/// real one, as a sandbox does for `.git/config`).
#[cfg(target_os = "linux")]
fn mount_root(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: statx fills `buf`, a zeroed plain struct; `c` is a valid C string.
    let mut buf: libc::statx = unsafe { std::mem::zeroed() };
    let r = unsafe {
        libc::statx(
            libc::AT_FDCWD,
            c.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
            0,
            &mut buf,
        )
    };
    let bit = libc::STATX_ATTR_MOUNT_ROOT as u64;
    // Unsupported (older kernels): assume not, so the check errs towards refusing.
    r == 0 && buf.stx_attributes_mask & bit != 0 && buf.stx_attributes & bit != 0
}

#[cfg(not(target_os = "linux"))]
fn mount_root(_path: &Path) -> bool {
    false
}

#[cfg(target_os = "linux")]
fn process(pid: u32, start_time: u64, way: ProcWay) -> Result<Got, String> {
    use crate::platform::proc_start_time;
    let by_proc = || -> Result<(), String> {
        match proc_start_time(pid) {
            Ok(t) if t == start_time => Ok(()),
            Ok(_) => Err(format!("pid {pid} here is another process")),
            Err(e) => Err(format!("/proc/{pid}: {e}")),
        }
    };
    match way {
        ProcWay::Environ => {
            by_proc()?;
            let mut f = File::open(format!("/proc/{pid}/environ")).map_err(errno)?;
            let mut b = [0u8; 16];
            f.read(&mut b).map_err(errno)?;
            Ok((true, "read".into()))
        }
        ProcWay::Fd => {
            by_proc()?;
            std::fs::read_dir(format!("/proc/{pid}/fd")).map_err(errno)?;
            Ok((true, "listed".into()))
        }
        ProcWay::Mem => {
            by_proc()?;
            File::open(format!("/proc/{pid}/mem")).map_err(errno)?;
            Ok((true, "opened".into()))
        }
        ProcWay::PidfdGetfd => {
            let pidfd = Pidfd::open(pid, start_time)?;
            // Any descriptor will do; the core and the holder always have
            // their standard ones and sockets among the first few.
            for target in 0..64 {
                match pidfd.getfd(target) {
                    Ok(fd) => {
                        drop(fd);
                        return Ok((true, format!("took its descriptor {target}")));
                    }
                    Err(e) if e.raw_os_error() == Some(libc::EBADF) => continue,
                    Err(e) => return Err(errno(e)),
                }
            }
            Err("no descriptor could be taken".into())
        }
        ProcWay::Ptrace => {
            // The pidfd pins the process while its identity is checked.
            let _pidfd = Pidfd::open(pid, start_time)?;
            ptrace_attach_detach(pid)
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn process(_pid: u32, _start_time: u64, _way: ProcWay) -> Result<Got, String> {
    Err("not tried on this system".into())
}

#[cfg(target_os = "linux")]
struct Pidfd(std::os::fd::OwnedFd);

#[cfg(target_os = "linux")]
impl Pidfd {
    /// A pidfd for `pid` as this sandbox numbers processes, if it is the
    /// process the core meant. A PID namespace of the sandbox's own numbers
    /// its processes afresh: the same number there is another process.
    fn open(pid: u32, start_time: u64) -> Result<Pidfd, String> {
        use std::os::fd::FromRawFd;
        // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
        if fd < 0 {
            return Err(errno(std::io::Error::last_os_error()));
        }
        // SAFETY: a fresh descriptor that nothing else owns.
        let pidfd = Pidfd(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) });
        match pidfd.identity() {
            // Unverifiable (no /proc here): count it as the real one, so a
            // sandbox without /proc cannot hide a reachable process.
            None => Ok(pidfd),
            Some(t) if t == start_time => Ok(pidfd),
            Some(_) => Err(format!("pid {pid} here is another process")),
        }
    }

    /// The start time of the process the pidfd refers to, read through the
    /// pidfd's own `Pid:` in /proc/self/fdinfo (numbered as this /proc
    /// numbers processes).
    fn identity(&self) -> Option<u64> {
        use std::os::fd::AsRawFd;
        let info =
            std::fs::read_to_string(format!("/proc/self/fdinfo/{}", self.0.as_raw_fd())).ok()?;
        let pid: i64 = info
            .lines()
            .find_map(|l| l.strip_prefix("Pid:"))?
            .trim()
            .parse()
            .ok()?;
        if pid <= 0 {
            // Not in this /proc's namespace: another process than ours.
            return Some(u64::MAX);
        }
        crate::platform::proc_start_time(pid as u32).ok()
    }

    fn getfd(&self, target: i32) -> std::io::Result<std::os::fd::OwnedFd> {
        use std::os::fd::{AsRawFd, FromRawFd};
        // SAFETY: pidfd_getfd takes a pidfd, a target fd number and flags;
        // it returns a new fd or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_getfd, self.0.as_raw_fd(), target, 0) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor that nothing else owns.
        Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
    }
}

/// Attach with `PTRACE_SEIZE` (which does not stop the process), then stop
/// it for an instant with `PTRACE_INTERRUPT` only so it can be detached
/// (the kernel detaches only a stopped tracee). A signal it was about to
/// receive is handed back on detach.
#[cfg(target_os = "linux")]
fn ptrace_attach_detach(pid: u32) -> Result<Got, String> {
    use nix::sys::ptrace;
    let target = nix::unistd::Pid::from_raw(pid as i32);
    ptrace::seize(target, ptrace::Options::empty()).map_err(|e| errno(std::io::Error::from(e)))?;
    if ptrace::interrupt(target).is_err() {
        // Exiting detaches as well; the probe exits right after.
        return Ok((true, "attached (left to detach on exit)".into()));
    }
    // The wait and the detach stay raw: the signal held back may be a
    // real-time one, which nix's `Signal` (and so its `WaitStatus` and
    // `detach`) cannot carry, and it must reach the process all the same.
    let pid = pid as libc::pid_t;
    let null = std::ptr::null_mut::<libc::c_void>();
    let mut status = 0;
    // SAFETY: waits for the tracee's stop; status is a valid out-pointer.
    let waited = unsafe { libc::waitpid(pid, &mut status, libc::__WALL) };
    let signal = if waited == pid
        && libc::WIFSTOPPED(status)
        && (status >> 16) == 0
        && libc::WSTOPSIG(status) != libc::SIGTRAP
    {
        // A signal-delivery stop: deliver the signal after all.
        libc::WSTOPSIG(status) as usize
    } else {
        0
    };
    // SAFETY: detach, passing on any signal held back.
    unsafe { libc::ptrace(libc::PTRACE_DETACH, pid, null, signal as *mut libc::c_void) };
    Ok((true, "attached and detached".into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::plan::{plan, Proc, Targets};

    fn by_id<'a>(f: &'a Findings, id: &str) -> &'a Finding {
        f.findings.iter().find(|f| f.id == id).unwrap()
    }

    #[test]
    fn what_of_nerdr_is_out_of_reach_is_named() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let sock = tmp.path().join("nerdr.sock");
        let _listening = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        let bin = tmp.path().join("nerdr");
        std::fs::write(&bin, "").unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let plain = tmp.path().join("plain");
        std::fs::write(&plain, "").unwrap();
        let gone = tmp.path().join("gone.sock");
        let os = |p: &Path| p.as_os_str().to_owned();
        let rows: Vec<(
            Option<std::ffi::OsString>,
            Option<std::ffi::OsString>,
            Vec<String>,
        )> = vec![
            (Some(os(&sock)), Some(os(&bin)), vec![]),
            (
                Some(os(&gone)),
                Some(os(&bin)),
                vec![format!(
                    "the hook socket {}: No such file or directory (os error 2)",
                    gone.display()
                )],
            ),
            (
                Some(os(&sock)),
                Some(os(&plain)),
                vec![format!(
                    "$NERDR_BIN {}: not an executable file inside",
                    plain.display()
                )],
            ),
            (
                None,
                None,
                vec![
                    "$NERDR_SOCKET, unset inside".into(),
                    "$NERDR_BIN, unset inside".into(),
                ],
            ),
        ];
        for (socket, bin, want) in rows {
            assert_eq!(nerdr_missing(socket.as_deref(), bin.as_deref()), want);
        }
    }

    #[test]
    fn a_lookalike_folder_is_not_reached_and_no_trace_is_left() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let mut id = FileId::of(&real).unwrap();
        assert_eq!(id.mount, None);
        let t = Targets {
            config_dir: Some(id.clone()),
            ..Default::default()
        };
        let f = try_all(&plan(&t), "n1");
        assert!(by_id(&f, "config-dir").reached);
        assert_eq!(
            std::fs::read_dir(&real).unwrap().count(),
            0,
            "a trace was left"
        );
        // Another folder at the path (as a tmpfs in its place would be).
        id.ino += 1;
        let t = Targets {
            config_dir: Some(id),
            ..Default::default()
        };
        let f = try_all(&plan(&t), "n1");
        let got = by_id(&f, "config-dir");
        assert!(
            !got.reached && got.detail.contains("not the same"),
            "{got:?}"
        );
        assert_eq!(std::fs::read_dir(&real).unwrap().count(), 0);
    }

    #[test]
    fn a_git_config_opened_for_writing_is_unchanged() {
        let tmp = tempfile::tempdir().unwrap();
        let config = tmp.path().join("config");
        std::fs::write(&config, "[core]\n").unwrap();
        let before = std::fs::metadata(&config).unwrap().modified().unwrap();
        let t = Targets {
            git_configs: vec![FileId::of(&config).unwrap()],
            ..Default::default()
        };
        let f = try_all(&plan(&t), "n1");
        assert!(by_id(&f, "git-config-0").reached);
        assert_eq!(std::fs::read_to_string(&config).unwrap(), "[core]\n");
        assert_eq!(
            std::fs::metadata(&config).unwrap().modified().unwrap(),
            before
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_reused_pid_is_another_process() {
        let me = std::process::id();
        let start = crate::platform::proc_start_time(me).unwrap();
        let t = Targets {
            processes: vec![Proc {
                role: "core",
                pid: me,
                start_time: start + 1,
            }],
            processes_reachable_by_proc: true,
            ..Default::default()
        };
        let f = try_all(&plan(&t), "n1");
        for way in ["environ", "fd", "mem", "pidfd-getfd", "ptrace"] {
            let got = by_id(&f, &format!("core-{way}"));
            assert!(
                !got.reached && got.detail.contains("another process"),
                "{way}: {got:?}"
            );
        }
    }
}
