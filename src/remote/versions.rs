//! Whether this nerdr and the one on another host can talk (pure). They
//! speak the client protocol to each other through the bridge, so what
//! must agree is `protocol::PROTOCOL_VERSION`, which is bumped only when
//! that protocol changes incompatibly; the release and commit may differ
//! (a minor-compatible pair: `0.1.0` here, `0.1.3` there, or two builds of
//! the same protocol). The client socket's own handshake takes the same
//! rule: one protocol number, equal on both ends.

/// One end: its client protocol and its `nerdr --version`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Build<'a> {
    pub protocol: u32,
    pub nerdr: &'a str,
}

/// `Ok` when `here` can work with `there` (on host `host`), else the error
/// for the person: both versions, and which one to change.
pub fn check(here: Build, there: Build, host: &str) -> Result<(), String> {
    if here.protocol == there.protocol {
        return Ok(());
    }
    let which = match there.protocol < here.protocol {
        true => format!("upgrade nerdr on {host}"),
        false => "upgrade nerdr here".to_owned(),
    };
    Err(format!(
        "nerdr here is {} (client protocol {}) and nerdr on {host} is {} (client protocol {}): \
         they cannot talk; install the same nerdr on both ({which})",
        here.nerdr, here.protocol, there.nerdr, there.protocol
    ))
}

/// The error for a greeting of a format this build does not know: the
/// bridge there is of a build that changed the greeting itself.
pub fn unknown_greeting(here: Build, format: u32, there_nerdr: &str, host: &str) -> String {
    format!(
        "nerdr here is {} and nerdr on {host} is {there_nerdr}, whose bridge greets in format \
         {format}, which this nerdr does not read: install the same nerdr on both",
        here.nerdr
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_of_one_protocol_talk_and_others_are_named() {
        let b = |protocol, nerdr| Build { protocol, nerdr };
        #[rustfmt::skip]
        type Want<'a> = Result<(), &'a [&'a str]>;
        let rows: &[(Build, Build, Want)] = &[
            // The same build, another commit, another release: one protocol.
            (b(2, "0.1.0 (aaaaaaa)"), b(2, "0.1.0 (aaaaaaa)"), Ok(())),
            (b(2, "0.1.0 (aaaaaaa)"), b(2, "0.1.0 (bbbbbbb)"), Ok(())),
            (b(2, "0.1.0 (aaaaaaa)"), b(2, "0.1.3 (ccccccc)"), Ok(())),
            (b(2, "0.2.0 (aaaaaaa)"), b(2, "0.1.0 (unknown)"), Ok(())),
            // Another protocol: both versions, and which end to upgrade.
            (
                b(2, "0.1.0 (aaaaaaa)"),
                b(1, "0.0.9 (old1234)"),
                Err(&[
                    "nerdr here is 0.1.0 (aaaaaaa) (client protocol 2)",
                    "nerdr on devbox is 0.0.9 (old1234) (client protocol 1)",
                    "upgrade nerdr on devbox",
                ]),
            ),
            (
                b(2, "0.1.0 (aaaaaaa)"),
                b(3, "0.3.0 (new5678)"),
                Err(&[
                    "(client protocol 2)",
                    "0.3.0 (new5678) (client protocol 3)",
                    "upgrade nerdr here",
                ]),
            ),
        ];
        for (here, there, want) in rows {
            match (check(*here, *there, "devbox"), want) {
                (Ok(()), Ok(())) => {}
                (Err(e), Err(parts)) => {
                    for part in *parts {
                        assert!(e.contains(part), "{here:?} {there:?}: {e}");
                    }
                }
                (got, want) => panic!("{here:?} {there:?}: got {got:?}, want {want:?}"),
            }
        }
    }
}
