//! The approval queue: things that wait for the person (not for any
//! program) to say yes. Today: a repository's worktree setup command. The
//! approved setups are remembered by the SHA-256 of their `.nerdr.toml`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::api::Caller;
use super::launch::Plan;
use super::setup::Setup;
use super::Core;
use crate::protocol::api::{ApiError, ErrorCode, Reply, TabKind};
use crate::protocol::handshake::random_hex;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Approval {
    pub id: String,
    /// What is asked, for people.
    pub question: String,
    pub tab: String,
    pub worktree: PathBuf,
    pub hash: String,
    pub argv: Vec<String>,
}

#[derive(Default)]
pub struct Approvals {
    pub pending: Vec<Approval>,
    approved: BTreeSet<String>,
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
        }
    }

    pub fn is_approved(&self, hash: &str) -> bool {
        self.approved.contains(hash)
    }

    fn save(&self, path: &Path) {
        let r = Remembered {
            approved_setups: self.approved.clone(),
        };
        let tmp = path.with_extension("json.tmp");
        let ok = serde_json::to_vec_pretty(&r)
            .map_err(std::io::Error::other)
            .and_then(|b| std::fs::write(&tmp, b))
            .and_then(|()| std::fs::rename(&tmp, path));
        if let Err(e) = ok {
            tracing::warn!(path = %path.display(), error = %e, "cannot save approvals");
        }
    }
}

impl Core {
    fn approvals_file(&self) -> PathBuf {
        self.paths.state_dir.join("approvals.json")
    }

    /// Ask the person whether the worktree setup of tab `tab` may run.
    pub fn ask_setup(&self, tab: &str, worktree: &Path, setup: &Setup) {
        let a = Approval {
            id: random_hex(3),
            // The command first: it is what the person approves.
            question: format!(
                "run `{}` ({} setup) in {}",
                setup.argv.join(" "),
                super::setup::FILE,
                worktree.display()
            ),
            tab: tab.to_string(),
            worktree: worktree.to_path_buf(),
            hash: setup.hash.clone(),
            argv: setup.argv.clone(),
        };
        tracing::info!(tab = %tab, approval = %a.id, hash = %a.hash, "worktree setup waits for approval");
        self.approvals.lock().unwrap().pending.push(a);
        // Attached windows show that something waits for an answer.
        self.changed();
    }

    pub fn list_approvals(&self) -> Reply {
        let pending = self.approvals.lock().unwrap().pending.clone();
        Ok(json!({ "pending": pending }))
    }

    /// The person's answer. Only the user decides: never a program in a tab.
    pub async fn decide(self: &Arc<Self>, caller: &Caller, id: &str, yes: bool) -> Reply {
        if !matches!(caller, Caller::User) {
            return Err(ApiError::new(
                ErrorCode::Denied,
                "approvals are the user's to give, not a program's in a tab",
            ));
        }
        let decided = {
            let mut a = self.approvals.lock().unwrap();
            let Some(i) = a.pending.iter().position(|p| p.id == id) else {
                return Err(ApiError::new(
                    ErrorCode::NotFound,
                    format!("nothing waits for approval as `{id}` (see `nerdr approvals`)"),
                ));
            };
            let first = a.pending.remove(i);
            if !yes {
                drop(a);
                tracing::info!(approval = %id, "denied");
                self.changed();
                return Ok(json!({ "ran": [] }));
            }
            a.approved.insert(first.hash.clone());
            a.save(&self.approvals_file());
            // Every request for the same content is answered by this yes.
            let hash = first.hash.clone();
            let mut same: Vec<Approval> = Vec::new();
            a.pending.retain(|p| {
                let m = p.hash == hash;
                if m {
                    same.push(p.clone());
                }
                !m
            });
            same.insert(0, first);
            same
        };
        let mut ran = Vec::new();
        for a in decided {
            match self.run_setup(caller, &a).await {
                Ok(v) => ran.push(v["tab"].clone()),
                Err(e) => {
                    tracing::warn!(approval = %a.id, error = %e.message, "setup did not start")
                }
            }
        }
        Ok(json!({ "ran": ran }))
    }

    /// An approved setup, once, in its worktree: a tab of its own next to
    /// the agent's, so its output can be read and its exit code seen.
    async fn run_setup(self: &Arc<Self>, caller: &Caller, a: &Approval) -> Reply {
        let (folder, parent) = {
            let state = self.state.lock().unwrap();
            let t = state
                .tabs
                .get(&a.tab)
                .ok_or_else(|| super::api::no_tab(&a.tab))?;
            (t.folder.clone(), t.id.clone())
        };
        let env = self.environment_for(caller, Vec::new());
        let program =
            super::launch::find_program(&a.argv[0], &super::launch::path_of(&env), &a.worktree)
                .ok_or_else(|| {
                    ApiError::new(
                        ErrorCode::LaunchFailed,
                        format!("setup: `{}` is not on PATH", a.argv[0]),
                    )
                })?;
        let mut argv = a.argv.clone();
        argv[0] = program.to_string_lossy().into_owned();
        self.launch(
            caller,
            Plan {
                id: self.new_tab_id(),
                folder,
                cwd: a.worktree.clone(),
                worktree: None,
                name: "setup".into(),
                command: a.argv.clone(),
                argv,
                caller_env: env,
                agent_env: Default::default(),
                sandboxed: false,
                kind: TabKind::Terminal,
                parent: Some(parent),
                session_id: None,
                reported: None,
                probe: None,
            },
        )
        .await
    }
}
