//! Which posted reviews the person has not seen: a review comes in
//! unread (`Review::read`, kept in `reviews.json` with it), its author's
//! tab is marked in the window's status line and in `nerdr tabs` with the
//! count, and the window's review panel on that tab, or `nerdr reviews
//! TAB` printed for a person (not `--json`), marks them read. Pure.

use std::collections::BTreeMap;

use super::store::Store;

impl Store {
    /// How many of tab `author`'s reviews are unread.
    pub fn unread(&self, author: &str) -> usize {
        self.reviews_of(author).iter().filter(|r| !r.read).count()
    }

    /// Each author tab with unread reviews, and how many.
    pub fn unread_counts(&self) -> BTreeMap<String, usize> {
        self.authors
            .keys()
            .map(|a| (a.clone(), self.unread(a)))
            .filter(|(_, n)| *n > 0)
            .collect()
    }

    /// Mark tab `author`'s reviews read; how many were not.
    pub fn mark_read(&mut self, author: &str) -> usize {
        let Some(a) = self.authors.get_mut(author) else {
            return 0;
        };
        let mut n = 0;
        for r in a.reviews.iter_mut().filter(|r| !r.read) {
            r.read = true;
            n += 1;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::super::format::Posted;
    use super::super::store::Pending;
    use super::*;

    fn pending(author: &str) -> Pending {
        Pending {
            author: author.into(),
            agent: "rev".into(),
            base: "b".into(),
            head: "h".into(),
            branch: "nerdr/x".into(),
            sandboxed: false,
            automatic: false,
            posted: None,
            prompted: false,
            author_line: Vec::new(),
        }
    }

    fn post(s: &mut Store, reviewer: &str, author: &str) {
        s.requested(reviewer, pending(author));
        let posted: Posted = super::super::format::parse("summary: fine").unwrap();
        s.post(reviewer, false, posted).unwrap();
    }

    #[test]
    fn posted_reviews_are_unread_until_marked() {
        let mut s = Store::default();
        assert_eq!(s.unread("a"), 0, "no reviews, none unread");
        post(&mut s, "r1", "a");
        post(&mut s, "r2", "a");
        post(&mut s, "r3", "b");
        assert_eq!(s.unread("a"), 2);
        assert_eq!(
            s.unread_counts(),
            BTreeMap::from([("a".to_string(), 2), ("b".to_string(), 1)])
        );
        assert_eq!(s.mark_read("a"), 2, "both were unread");
        assert_eq!(s.mark_read("a"), 0, "nothing left to mark");
        assert_eq!(s.mark_read("nobody"), 0);
        assert_eq!(s.unread_counts(), BTreeMap::from([("b".to_string(), 1)]));
        post(&mut s, "r4", "a");
        assert_eq!(s.unread("a"), 1, "a new review is unread again");
    }

    #[test]
    fn a_store_written_before_the_flag_reads_as_read() {
        let old = serde_json::json!({
            "authors": {"a": {"reviews": [{
                "number": 1, "reviewer_tab": "r", "agent": "rev",
                "written_in_sandbox": false, "base": "b", "head": "h",
                "summary": "ok", "comments": [],
            }]}}
        });
        let s: Store = serde_json::from_value(old).unwrap();
        assert_eq!(s.unread("a"), 0);
    }
}
