//! The reasons' store: `$NERDR_DATA_DIR/why.jsonl`, one [`Reason`] per
//! line, appended and never rewritten (a record, once kept, stays as it
//! was: binding a reason to its commit happens as it is read). JSON lines
//! rather than a `json_store` because reasons only ever add up, and an
//! append cannot lose the others. Blocking: call these off the async
//! workers.

use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use super::Reason;

/// The store's file in the data dir.
pub const FILE: &str = "why.jsonl";

/// Appends from one core never interleave.
static APPEND: Mutex<()> = Mutex::new(());

/// Keep `reason` in `path` (0600, made if missing).
pub fn append(path: &Path, reason: &Reason) -> Result<(), String> {
    let mut line = serde_json::to_string(reason).map_err(|e| e.to_string())?;
    line.push('\n');
    let _one = APPEND.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    }
    let mut f = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .open(path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?
    };
    f.write_all(line.as_bytes())
        .and_then(|()| f.sync_data())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The reasons kept for repository `repo` (its common git dir), oldest
/// first. A line that does not parse is an error naming the file and the
/// line, never skipped: it is a record the person may want. A last line
/// without its newline is an append a crash cut short, and is left out.
pub fn of_repo(path: &Path, repo: &str) -> Result<Vec<Reason>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    parse(&text, repo).map_err(|(n, e)| {
        format!(
            "{}:{n} is not a reason nerdr kept ({e}); move the file aside to start afresh",
            path.display()
        )
    })
}

/// [`of_repo`] over the file's text; the error is the line's number and why.
fn parse(text: &str, repo: &str) -> Result<Vec<Reason>, (usize, String)> {
    let complete = match text.rfind('\n') {
        Some(end) => &text[..end],
        None => "",
    };
    let mut out = Vec::new();
    for (i, line) in complete.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let r: Reason = serde_json::from_str(line).map_err(|e| (i + 1, e.to_string()))?;
        if r.repo == repo {
            out.push(r);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(repo: &str, text: &str) -> Reason {
        Reason {
            repo: repo.into(),
            file: Some("a.rs".into()),
            lines: Some((2, 3)),
            text: text.into(),
            head: "h".into(),
            worktree: "/r".into(),
            branch: Some("refs/heads/nerdr/t".into()),
            secs: 1,
            dirty: true,
            change: Vec::new(),
            tab: Some("t".into()),
            tab_name: Some("claude-1".into()),
            agent: Some("claude".into()),
            sandboxed: false,
            at: "2026-12-03T10:00:00Z".into(),
        }
    }

    #[test]
    fn appended_reasons_read_back_per_repository() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data/why.jsonl");
        assert_eq!(of_repo(&path, "/r/.git").unwrap(), vec![]);
        append(&path, &reason("/r/.git", "one")).unwrap();
        append(&path, &reason("/other/.git", "elsewhere")).unwrap();
        append(&path, &reason("/r/.git", "two\nlines")).unwrap();
        let got = of_repo(&path, "/r/.git").unwrap();
        assert_eq!(
            got,
            vec![reason("/r/.git", "one"), reason("/r/.git", "two\nlines")]
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_bad_line_is_named_and_a_cut_last_line_left_out() {
        let good = serde_json::to_string(&reason("/r", "ok")).unwrap();
        assert_eq!(
            parse(&format!("{good}\n{{\"repo\":"), "/r").unwrap().len(),
            1
        );
        let err = parse(&format!("{good}\nnot json\n{good}\n"), "/r").unwrap_err();
        assert_eq!(err.0, 2);
        assert_eq!(parse("", "/r").unwrap(), vec![]);
    }
}
