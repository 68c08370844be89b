//! The probe's side, run inside the sandbox (`nerdr probe`): try each check
//! of the plan and report, on stdout, what got through. It leaves no trace:
//! every file it makes is removed at once, every connection and descriptor
//! closed, a process it attaches to is let go before it goes on.
//!
//! - this module: the command, and each check tried where the plan says
//!   (and at each other path its filesystem shows there);
//! - [`files`]: the attempts on files, folders and sockets, and whether the
//!   one found is the one the core meant;
//! - [`process`]: the attempts on nerdr's processes (`/proc`, pidfd, ptrace);
//! - [`reach_nerdr`]: what of nerdr an agent needs and cannot reach;
//! - `tests`: the checks against real files and this process.

mod files;
mod process;
mod reach_nerdr;
#[cfg(test)]
mod tests;

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;

use super::findings::{Finding, Findings};
use super::plan::{Check, FileId, Plan, Try};
use files::{busy_but_writable, changeable, create_and_remove, open_same, replaceable, same};
pub use reach_nerdr::nerdr_missing;

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
        } => process::attempt(*pid, *start_time, *way),
        Try::MountTable => Err("answered by try_all".into()),
    }
    .unwrap_or_else(|why| (false, why))
}

fn errno(e: std::io::Error) -> String {
    e.to_string()
}
