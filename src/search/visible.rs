//! Which conversations a caller may search. Pure: who asks and what an
//! item is, in; yes or no, out. The core says who asks (the socket
//! peer, `core::caller`) and the scan what each item is.
//!
//! The person and an unsandboxed tab's program may read every log the
//! agents keep in their home anyway: they search everything. A sandboxed
//! tab's program searches only its own tab's conversation (the session id
//! nerdr gave its agent or the agent reported), the reviews of its own
//! work and the ones it wrote: never another tab's conversation (it holds
//! what was said outside its sandbox), nor handoffs (the person's to
//! read, as `nerdr handoffs` is).

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
    },
}

/// What one result would show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item<'a> {
    /// An agent's conversation log, by its session id.
    Conversation { session: &'a str },
    /// A handoff to the person, from tab `tab`.
    Handoff { tab: &'a str },
    /// A review of tab `author`'s work, written in tab `reviewer`.
    Review { author: &'a str, reviewer: &'a str },
}

pub fn visible(viewer: Viewer, item: Item) -> bool {
    match (viewer, item) {
        (Viewer::Everything, _) => true,
        (Viewer::OwnTab { session, .. }, Item::Conversation { session: s }) => session == Some(s),
        (Viewer::OwnTab { .. }, Item::Handoff { .. }) => false,
        (Viewer::OwnTab { tab, .. }, Item::Review { author, reviewer }) => {
            author == tab || reviewer == tab
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn who_sees_what() {
        let own = Viewer::OwnTab {
            tab: "t1",
            session: Some("s1"),
        };
        let unknown = Viewer::OwnTab {
            tab: "t1",
            session: None,
        };
        let conv = |s| Item::Conversation { session: s };
        let review = |author, reviewer| Item::Review { author, reviewer };
        #[rustfmt::skip]
        let rows: &[(Viewer, Item, bool)] = &[
            (Viewer::Everything, conv("s1"), true),
            (Viewer::Everything, conv("s2"), true),
            (Viewer::Everything, Item::Handoff { tab: "t2" }, true),
            (Viewer::Everything, review("t2", "t3"), true),
            // A sandboxed tab: its own conversation only.
            (own, conv("s1"), true),
            (own, conv("s2"), false),
            (own, conv(""), false),
            (unknown, conv("s1"), false),
            (unknown, conv(""), false),
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
    }
}
