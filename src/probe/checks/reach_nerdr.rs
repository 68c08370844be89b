//! What of nerdr an agent needs from inside its sandbox (the hook socket
//! and nerdr's program), and whether it can reach them.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::errno;

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
