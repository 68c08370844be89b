//! The hand-over: how a core of any later (or earlier) holder protocol
//! takes over the programs of a running holder it does not speak.
//!
//! **Frozen.** Every holder from this one on must keep answering these
//! messages exactly as written here, and every core must keep sending them,
//! so that any two builds can hand over. Never change or remove a message,
//! a field, a tag or a number below; add new kinds only (and then a new
//! [`HANDOVER_VERSION`] alongside the old one, never instead of it). The
//! framing they travel in (`protocol::frame`: 4-byte big-endian length,
//! then kind byte 1 = JSON control) is frozen with them. The unit tests at
//! the bottom pin the bytes.
//!
//! How it goes:
//! 1. The core sends `{"type":"hello","version":V}` (its [`HOLDER_VERSION`]).
//! 2. A holder of another version answers [`Answer::OtherVersion`] with the
//!    hand-over versions it offers (and does nothing else).
//! 3. The core asks `{"type":"hand_over","handover":1}`.
//! 4. The holder stops reading its terminals, writes its whole state to a
//!    file ([`encode_state`]) and answers [`Answer::ReExecuting`]; then it
//!    re-executes itself as the core's own executable (the file the core's
//!    PID runs, not a path anyone could swap), as
//!    `EXE holder --handover-fd N` ([`HANDOVER_FLAG`]), but only if that
//!    file holds the bytes of [`HANDOVER_FLAG`] (every build that takes a
//!    hand-over does; a core run through `ld.so` or valgrind runs a file
//!    that does not, and the holder refuses). The new image keeps
//!    the PID, the service, the listening socket and every program as its
//!    child; it reads the state from descriptor N and serves again.
//! 5. The core connects again and says hello: now of its own version.
//!
//! Re-executing rather than passing descriptors to a new process
//! (`SCM_RIGHTS`) keeps what no descriptor can carry: parenthood (so the
//! new holder reaps its programs and reports their real exit codes), the
//! service's main PID and the PID the core recorded, and the listening
//! socket (no moment where the name is free). Nothing leaves the holder's
//! process, so nothing can be handed to a wrong peer.
//!
//! [`HOLDER_VERSION`]: super::holder::HOLDER_VERSION

use serde::{Deserialize, Serialize};

/// The one hand-over version this build offers and asks for.
pub const HANDOVER_VERSION: u32 = 1;

/// The holder's argument naming the descriptor that holds its state.
pub const HANDOVER_FLAG: &str = "--handover-fd";

/// What a core says first, and then to ask for a hand-over.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Ask {
    Hello {
        version: u32,
    },
    HandOver {
        handover: u32,
    },
    /// Anything else: a version-specific message.
    #[serde(other)]
    Other,
}

/// What a holder answers that every core must understand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Answer {
    /// The hello named another version than the holder's.
    OtherVersion {
        version: u32,
        handover: Vec<u32>,
    },
    /// The state is written; the holder is becoming the core's executable.
    /// The connection closes next.
    ReExecuting {
        handover: u32,
    },
    Refused {
        message: String,
    },
    /// Anything else: the version-specific welcome.
    #[serde(other)]
    Other,
}

/// What the holder does with a message from a verified core.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HolderStep {
    /// A hello of our version: the version-specific protocol follows.
    Serve,
    /// Answer [`Answer::OtherVersion`] and wait for the next message.
    Offer,
    /// Hand over (with the version asked for).
    HandOver,
    Refuse(String),
}

/// The holder's decision on `ask`; `offered` is true once it answered
/// [`Answer::OtherVersion`] on this connection.
pub fn holder_step(own_version: u32, ask: &Ask, offered: bool) -> HolderStep {
    match ask {
        Ask::Hello { version } if *version == own_version => HolderStep::Serve,
        Ask::Hello { .. } if offered => {
            HolderStep::Refuse("a second hello on one connection".into())
        }
        Ask::Hello { .. } => HolderStep::Offer,
        Ask::HandOver { .. } if !offered => {
            HolderStep::Refuse("a hand-over is asked for after a hello of another version".into())
        }
        Ask::HandOver { handover } if *handover == HANDOVER_VERSION => HolderStep::HandOver,
        Ask::HandOver { handover } => HolderStep::Refuse(format!(
            "hand-over version {handover} is not offered (this holder offers {HANDOVER_VERSION})"
        )),
        Ask::Other => HolderStep::Refuse(format!(
            "expected a hello (holder protocol {own_version}) first"
        )),
    }
}

/// What the core does with the holder's first answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoreStep {
    /// The version-specific welcome: read it.
    Attach,
    /// Ask for a hand-over.
    HandOver,
    /// Not usable; the reason, with what to do.
    GiveUp(String),
}

/// The core's decision on the holder's first answer; `handed_over` is true
/// on the connection made after a hand-over (one is enough: a holder still
/// of another version then did not become this build).
pub fn core_step(own_version: u32, answer: &Answer, handed_over: bool) -> CoreStep {
    match answer {
        Answer::Other => CoreStep::Attach,
        Answer::OtherVersion { version, .. } if handed_over => CoreStep::GiveUp(format!(
            "the holder still speaks holder protocol {version} after handing over, not {own_version}; see its holder.log"
        )),
        Answer::OtherVersion { handover, .. } if handover.contains(&HANDOVER_VERSION) => {
            CoreStep::HandOver
        }
        Answer::OtherVersion { version, handover } => CoreStep::GiveUp(format!(
            "the holder speaks holder protocol {version} and offers hand-over {handover:?}, \
             this core needs {own_version} or hand-over {HANDOVER_VERSION}; \
             stop its programs (`nerdr quit` with the old nerdr) to replace it"
        )),
        Answer::ReExecuting { .. } => {
            CoreStep::GiveUp("the holder re-executed without being asked".into())
        }
        Answer::Refused { message } => {
            CoreStep::GiveUp(format!("the holder refused this core: {message}"))
        }
    }
}

/// The holder's whole state as it re-executes: the listening socket, then
/// each program with its terminal. Descriptors are numbers in the
/// re-executing process, inherited across `exec`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub handover: u32,
    /// The holder protocol of the holder that wrote it.
    pub from_version: u32,
    pub listener_fd: i32,
    /// Programs run in transient scopes (`holder --scopes`).
    pub scopes: bool,
    pub programs: Vec<Program>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Program {
    pub tab: String,
    pub pid: u32,
    pub start_time: u64,
    /// Set once the program has ended.
    pub exit_code: Option<i32>,
    pub rows: u16,
    pub cols: u16,
    /// Its transient scope, when it runs in one.
    pub scope: Option<String>,
    /// The core's record of the tab, opaque to holders.
    pub meta: serde_json::Value,
    /// The PTY master; none once nothing holds the terminal any more.
    pub pty_fd: Option<i32>,
}

/// The state file: a 4-byte big-endian length and the [`State`] as JSON,
/// then per program, in order, a 4-byte length and bytes that redraw its
/// screen exactly on a terminal of its size.
pub fn encode_state(state: &State, screens: &[Vec<u8>]) -> Vec<u8> {
    assert_eq!(
        state.programs.len(),
        screens.len(),
        "one screen per program"
    );
    let json = serde_json::to_vec(state).expect("the state always serializes");
    let mut out =
        Vec::with_capacity(4 + json.len() + screens.iter().map(|s| 4 + s.len()).sum::<usize>());
    for part in std::iter::once(&json).chain(screens) {
        out.extend_from_slice(&(part.len() as u32).to_be_bytes());
        out.extend_from_slice(part);
    }
    out
}

pub fn decode_state(mut bytes: &[u8]) -> Result<(State, Vec<Vec<u8>>), String> {
    let mut part = |what: &str| -> Result<Vec<u8>, String> {
        let (len, rest) = bytes
            .split_first_chunk::<4>()
            .ok_or_else(|| format!("the hand-over state ends before the length of {what}"))?;
        let len = u32::from_be_bytes(*len) as usize;
        let body = rest
            .get(..len)
            .ok_or_else(|| format!("the hand-over state ends inside {what}"))?;
        bytes = &rest[len..];
        Ok(body.to_vec())
    };
    let state: State = serde_json::from_slice(&part("its header")?)
        .map_err(|e| format!("the hand-over state's header is malformed: {e}"))?;
    if state.handover != HANDOVER_VERSION {
        return Err(format!(
            "the hand-over state is of version {}, this build reads {HANDOVER_VERSION}",
            state.handover
        ));
    }
    let mut screens = Vec::with_capacity(state.programs.len());
    for p in &state.programs {
        screens.push(part(&format!("the screen of tab {}", p.tab))?);
    }
    Ok((state, screens))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes on the wire are the contract: these must never change.
    #[test]
    fn the_frozen_messages_keep_their_bytes() {
        let rows: Vec<(String, &str)> = vec![
            (
                serde_json::to_string(&Ask::Hello { version: 7 }).unwrap(),
                r#"{"type":"hello","version":7}"#,
            ),
            (
                serde_json::to_string(&Ask::HandOver { handover: 1 }).unwrap(),
                r#"{"type":"hand_over","handover":1}"#,
            ),
            (
                serde_json::to_string(&Answer::OtherVersion {
                    version: 2,
                    handover: vec![1],
                })
                .unwrap(),
                r#"{"type":"other_version","version":2,"handover":[1]}"#,
            ),
            (
                serde_json::to_string(&Answer::ReExecuting { handover: 1 }).unwrap(),
                r#"{"type":"re_executing","handover":1}"#,
            ),
            (
                serde_json::to_string(&Answer::Refused {
                    message: "no".into(),
                })
                .unwrap(),
                r#"{"type":"refused","message":"no"}"#,
            ),
        ];
        for (got, want) in rows {
            assert_eq!(got, want);
        }
        assert_eq!(HANDOVER_VERSION, 1);
        assert_eq!(HANDOVER_FLAG, "--handover-fd");
    }

    #[test]
    fn version_specific_messages_read_as_other() {
        let welcome = r#"{"type":"welcome","version":1,"pid":3,"mode":"x","held":[]}"#;
        assert_eq!(
            serde_json::from_str::<Answer>(welcome).unwrap(),
            Answer::Other
        );
        let spawn = r#"{"type":"spawn","spec":{}}"#;
        assert_eq!(serde_json::from_str::<Ask>(spawn).unwrap(), Ask::Other);
        // The holder's own hello and refusal parse as the frozen ones.
        let hello = serde_json::to_string(&crate::protocol::holder::ToHolder::Hello { version: 4 })
            .unwrap();
        assert_eq!(
            serde_json::from_str::<Ask>(&hello).unwrap(),
            Ask::Hello { version: 4 }
        );
        let refused = serde_json::to_string(&crate::protocol::holder::FromHolder::Refused {
            message: "m".into(),
        })
        .unwrap();
        assert_eq!(
            serde_json::from_str::<Answer>(&refused).unwrap(),
            Answer::Refused {
                message: "m".into()
            }
        );
    }

    #[test]
    fn every_holder_step() {
        use HolderStep::*;
        let rows: Vec<(&str, Ask, bool, Result<HolderStep, &str>)> = vec![
            ("same version", Ask::Hello { version: 1 }, false, Ok(Serve)),
            ("newer core", Ask::Hello { version: 2 }, false, Ok(Offer)),
            ("older core", Ask::Hello { version: 0 }, false, Ok(Offer)),
            (
                "hello twice",
                Ask::Hello { version: 2 },
                true,
                Err("second hello"),
            ),
            (
                "hand-over after the offer",
                Ask::HandOver { handover: 1 },
                true,
                Ok(HandOver),
            ),
            (
                "hand-over unasked",
                Ask::HandOver { handover: 1 },
                false,
                Err("after a hello"),
            ),
            (
                "unknown hand-over",
                Ask::HandOver { handover: 9 },
                true,
                Err("version 9 is not offered"),
            ),
            ("something else", Ask::Other, false, Err("expected a hello")),
            (
                "something else later",
                Ask::Other,
                true,
                Err("expected a hello"),
            ),
        ];
        for (name, ask, offered, want) in rows {
            match (holder_step(1, &ask, offered), want) {
                (Refuse(m), Err(w)) => assert!(m.contains(w), "{name}: {m}"),
                (got, Ok(w)) => assert_eq!(got, w, "{name}"),
                (got, Err(w)) => panic!("{name}: got {got:?}, want a refusal with {w:?}"),
            }
        }
    }

    #[test]
    fn every_core_step() {
        use CoreStep::*;
        let other = |handover: Vec<u32>| Answer::OtherVersion {
            version: 1,
            handover,
        };
        let rows: Vec<(&str, Answer, bool, Result<CoreStep, &str>)> = vec![
            ("a welcome", Answer::Other, false, Ok(Attach)),
            (
                "a welcome after a hand-over",
                Answer::Other,
                true,
                Ok(Attach),
            ),
            (
                "another version offering ours",
                other(vec![1]),
                false,
                Ok(HandOver),
            ),
            (
                "offering ours among others",
                other(vec![3, 1]),
                false,
                Ok(HandOver),
            ),
            (
                "still another version after handing over",
                other(vec![1]),
                true,
                Err("after handing over"),
            ),
            (
                "offering none we speak",
                other(vec![2]),
                false,
                Err("offers hand-over [2]"),
            ),
            (
                "offering none at all",
                other(vec![]),
                false,
                Err("nerdr quit"),
            ),
            (
                "refused",
                Answer::Refused {
                    message: "peer".into(),
                },
                false,
                Err("refused this core: peer"),
            ),
            (
                "re-executing unasked",
                Answer::ReExecuting { handover: 1 },
                false,
                Err("without being asked"),
            ),
        ];
        for (name, answer, handed, want) in rows {
            match (core_step(2, &answer, handed), want) {
                (GiveUp(m), Err(w)) => assert!(m.contains(w), "{name}: {m}"),
                (got, Ok(w)) => assert_eq!(got, w, "{name}"),
                (got, Err(w)) => panic!("{name}: got {got:?}, want giving up with {w:?}"),
            }
        }
    }

    fn sample() -> (State, Vec<Vec<u8>>) {
        let program = |tab: &str, fd| Program {
            tab: tab.into(),
            pid: 42,
            start_time: 99,
            exit_code: None,
            rows: 24,
            cols: 80,
            scope: Some(format!("nerdr-agent-{tab}.scope")),
            meta: serde_json::json!({"agent": "sh"}),
            pty_fd: fd,
        };
        let state = State {
            handover: 1,
            from_version: 1,
            listener_fd: 3,
            scopes: true,
            programs: vec![program("ab", Some(7)), program("cd", None)],
        };
        (state, vec![b"\x1b[31mred".to_vec(), Vec::new()])
    }

    #[test]
    fn the_state_round_trips() {
        let (state, screens) = sample();
        let bytes = encode_state(&state, &screens);
        assert_eq!(decode_state(&bytes).unwrap(), (state, screens));
    }

    #[test]
    fn the_state_file_keeps_its_layout() {
        let state = State {
            handover: 1,
            from_version: 5,
            listener_fd: 3,
            scopes: false,
            programs: vec![Program {
                tab: "t".into(),
                pid: 1,
                start_time: 2,
                exit_code: Some(0),
                rows: 3,
                cols: 4,
                scope: None,
                meta: serde_json::Value::Null,
                pty_fd: Some(5),
            }],
        };
        let json = br#"{"handover":1,"from_version":5,"listener_fd":3,"scopes":false,"programs":[{"tab":"t","pid":1,"start_time":2,"exit_code":0,"rows":3,"cols":4,"scope":null,"meta":null,"pty_fd":5}]}"#;
        let mut want = (json.len() as u32).to_be_bytes().to_vec();
        want.extend_from_slice(json);
        want.extend_from_slice(&[0, 0, 0, 2, b'h', b'i']);
        assert_eq!(encode_state(&state, &[b"hi".to_vec()]), want);
    }

    #[test]
    fn a_bad_state_is_named() {
        let (state, screens) = sample();
        let bytes = encode_state(&state, &screens);
        let cases: Vec<(&str, Vec<u8>, &str)> = vec![
            ("empty", vec![], "before the length of its header"),
            ("cut header", bytes[..10].to_vec(), "inside its header"),
            (
                "cut screen",
                bytes[..bytes.len() - 6].to_vec(),
                "screen of tab ab",
            ),
            ("not json", vec![0, 0, 0, 1, b'{'], "header is malformed"),
        ];
        for (name, b, want) in cases {
            let err = decode_state(&b).unwrap_err();
            assert!(err.contains(want), "{name}: {err}");
        }
        let mut newer = state.clone();
        newer.handover = 2;
        let err = decode_state(&encode_state(&newer, &screens)).unwrap_err();
        assert!(err.contains("version 2"), "{err}");
    }
}
