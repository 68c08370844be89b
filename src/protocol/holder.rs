//! Core ↔ holder, over the holder's abstract socket, in client-socket
//! frames: control messages as JSON, terminal bytes as data frames tagged
//! with their tab. A newer core often meets an older holder (the holder
//! outlives upgrades), so the hello carries [`HOLDER_VERSION`].

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::frame::{Frame, Kind};
use crate::paths::Paths;

/// The holder's socket name for this state dir: one holder per user and
/// state dir, so separate installs (and test roots) never meet.
pub fn socket_name(paths: &Paths) -> String {
    // FNV-1a: stable across versions, unlike std's hasher.
    let mut h: u64 = 0xcbf29ce484222325;
    for b in paths.state_dir.as_os_str().as_encoded_bytes() {
        h = (h ^ *b as u64).wrapping_mul(0x100000001b3);
    }
    format!("nerdr-holder-{}-{h:016x}", nix::unistd::getuid())
}

/// Bump when these messages change incompatibly (2: the holder keeps the
/// core's snapshots instead of a screen of its own; 3: the terminal's
/// answers and awaited typed input are told apart from keys, so a program's
/// input queue can be capped; 4: each program a tab runs has a generation,
/// named in its spawn and marked in the output by [`FromHolder::Program`],
/// so a restarted tab's old output is never counted as the new program's):
/// a core meeting a holder of another version takes it over through the
/// frozen [`handover`](super::handover), or gives up saying how to replace
/// it.
///
/// `NERDR_HOLDER_VERSION_FOR_TESTS`, read at compile time, builds the same
/// source under another number; it exists only so the upgrade test can
/// make a second, real build of another version.
pub const HOLDER_VERSION: u32 = match option_env!("NERDR_HOLDER_VERSION_FOR_TESTS") {
    Some(v) => parse_version(v),
    None => 4,
};

/// A `*_VERSION_FOR_TESTS` number, at compile time.
pub(super) const fn parse_version(v: &str) -> u32 {
    let b = v.as_bytes();
    assert!(!b.is_empty(), "a *_VERSION_FOR_TESTS variable is empty");
    let mut n = 0u32;
    let mut i = 0;
    while i < b.len() {
        assert!(
            b[i].is_ascii_digit(),
            "a *_VERSION_FOR_TESTS variable must be a number"
        );
        n = n * 10 + (b[i] - b'0') as u32;
        i += 1;
    }
    n
}

/// What to start, fully decided by the core.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpawnSpec {
    pub tab: String,
    /// `argv[0]` is the program's path; the rest are its arguments.
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    /// The complete environment; nothing is inherited from the holder.
    pub env: Vec<(String, String)>,
    pub rows: u16,
    pub cols: u16,
    /// The transient scope to run in (`nerdr-agent-<tab>.scope`), when the
    /// holder runs under a service manager.
    pub scope: Option<String>,
    /// The core's record of the tab, kept by the holder and handed back to a
    /// restarted core. Opaque to the holder.
    pub meta: serde_json::Value,
    /// Which of the tab's programs this is, as the core counts them: the
    /// holder marks where its output begins ([`FromHolder::Program`]).
    /// A host in the core's own process has no use for it.
    #[serde(default)]
    pub generation: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToHolder {
    Hello {
        version: u32,
    },
    Spawn {
        spec: SpawnSpec,
    },
    Resize {
        tab: String,
        rows: u16,
        cols: u16,
    },
    /// End the program and everything in its scope or session.
    Stop {
        tab: String,
    },
    /// Forget a program that has exited (the core closed its tab).
    Forget {
        tab: String,
    },
    /// The core's screen of `tab`, `rows`x`cols`, after it processed the
    /// program's output up to `offset` (counted as in [`Held::offset`]).
    /// The bytes that rebuild it come in the data frame right after, as
    /// a welcome's screens do: raw, where JSON would cost a third more and
    /// an encoding pass, and without a frame kind of its own (the framing
    /// is shared with every client and the frozen hand-over).
    Snapshot {
        tab: String,
        offset: u64,
        rows: u16,
        cols: u16,
    },
    /// The terminal's answers to `tab`'s queries, in the data frame right
    /// after (as a snapshot's bytes): queued like keys (plain data frames),
    /// but dropped when the program's input queue is full.
    Answer {
        tab: String,
    },
    /// Typed input whose sender waits to hear it was taken (`nerdr send`),
    /// in the data frame right after; answered with [`FromHolder::Typed`].
    Type {
        tab: String,
        id: u64,
    },
}

/// A program the holder keeps, as a restarted core finds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Held {
    pub tab: String,
    pub pid: u32,
    pub start_time: u64,
    pub exit_code: Option<i32>,
    pub rows: u16,
    pub cols: u16,
    pub meta: serde_json::Value,
    /// Where the redraw that follows the welcome ends in the program's
    /// output: the core counts on from here, and names the count with
    /// each snapshot it sends back.
    #[serde(default)]
    pub offset: u64,
    /// The spawn's [`SpawnSpec::generation`] (0 after a hand-over, which
    /// does not carry it): the output after the welcome is this program's
    /// until a [`FromHolder::Program`] for the tab says otherwise.
    #[serde(default)]
    pub generation: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromHolder {
    /// After the hello: every program held, each followed by a data frame
    /// that redraws its screen.
    Welcome {
        version: u32,
        pid: u32,
        mode: String,
        held: Vec<Held>,
    },
    Refused {
        message: String,
    },
    Spawned {
        tab: String,
        pid: u32,
        start_time: u64,
    },
    SpawnFailed {
        tab: String,
        message: String,
    },
    Exited {
        tab: String,
        code: i32,
        /// The program's pid (a holder from before it was sent sends none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pid: Option<u32>,
    },
    Stopped {
        tab: String,
    },
    /// The output of `tab` that follows is its program of `generation`
    /// (the spawn's): sent where the holder starts keeping a new program's
    /// output, in order with it. What came before is an older program's,
    /// still on its way when the tab started another; the core drops it
    /// ([`stale_output`]), so both sides count the same bytes as the new
    /// program's and the core's snapshots match the holder's offsets.
    Program {
        tab: String,
        generation: u64,
    },
    /// The verdict on a [`ToHolder::Type`]: taken, or why not (`full`: the
    /// program's input queue is full).
    Typed {
        tab: String,
        id: u64,
        error: Option<String>,
        #[serde(default)]
        full: bool,
    },
}

/// A data frame: one byte of tab-id length, the tab id, then the bytes.
pub fn data_frame(tab: &str, bytes: &[u8]) -> Frame {
    let mut body = Vec::with_capacity(1 + tab.len() + bytes.len());
    body.push(tab.len() as u8);
    body.extend_from_slice(tab.as_bytes());
    body.extend_from_slice(bytes);
    Frame {
        kind: Kind::Data,
        body,
    }
}

/// Split a data frame's body into its tab and bytes.
pub fn split_data(body: &[u8]) -> Option<(&str, &[u8])> {
    let n = *body.first()? as usize;
    let tab = std::str::from_utf8(body.get(1..1 + n)?).ok()?;
    Some((tab, &body[1 + n..]))
}

/// Whether output of the program of generation `output` (`None`: the host
/// does not say, as the core's own PTYs do not) belongs to another program
/// than the one tab runs now (`current`; `None`: the core knows of none to
/// compare with, and takes it as before generations). Only an older
/// program's output is ever on its way: a newer one's follows its marker.
pub fn stale_output(output: Option<u64>, current: Option<u64>) -> bool {
    match (output, current) {
        (Some(o), Some(c)) => o != c,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_current_programs_output_counts() {
        /// (what, the output's generation, the tab's, stale)
        type Row = (&'static str, Option<u64>, Option<u64>, bool);
        #[rustfmt::skip]
        let rows: &[Row] = &[
            ("the running program's", Some(3), Some(3), false),
            ("the first program's, before any restart", Some(0), Some(0), false),
            ("the replaced program's last output, after a restart", Some(2), Some(3), true),
            ("a program's from before a hand-over, after a restart", Some(0), Some(1), true),
            ("a host that does not say (the core's own PTYs)", None, Some(3), false),
            ("a host that does not say, for a tab of no known program", None, None, false),
            ("a tab of no known program", Some(3), None, false),
        ];
        for (what, output, current, stale) in rows {
            assert_eq!(stale_output(*output, *current), *stale, "{what}");
        }
    }

    #[test]
    fn data_frames_carry_their_tab() {
        let f = data_frame("ab12cd34", b"\x1b[Hhi");
        assert_eq!(split_data(&f.body), Some(("ab12cd34", &b"\x1b[Hhi"[..])));
        assert_eq!(split_data(&[]), None);
        assert_eq!(split_data(&[9, b'a']), None);
        assert_eq!(split_data(&[0]), Some(("", &b""[..])));
    }
}
