//! Handles and names at the core: a request's tab handle turned into the
//! tab's id among the tabs its caller may see (the decisions are
//! `handles`'), and `nerdr rename`. Numbers and names count in the
//! caller's session: a sandboxed agent's own; otherwise the session of the
//! folder the request carries (placed already, see `Core::placed`), else
//! the caller's tab's; from a folder in no session, every session's.

use std::path::PathBuf;

use super::caller::Caller;
use super::handles::{self, Entry, Resolved};
use super::not_found::{no_tab, no_tab_meaning};
use super::privilege::{self, CallerKind};
use super::request_facts::{tab_requests, target_kind};
use super::Core;
use crate::protocol::api::{
    ApiError, CloseTab, DiffTab, ExplainTab, ListReviews, MergeTab, OpenTerminal, ReadScreen,
    RenameTab, Request, RequestReview, Resize, RestartTab, SendText, WaitFor,
};
use crate::protocol::replies::Renamed;

impl Core {
    /// `req` with its tab handle replaced by the id it names. A handle that
    /// names no tab the caller may see is left as it is: the privilege
    /// check then answers it as any unknown id ("no such tab"), so a tab
    /// hidden from a sandboxed caller reads the same by any handle.
    pub(super) fn resolve_handle(
        &self,
        caller: &Caller,
        mut req: Request,
    ) -> Result<Request, ApiError> {
        let Some((handle, asked)) = handle_of(&mut req) else {
            return Ok(req);
        };
        let resolved = {
            let state = self.state.lock().unwrap();
            // An id as it is (every window's keystroke names its tab so):
            // what `resolve` would answer, without gathering the tabs. A
            // hidden one stays as it is there too.
            if state.tabs.contains_key(handle.as_str()) {
                return Ok(req);
            }
            // A caller in a tab: its session's folder, `None` if its tab is gone.
            let own: Option<Option<PathBuf>> = caller
                .tab()
                .map(|own| state.tabs.get(own).map(|t| t.folder.clone()));
            let own_gone = matches!(own, Some(None));
            let asked = asked.filter(|f| state.sessions.get(f).is_some_and(|ids| !ids.is_empty()));
            let home = match caller.kind() {
                CallerKind::Sandboxed => own.flatten(),
                CallerKind::User | CallerKind::Tab => asked.or(own.flatten()),
            };
            let mut entries = Vec::new();
            for (folder, ids) in &state.sessions {
                for t in ids.iter().filter_map(|id| state.tabs.get(id)) {
                    // What a sandboxed caller may not see is no candidate:
                    // neither matched nor listed as ambiguous.
                    let foreign = home.as_ref().is_some_and(|h| h != folder);
                    let kind = caller.kind();
                    if kind == CallerKind::Sandboxed
                        && (own_gone
                            || privilege::hides_tab(kind, target_kind(caller, t, &state), foreign))
                    {
                        continue;
                    }
                    entries.push(Entry {
                        id: t.id.clone(),
                        name: t.name.clone(),
                        number: t.number,
                        folder: folder.clone(),
                    });
                }
            }
            match handles::resolve(handle, &entries, home.as_deref()) {
                Resolved::Nothing => match handles::meant(handle, &entries, home.as_deref()) {
                    Some(meant) => return Err(no_tab_meaning(handle, &meant)),
                    None => Resolved::Nothing,
                },
                found => found,
            }
        };
        match resolved {
            Resolved::Tab(id) => *handle = id,
            Resolved::Ambiguous(many) => return Err(handles::ambiguous(handle, &many)),
            Resolved::Nothing => {}
        }
        Ok(req)
    }

    /// `nerdr rename`: the tab's new name, unique in its session.
    /// A sandboxed caller may not give a default-form name (`handles::check_name`).
    pub(super) fn rename_tab(
        &self,
        caller: &Caller,
        tab: &str,
        name: &str,
    ) -> Result<Renamed, ApiError> {
        {
            let mut state = self.state.lock().unwrap();
            let t = state.tabs.get(tab).ok_or_else(|| no_tab(tab))?;
            let others: Vec<&str> = state
                .session_tabs(&t.folder)
                .into_iter()
                .filter(|o| o.id != tab)
                .map(|o| o.name.as_str())
                .collect();
            let by_sandboxed = caller.kind() == CallerKind::Sandboxed;
            handles::check_name(name, &others, by_sandboxed)?;
            state.tabs.get_mut(tab).expect("found above").name = name.to_string();
        }
        tracing::info!(tab = %tab, name = %name, "renamed tab");
        self.changed();
        Ok(Renamed {
            tab: tab.to_string(),
            name: name.to_string(),
        })
    }
}

/// The handle a request names its tab by, and the caller's folder it
/// carries. A hook's report names its own tab by id, as nerdr gave it: no
/// handle.
fn handle_of(req: &mut Request) -> Option<(&mut String, Option<PathBuf>)> {
    match req {
        tab_requests!(tab, folder)
        | Request::RequestReview(RequestReview {
            tab: Some(tab),
            folder,
            ..
        })
        | Request::Reviews(ListReviews {
            tab: Some(tab),
            folder,
            ..
        })
        | Request::SpinOff(crate::protocol::api::SpinOff {
            from: Some(tab),
            folder,
            ..
        })
        | Request::Handoff(crate::protocol::api::Handoff {
            tab: Some(tab),
            folder,
            ..
        })
        | Request::ReportResult(crate::protocol::api::ReportResult {
            tab: Some(tab),
            folder,
            ..
        }) => Some((tab, folder.clone())),
        _ => None,
    }
}
