//! A patch as `git diff` prints it, read into files, hunks and lines with
//! their line numbers in the old and the new file. Pure: text in, a
//! [`Patch`] or an error naming the patch's line out. The window's diff
//! view (`attach::diff_view`) draws it and anchors comments on its lines.
//!
//! Written by hand, not with a crate: the crates on crates.io that read
//! unified diffs (`patch`, its fork `gitpatch`, `unidiff`) read only the
//! `---`/`+++` pair and find where a hunk ends by guessing from each line's
//! first characters, so a removed line starting with `-- ` (an SQL or Lua
//! comment) ends the hunk early or fails the whole patch, and git's own
//! headers are dropped: a pure rename, a mode change or a binary file has
//! no `---` line and is skipped or mistaken for the next file. Here a hunk
//! is read by the counts in its `@@` header, as `git apply` reads it, and
//! every `diff --git` header starts a file, with or without hunks.
//!
//! Git's headers read: `new file mode`, `deleted file mode`, `old mode` /
//! `new mode`, `rename from`/`to`, `copy from`/`to`, `similarity index`,
//! `Binary files A and B differ` and `GIT binary patch` (whose data is
//! skipped). Paths git quotes (`"a/t\303\251st"`) are unquoted. Text
//! before the first file (a commit message) is skipped, as `git apply`
//! skips it.

use std::fmt;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Patch {
    pub files: Vec<FileDiff>,
}

/// What happened to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Added,
    Deleted,
    Modified,
    Renamed,
    Copied,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// The path before (None for an added file).
    pub old_path: Option<String>,
    /// The path after (None for a deleted file).
    pub new_path: Option<String>,
    pub status: Status,
    /// `similarity index` of a rename or copy, in percent.
    pub similarity: Option<u8>,
    pub old_mode: Option<String>,
    pub new_mode: Option<String>,
    pub binary: bool,
    pub hunks: Vec<Hunk>,
    /// Its change (or part of it) is in no commit yet: `nerdr merge`
    /// leaves it out. Not in the patch's text: the core says it
    /// (`TabDiff::uncommitted`, see [`Patch::mark_uncommitted`]).
    pub uncommitted: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub old_start: u32,
    pub old_count: u32,
    pub new_start: u32,
    pub new_count: u32,
    /// What follows the second `@@` (git's function context), trimmed.
    pub section: String,
    pub lines: Vec<Line>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Context,
    Added,
    Removed,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub kind: Kind,
    /// The line without its leading `+`, `-` or space.
    pub text: String,
    /// Its number in the old file (context and removed lines).
    pub old: Option<u32>,
    /// Its number in the new file (context and added lines).
    pub new: Option<u32>,
    /// Followed by `\ No newline at end of file`.
    pub no_newline: bool,
}

/// A patch that does not read: the line (from 1) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "patch line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

impl Patch {
    /// Mark the files named in `paths` (by either name of a rename) as
    /// holding work no commit has: what `nerdr diff` names as
    /// `(uncommitted: ...)`.
    pub fn mark_uncommitted(&mut self, paths: &[String]) {
        for f in &mut self.files {
            f.uncommitted = [&f.old_path, &f.new_path]
                .into_iter()
                .flatten()
                .any(|p| paths.contains(p));
        }
    }
}

impl FileDiff {
    fn new() -> Self {
        FileDiff {
            old_path: None,
            new_path: None,
            status: Status::Modified,
            similarity: None,
            old_mode: None,
            new_mode: None,
            binary: false,
            hunks: Vec::new(),
            uncommitted: false,
        }
    }

    /// The path the file has now (its old one when deleted).
    pub fn path(&self) -> &str {
        self.new_path
            .as_deref()
            .or(self.old_path.as_deref())
            .unwrap_or("")
    }

    pub fn added(&self) -> usize {
        self.count(Kind::Added)
    }

    pub fn removed(&self) -> usize {
        self.count(Kind::Removed)
    }

    fn count(&self, kind: Kind) -> usize {
        self.hunks
            .iter()
            .flat_map(|h| &h.lines)
            .filter(|l| l.kind == kind)
            .count()
    }
}

impl Patch {
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

/// Read `text`, a patch as `git diff` (or `diff -u`) prints it.
pub fn parse(text: &str) -> Result<Patch, ParseError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut files = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if let Some(rest) = l.strip_prefix("diff --git ") {
            let (file, next) = git_file(&lines, i, rest)?;
            files.push(file);
            i = next;
        } else if l.starts_with("--- ") && lines.get(i + 1).is_some_and(|n| n.starts_with("+++ ")) {
            let mut file = FileDiff::new();
            let next = names_and_hunks(&lines, i, &mut file)?;
            settle(&mut file);
            files.push(file);
            i = next;
        } else if l.starts_with("@@ ") {
            return Err(err(i, "a hunk (`@@`) before any file header"));
        } else {
            // A commit message, a `git format-patch` mail header: not ours.
            i += 1;
        }
    }
    Ok(Patch { files })
}

fn err(i: usize, message: impl Into<String>) -> ParseError {
    ParseError {
        line: i + 1,
        message: message.into(),
    }
}

/// One `diff --git` file from line `at`: the file and the line after it.
fn git_file(lines: &[&str], at: usize, names: &str) -> Result<(FileDiff, usize), ParseError> {
    let mut file = FileDiff::new();
    if let Some((a, b)) = git_names(names) {
        file.old_path = Some(a);
        file.new_path = Some(b);
    }
    let mut i = at + 1;
    while i < lines.len() {
        let l = lines[i];
        if l.starts_with("diff --git ") {
            break;
        }
        if l.starts_with("--- ") {
            i = names_and_hunks(lines, i, &mut file)?;
            break;
        }
        if l.starts_with("@@ ") {
            return Err(err(
                i,
                "a hunk (`@@`) before the file's `---` and `+++` lines",
            ));
        }
        header_line(l, &mut file);
        i += 1;
        if l == "GIT binary patch" {
            // Base85 data, then a blank line, twice (forward, reverse).
            while i < lines.len() && !lines[i].starts_with("diff --git ") {
                i += 1;
            }
            break;
        }
    }
    settle(&mut file);
    Ok((file, i))
}

/// One line of git's extended header.
fn header_line(l: &str, file: &mut FileDiff) {
    if let Some(m) = l.strip_prefix("new file mode ") {
        file.status = Status::Added;
        file.new_mode = Some(m.to_string());
        file.old_path = None;
    } else if let Some(m) = l.strip_prefix("deleted file mode ") {
        file.status = Status::Deleted;
        file.old_mode = Some(m.to_string());
        file.new_path = None;
    } else if let Some(m) = l.strip_prefix("old mode ") {
        file.old_mode = Some(m.to_string());
    } else if let Some(m) = l.strip_prefix("new mode ") {
        file.new_mode = Some(m.to_string());
    } else if let Some(p) = l.strip_prefix("rename from ") {
        file.status = Status::Renamed;
        file.old_path = Some(unquote(p));
    } else if let Some(p) = l.strip_prefix("rename to ") {
        file.status = Status::Renamed;
        file.new_path = Some(unquote(p));
    } else if let Some(p) = l.strip_prefix("copy from ") {
        file.status = Status::Copied;
        file.old_path = Some(unquote(p));
    } else if let Some(p) = l.strip_prefix("copy to ") {
        file.status = Status::Copied;
        file.new_path = Some(unquote(p));
    } else if let Some(s) = l.strip_prefix("similarity index ") {
        file.similarity = s.trim_end_matches('%').parse().ok();
    } else if l == "GIT binary patch" {
        file.binary = true;
    } else if let Some(names) = l
        .strip_prefix("Binary files ")
        .and_then(|s| s.strip_suffix(" differ"))
    {
        file.binary = true;
        if let Some((a, b)) = names.split_once(" and ") {
            binary_name(a, &mut file.old_path, 'a');
            binary_name(b, &mut file.new_path, 'b');
        }
    }
    // `index`, `dissimilarity index` and anything newer: nothing to show.
}

fn binary_name(name: &str, slot: &mut Option<String>, side: char) {
    if name == "/dev/null" {
        *slot = None;
    } else if slot.is_none() {
        *slot = Some(strip_side(&unquote(name), side));
    }
}

/// The `---`/`+++` pair at line `at` and the hunks after it, into `file`:
/// the line after the last hunk.
fn names_and_hunks(lines: &[&str], at: usize, file: &mut FileDiff) -> Result<usize, ParseError> {
    let old = header_path(lines[at].strip_prefix("--- ").unwrap_or(""), 'a');
    let Some(new_line) = lines.get(at + 1).and_then(|l| l.strip_prefix("+++ ")) else {
        return Err(err(at + 1, "a `---` line without the `+++` line after it"));
    };
    let new = header_path(new_line, 'b');
    match old {
        None => file.status = Status::Added,
        Some(p) => file.old_path = Some(p),
    }
    match new {
        None => file.status = Status::Deleted,
        Some(p) => file.new_path = Some(p),
    }
    let mut i = at + 2;
    while i < lines.len() && lines[i].starts_with("@@ ") {
        let (hunk, next) = hunk(lines, i)?;
        file.hunks.push(hunk);
        i = next;
    }
    Ok(i)
}

/// A `---`/`+++` path: None for /dev/null; git's `a/`/`b/` taken off,
/// and a tab-separated timestamp (`diff -u`) too.
fn header_path(raw: &str, side: char) -> Option<String> {
    let name = if raw.starts_with('"') {
        raw
    } else {
        raw.split('\t').next().unwrap_or(raw)
    };
    let name = unquote(name.trim_end());
    (name != "/dev/null").then(|| strip_side(&name, side))
}

fn strip_side(name: &str, side: char) -> String {
    let prefix = format!("{side}/");
    name.strip_prefix(&prefix).unwrap_or(name).to_string()
}

/// The hunk whose `@@` header is line `at`, and the line after it. Its
/// lines are counted by the header, so no line's text can end it early.
fn hunk(lines: &[&str], at: usize) -> Result<(Hunk, usize), ParseError> {
    let (old_start, old_count, new_start, new_count, section) =
        hunk_header(lines[at]).ok_or_else(|| {
            err(
                at,
                format!(
                    "not a hunk header (`@@ -A,B +C,D @@`): {}",
                    crate::protocol::printable(lines[at])
                ),
            )
        })?;
    let mut h = Hunk {
        old_start,
        old_count,
        new_start,
        new_count,
        section,
        lines: Vec::new(),
    };
    let (mut old_left, mut new_left) = (old_count, new_count);
    // A count of 0 names the line before: the first line is the next one.
    let (mut old_no, mut new_no) = (old_start.max(1), new_start.max(1));
    let mut i = at + 1;
    while old_left > 0 || new_left > 0 {
        let Some(&l) = lines.get(i) else {
            return Err(err(
                lines.len().saturating_sub(1),
                format!(
                    "the hunk at line {} ends early: {old_left} old and {new_left} new \
                     lines missing",
                    at + 1
                ),
            ));
        };
        let (kind, text) = match l.as_bytes().first() {
            Some(b' ') => (Kind::Context, &l[1..]),
            // An empty context line whose space an editor or mailer took.
            None => (Kind::Context, ""),
            Some(b'-') => (Kind::Removed, &l[1..]),
            Some(b'+') => (Kind::Added, &l[1..]),
            Some(b'\\') => {
                mark_no_newline(&mut h);
                i += 1;
                continue;
            }
            _ => {
                return Err(err(
                    i,
                    format!(
                        "the hunk at line {} ends early ({old_left} old and {new_left} new \
                         lines missing) at a line that is not `+`, `-` or context",
                        at + 1
                    ),
                ))
            }
        };
        let (old, new) = match kind {
            Kind::Context => (Some(old_no), Some(new_no)),
            Kind::Removed => (Some(old_no), None),
            Kind::Added => (None, Some(new_no)),
        };
        let short = match kind {
            Kind::Context => old_left == 0 || new_left == 0,
            Kind::Removed => old_left == 0,
            Kind::Added => new_left == 0,
        };
        if short {
            return Err(err(
                i,
                format!("more lines than the hunk at line {} counts", at + 1),
            ));
        }
        if old.is_some() {
            old_no += 1;
            old_left -= 1;
        }
        if new.is_some() {
            new_no += 1;
            new_left -= 1;
        }
        h.lines.push(Line {
            kind,
            text: text.to_string(),
            old,
            new,
            no_newline: false,
        });
        i += 1;
    }
    // The last line's `\ No newline at end of file` comes after the count.
    if lines.get(i).is_some_and(|l| l.starts_with('\\')) {
        mark_no_newline(&mut h);
        i += 1;
    }
    Ok((h, i))
}

fn mark_no_newline(h: &mut Hunk) {
    if let Some(last) = h.lines.last_mut() {
        last.no_newline = true;
    }
}

/// `@@ -A[,B] +C[,D] @@ section`.
fn hunk_header(l: &str) -> Option<(u32, u32, u32, u32, String)> {
    let rest = l.strip_prefix("@@ -")?;
    let (ranges, section) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let range = |r: &str| -> Option<(u32, u32)> {
        match r.split_once(',') {
            Some((s, c)) => Some((s.parse().ok()?, c.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    let (os, oc) = range(old)?;
    let (ns, nc) = range(new)?;
    Some((os, oc, ns, nc, section.trim().to_string()))
}

/// The two paths of `diff --git a/X b/Y`, when they can be told apart:
/// quoted, or the same name twice (spaces in it or not). A rename's are
/// read from its `rename from`/`to` lines instead.
fn git_names(names: &str) -> Option<(String, String)> {
    if names.starts_with('"') {
        let (a, rest) = quoted_prefix(names)?;
        let b = unquote(rest.trim_start());
        return Some((strip_side(&a, 'a'), strip_side(&b, 'b')));
    }
    if let Some(pos) = names.find(" \"") {
        let b = unquote(&names[pos + 1..]);
        return Some((strip_side(&names[..pos], 'a'), strip_side(&b, 'b')));
    }
    // `a/NAME b/NAME`: the middle space splits two equal halves.
    let n = names.len();
    if n % 2 == 1 {
        let (a, b) = (&names[..n / 2], &names[n / 2 + 1..]);
        if names.as_bytes()[n / 2] == b' '
            && a.strip_prefix("a/")
                .is_some_and(|x| Some(x) == b.strip_prefix("b/"))
        {
            return Some((a[2..].to_string(), b[2..].to_string()));
        }
    }
    // Different names without quotes: split at the last ` b/`.
    let pos = names.rfind(" b/")?;
    Some((
        strip_side(&names[..pos], 'a'),
        strip_side(&names[pos + 1..], 'b'),
    ))
}

/// A leading quoted string of `s`, unquoted, and what follows it.
fn quoted_prefix(s: &str) -> Option<(String, &str)> {
    let bytes = s.as_bytes();
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some((unquote(&s[..=i]), &s[i + 1..])),
            _ => i += 1,
        }
    }
    None
}

/// A path as git quotes it (`"a/t\303\251st\tx"`: C escapes and octal
/// bytes), or as it is when not quoted.
pub fn unquote(s: &str) -> String {
    let Some(inner) = s.strip_prefix('"').and_then(|s| s.strip_suffix('"')) else {
        return s.to_string();
    };
    let mut out = Vec::with_capacity(inner.len());
    let b = inner.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' || i + 1 == b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let c = b[i + 1];
        i += 2;
        match c {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'v' => out.push(11),
            b'0'..=b'7' => {
                let mut v = u32::from(c - b'0');
                let mut k = 0;
                while k < 2 && i < b.len() && (b'0'..=b'7').contains(&b[i]) {
                    v = v * 8 + u32::from(b[i] - b'0');
                    i += 1;
                    k += 1;
                }
                out.push(v as u8);
            }
            other => out.push(other),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Fill what the headers left open: a modification's missing path is the
/// other one.
fn settle(file: &mut FileDiff) {
    match file.status {
        Status::Modified => {
            if file.old_path.is_none() {
                file.old_path = file.new_path.clone();
            }
            if file.new_path.is_none() {
                file.new_path = file.old_path.clone();
            }
        }
        Status::Added => file.old_path = None,
        Status::Deleted => file.new_path = None,
        Status::Renamed | Status::Copied => {}
    }
}

#[cfg(test)]
#[path = "patch_tests.rs"]
mod tests;
