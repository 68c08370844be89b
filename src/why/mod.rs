//! `nerdr why add` and `nerdr why`: the reasons agents (and people) give
//! for their changes, kept with the commits they explain (README.md, "Why
//! a change was made"). Pure: which commit a reason explains ([`bind`]),
//! which reasons explain which lines of a file ([`explain`]), and reading
//! what a person types (`FILE:LINE`, `A-B`). The core gathers the facts
//! (HEAD, whether the file had uncommitted changes, `git blame`) off the
//! async workers and keeps the records (`store`).
//!
//! A reason is usually given before its change is committed: it names the
//! HEAD of that moment and that the file was dirty, and it explains the
//! first commit after that HEAD which touches the file: "HEAD at the time,
//! updated at the next commit of those lines". It is bound when it is
//! read, not rewritten in the store, so a record never changes once kept.

pub mod blame;
pub mod store;

use serde::{Deserialize, Serialize};

/// The most text a reason keeps: a paragraph or a few, not a document.
pub const MAX_TEXT: usize = 16 * 1024;

/// One reason, as kept (a JSON line of the store).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reason {
    /// The repository's common git dir: worktrees of one repository share
    /// their commits, so their reasons too.
    pub repo: String,
    /// The file, relative to the top of the repository; `None`: the whole
    /// change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The lines of the file (from 1, both ends in), as the file read when
    /// the reason was given; `None`: every line the change touched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<(u32, u32)>,
    pub text: String,
    /// HEAD of the worktree when the reason was given; for a reason about
    /// committed lines (not `dirty`), the commit that last changed them
    /// ([`aim`]), which it explains.
    pub head: String,
    /// That worktree (its top folder), and the branch it was on (`None`:
    /// a detached HEAD): an uncommitted change's reason explains the next
    /// commit of that branch, never another worktree's.
    #[serde(default)]
    pub worktree: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// When it was given, in Unix seconds: a commit made before it is no
    /// "next commit" of it.
    #[serde(default)]
    pub secs: u64,
    /// Whether the file (without `file`: the worktree) had uncommitted
    /// changes then: the reason explains the next commit, not `head`.
    pub dirty: bool,
    /// For an uncommitted change to a file, the lines it adds, as
    /// [`fingerprint`]s: the reason explains the first later commit that
    /// carries one of them, so a change thrown away is not taken for the
    /// next unrelated commit of the file. Empty: the next commit (reasons
    /// kept before this was recorded, and changes that only delete).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub change: Vec<String>,
    /// The tab it came from (`None`: the person, from a terminal), its
    /// name and agent then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Written by a sandboxed agent: whoever reads it is told.
    #[serde(default)]
    pub sandboxed: bool,
    /// RFC 3339.
    pub at: String,
}

/// Which commit a reason explains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Binding {
    /// This commit.
    Commit(String),
    /// The change is not committed yet: it explains the uncommitted lines
    /// of the file (the HEAD asked at is still the reason's `head`).
    Uncommitted,
    /// Not committed on the way to the HEAD asked at (another branch, or a
    /// worktree that moved on without it): it explains nothing here.
    Elsewhere,
}

/// Where a question about reasons is asked: the HEAD and the worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Here {
    pub head: String,
    pub worktree: String,
}

/// A commit after a reason's HEAD that touches its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Later {
    pub commit: String,
    /// Its commit time, in Unix seconds.
    pub secs: u64,
    /// The [`fingerprint`]s of the lines it adds to the file (gathered
    /// only for a reason with a `change`).
    pub adds: Vec<String>,
}

/// Which commit `reason` explains, asked `here`. `commits_after`: the
/// commits after the reason's `head` that touch its file on the branch it
/// was given on (`git rev-list --reverse --ancestry-path --timestamp
/// head..branch`), oldest first. A reason given on a clean file explains
/// its `head`; one given on uncommitted changes, the first of those
/// commits made once it was given that carries a line of its `change`
/// (any, when it recorded none); until there is one, the uncommitted lines
/// of its own worktree while that still stands on its `head`. Any other
/// worktree's commits and changes are not its.
pub fn bind(reason: &Reason, here: &Here, commits_after: &[Later]) -> Binding {
    if !reason.dirty {
        return Binding::Commit(reason.head.clone());
    }
    let carries =
        |l: &Later| reason.change.is_empty() || l.adds.iter().any(|a| reason.change.contains(a));
    match commits_after
        .iter()
        .find(|l| l.secs >= reason.secs && carries(l))
    {
        Some(next) => Binding::Commit(next.commit.clone()),
        None if reason.head == here.head && reason.worktree == here.worktree => {
            Binding::Uncommitted
        }
        None => Binding::Elsewhere,
    }
}

/// A line of the file asked about, as `git blame` tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blamed {
    /// Its number in the file as it is now.
    pub line: u32,
    /// The commit that last touched it; `None`: not committed yet.
    pub commit: Option<String>,
    /// The file's path in that commit (a rename keeps its reasons).
    pub path: String,
    /// Its number in the file as that commit left it.
    pub orig_line: u32,
    /// The commit's subject line.
    pub summary: String,
}

/// The most lines a reason's `change` keeps: enough to recognise its
/// commit, bounded so a generated file does not swell the store.
pub const MAX_CHANGE: usize = 256;

/// Fingerprints of `lines` (a change's added lines): each line with its
/// surrounding white space trimmed (re-indenting before the commit keeps
/// the match), blank and one-character lines left out (a `}` is in every
/// change), hashed short; each once, at most [`MAX_CHANGE`].
pub fn fingerprint<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    use sha2::{Digest, Sha256};
    let mut out: Vec<String> = Vec::new();
    for line in lines {
        let t = line.trim();
        if t.chars().count() < 2 {
            continue;
        }
        let d = Sha256::digest(t.as_bytes());
        let f: String = d[..8].iter().map(|b| format!("{b:02x}")).collect();
        if !out.contains(&f) {
            out.push(f);
            if out.len() == MAX_CHANGE {
                break;
            }
        }
    }
    out
}

/// The lines a unified diff (`-U0`) adds, without their `+`.
pub fn added_lines(diff: &str) -> impl Iterator<Item = &str> {
    diff.lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .map(|l| &l[1..])
}

/// Lines that share a commit and the same reasons: one entry of the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explained {
    /// First and last line, as the file is now.
    pub lines: (u32, u32),
    pub commit: Option<String>,
    pub summary: String,
    /// Indexes into the reasons given to [`explain`], oldest first.
    pub reasons: Vec<usize>,
}

/// Which of `reasons` (each with its [`Binding`]) explain each of `lines`:
/// a reason bound to the line's commit, about the line's file at that
/// commit (or about no file), whose lines (if any) hold the line's number
/// in that commit. An uncommitted line is explained by uncommitted reasons
/// about its file, by its number now. Consecutive lines of one commit with
/// the same reasons are one entry.
pub fn explain(lines: &[Blamed], reasons: &[(Reason, Binding)]) -> Vec<Explained> {
    let mut out: Vec<Explained> = Vec::new();
    for l in lines {
        let (number, want) = match &l.commit {
            Some(c) => (l.orig_line, Binding::Commit(c.clone())),
            None => (l.line, Binding::Uncommitted),
        };
        let found: Vec<usize> = reasons
            .iter()
            .enumerate()
            .filter(|(_, (r, b))| {
                *b == want
                    && r.file.as_deref().is_none_or(|f| f == l.path)
                    && r.lines.is_none_or(|(a, z)| (a..=z).contains(&number))
            })
            .map(|(i, _)| i)
            .collect();
        match out.last_mut() {
            Some(e) if e.commit == l.commit && e.reasons == found && e.lines.1 + 1 == l.line => {
                e.lines.1 = l.line
            }
            _ => out.push(Explained {
                lines: (l.line, l.line),
                commit: l.commit.clone(),
                summary: l.summary.clone(),
                reasons: found,
            }),
        }
    }
    out
}

/// What a reason given for a file explains, decided from the file's lines
/// as `git blame` tells them now (only the named lines with `--lines`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Aim {
    /// Its uncommitted change: the next commit of the file.
    NextCommit,
    /// Committed lines: the commit that last changed them, and the lines
    /// as that commit numbers them (`None`: every line it touched).
    Commit {
        commit: String,
        lines: Option<(u32, u32)>,
        summary: String,
    },
}

/// Which change a reason for `file` explains. `blamed`: its lines (the
/// named ones, else all); `dirty`: it has uncommitted changes; `last`: the
/// commit that last touched the file, with its subject. A named line not
/// committed yet makes it the coming commit's; named lines all committed
/// make it the one commit that last changed them (a reason is about a
/// change those lines show, never a commit that did not touch them), and
/// lines of several commits are refused, naming them. A whole file with
/// uncommitted changes is the coming commit's; a clean one, its last
/// commit's.
pub fn aim(
    file: &str,
    lines: Option<(u32, u32)>,
    blamed: &[Blamed],
    dirty: bool,
    last: Option<(&str, &str)>,
) -> Result<Aim, String> {
    let Some((a, z)) = lines else {
        return match (dirty, last) {
            (true, _) => Ok(Aim::NextCommit),
            (false, Some((c, summary))) => Ok(Aim::Commit {
                commit: c.to_string(),
                lines: None,
                summary: summary.to_string(),
            }),
            (false, None) => Err(format!("{file} has no commit yet: commit it, then say why")),
        };
    };
    if blamed.is_empty() || blamed.iter().any(|b| b.commit.is_none()) {
        return Ok(Aim::NextCommit);
    }
    let mut commits: Vec<(&str, &str)> = Vec::new();
    for b in blamed {
        let c = (b.commit.as_deref().unwrap_or_default(), b.summary.as_str());
        if !commits.iter().any(|(seen, _)| *seen == c.0) {
            commits.push(c);
        }
    }
    if let [(commit, summary)] = commits[..] {
        let orig = blamed.iter().map(|b| b.orig_line);
        let (lo, hi) = (orig.clone().min().unwrap_or(a), orig.max().unwrap_or(z));
        return Ok(Aim::Commit {
            commit: commit.to_string(),
            lines: Some((lo, hi)),
            summary: summary.to_string(),
        });
    }
    let named: Vec<String> = commits
        .iter()
        .take(3)
        .map(|(c, s)| format!("{} \"{s}\"", &c[..c.len().min(8)]))
        .collect();
    let more = commits.len().saturating_sub(3);
    Err(format!(
        "{file}:{a}-{z} were last changed by {} commits ({}{}): a reason explains one change; \
         give the lines of one of them (`nerdr why {file}:{a}-{z}` shows which are whose)",
        commits.len(),
        named.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    ))
}

/// `A-B` or `A` (lines from 1), as `--lines` and `FILE:LINE` take them.
pub fn parse_lines(s: &str) -> Result<(u32, u32), String> {
    let number = |w: &str| -> Result<u32, String> {
        match w.trim().parse::<u32>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(format!(
                "`{s}` is not a line or a range of lines: write A or A-B, from line 1 (e.g. 10-14)"
            )),
        }
    };
    let (a, z) = match s.split_once('-') {
        Some((a, z)) => (number(a)?, number(z)?),
        None => {
            let a = number(s)?;
            (a, a)
        }
    };
    if z < a {
        return Err(format!(
            "`{s}` ends before it starts: write the first line first ({z}-{a})"
        ));
    }
    Ok((a, z))
}

/// `FILE`, `FILE:LINE` or `FILE:A-B`: the file and its lines. A name with
/// a colon of its own is taken whole when what follows the last colon is
/// no line (`a:b.txt`).
pub fn parse_target(s: &str) -> Result<(String, Option<(u32, u32)>), String> {
    match s.rsplit_once(':') {
        Some((file, lines))
            if !file.is_empty() && lines.chars().all(|c| c.is_ascii_digit() || c == '-') =>
        {
            Ok((file.to_string(), Some(parse_lines(lines)?)))
        }
        _ if s.is_empty() => Err("name a file: nerdr why FILE[:LINE]".into()),
        _ => Ok((s.to_string(), None)),
    }
}

/// Lines `lines` of a file of `count` lines: within it.
pub fn check_lines(file: &str, lines: (u32, u32), count: usize) -> Result<(), String> {
    if lines.1 as usize > count {
        let noun = if count == 1 { "line" } else { "lines" };
        return Err(format!(
            "{file} has {count} {noun}, so it has no lines {}-{}: give lines as the file reads now",
            lines.0, lines.1
        ));
    }
    Ok(())
}

/// The reason's text as it may be kept: not empty, at most [`MAX_TEXT`].
pub fn check_text(text: &str) -> Result<(), String> {
    if text.trim().is_empty() {
        return Err("give the reason: nerdr why add [--file F [--lines A-B]] TEXT".into());
    }
    if text.len() > MAX_TEXT {
        return Err(format!(
            "the reason is {} bytes, more than the {} a reason keeps: say why in a few \
             paragraphs, and put a longer account in a file of the change",
            text.len(),
            MAX_TEXT
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
