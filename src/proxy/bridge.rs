//! The bridge inside a sandbox's network namespace, where only loopback
//! exists: it listens on `127.0.0.1:PORT` (what `HTTP_PROXY` names) and
//! carries each connection to the proxy's Unix socket, bound into the
//! sandbox. It judges nothing; the proxy on the other end does.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::net::{TcpListener, UnixStream};

/// Forwards every connection accepted on `listener` to `to` until
/// `shutdown` completes.
pub async fn serve(listener: TcpListener, to: PathBuf, shutdown: impl Future) {
    let to = Arc::new(to);
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            _ = &mut shutdown => return,
            a = listener.accept() => a,
        };
        let mut client = match accepted {
            Ok((c, _)) => c,
            Err(e) => {
                eprintln!("nerdr proxy-bridge: cannot accept: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let _ = client.set_nodelay(true);
        let to = to.clone();
        tokio::spawn(async move {
            match UnixStream::connect(to.as_path()).await {
                Ok(mut proxy) => {
                    let _ = tokio::io::copy_bidirectional_with_sizes(
                        &mut client,
                        &mut proxy,
                        64 * 1024,
                        64 * 1024,
                    )
                    .await;
                }
                // The client sees its connection closed; the message says why.
                Err(e) => eprintln!(
                    "nerdr proxy-bridge: cannot reach the proxy at {}: {e}",
                    to.display()
                ),
            }
        });
    }
}

/// Binds `listen` and forwards forever on a runtime of its own: what a
/// sandbox's inner init runs (it is not inside a tokio runtime).
pub fn run_blocking(listen: SocketAddr, to: &Path) -> io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let listener = TcpListener::bind(listen)
            .await
            .map_err(|e| io::Error::new(e.kind(), format!("cannot listen on {listen}: {e}")))?;
        serve(listener, to.to_path_buf(), std::future::pending::<()>()).await;
        Ok(())
    })
}
