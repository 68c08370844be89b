//! Names: where the user bus is, and what nerdr's units are called. Pure,
//! so the rules are tested here; reading the environment is the caller's.
//!
//! Tab ids are eight lowercase hex digits, already valid in a unit name, so
//! nothing is escaped: a tab id that is not that shape is refused instead.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use super::SystemdError;

/// The scope of the agent in tab `tab`: `nerdr-agent-<tab>.scope`.
pub fn agent_scope(tab: &str) -> Result<String, SystemdError> {
    check_tab(tab)?;
    Ok(format!("nerdr-agent-{tab}.scope"))
}

/// The scope of terminal `n` in tab `tab`: `nerdr-term-<tab>-<n>.scope`.
pub fn term_scope(tab: &str, n: u32) -> Result<String, SystemdError> {
    check_tab(tab)?;
    Ok(format!("nerdr-term-{tab}-{n}.scope"))
}

fn check_tab(tab: &str) -> Result<(), SystemdError> {
    let ok = tab.len() == 8
        && tab
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if ok {
        Ok(())
    } else {
        Err(SystemdError::InvalidName {
            name: tab.into(),
            reason: "a tab id is eight lowercase hex digits".into(),
        })
    }
}

/// The user bus address: `DBUS_SESSION_BUS_ADDRESS` when set and not empty,
/// else `unix:path=$XDG_RUNTIME_DIR/bus` (where `dbus.socket` of a user
/// session listens). The path is escaped as D-Bus addresses require.
pub fn bus_address(
    session_bus: Option<&OsStr>,
    runtime_dir: Option<&OsStr>,
) -> Result<String, SystemdError> {
    if let Some(addr) = session_bus.filter(|a| !a.is_empty()) {
        return addr
            .to_str()
            .map(str::to_owned)
            .ok_or_else(|| SystemdError::NoAddress {
                reason: "DBUS_SESSION_BUS_ADDRESS is not UTF-8".into(),
            });
    }
    match runtime_dir.filter(|d| !d.is_empty()) {
        Some(dir) => {
            let mut path = dir.as_bytes().to_vec();
            path.extend_from_slice(b"/bus");
            Ok(format!("unix:path={}", escape_address_value(&path)))
        }
        None => Err(SystemdError::NoAddress {
            reason: "neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set".into(),
        }),
    }
}

/// D-Bus address values keep `[-0-9A-Za-z_/.\*]` and percent-escape every
/// other byte.
fn escape_address_value(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_alphanumeric() || b"-_/.\\*".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02x}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_scope_is_named_after_its_tab() {
        assert_eq!(
            agent_scope("1a2b3c4d").unwrap(),
            "nerdr-agent-1a2b3c4d.scope"
        );
    }

    #[test]
    fn a_terminal_scope_carries_its_number() {
        assert_eq!(
            term_scope("0000beef", 3).unwrap(),
            "nerdr-term-0000beef-3.scope"
        );
    }

    #[test]
    fn a_tab_id_that_is_not_eight_hex_digits_is_refused() {
        for bad in [
            "",
            "1a2b3c4",
            "1a2b3c4d5",
            "1A2B3C4D",
            "1a2b/c4d",
            "../../..",
            "x.scope",
        ] {
            let err = agent_scope(bad).unwrap_err().to_string();
            assert!(err.contains("eight lowercase hex digits"), "{bad}: {err}");
        }
    }

    #[test]
    fn the_session_bus_address_wins_when_set() {
        assert_eq!(
            bus_address(
                Some(OsStr::new("unix:path=/tmp/b")),
                Some(OsStr::new("/run/user/1000"))
            )
            .unwrap(),
            "unix:path=/tmp/b"
        );
    }

    #[test]
    fn an_empty_session_bus_address_falls_back_to_the_runtime_dir() {
        assert_eq!(
            bus_address(Some(OsStr::new("")), Some(OsStr::new("/run/user/1000"))).unwrap(),
            "unix:path=/run/user/1000/bus"
        );
    }

    #[test]
    fn a_runtime_dir_with_odd_bytes_is_percent_escaped() {
        assert_eq!(
            bus_address(None, Some(OsStr::new("/tmp/a b,c=d;%"))).unwrap(),
            "unix:path=/tmp/a%20b%2cc%3dd%3b%25/bus"
        );
    }

    #[test]
    fn without_either_variable_the_error_says_which_are_missing() {
        let err = bus_address(None, None).unwrap_err().to_string();
        assert!(err.contains("DBUS_SESSION_BUS_ADDRESS"), "{err}");
        assert!(err.contains("XDG_RUNTIME_DIR"), "{err}");
        assert!(err.contains("NERDR_HOLDER=0"), "{err}");
    }
}
