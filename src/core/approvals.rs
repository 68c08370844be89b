//! The approval queue: things that wait for the person (not for any
//! program) to say yes: a repository's worktree setup command (approved
//! setups are remembered by the SHA-256 of their `.nerdr.toml`), a message
//! from a sandboxed agent to one outside every sandbox, each run of a
//! plugin a sandboxed agent asks for, and each connection `nerdr sandbox`'s
//! proxy asks about (a host on neither network list; see `net_questions`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::answers::{answer, Effect};
use super::caller::Caller;
use super::question::{Approval, Asked, Said};
use super::setup::Setup;
use super::Core;
use crate::protocol::api::{ApiError, ErrorCode};
use crate::protocol::handshake::random_hex;
use crate::protocol::replies::{ApprovalsList, Decided};
use crate::spinoff::store::Held;

/// How many of one tab's requests may wait at once.
const MAX_MESSAGES: usize = 10;
const MAX_PLUGIN_RUNS: usize = 3;
const MAX_NETWORK_QUESTIONS: usize = 5;
/// How many requests of all agents together may wait: starting more tabs
/// does not buy a sandboxed agent more room.
const MAX_FROM_TABS: usize = 50;

#[derive(Default)]
pub struct Approvals {
    pub pending: Vec<Approval>,
    approved: BTreeSet<String>,
    /// Plugin runs waiting for an answer, by approval id.
    waiting: std::collections::HashMap<String, tokio::sync::oneshot::Sender<Said>>,
    /// Bumped with each change of `approved`: the file is written after
    /// the queue's lock is let go, so two answers' writes may cross, and
    /// only the newer may land.
    generation: u64,
    /// The generation the file holds; locked while it is written.
    written: std::sync::Arc<std::sync::Mutex<u64>>,
}

#[derive(Default, Serialize, Deserialize)]
struct Remembered {
    approved_setups: BTreeSet<String>,
}

impl Approvals {
    pub fn load(path: &Path) -> Self {
        let remembered: Remembered = std::fs::read(path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        Approvals {
            pending: Vec::new(),
            approved: remembered.approved_setups,
            waiting: Default::default(),
            generation: 0,
            written: Default::default(),
        }
    }

    pub fn is_approved(&self, hash: &str) -> bool {
        self.approved.contains(hash)
    }
}

/// What to write to the approvals file: a snapshot taken under the
/// queue's lock, written after it.
struct Snapshot {
    approved: BTreeSet<String>,
    generation: u64,
    written: std::sync::Arc<std::sync::Mutex<u64>>,
}

/// Write the approved setups' hashes to `path`, unless a newer snapshot
/// already is.
fn save_approved(s: Snapshot, path: &Path) {
    super::held::assert_unlocked("writing approvals.json");
    let mut written = s.written.lock().unwrap();
    if *written >= s.generation {
        return;
    }
    let approved = s.approved;
    let r = Remembered {
        approved_setups: approved,
    };
    let tmp = path.with_extension("json.tmp");
    let ok = serde_json::to_vec_pretty(&r)
        .map_err(std::io::Error::other)
        .and_then(|b| std::fs::write(&tmp, b))
        .and_then(|()| std::fs::rename(&tmp, path));
    match ok {
        Ok(()) => *written = s.generation,
        Err(e) => tracing::warn!(path = %path.display(), error = %e, "cannot save approvals"),
    }
}

/// What a question is, for the limits on how many may wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Setup,
    Message,
    Plugin,
    Network,
}

impl Kind {
    fn of(a: &Asked) -> Kind {
        match a {
            Asked::Setup { .. } => Kind::Setup,
            // A handoff is a message to another agent: the same limits.
            Asked::Message { .. } | Asked::Handoff { .. } => Kind::Message,
            Asked::Plugin { .. } => Kind::Plugin,
            Asked::Network { .. } => Kind::Network,
        }
    }

    fn of_operation(op: super::privilege::Operation) -> Kind {
        use super::privilege::Operation as O;
        match op {
            O::RunPlugin => Kind::Plugin,
            O::AskNetwork => Kind::Network,
            _ => Kind::Message,
        }
    }
}

/// Why tab `from`'s question of `kind` finds no room in `pending`; `None`:
/// it may wait. A worktree setup (the core's own question) always may.
fn no_room(pending: &[Approval], from: &str, kind: Kind) -> Option<&'static str> {
    let (limit, full) = match kind {
        Kind::Setup => return None,
        Kind::Plugin => (
            MAX_PLUGIN_RUNS,
            "3 plugin runs of this tab already wait for the user's answer",
        ),
        Kind::Network => (
            MAX_NETWORK_QUESTIONS,
            "5 network questions of this tab already wait for the user's answer",
        ),
        Kind::Message => (
            MAX_MESSAGES,
            "10 messages of this tab already wait for the user's answer",
        ),
    };
    let asked_by_tabs = pending
        .iter()
        .filter(|p| Kind::of(&p.asked) != Kind::Setup)
        .count();
    if asked_by_tabs >= MAX_FROM_TABS {
        return Some("50 requests from agents already wait for the user's answer");
    }
    let waiting = pending
        .iter()
        .filter(|p| p.tab == from && Kind::of(&p.asked) == kind)
        .count();
    (waiting >= limit).then_some(full)
}

impl Core {
    fn approvals_file(&self) -> PathBuf {
        self.paths.state_dir.join("approvals.json")
    }

    /// Ask the person whether the worktree setup of tab `tab` may run.
    pub fn ask_setup(&self, tab: &str, worktree: &Path, setup: &Setup, once: bool) {
        // The command first: it is what the person approves.
        let mut question = format!(
            "run `{}` ({} setup) in {}",
            super::setup::shown(setup),
            super::setup::FILE,
            crate::protocol::printable(&worktree.display().to_string())
        );
        if once {
            question.push_str(
                ": sandboxed agents have worked in this repository, so its content may be \
                 theirs; this yes is for this run only",
            );
        }
        let a = Approval {
            id: self.new_approval_id(),
            question,
            tab: tab.to_string(),
            asked: Asked::Setup {
                worktree: worktree.to_path_buf(),
                hash: setup.hash.clone(),
                argv: setup.argv.clone(),
                once,
            },
        };
        tracing::info!(tab = %tab, approval = %a.id, hash = %setup.hash, "worktree setup waits for approval");
        // A setup is the core's own question: it always finds room.
        let _ = self.ask(a);
    }

    /// A fresh approval id: 64 random bits, unused in the queue.
    pub fn new_approval_id(&self) -> String {
        let state = self.state.lock().unwrap();
        let q = &state.approvals;
        loop {
            let id = random_hex(8);
            if !q.pending.iter().any(|p| p.id == id) {
                return id;
            }
        }
    }

    /// Refuse a sandboxed tab's request once it has as many waiting as the
    /// person can be expected to read.
    pub fn room_in_queue(
        &self,
        caller: &Caller,
        op: super::privilege::Operation,
        tab: Option<&str>,
    ) -> Result<(), ApiError> {
        let Some(from) = caller.tab() else {
            return Ok(());
        };
        let kind = Kind::of_operation(op);
        // Bound first: a guard in the `match` would live through its arms,
        // and the refusal takes the lock again.
        let full = no_room(&self.state.lock().unwrap().approvals.pending, from, kind);
        match full {
            None => Ok(()),
            Some(why) => Err(self.refuse(caller, op, tab, why)),
        }
    }

    /// Forget what tab `tab` asked, and messages for it: a closed tab's
    /// questions would otherwise stay in the queue for good.
    pub fn forget_questions_of(&self, tab: &str) {
        let mut state = self.state.lock().unwrap();
        let q = &mut state.approvals;
        let mut gone = Vec::new();
        q.pending.retain(|p| {
            let keep = p.tab != tab && !matches!(&p.asked, Asked::Message { to, .. } if to == tab);
            if !keep {
                gone.push(p.id.clone());
            }
            keep
        });
        // Whoever waits for one of them stops waiting now, unanswered.
        for id in gone {
            q.waiting.remove(&id);
        }
    }

    /// Put a question in the queue; attached windows show that something
    /// waits for an answer. A tab's question is checked for room under the
    /// same lock it is queued under, so questions put at once cannot all
    /// pass the check before any is counted; `Err` says why there was none.
    pub fn ask(&self, a: Approval) -> Result<(), &'static str> {
        {
            let mut state = self.state.lock().unwrap();
            let q = &mut state.approvals;
            if let Some(why) = no_room(&q.pending, &a.tab, Kind::of(&a.asked)) {
                return Err(why);
            }
            q.pending.push(a);
        }
        self.changed();
        Ok(())
    }

    /// Ask, and wait for the answer up to `timeout`; `None` when no one
    /// answered in time (the question is then withdrawn).
    /// `Err`: no room for it (see [`Core::ask`]).
    pub async fn ask_and_wait(
        &self,
        a: Approval,
        timeout: std::time::Duration,
    ) -> Result<Option<Said>, &'static str> {
        let id = a.id.clone();
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.state
            .lock()
            .unwrap()
            .approvals
            .waiting
            .insert(id.clone(), tx);
        if let Err(why) = self.ask(a) {
            self.state.lock().unwrap().approvals.waiting.remove(&id);
            return Err(why);
        }
        let answer = tokio::time::timeout(timeout, rx).await;
        let mut state = self.state.lock().unwrap();
        let q = &mut state.approvals;
        q.waiting.remove(&id);
        let before = q.pending.len();
        q.pending.retain(|p| p.id != id);
        let withdrawn = q.pending.len() != before;
        drop(state);
        if withdrawn {
            self.changed();
        }
        Ok(answer.ok().and_then(Result::ok))
    }

    pub fn list_approvals(&self) -> Result<ApprovalsList, ApiError> {
        let pending = self.state.lock().unwrap().approvals.pending.clone();
        Ok(ApprovalsList { pending })
    }

    /// The person's answer. Only the user decides: never a program in a tab.
    pub async fn decide(
        self: &Arc<Self>,
        caller: &Caller,
        id: &str,
        yes: bool,
        session: bool,
    ) -> Result<Decided, ApiError> {
        if !matches!(caller, Caller::User) {
            return Err(ApiError::new(
                ErrorCode::Denied,
                "approvals are the user's to give, not a program's in a tab",
            ));
        }
        let (effects, remembered, message) = {
            let mut state = self.state.lock().unwrap();
            let a = &mut state.approvals;
            let effects = answer(&a.pending, id, yes, session)?;
            let message = a
                .pending
                .iter()
                .any(|p| p.id == id && matches!(p.asked, Asked::Message { .. }));
            if let Some(first) = a.pending.iter().find(|p| p.id == id) {
                tracing::info!(approval = %id, approved = yes, session, question = %first.question, "decided");
            }
            // What changes the queue happens under its lock, at once.
            let mut remembered = None;
            for e in &effects {
                match e {
                    Effect::Forget(gone) => a.pending.retain(|p| p.id != *gone),
                    Effect::Wake { id, said } => {
                        if let Some(tx) = a.waiting.remove(id) {
                            let _ = tx.send(*said);
                        }
                    }
                    Effect::Remember { hash } => {
                        a.approved.insert(hash.clone());
                        a.generation += 1;
                        remembered = Some(Snapshot {
                            approved: a.approved.clone(),
                            generation: a.generation,
                            written: a.written.clone(),
                        });
                    }
                    Effect::Deliver { .. } | Effect::RunSetup(_) | Effect::SkipSetup(_) => {}
                }
            }
            (effects, remembered, message)
        };
        // Files, typing and launches after the lock is let go.
        if let Some(snapshot) = remembered {
            let path = self.approvals_file();
            let _ = tokio::task::spawn_blocking(move || save_approved(snapshot, &path)).await;
        }
        self.changed();
        if message && !yes {
            self.result_answered(id, Held::Denied(id.to_string())).await;
        }
        let mut ran = Vec::new();
        for e in effects {
            match e {
                Effect::Deliver { to, text } => {
                    // Queued with its Enter (a message is delivered whole).
                    match text.strip_suffix('\r') {
                        Some(t) => self.type_message(&to, t).await?,
                        None => self.type_text(&to, text.into_bytes(), false).await?,
                    }
                    self.result_answered(id, Held::Delivered).await;
                    return Ok(Decided {
                        ran: vec![],
                        delivered: Some(to),
                    });
                }
                Effect::SkipSetup(a) => self.setup_denied(&a.tab).await,
                Effect::RunSetup(a) => match self.run_gated_setup(caller, &a.tab).await {
                    Ok(started) => ran.push(started.tab),
                    Err(e) => {
                        tracing::warn!(approval = %a.id, error = %e.message, "setup did not start")
                    }
                },
                Effect::Forget(_) | Effect::Wake { .. } | Effect::Remember { .. } => {}
            }
        }
        Ok(Decided {
            ran,
            delivered: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(tab: &str, kind: Kind, n: usize) -> Vec<Approval> {
        (0..n)
            .map(|i| Approval {
                id: format!("{tab}-{kind:?}-{i}"),
                question: "q".into(),
                tab: tab.into(),
                asked: match kind {
                    Kind::Setup => Asked::Setup {
                        worktree: "/w".into(),
                        hash: "h".into(),
                        argv: vec!["npm".into()],
                        once: false,
                    },
                    Kind::Message => Asked::Message {
                        to: "t9".into(),
                        text: "x".into(),
                    },
                    Kind::Plugin => Asked::Plugin {
                        name: "p".into(),
                        args: vec![],
                    },
                    Kind::Network => Asked::Network {
                        host: "h.test".into(),
                        port: 443,
                    },
                },
            })
            .collect()
    }

    #[test]
    fn of_two_answers_written_out_of_order_the_newer_stays_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("approvals.json");
        let written = std::sync::Arc::new(std::sync::Mutex::new(0));
        let snapshot = |generation: u64, hashes: &[&str]| Snapshot {
            approved: hashes.iter().map(|h| h.to_string()).collect(),
            generation,
            written: written.clone(),
        };
        save_approved(snapshot(2, &["h1", "h2"]), &path);
        save_approved(snapshot(1, &["h1"]), &path);
        let loaded = Approvals::load(&path);
        assert!(loaded.is_approved("h1") && loaded.is_approved("h2"));
        save_approved(snapshot(3, &["h1", "h2", "h3"]), &path);
        assert!(Approvals::load(&path).is_approved("h3"));
    }

    /// Already waiting (tab, kind, how many), the asking tab and kind, room?
    type Row = (
        &'static [(&'static str, Kind, usize)],
        &'static str,
        Kind,
        bool,
    );

    #[test]
    fn room_follows_the_table() {
        use Kind::*;
        // (already waiting: (tab, kind, how many), asking tab and kind, room?)
        #[rustfmt::skip]
        let table: &[Row] = &[
            (&[], "t1", Network, true),
            (&[("t1", Network, 4)], "t1", Network, true),
            (&[("t1", Network, 5)], "t1", Network, false),
            (&[("t1", Network, 5)], "t2", Network, true),
            (&[("t1", Network, 5)], "t1", Message, true),
            (&[("t1", Plugin, 3)], "t1", Plugin, false),
            (&[("t1", Plugin, 2)], "t1", Plugin, true),
            (&[("t1", Message, 10)], "t1", Message, false),
            (&[("t1", Message, 9)], "t1", Message, true),
            (&[("t2", Message, 10), ("t3", Message, 10), ("t4", Message, 10), ("t5", Message, 10), ("t6", Message, 10)], "t1", Network, false),
            (&[("t2", Message, 10), ("t3", Message, 10), ("t4", Message, 10), ("t5", Message, 10), ("t6", Message, 9)], "t1", Network, true),
            (&[("t2", Message, 10), ("t3", Message, 10), ("t4", Message, 10), ("t5", Message, 10), ("t6", Message, 10)], "t1", Setup, true),
            (&[("t1", Setup, 60)], "t1", Network, true),
        ];
        for (before, from, kind, want) in table {
            let pending: Vec<Approval> = before
                .iter()
                .flat_map(|(t, k, n)| waiting(t, *k, *n))
                .collect();
            let got = no_room(&pending, from, *kind);
            assert_eq!(
                got.is_none(),
                *want,
                "{before:?} then {from} {kind:?}: {got:?}"
            );
        }
    }
}
