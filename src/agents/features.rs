//! Which optional flags the installed version of an agent supports, read
//! from its `--help`. The reading is pure ([`listed_flags`],
//! [`Features::of`]); [`Detector`] runs the program (through `help.rs`) and
//! remembers the answer per program file (canonical path, mtime, size), in
//! memory and in a JSON file, so a restarted core does not ask again.
//!
//! Anything unknown counts as unsupported: every flag here has an older
//! form that works without it (see `session.rs`), whereas passing a flag a
//! version does not know stops that agent from starting.

use std::collections::{BTreeSet, HashMap};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::help::{run_help, HelpEnv, HelpError, HELP_TIMEOUT};
use super::kind::{Features, Kind};
use crate::config::{builtin_program, ResolvedAgent};

/// The long options a help text defines: those on lines that start (after
/// indentation) with an option, as in `  -r, --resume [value]  Resume...`
/// or `      --no-daemon`. Options only mentioned in prose or examples
/// (`$ copilot --session-id=...`, `(use with --continue)`) do not count.
pub fn listed_flags(help: &str) -> BTreeSet<String> {
    let mut flags = BTreeSet::new();
    for line in help.lines() {
        let line = strip_ansi(line);
        for word in line.split([' ', '\t', ',']).filter(|w| !w.is_empty()) {
            if !word.starts_with('-') {
                break;
            }
            let Some(rest) = word.strip_prefix("--") else {
                continue; // a short option such as `-r`
            };
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            if name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
                flags.insert(format!("--{name}"));
            }
        }
    }
    flags
}

/// `line` without CSI escape sequences (`ESC [ ... final byte`), in case a
/// program colours its help despite `NO_COLOR` and `TERM=dumb`.
fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// The word of `agent`'s command that names the agent's program, whose
/// `--help` tells its features: the last word whose file name is the
/// built-in program (`codex` in `["nerdr", "sandbox", "--", "codex"]` or
/// `["/opt/codex/bin/codex"]`), else the only word of a one-word command.
/// `None` for custom agents and wrappers around an unrecognised program:
/// then nothing is run and nothing is supported.
pub fn program_word(agent: &ResolvedAgent) -> Option<&str> {
    if !agent.builtin {
        return None;
    }
    let program = builtin_program(&agent.name)?;
    let command = &agent.command[..agent.command_words.min(agent.command.len())];
    let file_name = |w: &str| w.rsplit('/').next().unwrap_or(w).to_owned();
    command
        .iter()
        .rev()
        .find(|w| file_name(w) == program)
        .or(match command {
            [only] => Some(only),
            _ => None,
        })
        .map(String::as_str)
}

/// How long an answer is trusted even if the file looks unchanged: some
/// agents (copilot) update themselves in place behind a launcher whose
/// file stays the same.
pub const MAX_AGE: Duration = Duration::from_secs(24 * 60 * 60);

/// Identifies one version of a program file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    pub mtime_s: i64,
    pub mtime_ns: i64,
    pub size: u64,
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Stamp {
        Stamp {
            mtime_s: meta.mtime(),
            mtime_ns: meta.mtime_nsec(),
            size: meta.size(),
        }
    }
}

/// One program's answer, as kept in memory and in the cache file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// Canonical (symlinks resolved).
    pub path: PathBuf,
    #[serde(flatten)]
    pub stamp: Stamp,
    /// When `--help` ran, in seconds since the epoch.
    pub checked: u64,
    pub flags: BTreeSet<String>,
}

impl Record {
    /// Whether this answer still holds for a file with `stamp` at `now`
    /// (seconds since the epoch). A `checked` in the future (the clock
    /// went back) is not trusted.
    pub fn fresh(&self, stamp: &Stamp, now: u64) -> bool {
        self.stamp == *stamp && now >= self.checked && now - self.checked < MAX_AGE.as_secs()
    }
}

/// The cache file's content.
#[derive(Debug, Default, Serialize, Deserialize)]
struct CacheFile {
    version: u32,
    programs: Vec<Record>,
}

const CACHE_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DetectError {
    #[error("cannot look at {}: {error}", program.display())]
    Unreadable { program: PathBuf, error: String },

    #[error(transparent)]
    Help(#[from] HelpError),

    /// It exited with a failure and listed no options: probably not a help
    /// text at all (a missing interpreter, a wrapper that wants a terminal).
    #[error(
        "`{} --help` failed and listed no options; run it by hand to see why",
        program.display()
    )]
    NoHelp { program: PathBuf },
}

/// Finds and remembers what installed programs support. Shared by the
/// core; blocking (it may run a program for up to its timeout), so call it
/// from a blocking thread.
pub struct Detector {
    /// The JSON cache, e.g. `$XDG_STATE_HOME/nerdr/features.json`.
    file: PathBuf,
    timeout: Duration,
    memory: Mutex<Memory>,
}

#[derive(Default)]
struct Memory {
    loaded: bool,
    answers: HashMap<PathBuf, Answer>,
}

/// Failures are remembered too (so a program that hangs costs its timeout
/// once per version), but only in memory: a restarted core tries again.
#[derive(Clone)]
enum Answer {
    Listed(Record),
    Failed(Stamp, DetectError),
}

impl Detector {
    /// A detector keeping its cache in `dir/features.json`.
    pub fn new(dir: &Path) -> Detector {
        Detector::with_timeout(dir, HELP_TIMEOUT)
    }

    pub fn with_timeout(dir: &Path, timeout: Duration) -> Detector {
        Detector {
            file: dir.join("features.json"),
            timeout,
            memory: Mutex::new(Memory::default()),
        }
    }

    /// What the installed `program` of agent `kind` supports. Never fails:
    /// what cannot be found out is unsupported, and the reason is logged.
    pub fn features(&self, kind: Kind, program: &Path, env: &HelpEnv) -> Features {
        if kind.help_flags().is_empty() {
            return Features::default();
        }
        match self.flags(program, env) {
            Ok(flags) => Features::of(kind, &flags),
            Err(error) => {
                tracing::warn!("{error}; starting it without its optional flags");
                Features::default()
            }
        }
    }

    /// The long options `program --help` lists, asked once per version of
    /// the program file.
    pub fn flags(&self, program: &Path, env: &HelpEnv) -> Result<BTreeSet<String>, DetectError> {
        let unreadable = |e: io::Error| DetectError::Unreadable {
            program: program.to_owned(),
            error: e.to_string(),
        };
        let path = std::fs::canonicalize(program).map_err(unreadable)?;
        let stamp = Stamp::of(&std::fs::metadata(&path).map_err(unreadable)?);
        let now = unix_now();
        {
            let mut memory = self.memory.lock().unwrap();
            self.load(&mut memory);
            match memory.answers.get(&path) {
                Some(Answer::Listed(record)) if record.fresh(&stamp, now) => {
                    return Ok(record.flags.clone())
                }
                Some(Answer::Failed(seen, error)) if *seen == stamp => return Err(error.clone()),
                _ => {}
            }
        }
        // Not under the lock: other programs' answers need not wait.
        let answer = match run_help(&path, env, self.timeout) {
            Ok(output) => {
                let flags = listed_flags(&output.text);
                if output.success || !flags.is_empty() {
                    Ok(flags)
                } else {
                    Err(DetectError::NoHelp {
                        program: path.clone(),
                    })
                }
            }
            Err(error) => Err(DetectError::from(error)),
        };
        let mut memory = self.memory.lock().unwrap();
        let stored = match &answer {
            Ok(flags) => Answer::Listed(Record {
                path: path.clone(),
                stamp,
                checked: now,
                flags: flags.clone(),
            }),
            Err(error) => Answer::Failed(stamp, error.clone()),
        };
        memory.answers.insert(path, stored);
        if answer.is_ok() {
            self.save(&memory);
        }
        answer
    }

    /// Read the cache file once; a missing, unreadable or foreign file is
    /// an empty cache (it is rewritten on the next answer).
    fn load(&self, memory: &mut Memory) {
        if std::mem::replace(&mut memory.loaded, true) {
            return;
        }
        let text = match std::fs::read_to_string(&self.file) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return,
            Err(e) => {
                tracing::warn!(
                    "cannot read {}: {e}; asking programs again",
                    self.file.display()
                );
                return;
            }
        };
        match serde_json::from_str::<CacheFile>(&text) {
            Ok(cache) if cache.version == CACHE_VERSION => {
                for record in cache.programs {
                    memory
                        .answers
                        .entry(record.path.clone())
                        .or_insert(Answer::Listed(record));
                }
            }
            Ok(cache) => tracing::info!(
                "{} is of version {}, not {CACHE_VERSION}; asking programs again",
                self.file.display(),
                cache.version
            ),
            Err(e) => tracing::warn!(
                "{} is not valid: {e}; asking programs again",
                self.file.display()
            ),
        }
    }

    /// Write the answers of programs that still exist, atomically (a
    /// temporary file renamed over the old one). A failure only costs a
    /// re-run after a restart, so it is logged, not returned.
    fn save(&self, memory: &Memory) {
        let mut programs: Vec<Record> = memory
            .answers
            .values()
            .filter_map(|a| match a {
                // JSON holds only UTF-8 paths; others stay in memory.
                Answer::Listed(r) if r.path.to_str().is_some() && r.path.exists() => {
                    Some(r.clone())
                }
                _ => None,
            })
            .collect();
        programs.sort_by(|a, b| a.path.cmp(&b.path));
        let cache = CacheFile {
            version: CACHE_VERSION,
            programs,
        };
        let write = || -> io::Result<()> {
            if let Some(dir) = self.file.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let tmp = self
                .file
                .with_extension(format!("json.{}.tmp", std::process::id()));
            let json = serde_json::to_vec_pretty(&cache).map_err(io::Error::other)?;
            std::fs::write(&tmp, json)?;
            std::fs::rename(&tmp, &self.file).inspect_err(|_| {
                let _ = std::fs::remove_file(&tmp);
            })
        };
        if let Err(e) = write() {
            tracing::warn!("cannot write {}: {e}", self.file.display());
        }
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
