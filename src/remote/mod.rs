//! nerdr on another host, over SSH (docs/ARCHITECTURE.md, "nerdr over
//! SSH"): `nerdr --host HOST CMD` runs `ssh HOST nerdr bridge` and speaks
//! the client protocol over the child's stdio (`client::over_ssh`, the
//! edge). The decisions are pure, each table-tested:
//! - [`target`]: which host `--host` names, from `[hosts]` or as an ssh
//!   destination, and whether `--host` may be used here at all;
//! - [`ssh_command`]: the ssh command line;
//! - [`versions`]: whether two builds can talk, and the error when not;
//! - [`ssh_failure`]: what an ssh that ended before the bridge answered
//!   means (nerdr missing there, ssh itself failing, an old nerdr);
//! - [`folder`]: the remote folder a command acts on;
//! - [`all_hosts`]: whom `nerdr tabs --all-hosts` asks, and what each
//!   answer (or none) means.

pub mod all_hosts;
pub mod folder;
pub mod ssh_command;
pub mod ssh_failure;
pub mod target;
pub mod versions;
