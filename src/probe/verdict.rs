//! The verdict on a launch, from what the probe run produced. Pure: the
//! plan, the nonce and the run's outcome in, the verdict out. Anything that
//! is not a complete, well-formed report carrying the nonce means the check
//! could not be made, and the agent is not started either.

use super::findings::Findings;
use super::plan::Plan;

/// How the wrapped probe ran, as plain data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The probe could not be put in the agent's command.
    Unplaceable(String),
    /// The wrapper itself could not be started.
    SpawnFailed(String),
    /// It ran past the time allowed and was killed.
    TimedOut { secs: u64 },
    /// It ended (`status` is its exit code, or `None` if a signal ended it).
    Finished {
        status: Option<i32>,
        stdout: String,
        stderr: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing was reached: start the agent.
    Start,
    /// These things (in words) were reached: do not start the agent.
    Refuse { reached: Vec<String> },
    /// No trustworthy answer: do not start the agent.
    CouldNotCheck { why: String },
}

const FIX: &str = "configure a wrapper that can run both the agent and the check \
                   inside the same sandbox";

pub fn verdict(plan: &Plan, nonce: &str, outcome: &Outcome) -> Verdict {
    let unchecked = |why: String| Verdict::CouldNotCheck { why };
    let (status, stdout, stderr) = match outcome {
        Outcome::Unplaceable(why) => return unchecked(why.clone()),
        Outcome::SpawnFailed(e) => {
            return unchecked(format!("the wrapper could not be started: {e}; {FIX}"))
        }
        Outcome::TimedOut { secs } => {
            return unchecked(format!(
                "the check did not finish within {secs}s and was killed; {FIX}"
            ))
        }
        Outcome::Finished {
            status,
            stdout,
            stderr,
        } => (status, stdout, stderr),
    };
    let prefix = format!("{} {nonce} ", super::REPORT_TAG);
    let lines: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix(&prefix))
        .collect();
    let json = match lines.as_slice() {
        [one] => *one,
        [] => {
            let ended = match status {
                Some(c) => format!("exit status {c}"),
                None => "killed by a signal".into(),
            };
            let said = last_line(stderr)
                .map(|l| format!(", last said: {l}"))
                .unwrap_or_default();
            return unchecked(format!(
                "the check gave no report ({ended}{said}): the wrapper stopped before the \
                 check ran (what it last said tells why: a settings file it reads, say), the \
                 sandbox could not run $NERDR_BIN, or the wrapper does not pass on its output; \
                 {FIX}"
            ));
        }
        _ => return unchecked("the check's report was given more than once".into()),
    };
    let findings: Findings = match serde_json::from_str(json) {
        Ok(f) => f,
        Err(e) => return unchecked(format!("the check's report is not readable: {e}")),
    };
    let mut reached = Vec::new();
    for check in &plan.checks {
        let mut answers = findings.findings.iter().filter(|f| f.id == check.id);
        match (answers.next(), answers.next()) {
            (Some(f), None) => {
                if f.reached {
                    reached.push(check.what.clone());
                }
            }
            (None, _) => {
                return unchecked(format!("the check's report says nothing of `{}`", check.id))
            }
            (Some(_), Some(_)) => {
                return unchecked(format!("the check's report answers `{}` twice", check.id))
            }
        }
    }
    if let Some(extra) = findings
        .findings
        .iter()
        .find(|f| !plan.checks.iter().any(|c| c.id == f.id))
    {
        return unchecked(format!(
            "the check's report answers `{}`, which was not asked",
            extra.id
        ));
    }
    if !reached.is_empty() {
        return Verdict::Refuse { reached };
    }
    // A clean report counts only from a check that ended well: a report
    // printed by someone else, with the probe killed before it could
    // speak, must not start the agent.
    match status {
        Some(0) => Verdict::Start,
        Some(c) => unchecked(format!(
            "the check reported nothing reached but ended with exit status {c}; {FIX}"
        )),
        None => unchecked(format!(
            "the check reported nothing reached but was killed by a signal; {FIX}"
        )),
    }
}

/// What of nerdr the agent could not reach from inside, as the one report
/// carrying the nonce says (`Findings::nerdr_missing`); nothing without
/// such a report (the verdict then says the check could not be made).
pub fn nerdr_missing(nonce: &str, outcome: &Outcome) -> Vec<String> {
    let Outcome::Finished { stdout, .. } = outcome else {
        return Vec::new();
    };
    let prefix = format!("{} {nonce} ", super::REPORT_TAG);
    let mut lines = stdout.lines().filter_map(|l| l.strip_prefix(&prefix));
    match (lines.next(), lines.next()) {
        (Some(one), None) => serde_json::from_str::<Findings>(one)
            .map(|f| f.nerdr_missing)
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

fn last_line(text: &str) -> Option<String> {
    let l = text.lines().rev().map(str::trim).find(|l| !l.is_empty())?;
    Some(l.chars().take(200).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::findings::Finding;
    use crate::probe::plan::{Check, FileId, Try};

    fn plan() -> Plan {
        let dir = |p: &str| FileId {
            path: p.into(),
            dev: 1,
            ino: 1,
            mount: None,
        };
        Plan {
            checks: vec![
                Check {
                    id: "a".into(),
                    what: "thing A".into(),
                    try_: Try::CreateIn { dir: dir("/a") },
                },
                Check {
                    id: "b".into(),
                    what: "thing B".into(),
                    try_: Try::ListDir { dir: dir("/b") },
                },
            ],
        }
    }

    fn report(rows: &[(&str, bool)]) -> String {
        Findings {
            nerdr_missing: Vec::new(),
            findings: rows
                .iter()
                .map(|(id, reached)| Finding {
                    id: id.to_string(),
                    reached: *reached,
                    detail: String::new(),
                })
                .collect(),
        }
        .line("N1")
    }

    fn finished(stdout: &str) -> Outcome {
        Outcome::Finished {
            status: Some(0),
            stdout: stdout.into(),
            stderr: String::new(),
        }
    }

    enum Want {
        Start,
        Refuse(&'static [&'static str]),
        Unchecked(&'static str),
    }

    #[test]
    fn what_of_nerdr_is_missing_comes_from_the_one_report() {
        let with = |missing: &[&str]| {
            Findings {
                findings: Vec::new(),
                nerdr_missing: missing.iter().map(|m| m.to_string()).collect(),
            }
            .line("N1")
        };
        let finished = |stdout: String| Outcome::Finished {
            status: Some(0),
            stdout,
            stderr: String::new(),
        };
        let rows: Vec<(Outcome, Vec<&str>)> = vec![
            (
                finished(with(&["the hook socket /s: ENOENT"])),
                vec!["the hook socket /s: ENOENT"],
            ),
            (finished(with(&[])), vec![]),
            // Another nonce's report, or two: no word taken from them.
            (finished(with(&["x"]).replace("N1", "N2")), vec![]),
            (
                finished(format!("{}\n{}", with(&["x"]), with(&["y"]))),
                vec![],
            ),
            (Outcome::TimedOut { secs: 1 }, vec![]),
        ];
        for (outcome, want) in rows {
            assert_eq!(nerdr_missing("N1", &outcome), want, "{outcome:?}");
        }
    }

    #[test]
    fn each_row() {
        let both_clear = report(&[("a", false), ("b", false)]);
        let rows: Vec<(&str, Outcome, Want)> = vec![
            ("nothing reached", finished(&both_clear), Want::Start),
            (
                "nothing reached, but the check failed",
                Outcome::Finished {
                    status: Some(1),
                    stdout: both_clear.clone(),
                    stderr: String::new(),
                },
                Want::Unchecked("exit status 1"),
            ),
            (
                "nothing reached, but the check was killed",
                Outcome::Finished {
                    status: None,
                    stdout: both_clear.clone(),
                    stderr: String::new(),
                },
                Want::Unchecked("killed by a signal"),
            ),
            (
                "the wrapper's own chatter around the report",
                finished(&format!("hello\n{both_clear}\nbye\n")),
                Want::Start,
            ),
            (
                "one thing reached",
                finished(&report(&[("a", true), ("b", false)])),
                Want::Refuse(&["thing A"]),
            ),
            (
                "each thing reached is named",
                finished(&report(&[("a", true), ("b", true)])),
                Want::Refuse(&["thing A", "thing B"]),
            ),
            (
                "a report with a non-zero exit still counts",
                Outcome::Finished {
                    status: Some(3),
                    stdout: report(&[("a", true), ("b", false)]),
                    stderr: String::new(),
                },
                Want::Refuse(&["thing A"]),
            ),
            (
                "no output at all",
                Outcome::Finished {
                    status: Some(127),
                    stdout: String::new(),
                    stderr: "bwrap: execvp /x/nerdr: No such file or directory\n".into(),
                },
                Want::Unchecked("No such file or directory"),
            ),
            (
                "the wrapper refused to start: what it said leads",
                Outcome::Finished {
                    status: Some(1),
                    stdout: String::new(),
                    stderr: "nerdr: /h/.config/nerdr/sandbox.json:1: unknown key `network`\n"
                        .into(),
                },
                Want::Unchecked(
                    "last said: nerdr: /h/.config/nerdr/sandbox.json:1: unknown key `network`): \
                     the wrapper stopped before the check ran",
                ),
            ),
            (
                "a report under another nonce",
                finished(&both_clear.replace("N1", "N2")),
                Want::Unchecked("no report"),
            ),
            (
                "the report twice",
                finished(&format!("{both_clear}\n{both_clear}")),
                Want::Unchecked("more than once"),
            ),
            (
                "garbled json",
                finished("NERDR-PROBE N1 {\"findings\": [oops"),
                Want::Unchecked("not readable"),
            ),
            (
                "a check left out",
                finished(&report(&[("a", false)])),
                Want::Unchecked("nothing of `b`"),
            ),
            (
                "a check answered twice",
                finished(&report(&[("a", false), ("b", false), ("a", false)])),
                Want::Unchecked("twice"),
            ),
            (
                "an answer to a check not asked",
                finished(&report(&[("a", false), ("b", false), ("c", false)])),
                Want::Unchecked("not asked"),
            ),
            (
                "killed by a signal, no report",
                Outcome::Finished {
                    status: None,
                    stdout: String::new(),
                    stderr: String::new(),
                },
                Want::Unchecked("killed by a signal"),
            ),
            (
                "hung",
                Outcome::TimedOut { secs: 10 },
                Want::Unchecked("within 10s"),
            ),
            (
                "the wrapper does not exist",
                Outcome::SpawnFailed("No such file or directory".into()),
                Want::Unchecked("could not be started"),
            ),
            (
                "nowhere to put the probe",
                Outcome::Unplaceable("no word names the agent".into()),
                Want::Unchecked("no word names"),
            ),
        ];
        for (name, outcome, want) in rows {
            let got = verdict(&plan(), "N1", &outcome);
            match want {
                Want::Start => assert_eq!(got, Verdict::Start, "{name}"),
                Want::Refuse(r) => assert_eq!(
                    got,
                    Verdict::Refuse {
                        reached: r.iter().map(|s| s.to_string()).collect()
                    },
                    "{name}"
                ),
                Want::Unchecked(part) => match got {
                    Verdict::CouldNotCheck { why } => {
                        assert!(why.contains(part), "{name}: {why}")
                    }
                    other => panic!("{name}: {other:?}"),
                },
            }
        }
    }
}
