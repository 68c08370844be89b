//! Which conversations a caller may search. Pure: who asks and what an
//! item is, in; yes or no, out. The core says who asks (the socket
//! peer, `core::caller`) and the scan what each item is.
//!
//! The person and an unsandboxed tab's program may read every log the
//! agents keep in their home anyway: they search everything. A sandboxed
//! tab's program searches only its own tab's conversation: the session id
//! nerdr gave its agent or the agent reported, run in the tab's own
//! folder (an id an agent claims for itself is not enough: the log must
//! say it ran where the tab runs). Also the reviews of its own work and
//! the ones it wrote; never another tab's conversation (it holds what was
//! said outside its sandbox), nor handoffs (the person's to read, as
//! `nerdr handoffs` is).

use std::path::Path;

/// Who searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Viewer<'a> {
    /// The person, or an unsandboxed tab's program.
    Everything,
    /// A sandboxed tab's program: its tab, and the conversation its agent
    /// is in (`None` while nerdr knows none).
    OwnTab {
        tab: &'a str,
        session: Option<&'a str>,
        /// Where the tab's agent runs (its worktree, or its folder).
        cwd: &'a Path,
    },
}

/// What one result would show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item<'a> {
    /// An agent's conversation log, by its session id and the folder it
    /// says it ran in.
    Conversation {
        session: &'a str,
        cwd: Option<&'a Path>,
    },
    /// A handoff to the person, from tab `tab`.
    Handoff { tab: &'a str },
    /// A review of tab `author`'s work, written in tab `reviewer`.
    Review { author: &'a str, reviewer: &'a str },
}

pub fn visible(viewer: Viewer, item: Item) -> bool {
    match (viewer, item) {
        (Viewer::Everything, _) => true,
        (
            Viewer::OwnTab { session, cwd, .. },
            Item::Conversation {
                session: s,
                cwd: ran,
            },
        ) => session == Some(s) && ran == Some(cwd),
        (Viewer::OwnTab { .. }, Item::Handoff { .. }) => false,
        (Viewer::OwnTab { tab, .. }, Item::Review { author, reviewer }) => {
            author == tab || reviewer == tab
        }
    }
}

/// Whether a log named for `session` may be opened at all for `viewer`
/// (before it is read, so before its folder is known): [`visible`]
/// decides on what it says once read.
pub fn may_open(viewer: Viewer, session: &str) -> bool {
    match viewer {
        Viewer::Everything => true,
        Viewer::OwnTab { session: own, .. } => own == Some(session),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn who_sees_what() {
        let here = Path::new("/w/tab1");
        let own = Viewer::OwnTab {
            tab: "t1",
            session: Some("s1"),
            cwd: here,
        };
        let unknown = Viewer::OwnTab {
            tab: "t1",
            session: None,
            cwd: here,
        };
        let conv = |s, cwd: Option<&'static str>| Item::Conversation {
            session: s,
            cwd: cwd.map(Path::new),
        };
        let review = |author, reviewer| Item::Review { author, reviewer };
        #[rustfmt::skip]
        let rows: &[(Viewer, Item, bool)] = &[
            (Viewer::Everything, conv("s1", Some("/w/tab1")), true),
            (Viewer::Everything, conv("s2", Some("/elsewhere")), true),
            (Viewer::Everything, conv("s2", None), true),
            (Viewer::Everything, Item::Handoff { tab: "t2" }, true),
            (Viewer::Everything, review("t2", "t3"), true),
            // A sandboxed tab: its own conversation, run where it runs.
            (own, conv("s1", Some("/w/tab1")), true),
            (own, conv("s1", Some("/w/tab2")), false),
            (own, conv("s1", Some("/w")), false),
            (own, conv("s1", None), false),
            (own, conv("s2", Some("/w/tab1")), false),
            (own, conv("", Some("/w/tab1")), false),
            (unknown, conv("s1", Some("/w/tab1")), false),
            (unknown, conv("", None), false),
            // Handoffs are the person's, its own too.
            (own, Item::Handoff { tab: "t1" }, false),
            (own, Item::Handoff { tab: "t2" }, false),
            // Reviews of its work, and the ones it wrote.
            (own, review("t1", "t2"), true),
            (own, review("t2", "t1"), true),
            (own, review("t2", "t3"), false),
            (unknown, review("t1", "t2"), true),
        ];
        for (viewer, item, want) in rows {
            assert_eq!(visible(*viewer, *item), *want, "{viewer:?} {item:?}");
        }
        #[rustfmt::skip]
        let opens: &[(Viewer, &str, bool)] = &[
            (Viewer::Everything, "s2", true),
            (own, "s1", true),
            (own, "s2", false),
            (unknown, "s1", false),
            (unknown, "", false),
        ];
        for (viewer, session, want) in opens {
            assert_eq!(may_open(*viewer, session), *want, "{viewer:?} {session}");
        }
    }
}
