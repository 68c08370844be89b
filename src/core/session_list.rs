//! `nerdr sessions`: the sessions a caller may see, each named and with its
//! tabs counted. Pure over plain data: the core gathers each live session's
//! tabs (what each is to the caller, whether it runs, its agent's state)
//! under its lock, and this decides what the caller gets.

use std::path::{Path, PathBuf};

use super::privilege::{self, CallerKind, Operation, Target, Verdict};
use crate::protocol::api::{AgentState, SessionInfo};

/// One tab of a session, as listing it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TabFacts {
    /// What the tab is to the caller.
    pub target: Target,
    pub running: bool,
    pub agent_state: Option<AgentState>,
}

/// The sessions `caller` may see among `sessions` (folder, tabs; in the
/// core's order): a session with a tab it may see, or, for the person,
/// any (a window open on a folder with no tabs yet). Only the tabs it may
/// see are counted; names are unique among the sessions listed.
pub fn list(caller: CallerKind, sessions: &[(PathBuf, Vec<TabFacts>)]) -> Vec<SessionInfo> {
    let seen: Vec<(&Path, Vec<&TabFacts>)> = sessions
        .iter()
        .map(|(folder, tabs)| {
            let tabs = tabs
                .iter()
                .filter(|t| privilege::decide(caller, Operation::See, t.target) == Verdict::Allow)
                .collect();
            (folder.as_path(), tabs)
        })
        .filter(|(_, tabs): &(&Path, Vec<&TabFacts>)| privilege::sees_session(caller, tabs.len()))
        .collect();
    let names = unique_names(seen.iter().map(|(f, _)| *f));
    seen.into_iter()
        .zip(names)
        .map(|((folder, tabs), name)| {
            let state = |s| tabs.iter().filter(|t| t.agent_state == Some(s)).count();
            SessionInfo {
                folder: folder.to_path_buf(),
                name,
                tabs: tabs.len(),
                running: tabs.iter().filter(|t| t.running).count(),
                blocked: state(AgentState::Blocked),
                done: state(AgentState::Done),
            }
        })
        .collect()
}

/// Each folder's last component, in order, made unique: a later folder
/// whose name is taken gets the lowest `-N` (from 2) that is free.
pub fn unique_names<'a>(folders: impl Iterator<Item = &'a Path>) -> Vec<String> {
    let mut taken: Vec<String> = Vec::new();
    for folder in folders {
        let base = folder
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| folder.display().to_string());
        let name = std::iter::once(base.clone())
            .chain((2..).map(|n| format!("{base}-{n}")))
            .find(|n| !taken.contains(n))
            .expect("some number is free");
        taken.push(name);
    }
    taken
}

#[cfg(test)]
mod tests {
    use super::*;
    use AgentState::*;
    use CallerKind::{Sandboxed, Tab as InTab, User};
    use Target::{Agent as Out, Own, SandboxedAgent as In, Terminal as Term};

    fn tab(target: Target, running: bool, agent_state: Option<AgentState>) -> TabFacts {
        TabFacts {
            target,
            running,
            agent_state,
        }
    }

    fn sessions() -> Vec<(PathBuf, Vec<TabFacts>)> {
        vec![
            (
                "/a/proj".into(),
                vec![
                    tab(Out, true, Some(Working)),
                    tab(Out, true, Some(Blocked)),
                    tab(Term, true, None),
                    tab(Out, false, None),
                ],
            ),
            (
                "/b/proj".into(),
                vec![
                    tab(Own, true, Some(Done)),
                    tab(In, true, Some(Blocked)),
                    tab(Out, true, Some(Done)),
                ],
            ),
            // a window open on a folder with no tabs yet
            ("/c/empty".into(), vec![]),
        ]
    }

    fn rows(caller: CallerKind) -> Vec<(String, usize, usize, usize, usize)> {
        list(caller, &sessions())
            .into_iter()
            .map(|s| (s.name, s.tabs, s.running, s.blocked, s.done))
            .collect()
    }

    /// Who sees which session, and what is counted.
    #[test]
    fn each_caller_sees_and_counts_what_it_may() {
        let all = vec![
            ("proj".to_string(), 4, 3, 1, 0),
            ("proj-2".to_string(), 3, 3, 1, 2),
            ("empty".to_string(), 0, 0, 0, 0),
        ];
        assert_eq!(rows(User), all);
        // A program of an unsandboxed tab sees every tab, but an empty
        // session is only a window's.
        assert_eq!(rows(InTab), all[..2].to_vec());
        // A sandboxed agent: its own session, its own tab only; the name
        // is unique among what it sees.
        assert_eq!(rows(Sandboxed), vec![("proj".to_string(), 1, 1, 0, 1)]);
        let folders: Vec<PathBuf> = list(Sandboxed, &sessions())
            .into_iter()
            .map(|s| s.folder)
            .collect();
        assert_eq!(folders, [PathBuf::from("/b/proj")]);
    }

    #[test]
    fn names_are_unique() {
        let rows: &[(&[&str], &[&str])] = &[
            (
                &["/a/proj", "/b/proj", "/c/proj"],
                &["proj", "proj-2", "proj-3"],
            ),
            // a real folder already named like a made-up one
            (
                &["/a/proj", "/b/proj-2", "/c/proj"],
                &["proj", "proj-2", "proj-3"],
            ),
            (&["/a/x", "/b/y"], &["x", "y"]),
            (&["/"], &["/"]),
            (&[], &[]),
        ];
        for (folders, want) in rows {
            let got = unique_names(folders.iter().map(Path::new));
            assert_eq!(got, *want, "{folders:?}");
        }
    }
}
