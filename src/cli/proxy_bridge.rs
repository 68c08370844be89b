//! `nerdr proxy-bridge` (internal): inside a sandbox's network namespace,
//! forward `127.0.0.1:PORT` to the proxy's Unix socket.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Loopback address to listen on, e.g. 127.0.0.1:3128
    #[arg(long, value_name = "ADDR")]
    pub listen: SocketAddr,
    /// The proxy's Unix socket
    #[arg(long, value_name = "PATH")]
    pub to: PathBuf,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    crate::proxy::bridge::run_blocking(a.listen, &a.to)?;
    Ok(ExitCode::SUCCESS)
}
