//! `nerdr shim --wait-fd N -- PROGRAM ARGS...`: the first process on a new
//! PTY. It waits until its host has moved it into its scope, then becomes
//! the program (same PID), so the program's first instruction already runs
//! in the scope. Internal: only the PTY host starts it.

use std::ffi::{CString, OsString};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The pipe to read the go-ahead from
    #[arg(long)]
    pub wait_fd: i32,
    /// The program's path, then its arguments
    #[arg(last = true, required = true)]
    pub argv: Vec<OsString>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    use std::io::Read;
    // SAFETY: the host passed this descriptor to us for this purpose alone.
    let wait = unsafe { OwnedFd::from_raw_fd(args.wait_fd) };
    let mut go = [0u8; 1];
    let mut f = std::fs::File::from(wait);
    let n = f.read(&mut go).unwrap_or(0);
    drop(f);
    if n != 1 || go[0] != b'G' {
        // The host gave up (placement failed, or it died): run nothing.
        return Ok(ExitCode::from(126));
    }
    let argv: Vec<CString> = args
        .argv
        .iter()
        .map(|a| CString::new(a.as_bytes()))
        .collect::<Result<_, _>>()?;
    let err = nix::unistd::execv(&argv[0], &argv).unwrap_err();
    anyhow::bail!("cannot run {}: {err}", args.argv[0].to_string_lossy())
}
