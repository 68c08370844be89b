//! The window's offer to switch a tab whose agent hit its plan's limit:
//! when the tab list says a tab's screen matches a `limit = true` rule
//! (`TabInfo::limit`), the status line says once how to switch it (prefix
//! `A`, `nerdr switch`), until its screen stops saying so. Pure: the tab
//! list in, the line to show out.

use std::collections::HashSet;

use crate::protocol::api::TabInfo;
use crate::protocol::printable;

/// The offer to show for the tabs that newly hit their limit (the first of
/// them), remembering them in `offered`; tabs no longer at their limit are
/// forgotten, so a later limit is offered again.
pub fn offer(offered: &mut HashSet<String>, tabs: &[TabInfo], prefix: &str) -> Option<String> {
    offered.retain(|id| tabs.iter().any(|t| &t.id == id && t.limit.is_some()));
    let mut line = None;
    for t in tabs {
        if t.limit.is_some() && offered.insert(t.id.clone()) && line.is_none() {
            line = Some(format!(
                "tab {} ({}, {}) hit its plan's limit: {prefix} A switches it to another agent, \
                 with a handoff",
                t.number,
                printable(&t.name),
                printable(&t.agent)
            ));
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tab(id: &str, limit: bool) -> TabInfo {
        let mut t: TabInfo = serde_json::from_value(serde_json::json!({
            "id": id, "name": format!("claude-{id}"), "folder": "/w", "agent": "claude",
            "command": ["claude"], "sandboxed": false, "state": "running", "pid": 1,
            "exit_code": null,
        }))
        .unwrap();
        t.limit = limit.then(|| "usage limit".to_string());
        t.number = usize::from(id.as_bytes()[0] - b'a') + 1;
        t
    }

    #[test]
    fn a_limit_is_offered_once_until_it_is_gone() {
        let mut offered = HashSet::new();
        let line = offer(&mut offered, &[tab("a", false), tab("b", true)], "C-b").unwrap();
        assert!(
            line.starts_with("tab 2 (claude-b, claude) hit its plan's limit"),
            "{line}"
        );
        assert!(line.contains("C-b A switches it"), "{line}");
        // The same limit again: said already.
        assert_eq!(
            offer(&mut offered, &[tab("a", false), tab("b", true)], "C-b"),
            None
        );
        // Gone, then back: offered again.
        assert_eq!(offer(&mut offered, &[tab("b", false)], "C-b"), None);
        assert!(offer(&mut offered, &[tab("b", true)], "C-b").is_some());
    }
}
