//! `nerdr search` in the core: who asks decides what is searched
//! (`search::visible`: a sandboxed tab's program only its own tab's
//! conversation), the scan runs off the async workers and outside the
//! state lock, and its finds become the ranked, numbered results.
//! The core runs it, not the client: a sandboxed agent cannot read the
//! logs from inside its sandbox, and must not choose which it reads.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::caller::Caller;
use super::privilege::CallerKind;
use super::Core;
use crate::handoff::rules;
use crate::protocol::api::{ApiError, ErrorCode, SearchLogs, SearchResults};
use crate::protocol::search::{SearchLine, SearchResult};
use crate::search::scan::{self, Scope};
use crate::search::visible::Viewer;
use crate::search::{rank, Found, Terms};

/// The most results one search returns.
pub const MAX_LIMIT: usize = 1000;

/// The agents whose logs nerdr reads.
const AGENTS: [&str; 2] = ["claude", "codex"];

impl Core {
    /// `nerdr search QUERY`.
    pub(super) async fn search(
        &self,
        caller: &Caller,
        s: SearchLogs,
    ) -> Result<SearchResults, ApiError> {
        let bad = |m: String| ApiError::new(ErrorCode::BadRequest, m);
        let terms = Terms::parse(&s.query).map_err(bad)?;
        if let Some(a) = s.agent.as_deref().filter(|a| !AGENTS.contains(a)) {
            return Err(bad(format!(
                "--agent {a}: nerdr searches the logs of {} only",
                AGENTS.join(" and ")
            )));
        }
        // Who asks, from the state (no I/O under the lock).
        let (own, folders) = {
            let state = self.state.lock().unwrap();
            let own = caller
                .tab()
                .and_then(|id| state.tabs.get(id))
                .and_then(|t| {
                    let sandboxed = caller.kind() == CallerKind::Sandboxed || t.sandboxed;
                    sandboxed.then(|| (t.id.clone(), t.session_id.clone(), t.cwd.clone()))
                });
            let own = match (caller.kind(), own) {
                // A sandboxed caller whose tab is gone has nothing of its own.
                (CallerKind::Sandboxed, None) => Some((String::new(), None, PathBuf::new())),
                (_, own) => own,
            };
            let folders: BTreeMap<String, PathBuf> = state
                .tabs
                .values()
                .map(|t| (t.id.clone(), t.cwd.clone()))
                .collect();
            // The open tab each conversation is, by the session id nerdr
            // knows for it (the first by id when several claim one).
            let mut open: BTreeMap<String, String> = BTreeMap::new();
            for t in state.tabs.values() {
                if let Some(id) = &t.session_id {
                    let e = open.entry(id.clone()).or_insert_with(|| t.id.clone());
                    if t.id < *e {
                        *e = t.id.clone();
                    }
                }
            }
            (own, (folders, open))
        };
        let (folders, open) = folders;
        let core_env: Vec<(String, String)> = std::env::vars().collect();
        let homes = rules::homes(own.is_some(), &s.env, &core_env)
            .map_err(|e| ApiError::new(ErrorCode::Internal, e))?;
        let state_dir = self.paths.state_dir.clone();
        let limit = s.limit.clamp(1, MAX_LIMIT);
        let scanned = super::edge::gather("searching past conversations", move || {
            let viewer = match &own {
                Some((tab, session, cwd)) => Viewer::OwnTab {
                    tab,
                    session: session.as_deref(),
                    cwd,
                },
                None => Viewer::Everything,
            };
            let scope = Scope {
                homes: &homes,
                state_dir: &state_dir,
                agent: s.agent.as_deref(),
                viewer,
                tab_folders: &folders,
            };
            let mut scanned = scan::scan(&scope, &terms);
            rank::rank(&mut scanned.found);
            (scanned, own.is_some(), terms.count())
        })
        .await;
        let (scanned, own_tab_only, of) = scanned;
        let total = scanned.found.len();
        let results = scanned
            .found
            .into_iter()
            .take(limit)
            .enumerate()
            .map(|(i, mut f)| {
                if f.tab.is_none() && matches!(f.source.name(), "claude" | "codex") {
                    f.tab = open.get(&f.id).cloned();
                }
                result(i + 1, f, of)
            })
            .collect();
        Ok(SearchResults {
            results,
            total,
            files: scanned.files,
            own_tab_only,
            problems: scanned.problems,
        })
    }
}

/// A find as the wire carries it, its words made printable.
fn result(number: usize, f: Found, of: usize) -> SearchResult {
    let printable = crate::printable::printable;
    SearchResult {
        number,
        source: f.source.name().to_string(),
        agent: printable(&f.agent),
        id: printable(&f.id),
        date: date(f.last_at.as_deref(), f.modified),
        folder: f.folder,
        file: f.file,
        tab: f.tab,
        terms: f.present,
        of,
        count: f.count,
        messages: f.messages,
        lines: f
            .hits
            .into_iter()
            .map(|h| SearchLine {
                request: h.request,
                text: h.snippet,
            })
            .collect(),
    }
}

/// `YYYY-MM-DD HH:MM` (UTC) of a log's own time, else of `secs`; empty
/// when neither is known.
fn date(at: Option<&str>, secs: u64) -> String {
    // The log's time is the agent's writing (a sandboxed agent writes its
    // logs): only `YYYY-MM-DDTHH:MM` in ASCII digits is taken, never an
    // escape between them, nor a cut inside a character.
    let shape = |s: &str| {
        let b = s.as_bytes();
        let fits = b.len() >= 16
            && b[..16].iter().enumerate().all(|(i, c)| match i {
                4 | 7 => *c == b'-',
                10 => *c == b'T',
                13 => *c == b':',
                _ => c.is_ascii_digit(),
            });
        fits.then(|| s[..16].replacen('T', " ", 1))
    };
    at.and_then(shape)
        .or_else(|| (secs > 0).then(|| shape(&super::clock::rfc3339_seconds(secs)))?)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_date_is_the_log_s_time_else_the_file_s() {
        #[rustfmt::skip]
        let rows: &[(Option<&str>, u64, &str)] = &[
            (Some("2026-12-02T13:19:46.086Z"), 0, "2026-12-02 13:19"),
            (Some("2026-12-02T13:19:46.086Z"), 99, "2026-12-02 13:19"),
            (Some("yesterday"), 86_400 + 61, "1970-01-02 00:01"),
            (None, 86_400, "1970-01-02 00:00"),
            (None, 0, ""),
            // The agent's words where a time should be: the file's time.
            (Some("2026-\x1b[2JxT12:34:56Z"), 86_400, "1970-01-02 00:00"),
            (Some("2026-12-02T13:1é"), 86_400, "1970-01-02 00:00"),
            (Some("2026-12-02T13:19"), 0, "2026-12-02 13:19"),
        ];
        for (at, secs, want) in rows {
            assert_eq!(super::date(*at, *secs), *want, "{at:?} {secs}");
        }
    }
}
