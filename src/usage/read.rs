//! The edge of `nerdr usage`: finding and reading the files, and writing
//! `claude-limits.json`. Blocking file I/O; what the bytes mean is
//! `claude`'s and `codex`'s, what to show `judge`'s.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::codex::{self, Found};
use super::{claude, judge, AgentUsage, Source};

/// How much of the end of a codex log is read: a `token_count` entry is
/// about 1 KB and comes after every model reply, so a turn's last one is
/// near the end unless a single tool output after it is larger than this.
const CODEX_TAIL: u64 = 256 * 1024;
/// How many of the newest codex logs are looked in before giving up.
const CODEX_LOGS: usize = 8;

/// Where claude's limits are kept: `$XDG_STATE_HOME/nerdr/sessions/`.
pub fn claude_file(state_dir: &Path) -> PathBuf {
    state_dir.join("sessions").join(claude::FILE_NAME)
}

/// codex's session logs folder: `$CODEX_HOME/sessions`, else
/// `~/.codex/sessions`.
pub fn codex_sessions(codex_home: Option<&Path>, home: Option<&Path>) -> Option<PathBuf> {
    let base = match codex_home {
        Some(c) => c.to_path_buf(),
        None => home?.join(".codex"),
    };
    Some(base.join("sessions"))
}

/// Both agents' usage at `now`, from the files in the process's
/// environment.
pub fn gather(now: i64) -> Vec<AgentUsage> {
    vec![one("claude", now), one("codex", now)]
}

/// One agent's usage at `now` (`"claude"`; anything else is codex).
pub fn one(agent: &'static str, now: i64) -> AgentUsage {
    let var = |n: &str| {
        std::env::var_os(n)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let source = if agent == "claude" {
        match crate::paths::Paths::from_process() {
            Ok(p) => read_claude(&claude_file(&p.state_dir), sandboxed()),
            Err(e) => Source {
                file: None,
                read: Err(format!("{e}")),
            },
        }
    } else {
        match codex_sessions(var("CODEX_HOME").as_deref(), var("HOME").as_deref()) {
            Some(dir) => read_codex(&dir, sandboxed()),
            None => Source {
                file: None,
                read: Err(
                    "neither CODEX_HOME nor HOME is set, so codex's logs cannot be found".into(),
                ),
            },
        }
    };
    judge(agent, source, now, super::time::zone_at)
}

/// Seconds since the epoch, now.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Whether this runs in a sandboxed tab (nerdr sets `NERDR_SANDBOXED`).
pub fn sandboxed() -> bool {
    std::env::var_os("NERDR_SANDBOXED").is_some_and(|v| v == "1")
}

/// `claude-limits.json`, read and checked. In a sandbox nerdr's state
/// folder is an empty stand-in (`sandbox::bwrap`), so the file is missing
/// there for that reason.
pub fn read_claude(file: &Path, sandboxed: bool) -> Source {
    let shown = Some(file.display().to_string());
    let read = match File::open(file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && sandboxed => Err(format!(
            "{} cannot be read in this sandbox (nerdr's state folder is hidden in it); \
             `nerdr usage` outside the sandbox, or the window's status line, shows it",
            file.display()
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
            "no {} yet: claude's status line writes it when a reply carries plan limits, which \
             only replies on a claude.ai plan do (on an API key there are none to show); \
             `nerdr integration install claude --status-line` sets the status line up if it \
             is not",
            file.display()
        )),
        Err(e) => Err(format!("cannot read {}: {e}", file.display())),
        Ok(f) => {
            let mut bytes = Vec::new();
            match f.take(claude::MAX_FILE + 1).read_to_end(&mut bytes) {
                Err(e) => Err(format!("cannot read {}: {e}", file.display())),
                Ok(_) => claude::parse(&bytes).map_err(|e| format!("{}: {e}", file.display())),
            }
        }
    };
    Source { file: shown, read }
}

/// The newest rate-limit entry in the newest of codex's logs under
/// `sessions`. In a sandbox `~/.codex` is a stand-in, not the person's
/// (`sandbox::agent_config`), so no logs there says that, not that codex
/// wrote none.
pub fn read_codex(sessions: &Path, sandboxed: bool) -> Source {
    let logs = newest_logs(sessions);
    let Some(newest) = logs.first() else {
        let why = if sandboxed {
            format!(
                "codex's session logs ({}) cannot be read in this sandbox (they are hidden in \
                 it); `nerdr usage` outside the sandbox, or the window's status line, shows them",
                sessions.display()
            )
        } else {
            format!(
                "no codex session logs under {} (codex writes one per conversation)",
                sessions.display()
            )
        };
        return Source {
            file: Some(sessions.display().to_string()),
            read: Err(why),
        };
    };
    let mut fault = None;
    for log in &logs {
        match tail(log, CODEX_TAIL) {
            Err(e) => {
                fault.get_or_insert(format!("cannot read {}: {e}", log.display()));
            }
            Ok((text, cut)) => match codex::parse_tail(&text, cut) {
                Found::Limits(snap) => {
                    return Source {
                        file: Some(log.display().to_string()),
                        read: Ok(snap),
                    }
                }
                Found::Nothing { first_bad: Some(n) } => {
                    fault.get_or_insert(format!(
                        "{}: line {n} of its last {} KiB is not JSON",
                        log.display(),
                        CODEX_TAIL / 1024
                    ));
                }
                Found::Nothing { first_bad: None } => {}
            },
        }
    }
    let why = fault.unwrap_or_else(|| {
        format!(
            "no rate-limit entry in the newest {} codex session log(s) (codex records them only \
             for a ChatGPT plan, not an API key)",
            logs.len()
        )
    });
    Source {
        file: Some(newest.display().to_string()),
        read: Err(why),
    }
}

/// The newest `CODEX_LOGS` `rollout-*.jsonl` under `sessions/YYYY/MM/DD/`,
/// by modification time (a resumed conversation writes to its old file),
/// from the newest few day folders.
fn newest_logs(sessions: &Path) -> Vec<PathBuf> {
    let mut days = Vec::new();
    'walk: for y in sorted_dirs(sessions) {
        for m in sorted_dirs(&y) {
            for d in sorted_dirs(&m) {
                days.push(d);
                if days.len() >= 7 {
                    break 'walk;
                }
            }
        }
    }
    let mut logs: Vec<(std::time::SystemTime, PathBuf)> = days
        .iter()
        .flat_map(|d| std::fs::read_dir(d).into_iter().flatten().flatten())
        .filter(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            n.starts_with("rollout-") && n.ends_with(".jsonl")
        })
        .filter_map(|e| {
            let meta = e.metadata().ok().filter(|m| m.is_file())?;
            Some((meta.modified().ok()?, e.path()))
        })
        .collect();
    logs.sort_by(|a, b| b.cmp(a));
    logs.into_iter().take(CODEX_LOGS).map(|(_, p)| p).collect()
}

/// Subfolders, newest name first (codex names them by date).
fn sorted_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    out.sort_by(|a, b| b.cmp(a));
    out
}

/// The last `max` bytes of `file` as text, and whether the read began
/// after its start.
fn tail(file: &Path, max: u64) -> std::io::Result<(String, bool)> {
    let mut f = File::open(file)?;
    let len = f.metadata()?.len();
    let start = len.saturating_sub(max);
    f.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    f.take(max).read_to_end(&mut bytes)?;
    Ok((String::from_utf8_lossy(&bytes).into_owned(), start > 0))
}

/// Whether `file` already holds `limits`' numbers, written less than
/// `secs` seconds before them.
pub fn same_recent_claude(file: &Path, limits: &claude::Limits, secs: i64) -> bool {
    let Ok(f) = File::open(file) else {
        return false;
    };
    let mut bytes = Vec::new();
    if f.take(claude::MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .is_err()
    {
        return false;
    }
    serde_json::from_slice::<claude::Limits>(&bytes).is_ok_and(|old| {
        old.five_hour == limits.five_hour
            && old.seven_day == limits.seven_day
            && (0..secs).contains(&(limits.observed_at - old.observed_at))
    })
}

/// Writes `limits` to `file`: a new 0600 file renamed over the old, in a
/// 0700 folder, so a reader never sees half of it.
pub fn write_claude(file: &Path, limits: &claude::Limits) -> Result<(), String> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = file.parent().expect("the file lives in a folder");
    crate::private_dir::create(dir).map_err(|e| e.to_string())?;
    let json = serde_json::to_vec(limits).expect("limits serialize");
    let tmp = dir.join(format!(".{}.{}.tmp", claude::FILE_NAME, std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(&json)?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        std::fs::rename(&tmp, file)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write {}: {e}", file.display())
    })
}
