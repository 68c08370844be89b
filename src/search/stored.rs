//! nerdr's own stores in a search: the handoffs and the reviews, each
//! shown only to a viewer allowed to see it (`visible`).

use super::query::Terms;
use super::scope::{Scanned, Scope};
use super::visible::{visible, Item};
use super::{rank, Found, Source};

/// nerdr's handoffs and reviews that match, into `out`.
pub(super) fn stored(scope: &Scope, terms: &Terms, out: &mut Scanned) {
    let handoffs = crate::handoff::store::file(scope.state_dir);
    match crate::handoff::store::load(&handoffs) {
        Ok(store) => {
            for h in &store.handoffs {
                if !visible(scope.viewer, Item::Handoff { tab: &h.tab }) {
                    continue;
                }
                let messages = [(h.text.clone(), false, None)];
                let Some(s) = rank::summarize(terms, &messages) else {
                    continue;
                };
                out.found.push(Found {
                    source: Source::Handoff,
                    id: h.number.to_string(),
                    agent: h.agent.clone(),
                    folder: Some(h.folder.clone()),
                    file: Some(handoffs.clone()),
                    tab: Some(h.tab.clone()),
                    modified: h.at,
                    last_at: None,
                    present: s.present,
                    count: s.count,
                    messages: s.messages,
                    hits: s.hits,
                });
            }
        }
        Err(e) => out.problems.push(e),
    }
    let reviews = crate::review::store::file(scope.state_dir);
    let store = match crate::review::store::load(&reviews) {
        Ok(s) => s,
        Err(e) => {
            out.problems.push(e);
            return;
        }
    };
    for (author, of) in &store.authors {
        for r in &of.reviews {
            let item = Item::Review {
                author,
                reviewer: &r.reviewer_tab,
            };
            if !visible(scope.viewer, item) {
                continue;
            }
            let mut messages = vec![(r.summary.clone(), false, None)];
            messages.extend(
                r.comments
                    .iter()
                    .map(|c| (format!("{}:{}: {}", c.file, c.line, c.text), false, None)),
            );
            let Some(s) = rank::summarize(terms, &messages) else {
                continue;
            };
            out.found.push(Found {
                source: Source::Review,
                id: format!("{author}#{}", r.number),
                agent: r.agent.clone(),
                folder: scope.tab_folders.get(author).cloned(),
                file: Some(reviews.clone()),
                tab: Some(author.clone()),
                modified: 0,
                last_at: None,
                present: s.present,
                count: s.count,
                messages: s.messages,
                hits: s.hits,
            });
        }
    }
}
