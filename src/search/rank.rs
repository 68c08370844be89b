//! Which results come first. Pure: a conversation's matched messages in,
//! its place out.
//!
//! The order, first to last tie-breaker:
//! 1. more of the query's terms present (all of them first);
//! 2. more occurrences of them in all (term frequency);
//! 3. more recent (the log file's modification time: when its last
//!    message was written; a handoff's time);
//! 4. the source's name and id, so one query always lists the same way.

use std::cmp::Reverse;

use super::query::Terms;
use super::{Found, Hit};

/// The most matched messages a result shows.
pub const MAX_LINES: usize = 3;

/// The summary of one conversation's matched messages, `(text, is the
/// person's request, its time)` in order: `None` when none matched.
/// The lines shown are the [`MAX_LINES`] messages with the most terms,
/// then the most occurrences, in the conversation's order.
pub fn summarize(terms: &Terms, messages: &[(String, bool, Option<String>)]) -> Option<Summary> {
    let mut totals = vec![0usize; terms.count()];
    let mut matched: Vec<(usize, usize, usize)> = Vec::new();
    let mut last_at: Option<String> = None;
    for (i, (text, _, at)) in messages.iter().enumerate() {
        let counts = terms.counts(text);
        let present = counts.iter().filter(|&&c| c > 0).count();
        if present == 0 {
            continue;
        }
        for (t, c) in totals.iter_mut().zip(&counts) {
            *t += c;
        }
        matched.push((i, present, counts.iter().sum()));
        if at.is_some() {
            last_at.clone_from(at);
        }
    }
    if matched.is_empty() {
        return None;
    }
    let mut best = matched.clone();
    best.sort_by_key(|&(i, present, count)| (Reverse(present), Reverse(count), i));
    best.truncate(MAX_LINES);
    best.sort_by_key(|&(i, _, _)| i);
    let hits = best
        .into_iter()
        .map(|(i, _, count)| Hit {
            request: messages[i].1,
            snippet: super::query::snippet(&messages[i].0, terms),
            count,
        })
        .collect();
    Some(Summary {
        present: totals.iter().filter(|&&c| c > 0).count(),
        count: totals.iter().sum(),
        messages: matched.len(),
        last_at,
        hits,
    })
}

/// What [`summarize`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub present: usize,
    pub count: usize,
    /// How many messages matched.
    pub messages: usize,
    /// The time of the last matched message that carries one.
    pub last_at: Option<String>,
    pub hits: Vec<Hit>,
}

/// `found` best first (see the module's order).
pub fn rank(found: &mut [Found]) {
    found.sort_by(|a, b| {
        let key = |f: &Found| (Reverse(f.present), Reverse(f.count), Reverse(f.modified));
        key(a)
            .cmp(&key(b))
            .then_with(|| (a.source, &a.id).cmp(&(b.source, &b.id)))
    });
}

#[cfg(test)]
mod tests {
    use super::super::Source;
    use super::*;

    fn found(id: &str, present: usize, count: usize, modified: u64) -> Found {
        Found {
            source: Source::Claude,
            id: id.into(),
            present,
            count,
            modified,
            ..Found::default()
        }
    }

    #[test]
    fn all_terms_first_then_frequency_then_recency() {
        let mut rows = vec![
            found("one-term-many-times", 1, 50, 900),
            found("both-old", 2, 2, 100),
            found("both-often", 2, 9, 50),
            found("both-new", 2, 2, 200),
            found("tie-b", 1, 1, 10),
            found("tie-a", 1, 1, 10),
        ];
        rank(&mut rows);
        let order: Vec<&str> = rows.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(
            order,
            [
                "both-often",
                "both-new",
                "both-old",
                "one-term-many-times",
                "tie-a",
                "tie-b"
            ]
        );
    }

    #[test]
    fn a_summary_counts_every_message_and_shows_the_best_in_order() {
        let t = Terms::parse("lock parser").unwrap();
        let m = |text: &str, request: bool, at: Option<&str>| {
            (text.to_string(), request, at.map(str::to_string))
        };
        let messages = vec![
            m("the lock", true, Some("2026-01-01T00:00:00Z")),
            m("nothing", false, Some("2026-01-02T00:00:00Z")),
            m("parser parser lock", false, Some("2026-01-03T00:00:00Z")),
            m("lock", true, None),
            m("parser and lock", false, Some("2026-01-05T00:00:00Z")),
            m("no match either", false, Some("2026-01-09T00:00:00Z")),
        ];
        let s = summarize(&t, &messages).unwrap();
        assert_eq!((s.present, s.count, s.messages), (2, 7, 4));
        assert_eq!(s.last_at.as_deref(), Some("2026-01-05T00:00:00Z"));
        let shown: Vec<(&str, bool, usize)> = s
            .hits
            .iter()
            .map(|h| (h.snippet.as_str(), h.request, h.count))
            .collect();
        // Both terms first (3, then 2 occurrences), then the first of the
        // one-term messages; shown in the conversation's order.
        assert_eq!(
            shown,
            [
                ("the lock", true, 1),
                ("parser parser lock", false, 3),
                ("parser and lock", false, 2)
            ]
        );
        assert_eq!(summarize(&t, &[m("nothing", true, None)]), None);
    }
}
