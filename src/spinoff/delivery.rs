//! Where a spun-off agent's result goes (README.md, "Spinoffs";
//! SECURITY.md, "Spinoffs"): pure over plain data, each rule a row of the
//! table tests below. The core gathers the facts (the reporting tab's
//! record, the parent tab as it is now) and acts on the verdict.
//!
//! A result goes only to the spinoff's parent: `nerdr report-result`
//! names no parent, and only a tab `nerdr spinoff` started is reported
//! for: by itself, or by the person (`--for TAB`, the privilege matrix's
//! `ReportResult` row keeps a program to its own tab). It is typed into the parent as a message, as `nerdr send`
//! types one, when the parent's agent runs and is not waiting on a
//! question for the person (then it is kept, and typed once the parent is
//! back at its prompt, if it is within a while). A parent whose program has
//! ended keeps it (its tab's record, shown in `nerdr tabs`, `nerdr
//! spinoffs` and the window) until `nerdr restart` starts it again; a
//! closed parent's stays listed. A result written in a sandbox and bound
//! for an agent outside every sandbox waits for the user's approval, as a
//! message from a sandboxed agent to one outside does (the privilege
//! matrix's `Send` to an agent): its text is the sandboxed agent's and may
//! carry instructions, and the parent runs where the sandbox does not reach.

/// The parent tab as the delivery sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parent {
    /// Its agent runs: a message can be typed.
    Running,
    /// Its agent runs and waits on a question for the person (a
    /// permission, a folder-trust question): typed there, the result
    /// would answer it.
    Blocked,
    /// Its program ended (or its sandbox check refused it); its record is
    /// there for `nerdr restart`.
    Stopped,
    /// It runs a program as it is (`nerdr agent -- CMD`), not an agent:
    /// typed there, the result would be the program's input.
    Program,
    /// Closed: no tab any more.
    Closed,
}

/// What is done with one result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// Typed into the parent now, with Enter.
    Type,
    /// Put to the user first (`nerdr approvals`); typed once approved.
    Approve(&'static str),
    /// Kept, and typed once the parent waits at its prompt again (for a
    /// while; after that it is kept as for a stopped parent).
    Later(&'static str),
    /// Kept with the parent's record, for later (or for reading).
    Wait(&'static str),
}

/// The result's way to the parent (see the module docs).
pub fn deliver(parent: Parent, parent_sandboxed: bool, child_sandboxed: bool) -> Delivery {
    match parent {
        Parent::Closed => Delivery::Wait(
            "the parent tab is closed: the result is kept, and `nerdr spinoffs` shows it",
        ),
        Parent::Program => Delivery::Wait(
            "the parent tab runs a program, not an agent: typed there the result would be its \
             input; `nerdr spinoffs` shows it",
        ),
        Parent::Stopped => Delivery::Wait(
            "the parent's program has ended: the result waits with its tab and is typed once \
             `nerdr restart` starts it again",
        ),
        Parent::Running | Parent::Blocked if child_sandboxed && !parent_sandboxed => {
            Delivery::Approve(
            "the result was written in a sandbox and the parent runs outside every sandbox: it \
             waits for the user's approval, as a message from a sandboxed agent does",
            )
        }
        Parent::Blocked => Delivery::Later(
            "the parent waits on a question for the user: the result is kept and typed once it is \
             back at its prompt",
        ),
        Parent::Running => Delivery::Type,
    }
}

/// Whether a result is written in a sandbox, when it is reported: its
/// spinoff started in one (`record`), the caller runs in one (`caller`),
/// or its text is the spun-off agent's own last words (the person's
/// `--for TAB` with no text, `last_words`) and that agent runs in one now
/// (`tab_now`: a spinoff switched to a sandboxed agent since). The
/// person's own words are the person's.
pub fn reported_from_sandbox(record: bool, caller: bool, tab_now: bool, last_words: bool) -> bool {
    record || caller || (tab_now && last_words)
}

/// Whether a kept result was written in a sandbox: as recorded with it
/// when reported (`recorded`), never from what the spun-off tab runs when
/// it is delivered (switched to another agent, or closed, by then). A
/// result kept before this was recorded goes by its spinoff's record or
/// by the note its message opens with, which only nerdr puts first: when
/// either says sandbox, it is one.
pub fn written_in_sandbox(recorded: Option<bool>, record_sandboxed: bool, message: &str) -> bool {
    recorded.unwrap_or_else(|| record_sandboxed || message.starts_with(crate::review::SANDBOX_NOTE))
}

/// Whether the caller may report a result: only from a tab, and only one
/// `nerdr spinoff` started (`spun_off`), about itself.
pub fn may_report(tab: Option<&str>, spun_off: bool) -> Result<(), String> {
    match (tab, spun_off) {
        (None, _) => Err(
            "`nerdr report-result` is run in the tab `nerdr spinoff` started (by its \
             agent, or in a terminal of that tab's own); here it names no tab: to report \
             for a spun-off tab, name it with `--for TAB`"
                .to_string(),
        ),
        (Some(tab), false) => Err(format!(
            "tab {tab} was not started by `nerdr spinoff`: only a spun-off tab reports a result, \
             and only to the tab it was spun off from"
        )),
        (Some(_), true) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_way_a_result_goes() {
        use Parent::*;
        // (parent, parent sandboxed, child sandboxed, verdict: t type, a
        // approve, l later, w wait)
        #[rustfmt::skip]
        let rows = [
            (Running, false, false, 't'),
            (Running, true, true, 't'),
            (Running, true, false, 't'),
            (Running, false, true, 'a'),
            (Blocked, false, false, 'l'),
            (Blocked, true, true, 'l'),
            (Blocked, true, false, 'l'),
            (Blocked, false, true, 'a'),
            (Stopped, false, false, 'w'),
            (Stopped, false, true, 'w'),
            (Stopped, true, true, 'w'),
            (Program, false, false, 'w'),
            (Program, false, true, 'w'),
            (Closed, false, false, 'w'),
            (Closed, true, true, 'w'),
            (Closed, false, true, 'w'),
        ];
        for (parent, ps, cs, want) in rows {
            let got = match deliver(parent, ps, cs) {
                Delivery::Type => 't',
                Delivery::Approve(_) => 'a',
                Delivery::Later(_) => 'l',
                Delivery::Wait(_) => 'w',
            };
            assert_eq!(got, want, "{parent:?}, parent sandboxed {ps}, child {cs}");
        }
    }

    #[test]
    fn a_result_is_from_a_sandbox_if_its_words_are() {
        // (record, caller, tab now, its last words, verdict)
        #[rustfmt::skip]
        let rows = [
            (false, false, false, false, false),
            (false, false, false, true, false),
            // The person's own words about a now sandboxed tab.
            (false, false, true, false, false),
            // Its agent's words, the agent in a sandbox now.
            (false, false, true, true, true),
            (false, true, false, false, true),
            (false, true, true, false, true),
            (true, false, false, false, true),
            (true, false, false, true, true),
            (true, true, true, true, true),
        ];
        for (record, caller, now, words, want) in rows {
            assert_eq!(
                reported_from_sandbox(record, caller, now, words),
                want,
                "record {record}, caller {caller}, tab now {now}, last words {words}"
            );
        }
    }

    #[test]
    fn a_kept_result_goes_by_where_it_was_written() {
        let noted = format!(
            "{} Result 1 from spun-off tab c1: x",
            crate::review::SANDBOX_NOTE
        );
        let plain = "Result 1 from spun-off tab c1: x";
        // (recorded with it, the record says sandboxed, the message, verdict)
        #[rustfmt::skip]
        let rows = [
            (Some(true), false, plain, true),
            (Some(true), true, noted.as_str(), true),
            (Some(false), false, plain, false),
            // Recorded wins: the record's flag is the spinoff's start.
            (Some(false), true, plain, false),
            (None, true, plain, true),
            (None, false, noted.as_str(), true),
            (None, true, noted.as_str(), true),
            (None, false, plain, false),
        ];
        for (recorded, record, message, want) in rows {
            assert_eq!(
                written_in_sandbox(recorded, record, message),
                want,
                "{recorded:?}, record {record}, {message}"
            );
        }
    }

    #[test]
    fn only_a_spun_off_tab_reports() {
        for (tab, spun, ok, says) in [
            (None, false, false, "names no tab"),
            (None, true, false, "names no tab"),
            (
                Some("ab12"),
                false,
                false,
                "tab ab12 was not started by `nerdr spinoff`",
            ),
            (Some("ab12"), true, true, ""),
        ] {
            let got = may_report(tab, spun);
            assert_eq!(got.is_ok(), ok, "{tab:?} {spun}: {got:?}");
            if let Err(why) = got {
                assert!(why.contains(says), "{why}");
            }
        }
    }
}
