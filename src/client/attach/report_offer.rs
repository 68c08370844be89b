//! The window's offer to report for a spun-off tab whose agent's turn
//! ended with no result (`TabInfo::report_due`, `spinoff::due`): the
//! status line says once how (prefix `P`), short, and the note goes once
//! the tab is no longer due (reported); the key asks y/n about the shown
//! tab when it is due, else the first due tab of the session, naming its
//! parent as the person knows it. Pure: the tab list in, the line to show
//! (or the tab to ask about) out.

use std::collections::HashSet;

use crate::protocol::api::TabInfo;
use crate::protocol::printable;

/// The offer's line for `t`.
fn line(t: &TabInfo, prefix: &str) -> String {
    format!(
        "tab {} ({}) ended its turn unreported: {prefix} P reports it",
        t.number,
        printable(&t.name),
    )
}

/// The offer to show for the tabs that newly became due (the first of
/// them), remembering them in `offered`; tabs no longer due are forgotten,
/// so a later turn that ends unreported is offered again.
pub fn offer(offered: &mut HashSet<String>, tabs: &[TabInfo], prefix: &str) -> Option<String> {
    offered.retain(|id| tabs.iter().any(|t| &t.id == id && t.report_due));
    let mut shown = None;
    for t in tabs {
        if t.report_due && offered.insert(t.id.clone()) && shown.is_none() {
            shown = Some(line(t, prefix));
        }
    }
    shown
}

/// Whether `note` is the offer for a tab that is no longer due (reported,
/// or closed): it is then cleared, not left saying what is done.
pub fn withdrawn(note: &str, tabs: &[TabInfo], prefix: &str) -> bool {
    note.ends_with(&format!(": {prefix} P reports it"))
        && !tabs.iter().any(|t| t.report_due && line(t, prefix) == note)
}

/// A tab as the person knows it, `tab 2 (codex-1)`, by its id.
pub fn named(tabs: &[TabInfo], id: &str) -> String {
    match tabs.iter().find(|t| t.id == id) {
        Some(t) if t.number > 0 => format!("tab {} ({})", t.number, printable(&t.name)),
        Some(t) => format!("tab {} ({})", printable(&t.id), printable(&t.name)),
        None => format!("tab {}", printable(id)),
    }
}

/// The tab prefix `P` reports for: the shown tab when it is due, else the
/// first due tab.
pub fn target<'a>(tabs: &'a [TabInfo], shown: Option<&str>) -> Option<&'a TabInfo> {
    let due = |t: &&TabInfo| t.report_due;
    tabs.iter()
        .filter(due)
        .find(|t| Some(t.id.as_str()) == shown)
        .or_else(|| tabs.iter().find(due))
}

/// The y/n question before reporting for `t`, its parent named from
/// `tabs` (a closed parent by its id).
pub fn question(t: &TabInfo, tabs: &[TabInfo]) -> String {
    let parent = t.spun_off_from.as_deref().unwrap_or("?");
    format!(
        "report tab {} ({})'s last answer to {}? y/n",
        t.number,
        printable(&t.name),
        named(tabs, parent)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tab(id: &str, due: bool) -> TabInfo {
        let mut t: TabInfo = serde_json::from_value(serde_json::json!({
            "id": id, "name": format!("claude-{id}"), "folder": "/w", "agent": "claude",
            "command": ["claude"], "sandboxed": false, "state": "running", "pid": 1,
            "exit_code": null, "spun_off_from": "p0",
        }))
        .unwrap();
        t.report_due = due;
        t.number = usize::from(id.as_bytes()[0] - b'a') + 1;
        t
    }

    #[test]
    fn a_due_tab_is_offered_once_until_it_is_no_longer_due() {
        let mut offered = HashSet::new();
        let line = offer(&mut offered, &[tab("a", false), tab("b", true)], "C-b").unwrap();
        assert_eq!(
            line,
            "tab 2 (claude-b) ended its turn unreported: C-b P reports it"
        );
        assert!(!withdrawn(&line, &[tab("b", true)], "C-b"));
        // Reported: the note goes; another note stays.
        assert!(withdrawn(&line, &[tab("b", false)], "C-b"));
        assert!(withdrawn(&line, &[], "C-b"));
        assert!(!withdrawn("result 1 sent", &[tab("b", false)], "C-b"));
        assert_eq!(
            offer(&mut offered, &[tab("a", false), tab("b", true)], "C-b"),
            None,
            "said already"
        );
        assert_eq!(offer(&mut offered, &[tab("b", false)], "C-b"), None);
        assert!(offer(&mut offered, &[tab("b", true)], "C-b").is_some());
    }

    #[test]
    fn the_key_reports_for_the_shown_tab_when_due_else_the_first_due() {
        let tabs = [tab("a", true), tab("b", false), tab("c", true)];
        for (shown, want) in [
            (Some("c"), Some("c")),
            (Some("a"), Some("a")),
            (Some("b"), Some("a")),
            (None, Some("a")),
        ] {
            assert_eq!(
                target(&tabs, shown).map(|t| t.id.as_str()),
                want,
                "{shown:?}"
            );
        }
        assert!(target(&[tab("a", false)], Some("a")).is_none());
        assert_eq!(
            question(&tabs[2], &tabs),
            "report tab 3 (claude-c)'s last answer to tab p0? y/n",
            "a closed parent, by its id"
        );
        let mut parent = tab("d", false);
        parent.id = "p0".into();
        parent.name = "codex-1".into();
        assert_eq!(
            question(&tabs[2], &[tabs[2].clone(), parent]),
            "report tab 3 (claude-c)'s last answer to tab 4 (codex-1)? y/n"
        );
    }
}
