//! Typing an agent's message into its tab so that it arrives whole and is
//! sent once: first prompts (`first_prompt`: reviews, spinoff tasks,
//! handoffs), spinoff results (`spinoff_results`), messages approved for
//! delivery (`approvals`) and `nerdr send` to an agent (`api`). Raw
//! keystrokes (`nerdr send --no-enter`, a program's tab) stay
//! `Core::type_text`'s.
//!
//! Two things went wrong with plain typing. A multi-line message typed as
//! keys is sent at its first newline (each newline is Enter). And a long
//! message typed fast is taken by codex for a paste it guesses at (its
//! paste-burst check), so an Enter that follows too soon is a new line in
//! it and the message is never sent. So ([`way`], pure): a long or
//! multi-line message goes as a bracketed paste when the agent can take
//! one, and Enter follows only once the screen has settled after it
//! ([`enter_at`], pure: a quiet spell after the agent's last output, with
//! a floor and a ceiling), waiting on the core's output counter
//! (`Core::outputs`), not polling.

use std::time::Duration;

use tokio::time::Instant;

use super::Core;
use crate::protocol::api::ApiError;

/// How a message goes into the tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// As keys, the way a person types it.
    Typed,
    /// Between `ESC [200~` and `ESC [201~`: its newlines are new lines,
    /// never Enter, and the agent takes it as one piece.
    Pasted,
}

/// Past this many characters a one-line message is long: codex's
/// paste-burst check takes a fast run of keys for a paste well below it.
pub const LONG: usize = 200;

/// Agents known to take a bracketed paste even before their screen says
/// so (a first prompt may come while their terminal modes are being set
/// up, and a compact screen of an older core's may not tell). Both turn it
/// on at start (Claude Code 2.1, codex-cli 0.171).
const TAKES_PASTES: &[&str] = &["claude", "codex"];

/// How to type `text` into an agent `agent` whose terminal has bracketed
/// paste on (`paste_mode`) or not. A short one-line message is typed; a
/// long or multi-line one is pasted when the agent can take a paste. An
/// agent that cannot gets it typed: nothing else keeps its newlines, and
/// it is what a person's terminal would send.
pub fn way(text: &str, paste_mode: bool, agent: &str) -> Way {
    let long = text.contains(['\n', '\r']) || text.chars().count() > LONG;
    match (long, paste_mode || TAKES_PASTES.contains(&agent)) {
        (true, true) => Way::Pasted,
        (true, false) | (false, _) => Way::Typed,
    }
}

const PASTE_START: &str = "\x1b[200~";
const PASTE_END: &str = "\x1b[201~";

/// The bytes that paste `text`: its own paste markers taken out (an end
/// marker inside would end the paste early and make the rest keys, its
/// newlines Enter), newlines as a terminal pastes them (CR).
pub fn paste_bytes(text: &str) -> Vec<u8> {
    let mut inner = text.replace("\r\n", "\n");
    while inner.contains(PASTE_START) || inner.contains(PASTE_END) {
        inner = inner.replace(PASTE_START, "").replace(PASTE_END, "");
    }
    let inner = inner.replace('\n', "\r");
    format!("{PASTE_START}{inner}{PASTE_END}").into_bytes()
}

/// Quiet after the agent's last output before Enter: the agent has drawn
/// what it was given.
pub const QUIET: Duration = Duration::from_millis(250);
/// Never sooner than this after the text: codex takes an Enter within a
/// few milliseconds of a burst of keys for part of it.
pub const AT_LEAST: Duration = Duration::from_millis(150);
/// Never later than this after the text: an agent whose screen never
/// stops (a clock, a spinner) still gets its Enter.
pub const AT_MOST: Duration = Duration::from_secs(3);

/// When Enter goes, for text written at `sent` whose tab last drew at
/// `last_output` (`None`: nothing since the text).
pub fn enter_at(sent: Instant, last_output: Option<Instant>) -> Instant {
    let quiet_from = last_output.map_or(sent, |o| o.max(sent));
    (quiet_from + QUIET)
        .max(sent + AT_LEAST)
        .min(sent + AT_MOST)
}

impl Core {
    /// Whether tab `tab` runs an agent (not a program run as it is, not a
    /// terminal): what `nerdr send` types as a message.
    pub(super) fn is_agent(&self, tab: &str) -> bool {
        let state = self.state.lock().unwrap();
        state
            .tabs
            .get(tab)
            .is_some_and(|t| !t.program && t.kind == crate::protocol::api::TabKind::Agent)
    }

    /// Type `text` into agent tab `tab` as one message and press Enter once
    /// the agent has taken it (see the module docs).
    pub(super) async fn type_message(&self, tab: &str, text: &str) -> Result<(), ApiError> {
        let (how, offset) = {
            let state = self.state.lock().unwrap();
            let t = state
                .tabs
                .get(tab)
                .ok_or_else(|| super::not_found::no_tab(tab))?;
            (
                way(text, t.screen.bracketed_paste(), &t.agent),
                state.snapshots.offset(tab),
            )
        };
        let bytes = match how {
            Way::Typed => text.as_bytes().to_vec(),
            Way::Pasted => paste_bytes(text),
        };
        // Subscribed before the text goes: its echo wakes the wait.
        let mut outputs = self.outputs.subscribe();
        tracing::debug!(tab = %tab, ?how, len = text.len(), "typing a message");
        if !text.is_empty() {
            self.write_input(tab, bytes).await?;
        }
        let sent = Instant::now();
        let (mut seen, mut last) = (offset, None);
        loop {
            tokio::select! {
                changed = outputs.changed() => {
                    if changed.is_err() {
                        break;
                    }
                    let now = self.state.lock().unwrap().snapshots.offset(tab);
                    if now != seen {
                        (seen, last) = (now, Some(Instant::now()));
                    }
                }
                () = tokio::time::sleep_until(enter_at(sent, last)) => break,
            }
        }
        self.write_input(tab, b"\r".to_vec()).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (what, the text, paste mode on, the agent, the way)
    #[test]
    fn how_a_message_goes_in() {
        let long_line = "x".repeat(LONG + 1);
        let just_short = "x".repeat(LONG);
        let rows: &[(&str, &str, bool, &str, Way)] = &[
            ("a short line", "hello", true, "codex", Way::Typed),
            ("a short line, no mode", "hello", false, "x", Way::Typed),
            ("just short", &just_short, true, "x", Way::Typed),
            (
                "a long line, paste mode",
                &long_line,
                true,
                "x",
                Way::Pasted,
            ),
            ("a long line, no mode", &long_line, false, "x", Way::Typed),
            ("two lines, paste mode", "a\nb", true, "x", Way::Pasted),
            (
                "two lines by CR, paste mode",
                "a\rb",
                true,
                "x",
                Way::Pasted,
            ),
            (
                "two lines, codex before its mode",
                "a\nb",
                false,
                "codex",
                Way::Pasted,
            ),
            (
                "two lines, claude before its mode",
                "a\nb",
                false,
                "claude",
                Way::Pasted,
            ),
            (
                "two lines, an unknown agent without the mode",
                "a\nb",
                false,
                "aider",
                Way::Typed,
            ),
        ];
        for (what, text, mode, agent, want) in rows {
            assert_eq!(way(text, *mode, agent), *want, "{what}");
        }
    }

    #[test]
    fn a_paste_cannot_end_early_and_its_newlines_are_a_terminals() {
        let rows: &[(&str, &str, &str)] = &[
            ("plain", "a\nb", "\x1b[200~a\rb\x1b[201~"),
            ("CRLF", "a\r\nb", "\x1b[200~a\rb\x1b[201~"),
            (
                "an end marker inside",
                "a\x1b[201~\nrm -rf x\n",
                "\x1b[200~a\rrm -rf x\r\x1b[201~",
            ),
            (
                "a start marker inside",
                "a\x1b[200~b",
                "\x1b[200~ab\x1b[201~",
            ),
            (
                "markers that make one when cut",
                "\x1b[20\x1b[201~1~x",
                "\x1b[200~x\x1b[201~",
            ),
        ];
        for (what, text, want) in rows {
            assert_eq!(
                String::from_utf8(paste_bytes(text)).unwrap(),
                *want,
                "{what}"
            );
        }
    }

    /// (what, output after the text in ms, Enter after the text in ms)
    #[test]
    fn enter_waits_for_the_screen_to_settle_within_bounds() {
        let ms = Duration::from_millis;
        let rows: &[(&str, Option<u64>, u64)] = &[
            ("no output: the quiet spell from the text", None, 250),
            ("an echo at once", Some(0), 250),
            ("an echo late", Some(1000), 1250),
            ("output that never stops: the ceiling", Some(2900), 3000),
        ];
        let sent = Instant::now();
        for (what, out, want) in rows {
            let got = enter_at(sent, out.map(|o| sent + ms(o)));
            assert_eq!(got - sent, ms(*want), "{what}");
        }
        assert!(QUIET >= AT_LEAST, "the floor matters only if QUIET shrinks");
    }
}
