//! Which tabs need the person, as this window sees them: the marks on
//! background tabs (one that turned `blocked` or `done` unseen, one that
//! rang its bell) and the order the jump key visits them in. Pure: the
//! window feeds it each tab list and the tab it shows; nothing here reads
//! the clock or the terminal.
//!
//! A mark belongs to this window: another window showing the tab does not
//! clear it here, but the tab leaving `blocked`/`done` does (someone
//! answered it, or the core turned an unseen `done` into `idle` because a
//! window showed it), since the mark says "this needs you" and it no
//! longer does. A bell mark stays until this window shows the tab: a bell
//! says nothing about when it was dealt with.

use std::collections::HashMap;

use crate::protocol::api::{AgentState, TabInfo};

/// What this window remembers of one tab.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Seen {
    state: Option<AgentState>,
    bells: u64,
    /// Turned `blocked` or `done` while this window showed another tab,
    /// and not shown since.
    unseen: bool,
    /// Its bell count went up while this window showed another tab.
    bell: bool,
}

/// The marks of one tab, for the status line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TabMarks {
    /// A `blocked` or `done` state this window has not shown yet.
    pub unseen: bool,
    pub bell: bool,
}

#[derive(Debug, Default)]
pub struct Marks {
    tabs: HashMap<String, Seen>,
    /// Whether a tab list came before: the first one is what was there
    /// when the window attached.
    started: bool,
}

fn wants_you(s: Option<AgentState>) -> bool {
    matches!(s, Some(AgentState::Blocked | AgentState::Done))
}

impl Marks {
    /// Take a new tab list; `showing` is the tab this window shows.
    ///
    /// On attach, a background tab already `blocked` or `done` is marked:
    /// nobody looked at it in this window, and `done` means nobody looked
    /// at all. Bells rung before the window attached are not: only a
    /// count that goes up while the window watches is news.
    pub fn update(&mut self, tabs: &[TabInfo], showing: Option<&str>) {
        let first = !self.started;
        self.started = true;
        let mut next = HashMap::with_capacity(tabs.len());
        for t in tabs {
            let shown = showing == Some(t.id.as_str());
            let seen = match self.tabs.remove(&t.id) {
                Some(old) => Seen {
                    unseen: !shown
                        && wants_you(t.agent_state)
                        && (old.unseen || old.state != t.agent_state),
                    bell: !shown && (old.bell || t.bells > old.bells),
                    state: t.agent_state,
                    bells: t.bells,
                },
                // A tab that appeared after attach is news like a change.
                None => Seen {
                    unseen: !shown && wants_you(t.agent_state),
                    bell: !shown && !first && t.bells > 0,
                    state: t.agent_state,
                    bells: t.bells,
                },
            };
            next.insert(t.id.clone(), seen);
        }
        self.tabs = next;
    }

    /// The window shows `tab` now: its marks go.
    pub fn shown(&mut self, tab: &str) {
        if let Some(s) = self.tabs.get_mut(tab) {
            s.unseen = false;
            s.bell = false;
        }
    }

    pub fn get(&self, tab: &str) -> TabMarks {
        self.tabs
            .get(tab)
            .map(|s| TabMarks {
                unseen: s.unseen,
                bell: s.bell,
            })
            .unwrap_or_default()
    }
}

/// Why a tab is a place the jump key goes to; the order is the order of
/// the visit: every blocked tab before any done one, bells last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Need {
    Blocked,
    Done,
    Bell,
}

fn need(t: &TabInfo, m: TabMarks) -> Option<Need> {
    match t.agent_state {
        Some(AgentState::Blocked) => Some(Need::Blocked),
        Some(AgentState::Done) => Some(Need::Done),
        _ if m.bell => Some(Need::Bell),
        _ => None,
    }
}

/// The tab the jump key goes to from `current`: the first blocked tab
/// after it in tab order (wrapping), else the first done one, else the
/// first one whose bell is marked. The shown tab itself is never the
/// answer, so pressing the key again moves on among tabs of the same
/// need, and `None` means no other tab needs the person.
///
/// A blocked tab counts whether or not it is marked: one the person looked
/// at and left still waits for them.
pub fn next_needing(tabs: &[TabInfo], marks: &Marks, current: Option<usize>) -> Option<usize> {
    let n = tabs.len();
    let start = current.map(|c| c + 1).unwrap_or(0);
    (0..n)
        .map(|k| (start + k) % n)
        .filter(|&i| Some(i) != current)
        .filter_map(|i| need(&tabs[i], marks.get(&tabs[i].id)).map(|why| (why, i)))
        .enumerate()
        // Earlier in the walk from `current` wins among equal needs.
        .min_by_key(|&(walk, (why, _))| (why, walk))
        .map(|(_, (_, i))| i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::api::TabState;
    use AgentState::*;

    pub(crate) fn tab(id: &str, state: Option<AgentState>, bells: u64) -> TabInfo {
        TabInfo {
            unread_reviews: 0,
            id: id.into(),
            name: String::new(),
            number: 0,
            folder: "/w".into(),
            agent: "claude".into(),
            command: vec![],
            sandboxed: false,
            kind: Default::default(),
            parent: None,
            worktree: None,
            session_id: None,
            resumable: false,
            state: TabState::Running,
            reason: None,
            pid: None,
            exit_code: None,
            warning: None,
            agent_state: state,
            agent_state_since: None,
            bells,
            spun_off_from: None,
            reviews: None,
            results_waiting: 0,
            report_due: false,
            handed_to_you: false,
            switches: Vec::new(),
            limit: None,
        }
    }

    fn marks_of(m: &Marks, id: &str) -> (bool, bool) {
        let t = m.get(id);
        (t.unseen, t.bell)
    }

    /// Each row: tab `b`'s state and bells at attach, then after one
    /// change, whether the window shows `b` at the change, and `b`'s marks
    /// (unseen, bell) after it.
    #[test]
    fn marks_follow_background_changes() {
        #[rustfmt::skip]
        type Row = (Option<AgentState>, u64, Option<AgentState>, u64, bool, (bool, bool));
        let rows: &[Row] = &[
            // Background changes into blocked/done mark the tab.
            (Some(Working), 0, Some(Blocked), 0, false, (true, false)),
            (Some(Working), 0, Some(Done), 0, false, (true, false)),
            (Some(Idle), 0, Some(Blocked), 0, false, (true, false)),
            // Other states do not.
            (Some(Idle), 0, Some(Working), 0, false, (false, false)),
            (Some(Working), 0, Some(Idle), 0, false, (false, false)),
            (None, 0, Some(Unknown), 0, false, (false, false)),
            // Shown while it changes: nothing to mark.
            (Some(Working), 0, Some(Blocked), 0, true, (false, false)),
            (Some(Idle), 2, Some(Idle), 3, true, (false, false)),
            // A bell: the count going up marks, the same count does not.
            (Some(Idle), 2, Some(Idle), 3, false, (false, true)),
            (Some(Idle), 2, Some(Idle), 2, false, (false, false)),
            (None, 0, None, 1, false, (false, true)),
            // Blocked at attach is marked, and stays so while blocked.
            (Some(Blocked), 0, Some(Blocked), 0, false, (true, false)),
            (Some(Done), 0, Some(Done), 0, false, (true, false)),
            // Answered elsewhere (blocked -> working), or done turned idle
            // by another window: the need is gone.
            (Some(Blocked), 0, Some(Working), 0, false, (false, false)),
            (Some(Done), 0, Some(Idle), 0, false, (false, false)),
            // Blocked -> done unseen: still marked.
            (Some(Blocked), 0, Some(Done), 0, false, (true, false)),
        ];
        for (i, &(s0, b0, s1, b1, shown, want)) in rows.iter().enumerate() {
            let mut m = Marks::default();
            m.update(&[tab("a", None, 0), tab("b", s0, b0)], Some("a"));
            let showing = if shown { "b" } else { "a" };
            m.update(&[tab("a", None, 0), tab("b", s1, b1)], Some(showing));
            assert_eq!(
                marks_of(&m, "b"),
                want,
                "row {i}: {s0:?}/{b0} -> {s1:?}/{b1}"
            );
        }
    }

    #[test]
    fn showing_a_tab_clears_its_marks_until_it_changes_again() {
        let mut m = Marks::default();
        m.update(&[tab("a", None, 0), tab("b", Some(Working), 0)], Some("a"));
        m.update(&[tab("a", None, 0), tab("b", Some(Blocked), 1)], Some("a"));
        assert_eq!(marks_of(&m, "b"), (true, true));
        m.shown("b");
        assert_eq!(marks_of(&m, "b"), (false, false));
        // Back to another tab: still blocked, but seen; no new bell.
        m.update(&[tab("a", None, 0), tab("b", Some(Blocked), 1)], Some("a"));
        assert_eq!(marks_of(&m, "b"), (false, false));
        // It works and blocks again behind the person's back.
        m.update(&[tab("a", None, 0), tab("b", Some(Working), 1)], Some("a"));
        m.update(&[tab("a", None, 0), tab("b", Some(Blocked), 2)], Some("a"));
        assert_eq!(marks_of(&m, "b"), (true, true));
    }

    #[test]
    fn bells_before_attach_are_not_news_but_a_new_tab_is() {
        let mut m = Marks::default();
        m.update(&[tab("a", None, 0), tab("b", None, 5)], Some("a"));
        assert_eq!(marks_of(&m, "b"), (false, false));
        m.update(
            &[
                tab("a", None, 0),
                tab("b", None, 5),
                tab("c", Some(Blocked), 1),
            ],
            Some("a"),
        );
        assert_eq!(marks_of(&m, "c"), (true, true));
        // One the window shows as it appears (it started it) is not news.
        m.update(
            &[
                tab("a", None, 0),
                tab("b", None, 5),
                tab("c", Some(Blocked), 1),
                tab("d", Some(Done), 1),
            ],
            Some("d"),
        );
        assert_eq!(marks_of(&m, "d"), (false, false));
        // A tab that goes away takes its marks with it.
        m.update(&[tab("a", None, 0)], Some("a"));
        assert_eq!(marks_of(&m, "c"), (false, false));
    }

    /// Each row: the tabs' states (a letter per tab: b blocked, d done,
    /// g bell-marked idle, w working, i idle), the shown tab, the tab the
    /// jump goes to.
    #[test]
    fn the_jump_goes_to_blocked_first_then_done_then_bells() {
        #[rustfmt::skip]
        let rows: &[(&str, Option<usize>, Option<usize>)] = &[
            ("wbdi", Some(0), Some(1)),
            ("wdbi", Some(0), Some(2)),
            ("wdgi", Some(0), Some(1)),
            ("wgii", Some(0), Some(1)),
            ("wiii", Some(0), None),
            ("bwii", Some(0), None),
            ("bwdi", Some(0), Some(2)),
            // Among blocked tabs: the next one after the shown tab, wrapping.
            ("bwbb", Some(2), Some(3)),
            ("bwbb", Some(3), Some(0)),
            ("bibd", Some(1), Some(2)),
            // Nothing shown yet: from the first tab.
            ("ddb", None, Some(2)),
            ("dwd", None, Some(0)),
            ("", None, None),
        ];
        for &(states, current, want) in rows {
            let mut tabs = Vec::new();
            let mut m = Marks::default();
            let ids: Vec<String> = (0..states.len()).map(|i| format!("t{i}")).collect();
            // Attach with every tab idle and no bells, then change.
            let idle: Vec<TabInfo> = ids.iter().map(|id| tab(id, Some(Idle), 0)).collect();
            m.update(&idle, None);
            for (id, c) in ids.iter().zip(states.chars()) {
                let (s, bells) = match c {
                    'b' => (Blocked, 0),
                    'd' => (Done, 0),
                    'g' => (Idle, 1),
                    'w' => (Working, 0),
                    _ => (Idle, 0),
                };
                tabs.push(tab(id, Some(s), bells));
            }
            m.update(&tabs, None);
            assert_eq!(
                next_needing(&tabs, &m, current),
                want,
                "{states} from {current:?}"
            );
        }
    }
}
