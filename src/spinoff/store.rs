//! Spinoffs kept in `spinoffs.json` in the state dir (0600; it outlives a
//! core restart as `tabs.json` does): each spun-off tab's parent, where its
//! branch started, and the results it reported, delivered or waiting for
//! its parent. The decisions over it are pure methods; [`load`] and
//! [`save`] are the only I/O, run by the core off its async workers and
//! never under its state lock. A record goes once both its tabs are
//! closed ([`Store::prune`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// How many results a spinoff keeps, the latest.
pub const KEEP: usize = 10;

/// One spun-off tab.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spinoff {
    /// The tab it was spun off from, which its results go to.
    pub parent: String,
    /// The spun-off agent (its config name).
    pub agent: String,
    /// The spun-off agent runs sandboxed: its results carry the note.
    pub sandboxed: bool,
    /// The parent's HEAD it branched from: its commits are `base..branch`.
    pub base: String,
    /// Its own branch (`nerdr/<tab>`).
    pub branch: String,
    /// The task, its first prompt.
    pub task: String,
    /// Its first prompt was typed; one restarted before that gets it then.
    #[serde(default)]
    pub prompted: bool,
    /// When the typing of its task began (milliseconds since the epoch):
    /// a turn that ended after it with no result is "report due"
    /// (`spinoff::due`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompted_at: Option<u64>,
    #[serde(default)]
    pub results: Vec<Reported>,
}

/// One reported result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reported {
    /// 1, 2, ... per spinoff: later ones are follow-ups.
    pub number: u32,
    /// The message as the parent gets it (text, branch, commits, diffstat).
    pub message: String,
    pub held: Held,
    /// Written in a sandbox, as it was when reported (the reporter's
    /// standing or the record's): a result kept for later is delivered by
    /// this, never by what the tab runs by then
    /// (`delivery::written_in_sandbox`). Absent in results kept before it
    /// was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandboxed: Option<bool>,
}

/// A result waiting for its parent, as [`Store::waiting_for`] lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    /// The spun-off tab that reported it.
    pub tab: String,
    pub number: u32,
    pub message: String,
    /// Written in a sandbox (`delivery::written_in_sandbox`).
    pub sandboxed: bool,
}

/// Where a result is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Held {
    /// Typed into the parent.
    Delivered,
    /// Kept for the parent (its program ended, it is closed, or it waits
    /// on a question).
    Waiting,
    /// Put to the user as approval `id`.
    Approval(String),
    /// The user said no to approval `id`: never typed.
    Denied(String),
}

/// The whole file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Store {
    /// By spun-off tab.
    #[serde(default)]
    pub spinoffs: BTreeMap<String, Spinoff>,
}

/// What the tab list shows of the store, kept in the core's state: each
/// spun-off tab's parent, and each parent's waiting results.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Links {
    pub parent_of: BTreeMap<String, String>,
    pub waiting: BTreeMap<String, usize>,
    /// Each spun-off tab whose task was typed and that reported nothing
    /// yet: when its task was typed (`spinoff::due`).
    pub unreported: BTreeMap<String, std::time::SystemTime>,
}

impl Store {
    /// Record spun-off tab `tab`.
    pub fn started(&mut self, tab: &str, spinoff: Spinoff) {
        self.spinoffs.insert(tab.to_string(), spinoff);
    }

    /// Add tab `tab`'s result `message`, waiting, written in a sandbox or
    /// not; its number, or `None` when `tab` is no spinoff.
    pub fn report(
        &mut self,
        tab: &str,
        sandboxed: bool,
        message: impl FnOnce(u32) -> String,
    ) -> Option<u32> {
        let s = self.spinoffs.get_mut(tab)?;
        let number = s.results.last().map_or(1, |r| r.number + 1);
        s.results.push(Reported {
            number,
            message: message(number),
            held: Held::Waiting,
            sandboxed: Some(sandboxed),
        });
        let extra = s.results.len().saturating_sub(KEEP);
        // The oldest delivered go first; a waiting one is never dropped
        // unseen while there is a delivered one to drop.
        for _ in 0..extra {
            match s.results.iter().position(|r| r.held == Held::Delivered) {
                Some(i) => drop(s.results.remove(i)),
                None => drop(s.results.remove(0)),
            }
        }
        Some(number)
    }

    /// Where result `number` of tab `tab` is now.
    pub fn set(&mut self, tab: &str, number: u32, held: Held) {
        if let Some(r) = self
            .spinoffs
            .get_mut(tab)
            .and_then(|s| s.results.iter_mut().find(|r| r.number == number))
        {
            r.held = held;
        }
    }

    /// The user answered approval `id`: the result put to them under it is
    /// now `held` (delivered or denied). Other results are left as they are.
    pub fn answered(&mut self, id: &str, held: Held) {
        for r in self
            .spinoffs
            .values_mut()
            .flat_map(|s| s.results.iter_mut())
        {
            if r.held == Held::Approval(id.to_string()) {
                r.held = held.clone();
            }
        }
    }

    /// The results waiting for tab `parent`, oldest first.
    pub fn waiting_for(&self, parent: &str) -> Vec<Waiting> {
        self.spinoffs
            .iter()
            .filter(|(_, s)| s.parent == parent)
            .flat_map(|(tab, s)| {
                s.results
                    .iter()
                    .filter(|r| r.held == Held::Waiting)
                    .map(move |r| Waiting {
                        tab: tab.clone(),
                        number: r.number,
                        message: r.message.clone(),
                        sandboxed: super::delivery::written_in_sandbox(
                            r.sandboxed,
                            s.sandboxed,
                            &r.message,
                        ),
                    })
            })
            .collect()
    }

    /// Drop the records whose spun-off tab and parent are both closed.
    pub fn prune(&mut self, live: &std::collections::BTreeSet<String>) {
        self.spinoffs
            .retain(|tab, s| live.contains(tab) || live.contains(&s.parent));
    }

    pub fn links(&self) -> Links {
        let mut links = Links::default();
        for (tab, s) in &self.spinoffs {
            links.parent_of.insert(tab.clone(), s.parent.clone());
            if let (Some(at), true) = (s.prompted_at, s.results.is_empty()) {
                links
                    .unreported
                    .insert(tab.clone(), super::due::from_millis(at));
            }
            let waiting = s.results.iter().filter(|r| r.held == Held::Waiting).count();
            if waiting > 0 {
                *links.waiting.entry(s.parent.clone()).or_default() += waiting;
            }
        }
        links
    }
}

pub fn file(state_dir: &Path) -> PathBuf {
    state_dir.join("spinoffs.json")
}

/// The store as written; none yet is empty. A file that does not read as
/// a store is an error naming it (never silently dropped: it holds
/// results).
pub fn load(path: &Path) -> Result<Store, String> {
    crate::json_store::load(path, "a spinoff store")
}

/// Load, change and save under one lock: two changes never interleave.
pub fn update<T>(path: &Path, change: impl FnOnce(&mut Store) -> T) -> Result<T, String> {
    static FILE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    crate::json_store::update(&FILE, path, "a spinoff store", change)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spinoff(parent: &str) -> Spinoff {
        Spinoff {
            parent: parent.into(),
            agent: "claude".into(),
            sandboxed: false,
            base: "b0".into(),
            branch: "nerdr/c1".into(),
            task: "do it".into(),
            prompted: false,
            prompted_at: None,
            results: vec![],
        }
    }

    #[test]
    fn results_are_numbered_and_wait_until_delivered() {
        let mut s = Store::default();
        s.started("c1", spinoff("p1"));
        s.started("c2", spinoff("p1"));
        assert_eq!(
            s.report("nope", false, |_| "x".into()),
            None,
            "no spinoff, no result"
        );
        assert_eq!(s.report("c1", false, |n| format!("one {n}")), Some(1));
        assert_eq!(s.report("c1", false, |n| format!("two {n}")), Some(2));
        assert_eq!(s.report("c2", false, |n| format!("other {n}")), Some(1));
        assert_eq!(s.links().waiting["p1"], 3);
        assert_eq!(s.links().parent_of["c2"], "p1");
        s.set("c1", 1, Held::Delivered);
        s.set("c2", 1, Held::Approval("q1".into()));
        let waiting = s.waiting_for("p1");
        let want = Waiting {
            tab: "c1".into(),
            number: 2,
            message: "two 2".into(),
            sandboxed: false,
        };
        assert_eq!(waiting, vec![want]);
        assert_eq!(s.links().waiting["p1"], 1);
        assert!(s.waiting_for("p2").is_empty());
    }

    #[test]
    fn an_answered_approval_settles_only_the_result_put_under_it() {
        let held = |s: &Store, tab: &str, n: u32| {
            s.spinoffs[tab]
                .results
                .iter()
                .find(|r| r.number == n)
                .unwrap()
                .held
                .clone()
        };
        for (yes, want) in [(true, Held::Delivered), (false, Held::Denied("q1".into()))] {
            let mut s = Store::default();
            s.started("c1", spinoff("p1"));
            s.started("c2", spinoff("p1"));
            s.report("c1", true, |_| "a".into());
            s.report("c1", true, |_| "b".into());
            s.report("c2", true, |_| "c".into());
            s.set("c1", 1, Held::Approval("q1".into()));
            s.set("c2", 1, Held::Approval("q2".into()));
            s.answered(
                "q1",
                if yes {
                    Held::Delivered
                } else {
                    Held::Denied("q1".into())
                },
            );
            assert_eq!(held(&s, "c1", 1), want);
            assert_eq!(held(&s, "c1", 2), Held::Waiting);
            assert_eq!(held(&s, "c2", 1), Held::Approval("q2".into()));
            s.answered("q9", Held::Delivered);
            assert_eq!(held(&s, "c2", 1), Held::Approval("q2".into()));
        }
    }

    #[test]
    fn a_typed_task_with_no_result_is_listed_unreported() {
        let mut s = Store::default();
        s.started("c1", spinoff("p1"));
        s.started("c2", spinoff("p1"));
        assert!(s.links().unreported.is_empty(), "no task typed yet");
        for tab in ["c1", "c2"] {
            s.spinoffs.get_mut(tab).unwrap().prompted_at = Some(1_000);
        }
        s.report("c2", false, |_| "done".into());
        let links = s.links();
        let listed: Vec<&str> = links.unreported.keys().map(String::as_str).collect();
        assert_eq!(listed, ["c1"]);
        assert_eq!(
            links.unreported["c1"],
            super::super::due::from_millis(1_000)
        );
    }

    /// A result reported from a sandbox by a tab whose record says it is
    /// not (it was switched to a sandboxed agent after its spinoff) keeps
    /// saying so while it waits, across a save.
    #[test]
    fn a_kept_result_keeps_where_it_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let f = file(dir.path());
        update(&f, |s| {
            s.started("c1", spinoff("p1"));
            s.report("c1", true, |_| "from a sandbox".into());
            s.report("c1", false, |_| "not".into());
        })
        .unwrap();
        let kept: Vec<bool> = load(&f)
            .unwrap()
            .waiting_for("p1")
            .iter()
            .map(|w| w.sandboxed)
            .collect();
        assert_eq!(kept, [true, false]);
    }

    #[test]
    fn the_oldest_delivered_go_first_past_the_limit() {
        let mut s = Store::default();
        s.started("c1", spinoff("p1"));
        s.report("c1", false, |_| "first, waiting".into());
        for _ in 0..KEEP {
            let n = s.report("c1", false, |_| "x".into()).unwrap();
            s.set("c1", n, Held::Delivered);
        }
        let kept = &s.spinoffs["c1"].results;
        assert_eq!(kept.len(), KEEP);
        assert_eq!(kept[0].number, 1, "the waiting one stays");
        assert_eq!(kept[1].number, 3, "the oldest delivered went");
    }

    #[test]
    fn a_record_goes_once_both_tabs_are_closed() {
        let mut s = Store::default();
        s.started("c1", spinoff("p1"));
        s.started("c2", spinoff("p2"));
        s.started("c3", spinoff("p3"));
        let live = ["c1", "p2"].map(String::from).into_iter().collect();
        s.prune(&live);
        let left: Vec<&str> = s.spinoffs.keys().map(String::as_str).collect();
        assert_eq!(left, ["c1", "c2"]);
    }

    #[test]
    fn a_file_that_is_no_store_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let f = file(dir.path());
        assert_eq!(load(&f).unwrap(), Store::default());
        update(&f, |s| s.started("c1", spinoff("p1"))).unwrap();
        assert_eq!(load(&f).unwrap().spinoffs["c1"].parent, "p1");
        std::fs::write(&f, "nonsense").unwrap();
        let e = load(&f).unwrap_err();
        assert!(
            e.contains("spinoffs.json") && e.contains("move it aside"),
            "{e}"
        );
    }
}
