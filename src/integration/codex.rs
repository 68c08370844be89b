//! Codex: `notify` in `$CODEX_HOME/config.toml` (default `~/.codex`), an
//! argv array that codex runs after each turn with one more argument, the
//! notification as JSON (`{"type": "agent-turn-complete", "thread-id": ...}`).
//! Codex runs a single notify program, so an existing `notify` that is not
//! nerdr's is left alone, never replaced (install says so and goes on with
//! the skill). Codex has no session-start or
//! prompt-submit notification: turn ends are all it reports.

use std::path::{Path, PathBuf};

use toml_edit::{ImDocument, Item, Table};

use super::edit::{EditError, Insertion, Plan, Planned};
use super::{AgentEnv, COMMAND_PREFIX};

/// The argv nerdr puts in `notify`. Codex execs it without a shell, so a
/// shell expands `NERDR_BIN`; codex appends the JSON, which becomes `$1`.
/// Outside nerdr the shell stops before running anything: codex shares its
/// terminal with the program, and "nerdr: not found" would land on screen.
pub const NOTIFY: [&str; 4] = [
    "sh",
    "-c",
    "[ -n \"$NERDR_TAB\" ] || exit 0; exec \"${NERDR_BIN:-nerdr}\" hook Stop \"$1\"",
    "nerdr-hook",
];

/// The events nerdr's notify reports.
pub const EVENTS: [&str; 1] = ["agent-turn-complete"];

pub fn settings_file(env: &AgentEnv) -> Option<PathBuf> {
    let home = env
        .codex_home
        .clone()
        .or_else(|| Some(env.home.as_ref()?.join(".codex")))?;
    Some(home.join("config.toml"))
}

/// The line install adds (a TOML literal string keeps the script readable).
pub fn notify_line() -> String {
    format!(
        "notify = [\"{}\", \"{}\", '{}', \"{}\"]",
        NOTIFY[0], NOTIFY[1], NOTIFY[2], NOTIFY[3]
    )
}

fn parse(text: &str) -> Result<ImDocument<&str>, EditError> {
    ImDocument::parse(text).map_err(|e| {
        let at = e.span().map_or(0, |s| s.start).min(text.len());
        let before = &text[..at];
        EditError::Syntax {
            what: format!(
                "not valid TOML at line {}, column {}: {}",
                before.matches('\n').count() + 1,
                before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1,
                e.message().trim_end()
            ),
        }
    })
}

/// Whether `notify` runs nerdr's hook (any version of the line).
fn is_nerdrs(item: &Item) -> bool {
    item.as_array().is_some_and(|a| {
        a.iter()
            .any(|v| v.as_str().is_some_and(|s| s.contains(COMMAND_PREFIX)))
    })
}

pub fn contains_nerdrs(text: &str) -> Result<bool, EditError> {
    Ok(parse(text)?.as_table().get("notify").is_some_and(is_nerdrs))
}

/// The insertion that adds nerdr's `notify` to `before` (`None`: no file).
pub fn plan_install(before: Option<&str>, file: &Path) -> Result<Planned, EditError> {
    let line = notify_line();
    let Some(text) = before else {
        return Ok(plan(0, format!("{line}\n")));
    };
    let doc = parse(text)?;
    let root = doc.as_table();
    if let Some(item) = root.get("notify") {
        if is_nerdrs(item) {
            return Ok(Planned::Already);
        }
        let at = root
            .key("notify")
            .and_then(|k| k.span())
            .map(|s| format!(" (line {})", text[..s.start].matches('\n').count() + 1))
            .unwrap_or_default();
        let found = match item.span() {
            Some(s) => text[s].trim().to_string(),
            None => item.to_string().trim().to_string(),
        };
        return Err(EditError::Taken {
            key: "notify".into(),
            at,
            found,
            why: format!(
                "codex runs only one notify program and nerdr will not replace yours, so \
                 codex does not tell nerdr when its turns end (a codex tab's states then come \
                 from its screen alone). To have them, remove that line from {} (or have your \
                 program also run `\"${{NERDR_BIN:-nerdr}}\" hook Stop \"$JSON\"` with the \
                 JSON it gets), then run `nerdr integration install codex` again",
                file.display()
            ),
        });
    }
    // After the last top-level key's line, so the line stays in the root
    // table and out of any comment that introduces the next table.
    let (at, insert) = match last_root_value_end(root) {
        Some(end) => match text[end..].find('\n') {
            Some(nl) => (end + nl + 1, format!("{line}\n")),
            None => (text.len(), format!("\n{line}")),
        },
        None if text.is_empty() || text.starts_with('\n') => (0, format!("{line}\n")),
        None => (0, format!("{line}\n\n")),
    };
    let after = super::edit::apply(
        text,
        &[Insertion {
            at,
            text: insert.clone(),
        }],
    );
    // The line must have landed in the root table, as nerdr's and intact.
    let placed = parse(&after)
        .ok()
        .and_then(|d| d.as_table().get("notify").map(is_nerdrs))
        .unwrap_or(false);
    if !placed {
        return Err(EditError::Syntax {
            what: format!("could not find a safe place for `notify`; add this line above the first [table] by hand: {line}"),
        });
    }
    Ok(plan(at, insert))
}

fn plan(at: usize, text: String) -> Planned {
    Planned::Plan(Plan {
        inserts: vec![Insertion { at, text }],
        created: Vec::new(),
        events: EVENTS.iter().map(|e| e.to_string()).collect(),
    })
}

/// The end of the last value written under the root table itself (dotted
/// keys included, `[table]` sections not).
fn last_root_value_end(table: &Table) -> Option<usize> {
    table
        .iter()
        .filter_map(|(_, item)| match item {
            Item::Value(v) => v.span().map(|s| s.end),
            Item::Table(t) if t.is_dotted() => last_root_value_end(t),
            _ => None,
        })
        .max()
}

/// `text` without nerdr's `notify` line, for a file changed since the
/// install; anything else stays as it is.
pub fn remove(text: &str) -> Result<String, EditError> {
    let doc = parse(text)?;
    let root = doc.as_table();
    let Some(item) = root.get("notify").filter(|i| is_nerdrs(i)) else {
        return Ok(text.to_string());
    };
    let (Some(key), Some(value)) = (root.key("notify").and_then(|k| k.span()), item.span()) else {
        return Ok(text.to_string());
    };
    let start = text[..key.start].rfind('\n').map_or(0, |i| i + 1);
    let end = text[value.end..]
        .find('\n')
        .map_or(text.len(), |nl| value.end + nl + 1);
    let mut out = text.to_string();
    out.replace_range(start..end, "");
    Ok(out)
}
