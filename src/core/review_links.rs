//! Which tab reviews which, as the privilege model reads it
//! (`privilege::link`): each reviewer tab's author, mirrored in the
//! core's state from `reviews.json` each time the core writes that file
//! (and once at start), so deciding a request needs no file read and
//! happens under the state lock like every other fact about a tab. The
//! file is read and written at the edge (`Core::update_reviews`), never
//! under the lock; a later write's mirror is never replaced by an
//! earlier one's ([`ReviewLinks::set`]).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::protocol::api::TabInfo;
use crate::review::store::AuthorLine;

/// Each reviewer tab's author, as of write `seq` of `reviews.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReviewLinks {
    seq: u64,
    pub author_of: BTreeMap<String, AuthorLine>,
}

/// Numbers each read of the store under its file lock: the order the
/// store's writes happened in.
static SEQ: AtomicU64 = AtomicU64::new(0);

/// A number for the store as it is now; call it under the store's file
/// lock (`review::store::update`), so the numbers follow the writes.
pub fn next_seq() -> u64 {
    SEQ.fetch_add(1, Ordering::SeqCst) + 1
}

impl ReviewLinks {
    /// A row of `nerdr tabs` (and of a window's list) with the author tab
    /// it reviews, for a reviewer.
    pub fn mark(&self, mut info: TabInfo) -> TabInfo {
        info.reviews = self.author_of.get(&info.id).map(|a| a.author.clone());
        info
    }

    /// Take the mirror of the store as it was at `seq`, unless a later one
    /// is held already.
    pub fn set(&mut self, seq: u64, author_of: BTreeMap<String, AuthorLine>) {
        if seq > self.seq {
            *self = ReviewLinks { seq, author_of };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_later_mirror_is_never_replaced_by_an_earlier_one() {
        let map = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(r, a)| {
                    let author = AuthorLine {
                        author: a.to_string(),
                        line: Vec::new(),
                    };
                    (r.to_string(), author)
                })
                .collect::<BTreeMap<_, _>>()
        };
        let mut links = ReviewLinks::default();
        links.set(2, map(&[("r1", "a1"), ("r2", "a1")]));
        links.set(1, map(&[("r1", "a1")]));
        assert_eq!(links.author_of, map(&[("r1", "a1"), ("r2", "a1")]));
        links.set(3, map(&[]));
        assert!(links.author_of.is_empty());
    }
}
