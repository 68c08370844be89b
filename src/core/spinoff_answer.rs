//! A spun-off agent's last words, for the result the person reports for
//! it (`nerdr report-result --for TAB`, the window's offer when its turn
//! ended with no report): the last answer in its conversation log, read as
//! a handoff reads it (`handoff::find`), off the async workers; for an
//! agent nerdr cannot read (a custom agent, a program, a log not found),
//! its last screen lines, and why.

use crate::handoff::find::{self, Conversation};
use crate::handoff::rules;
use crate::spinoff::{LastWords, SCREEN_LINES};

use super::caller::Caller;
use super::Core;

impl Core {
    /// Tab `tab`'s last words; `env` is the person's (where the agents'
    /// logs are, as for a handoff).
    pub(super) async fn last_words(&self, tab: &str, env: &[(String, String)]) -> LastWords {
        match self.last_answer(tab, env).await {
            Ok(answer) => LastWords::Answer(answer),
            Err(why) => {
                let lines = self
                    .state
                    .lock()
                    .unwrap()
                    .tabs
                    .get(tab)
                    .map(|t| t.screen_text(Some(SCREEN_LINES)))
                    .unwrap_or_default();
                LastWords::Screen { lines, why }
            }
        }
    }

    /// The last answer in tab `tab`'s conversation, or why there is none.
    async fn last_answer(&self, tab: &str, env: &[(String, String)]) -> Result<String, String> {
        let src = self
            .handoff_source(&Caller::User, Some(tab))
            .map_err(|e| e.message)?;
        let (kind, program) = self
            .conversation_reader(&src)
            .await
            .map_err(|e| e.message)?;
        if kind.is_none() {
            return Err(format!("`{}` is no built-in agent", src.agent));
        }
        let core_env: Vec<(String, String)> = std::env::vars().collect();
        let homes = rules::homes(false, env, &core_env)?;
        let conversation = Conversation {
            kind,
            session_id: src.session_id.clone(),
            cwd: src.cwd.clone(),
            program,
        };
        let how = format!("`nerdr report-result --for {tab} TEXT`");
        let exchanges = super::edge::gather("reading a spun-off agent's last answer", move || {
            find::exchanges(&conversation, &homes, &how)
        })
        .await?;
        exchanges
            .iter()
            .rev()
            .map(|e| e.answer.trim())
            .find(|a| !a.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| "its conversation holds no answer yet".to_string())
    }
}
