//! `nerdr tabs [--json] [--all]`: the tabs of this folder's session, each
//! with its number (`#`, what `nerdr send 2` takes and the window's status
//! line shows). A running agent's STATE is what it is doing (working, BLOCKED, idle,
//! done); `blocked` is in capitals so it stands out without colour, and on
//! a terminal each state has its colour too. A tab with reviews not read
//! yet has `@N` after its name, as in the window's status line; a
//! reviewer's line below the table names the tab it reviews by id. A tab
//! whose agent was switched shows the agents in turn (`claude→codex`).

use std::io::IsTerminal;
use std::process::ExitCode;

use super::Folder;
use crate::client;
use crate::protocol::api::{AgentState, ListTabs, TabInfo, TabState};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Tabs of every session
    #[arg(long)]
    pub all: bool,
    /// One JSON array: id, name, number (the tab's number in its session: `nerdr send 2`, the window's digit keys; kept while the tab lives), folder, agent, command, sandboxed, state, reason (why a tab is refused), warning, pid, exit_code, agent_state (working, blocked, idle, done, unknown; null unless running), agent_state_since (RFC 3339), bells, unread_reviews (reviews posted for the tab not read yet; the table marks its NAME @N), spun_off_from (the parent of a spinoff), reviews (for a reviewer: the id of the tab it reviews), results_waiting (spinoff results waiting for it; the window marks it %N), report_due (a spinoff whose turn ended without a report; the window marks it ? and offers C-b P), handed_to_you (true when its agent handed its work to you and `nerdr handoffs` keeps it until --clear; the window marks it &), switches (each `nerdr switch` of its agent: from, to, at (RFC 3339); the table's AGENT shows claude→codex)
    #[arg(long)]
    pub json: bool,
    /// Tabs of this machine (host `local`) and of every [hosts] host in the config, asked at once, a HOST column first; a host that does not answer in time is marked `no answer` with why. Fails only when no host answers. With --json: {"tabs": rows with a `host` field, "failed": [{host, reason}]}
    #[arg(long)]
    pub all_hosts: bool,
    /// With --all-hosts: the seconds each host has to answer (10)
    #[arg(long, value_name = "SECS", requires = "all_hosts",
          value_parser = clap::value_parser!(u64).range(1..=600))]
    pub timeout: Option<u64>,
}

/// One host's tabs (`--all-hosts` is `cli::all_hosts`'s, dispatched there).
pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let folder = if args.all {
        None
    } else {
        Some(folder.resolve()?)
    };
    let tabs = client::call(ListTabs {
        folder,
        all: args.all,
    })?;
    if args.json {
        println!("{}", json_text(&tabs)?);
        return Ok(ExitCode::SUCCESS);
    }
    print!(
        "{}",
        table(&tabs, args.all, std::io::stdout().is_terminal())
    );
    Ok(ExitCode::SUCCESS)
}

/// The rows as `--json` has always printed them: the wire's JSON,
/// pretty-printed, fields in its (alphabetical) order.
fn json_text(tabs: &[TabInfo]) -> serde_json::Result<String> {
    crate::printable::json(&serde_json::to_value(tabs)?)
}

/// The rows as a table whose columns are as wide as their widest cell
/// (`exited, resumable` is wider than any fixed width a state would get).
fn table(tabs: &[TabInfo], with_folder: bool, colour: bool) -> String {
    table_on(tabs, None, with_folder, colour)
}

/// [`table`], with each row's host in a HOST column first when `hosts`
/// (one per row) is given.
/// `t` with every text a table line shows made one printable line: a
/// row is a line, and another host's core (`--host`, `--all-hosts`) could
/// otherwise end a name with a newline and a forged row of "this machine".
fn on_one_line(t: &TabInfo) -> TabInfo {
    let line = |s: &str| crate::printable::printable(s);
    let mut t = t.clone();
    for s in [&mut t.id, &mut t.name, &mut t.agent] {
        *s = line(s);
    }
    for s in [
        &mut t.reason,
        &mut t.warning,
        &mut t.spun_off_from,
        &mut t.reviews,
    ]
    .into_iter()
    .flatten()
    {
        *s = line(s);
    }
    for w in &mut t.switches {
        w.from = line(&w.from);
        w.to = line(&w.to);
    }
    t.folder = line(&t.folder.to_string_lossy()).into();
    t
}

pub(super) fn table_on(
    tabs: &[TabInfo],
    hosts: Option<&[String]>,
    with_folder: bool,
    colour: bool,
) -> String {
    if tabs.is_empty() {
        return "no tabs\n".into();
    }
    let tabs: Vec<TabInfo> = tabs.iter().map(on_one_line).collect();
    let tabs = tabs.as_slice();
    // The HOST column: its cell on each line (the header's first), padded
    // to the widest, and before each line under the table.
    let host_of = |i: usize| hosts.and_then(|h| h.get(i)).map(String::as_str);
    let host_width = hosts
        .map(|h| {
            h.iter()
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
                .max(4)
        })
        .unwrap_or(0);
    let host_cell = |host: Option<&str>| match host {
        Some(h) => format!("{h:<host_width$} "),
        None => String::new(),
    };
    let header = [
        "#",
        "TAB",
        "NAME",
        "AGENT",
        "STATE",
        "PID",
        if with_folder { "FOLDER" } else { "" },
    ]
    .map(String::from);
    let mut rows = vec![header];
    let mut colours = vec![None];
    for t in tabs {
        let (state, c) = state_cell(t);
        colours.push(c);
        // Its switches too: `claude→codex`.
        let agent = crate::switch::rules::chain(&t.agent, &t.switches);
        let agent = if t.sandboxed {
            format!("{agent} [sb]")
        } else {
            agent
        };
        let pid = t.pid.map(|p| p.to_string()).unwrap_or_else(|| "-".into());
        let folder = if with_folder {
            t.folder.display().to_string()
        } else {
            String::new()
        };
        // Marked as the window marks it: `@2`, two reviews unread.
        let name = match t.unread_reviews {
            0 => t.name.clone(),
            n => format!("{} @{n}", t.name),
        };
        rows.push([
            t.number.to_string(),
            t.id.clone(),
            name,
            agent,
            state,
            pid,
            folder,
        ]);
    }
    // The old fixed widths stay the least, so short tables look as before.
    let mut width = [1, 10, 10, 12, 10, 8];
    for row in &rows {
        for (w, cell) in width.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for (i, ([number, id, name, agent, state, pid, folder], c)) in
        rows.iter().zip(colours).enumerate()
    {
        let host = match i {
            _ if hosts.is_none() => String::new(),
            0 => host_cell(Some("HOST")),
            i => host_cell(host_of(i - 1)),
        };
        // Padded first: the colour's escapes take no room on screen.
        let state = format!("{state:<w$}", w = width[4]);
        let state = match c.filter(|_| colour) {
            Some(c) => format!("\x1b[{c}m{state}\x1b[0m"),
            None => state,
        };
        let line = format!(
            "{host}{number:>w0$} {id:<w1$} {name:<w2$} {agent:<w3$} {state} {pid:>w5$}  {folder}",
            w0 = width[0],
            w1 = width[1],
            w2 = width[2],
            w3 = width[3],
            w5 = width[5],
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    // What the rows have no room for: why a tab was refused, and each
    // tab's warning (a rules file nerdr cannot use, say), in full.
    for (i, t) in tabs.iter().enumerate() {
        // Each line names its tab, after its host when hosts are shown.
        let lead = match host_of(i) {
            Some(h) => format!("{h} {}", t.id),
            None => t.id.clone(),
        };
        if let Some(reason) = &t.reason {
            out.push_str(&format!("{lead}: refused: {reason}\n"));
        }
        if let Some(warning) = &t.warning {
            out.push_str(&format!("{lead}: warning: {warning}\n"));
        }
        if t.unread_reviews > 0 {
            let n = t.unread_reviews;
            out.push_str(&format!(
                "{lead}: {n} unread review{}: nerdr reviews {} (or the window's prefix g)\n",
                if n == 1 { "" } else { "s" },
                t.id
            ));
        }
        if let Some(parent) = &t.spun_off_from {
            out.push_str(&format!("{lead}: spun off from {parent}\n"));
        }
        if let Some(author) = &t.reviews {
            out.push_str(&format!(
                "{lead}: reviews tab {author} (nerdr reviews {author})\n"
            ));
        }
        if t.results_waiting > 0 {
            out.push_str(&format!(
                "{lead}: {} spinoff result(s) waiting (`nerdr spinoffs`; typed once `nerdr restart {}`)\n",
                t.results_waiting, t.id
            ));
        }
        if t.report_due {
            out.push_str(&format!(
                "{lead}: ended its turn without a report (`nerdr report-result --for {}` reports its \
                 last answer to its parent)\n",
                t.id
            ));
        }
    }
    out
}

/// A tab's STATE cell and its colour (an SGR parameter): the agent's state
/// while its program runs (`running` when nerdr cannot tell), else the
/// program's.
fn state_cell(t: &TabInfo) -> (String, Option<&'static str>) {
    let agent = t.agent_state.filter(|_| t.state == TabState::Running);
    match agent {
        Some(AgentState::Blocked) => ("BLOCKED".into(), Some("1;31")),
        Some(AgentState::Working) => ("working".into(), Some("33")),
        Some(AgentState::Done) => ("done".into(), Some("1;32")),
        Some(AgentState::Idle) => ("idle".into(), None),
        Some(AgentState::Unknown) | None => {
            let cell = match (t.state.as_str(), t.exit_code, t.resumable) {
                (s, _, true) => format!("{s}, resumable"),
                (s, Some(c), _) => format!("{s}({c})"),
                (s, None, _) => s.to_string(),
            };
            (cell, None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::api::{decode, ListTabs};

    /// A row is one line whatever another host's core puts in its texts:
    /// no forged row, no escape reaches the terminal.
    #[test]
    fn a_remote_tabs_texts_stay_on_its_row() {
        let wire = serde_json::json!([
            {"id": "aa11aa11\nlocal     1 bb22bb22", "name": "x\nlocal     1 fake-row",
             "folder": "/w\n/etc", "agent": "claude\t\u{1b}]52;c;AAAA\u{7}",
             "command": ["sh"], "sandboxed": false, "kind": "agent", "parent": null,
             "worktree": null, "session_id": null, "resumable": false, "state": "running",
             "pid": 1, "exit_code": null, "warning": "w\nlocal 2 forged", "reason": "r\rr"},
        ]);
        let rows = decode::<ListTabs>(wire).unwrap();
        let hosts = vec!["evil".to_owned()];
        let text = table_on(&rows, Some(&hosts), true, false);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines.len(),
            4,
            "header, the row, its reason and warning:\n{text}"
        );
        assert!(lines[1..].iter().all(|l| l.starts_with("evil ")), "{text}");
        assert!(
            !text.contains('\x1b') && !text.contains('\t') && !text.contains('\r'),
            "{text}"
        );
    }

    /// Each column starts at the same place on every line, whatever its
    /// cells hold (a resumable exited tab's state is the widest).
    #[test]
    fn table_columns_line_up() {
        let wire = serde_json::json!([
            {"id": "ec3a8db6", "folder": "/w", "agent": "terminal", "command": ["sh"],
             "sandboxed": false, "kind": "terminal", "parent": null, "worktree": null,
             "session_id": null, "resumable": false, "state": "running", "pid": 15225,
             "exit_code": null},
            {"id": "9f117acb", "name": "a-long-review-name", "folder": "/a/longer/folder", "agent": "claude", "command": ["claude"],
             "sandboxed": true, "kind": "agent", "parent": null, "worktree": null,
             "session_id": "s", "resumable": true, "state": "exited", "pid": 15229,
             "exit_code": 1},
        ]);
        let rows = decode::<ListTabs>(wire).unwrap();
        for with_folder in [false, true] {
            let text = table(&rows, with_folder, false);
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines.len(), 3, "{text}");
            for word in ["PID", "NAME", "a-long-review-name", "15229", "15225"] {
                assert!(text.contains(word), "{text}");
            }
            // Where the PID column ends on the header line, every row's ends.
            let end = lines[0].find("PID").unwrap() + 3;
            for line in &lines[1..] {
                let cell = line[..end].rsplit(' ').next().unwrap();
                assert!(cell == "15225" || cell == "15229", "misaligned:\n{text}");
            }
            assert!(lines.iter().all(|l| !l.ends_with(' ')), "{text:?}");
            if with_folder {
                let at = lines[0].find("FOLDER").unwrap();
                assert_eq!(&lines[2][at..], "/a/longer/folder", "{text}");
            }
        }
    }

    /// `#` is each tab's own number, as the core sent it: a closed
    /// tab's number stays a gap, not taken by the tab after it.
    #[test]
    fn each_row_shows_its_tabs_number() {
        let wire = serde_json::json!([
            {"id": "b2b2b2b2", "name": "bash-2", "number": 2, "folder": "/w", "agent": "bash",
             "command": ["bash"], "sandboxed": false, "state": "running", "pid": 7,
             "exit_code": null},
            {"id": "c3c3c3c3", "name": "review-bash-1", "number": 12, "folder": "/w",
             "agent": "claude", "command": ["claude"], "sandboxed": false,
             "state": "running", "pid": 8, "exit_code": null},
        ]);
        let rows = decode::<ListTabs>(wire).unwrap();
        let text = table(&rows, false, false);
        let lines: Vec<&str> = text.lines().collect();
        let words = |l: &str| l.split_whitespace().take(3).collect::<Vec<_>>().join(" ");
        assert_eq!(words(lines[0]), "# TAB NAME", "{text}");
        assert_eq!(words(lines[1]), "2 b2b2b2b2 bash-2", "{text}");
        assert_eq!(words(lines[2]), "12 c3c3c3c3 review-bash-1", "{text}");
        // Right-aligned, so the ids line up.
        assert_eq!(lines[1].find("b2b2"), lines[2].find("c3c3"), "{text}");
        assert!(json_text(&rows).unwrap().contains("\"number\": 12"));
    }

    /// The README's window shows `nerdr tabs` as this table prints it
    /// (its picture is captured by an ignored test; this keeps the table
    /// part of it from drifting).
    #[test]
    fn the_readmes_picture_of_nerdr_tabs_is_what_it_prints() {
        let readme = include_str!("../../README.md");
        let at = readme.find("$ nerdr tabs\n").unwrap() + "$ nerdr tabs\n".len();
        let shown: String = readme[at..]
            .lines()
            .take_while(|l| !l.starts_with('~'))
            .map(|l| format!("{l}\n"))
            .collect();
        let row = |n: u32, id: &str, name: &str, agent: &str, state: &str, pid: u32| {
            serde_json::json!({"id": id, "name": name, "number": n, "folder": "/w",
                "agent": agent, "command": [agent], "sandboxed": false,
                "state": "running", "agent_state": state, "pid": pid, "exit_code": null})
        };
        let wire = serde_json::json!([
            row(1, "c3e83911", "codex-1", "codex", "blocked", 20310),
            row(2, "c9e56ffa", "tests", "bash", "unknown", 20341),
            row(3, "f0744456", "bash-2", "bash", "unknown", 20368),
        ]);
        let rows = decode::<ListTabs>(wire).unwrap();
        assert_eq!(table(&rows, false, false), shown);
    }

    /// A reviewer's name carries only part of its author's id: the line
    /// under the table names the author by its whole id.
    #[test]
    fn a_reviewer_names_the_tab_it_reviews() {
        let wire = serde_json::json!([
            {"id": "9f117acb", "name": "review-fix-ab12", "folder": "/w", "agent": "claude",
             "command": ["claude"], "sandboxed": false, "kind": "agent", "parent": null,
             "worktree": null, "session_id": null, "resumable": false, "state": "running",
             "pid": 7, "exit_code": null, "reviews": "ab12cd34"},
        ]);
        let rows = decode::<ListTabs>(wire).unwrap();
        assert_eq!(rows[0].reviews.as_deref(), Some("ab12cd34"));
        let text = table(&rows, false, false);
        assert!(
            text.contains("9f117acb: reviews tab ab12cd34 (nerdr reviews ab12cd34)"),
            "{text}"
        );
    }

    /// `--json` printed the wire's JSON as it came; read into rows and
    /// printed again, it must be the same text, byte for byte.
    #[test]
    fn json_output_is_the_wire_as_it_came() {
        let wire = serde_json::json!([
            {"id": "ab12", "name": "claude-1", "number": 1, "folder": "/w", "agent": "claude", "command": ["claude", "--x"],
             "sandboxed": true, "kind": "agent", "parent": null, "worktree": "/w/.nerdr/ab12",
             "session_id": null, "resumable": true, "state": "exited", "pid": null,
             "exit_code": 0, "agent_state": null, "agent_state_since": null, "bells": 0, "unread_reviews": 0},
            {"id": "cd34", "name": "terminal-1", "number": 2, "folder": "/w", "agent": "sh", "command": ["sh"],
             "sandboxed": false, "kind": "terminal", "parent": "ab12", "worktree": null,
             "session_id": null, "resumable": false, "state": "refused",
             "reason": "no such program", "pid": null, "exit_code": null,
             "warning": "hooks blocked", "agent_state": null, "agent_state_since": null,
             "bells": 0, "unread_reviews": 0},
            {"id": "ef56", "name": "a-longer-name", "number": 4, "folder": "/w", "agent": "codex", "command": ["codex"],
             "sandboxed": false, "kind": "agent", "parent": null, "worktree": null,
             "session_id": null, "resumable": false, "state": "running", "pid": 7,
             "exit_code": null, "agent_state": "blocked",
             "agent_state_since": "2026-12-01T18:41:38.123Z", "bells": 3, "unread_reviews": 1},
        ]);
        let before = serde_json::to_string_pretty(&wire).unwrap();
        let rows = decode::<ListTabs>(wire).unwrap();
        assert_eq!(json_text(&rows).unwrap(), before);
    }

    /// A program's text in a row (its refusal, a folder's name) reaches the
    /// terminal through --json with C1 and bidi characters escaped.
    #[test]
    fn json_rows_escape_what_would_reorder_or_drive_the_terminal() {
        let wire = serde_json::json!([{
            "id": "ab12", "folder": "/w/\u{202e}gpj.exe", "agent": "sh", "command": ["sh"],
            "sandboxed": false, "kind": "agent", "parent": null, "worktree": null,
            "session_id": null, "resumable": false, "state": "refused",
            "reason": "bad \u{9b}2J", "pid": null, "exit_code": null,
            "agent_state": null, "agent_state_since": null, "bells": 0, "unread_reviews": 0,
        }]);
        let rows = decode::<ListTabs>(wire).unwrap();
        let text = json_text(&rows).unwrap();
        assert!(
            text.contains("/w/\\u202egpj.exe") && text.contains("bad \\u009b2J"),
            "{text}"
        );
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back[0]["reason"], "bad \u{9b}2J");
    }

    /// Each agent state has its cell; blocked stands out without colour;
    /// a program that is not running shows the program's state.
    #[test]
    fn state_cells() {
        let row = |state: &str, agent: Option<&str>| {
            let wire = serde_json::json!([{
                "id": "ab12", "folder": "/w", "agent": "claude", "command": ["claude"],
                "sandboxed": false, "kind": "agent", "parent": null, "worktree": null,
                "session_id": null, "resumable": false, "state": state, "pid": 1,
                "exit_code": if state == "exited" { Some(0) } else { None },
                "agent_state": agent, "agent_state_since": null, "bells": 0,
            }]);
            decode::<ListTabs>(wire).unwrap().remove(0)
        };
        #[rustfmt::skip]
        let rows = [
            ("running", Some("blocked"), "BLOCKED", Some("1;31")),
            ("running", Some("working"), "working", Some("33")),
            ("running", Some("done"), "done", Some("1;32")),
            ("running", Some("idle"), "idle", None),
            ("running", Some("unknown"), "running", None),
            ("running", None, "running", None),
            ("exited", None, "exited(0)", None),
            // A stale agent state never shows over the program's end.
            ("exited", Some("blocked"), "exited(0)", None),
            ("starting", None, "starting", None),
        ];
        for (state, agent, cell, colour) in rows {
            let (got, c) = state_cell(&row(state, agent));
            assert_eq!((got.as_str(), c), (cell, colour), "{state} {agent:?}");
        }
        let t = [
            row("running", Some("blocked")),
            row("running", Some("idle")),
        ];
        let plain = table(&t, false, false);
        assert!(
            plain.contains("BLOCKED") && !plain.contains('\x1b'),
            "{plain}"
        );
        // A tab's warning and a refusal's reason follow the table, whole.
        let mut warned = row("running", Some("idle"));
        warned.warning = Some("screen rules not used: x.toml:6: fix it".into());
        let mut refused = row("refused", None);
        refused.reason = Some("the check reached the user bus".into());
        let text = table(&[warned, refused], false, false);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5, "{text}");
        assert_eq!(
            lines[3],
            "ab12: warning: screen rules not used: x.toml:6: fix it"
        );
        assert_eq!(lines[4], "ab12: refused: the check reached the user bus");
        let coloured = table(&t, false, true);
        assert!(coloured.contains("\x1b[1;31mBLOCKED"), "{coloured:?}");
        // The colour's escapes take no room: PID lines up on both rows.
        let pid_at: Vec<usize> = table(&t, false, false)
            .lines()
            .map(|l| l.rfind('1').unwrap_or(0))
            .skip(1)
            .collect();
        assert_eq!(pid_at[0], pid_at[1], "{plain}");
    }

    /// A switched tab's AGENT names each agent in turn, from its
    /// `switches`, and its JSON carries them.
    #[test]
    fn a_switched_tab_shows_its_agents_in_turn() {
        let wire = serde_json::json!([{
            "id": "ab12", "folder": "/w", "agent": "codex", "command": ["codex"],
            "sandboxed": true, "kind": "agent", "parent": null, "worktree": null,
            "session_id": null, "resumable": false, "state": "running", "pid": 1,
            "exit_code": null,
            "switches": [{"from": "claude", "to": "codex", "at": "2025-12-02T16:00:00Z"}],
        }]);
        let rows = decode::<ListTabs>(wire).unwrap();
        let text = table(&rows, false, false);
        assert!(text.contains("claude→codex [sb]"), "{text}");
        let json = json_text(&rows).unwrap();
        assert!(json.contains("\"switches\""), "{json}");
    }
}
