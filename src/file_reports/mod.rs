//! Reports through files, for an agent whose sandbox reaches nothing of
//! nerdr's but its own worktree (`install = "worktree"`, `nerdr sandbox
//! --worktree-only`): it appends JSON lines to [`FILE`] in its data folder
//! (`<worktree>/.nerdr` by default), and the core reads them as reports from
//! the tab whose worktree it is (`core::file_reports`).
//!
//! This module owns the line format and its rules: [`check`] (pure, every
//! line is untrusted input), [`Splitter`] (pure: bytes appended to the
//! file, cut into numbered lines with the oversized ones refused), and
//! [`append`], how `nerdr hook` and `nerdr why add` write a line when the
//! socket cannot be reached. Not what the core does with an accepted
//! report (the same as with the same request over the socket).
//!
//! One line, one report, one of:
//! ```text
//! {"kind":"state","event":"Stop"}                  a hook event (optional "session_id")
//! {"kind":"review","text":"..."}                   `nerdr post-review`'s text
//! {"kind":"why","text":"...","file":"F","lines":[A,B]}  `nerdr why add` (file, lines optional)
//! ```
//! An optional `"tab"` must name the tab itself (its id or name); a line
//! naming any other is refused, as is any field not listed here.

pub mod check;

use std::io::Write;
use std::path::Path;

pub use check::{check, Refusal, Report, TabNames};

/// The reports file, in the data folder.
pub const FILE: &str = "reports.jsonl";
/// The longest line taken: a review's text at its limit
/// (`review::format::MAX_BYTES`) with room for JSON's escapes.
pub const MAX_LINE: usize = 640 << 10;
/// Past this many bytes the file is read no further: a tab cannot make the
/// core read without end. Restarting the tab starts a new file.
pub const MAX_FILE: u64 = 16 << 20;

/// One piece of what was appended: a whole line with its number (1-based),
/// or the number of a line longer than [`MAX_LINE`], refused unread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Line(u64, Vec<u8>),
    TooLong(u64),
}

/// Cuts appended bytes into lines, keeping an unfinished last line until
/// its newline comes. Pure: bytes in, pieces out.
#[derive(Debug, Default)]
pub struct Splitter {
    partial: Vec<u8>,
    /// The current line passed [`MAX_LINE`]: its bytes are dropped until
    /// its newline.
    skipping: bool,
    /// Lines finished so far.
    lines: u64,
}

impl Splitter {
    /// Lines finished so far.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Piece> {
        let mut out = Vec::new();
        let mut rest = bytes;
        loop {
            let (chunk, done) = match rest.iter().position(|b| *b == b'\n') {
                Some(i) => (&rest[..i], Some(i + 1)),
                None => (rest, None),
            };
            if !self.skipping {
                if self.partial.len() + chunk.len() > MAX_LINE {
                    self.skipping = true;
                    self.partial.clear();
                    out.push(Piece::TooLong(self.lines + 1));
                } else {
                    self.partial.extend_from_slice(chunk);
                }
            }
            let Some(used) = done else {
                return out;
            };
            self.lines += 1;
            if !std::mem::take(&mut self.skipping) {
                out.push(Piece::Line(self.lines, std::mem::take(&mut self.partial)));
            }
            rest = &rest[used..];
        }
    }
}

/// Append `line` (one JSON object, no newline) and a newline to `dir`'s
/// reports file with one write, so lines of concurrent writers never
/// interleave. Only into a file that exists: nerdr makes it when it
/// installs into the worktree, so a folder that merely looks like one is
/// not written to.
pub fn append(dir: &Path, line: &serde_json::Value) -> std::io::Result<std::path::PathBuf> {
    let path = dir.join(FILE);
    let mut text = serde_json::to_string(line).map_err(std::io::Error::other)?;
    text.push('\n');
    let mut f = std::fs::OpenOptions::new().append(true).open(&path)?;
    f.write_all(text.as_bytes())?;
    Ok(path)
}

/// `$NERDR_DATA_DIR` when it holds a reports file (a worktree install
/// made it: this program reaches nerdr through it), else `None`.
pub fn reports_dir() -> Option<std::path::PathBuf> {
    let dir =
        std::path::PathBuf::from(std::env::var_os("NERDR_DATA_DIR").filter(|v| !v.is_empty())?);
    dir.join(FILE).is_file().then_some(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(n: u64, s: &str) -> Piece {
        Piece::Line(n, s.as_bytes().to_vec())
    }

    #[test]
    fn lines_are_cut_at_newlines_and_an_unfinished_one_waits() {
        let mut s = Splitter::default();
        assert_eq!(s.feed(b"a\nb"), vec![line(1, "a")]);
        assert_eq!(
            s.feed(b"c\n\nd\n"),
            vec![line(2, "bc"), line(3, ""), line(4, "d")]
        );
        assert_eq!(s.feed(b""), vec![]);
    }

    #[test]
    fn an_oversized_line_is_refused_once_and_the_next_one_read() {
        let mut s = Splitter::default();
        let big = vec![b'x'; MAX_LINE];
        assert_eq!(s.feed(&big), vec![]);
        assert_eq!(s.feed(b"xx"), vec![Piece::TooLong(1)]);
        assert_eq!(s.feed(&big), vec![]);
        assert_eq!(s.feed(b"\nok\n"), vec![line(2, "ok")]);
        // A line of exactly the limit is taken.
        let mut s = Splitter::default();
        let mut exact = big.clone();
        exact.push(b'\n');
        assert_eq!(s.feed(&exact), vec![Piece::Line(1, big)]);
    }

    #[test]
    fn append_writes_a_line_only_into_a_file_nerdr_made() {
        let dir = tempfile::tempdir().unwrap();
        let v = serde_json::json!({"kind": "state", "event": "Stop"});
        assert!(append(dir.path(), &v).is_err());
        std::fs::write(dir.path().join(FILE), "").unwrap();
        append(dir.path(), &v).unwrap();
        append(dir.path(), &v).unwrap();
        let text = std::fs::read_to_string(dir.path().join(FILE)).unwrap();
        assert_eq!(
            text,
            "{\"event\":\"Stop\",\"kind\":\"state\"}\n{\"event\":\"Stop\",\"kind\":\"state\"}\n"
        );
    }
}
