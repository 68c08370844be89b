//! `nerdr tabs --all-hosts`: what is asked of whom, and what each answer
//! means (pure; `cli::all_hosts` is the edge that runs the queries).
//!
//! Every host is asked by a `nerdr` of its own, run as a child: `nerdr
//! --host NAME tabs --json` for each `[hosts.NAME]`, and `nerdr tabs
//! --json` for this machine ([`LOCAL`]). A child is one ssh (one link, as
//! any `--host` command has), so the hosts are asked in parallel with no
//! shared state, and a host that stalls is ended, child and ssh, by its
//! process group, without touching the others. Its answer is the same
//! JSON `tabs --json` prints, already stripped of what a remote core
//! could put there to drive the terminal (`client::over_ssh`); its stderr,
//! a failed host's reason, is not, and is made one plain line here
//! ([`reason`]).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Value};

use crate::config::{HostConfig, LOCAL_HOST};
use crate::protocol::api::{decode, ListTabs};

/// The host name this machine has in the table.
pub const LOCAL: &str = LOCAL_HOST;

/// How long a host has to answer, from the start: ssh's connection and
/// login, the bridge, the core's reply. A few seconds is usual; one that
/// has said nothing by then is marked rather than waited for.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// How much of a failed host's reason is shown: the table's line stays a
/// line, and a remote login's output cannot fill the terminal.
const REASON_CHARS: usize = 300;

/// One host to ask, and the arguments of the `nerdr` that asks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    pub host: String,
    pub args: Vec<String>,
}

/// This machine first (it answers soonest and is what `nerdr tabs`
/// shows), then each configured host in name order: the order rows and
/// failures print in, whatever order the answers came.
pub fn queries(hosts: &BTreeMap<String, HostConfig>, all: bool) -> Vec<Query> {
    let tail = |mut args: Vec<String>| {
        args.extend(["tabs".into(), "--json".into()]);
        if all {
            args.push("--all".into());
        }
        args
    };
    let mut out = vec![Query {
        host: LOCAL.into(),
        args: tail(Vec::new()),
    }];
    for name in hosts.keys() {
        out.push(Query {
            host: name.clone(),
            args: tail(vec!["--host".into(), name.clone()]),
        });
    }
    out
}

/// How a host's `nerdr` ended.
#[derive(Debug)]
pub enum Ended<'a> {
    Exited {
        success: bool,
        stdout: &'a [u8],
        stderr: &'a [u8],
    },
    /// Still running at the deadline (then ended by us).
    TimedOut(Duration),
    /// Never started.
    NotRun(String),
}

/// What a host answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Its tabs, as `tabs --json` rows.
    Tabs(Vec<Value>),
    /// Why it has none to show: "no answer: ..." in the table.
    NoAnswer(String),
}

/// What `ended` means.
pub fn answer(ended: Ended) -> Answer {
    match ended {
        Ended::Exited {
            success: true,
            stdout,
            ..
        } => match serde_json::from_slice::<Value>(stdout) {
            // Rows as they came (`--json` passes every field on), once
            // they are known to read as tabs (the table reads them so).
            Ok(Value::Array(rows)) if decode::<ListTabs>(Value::Array(rows.clone())).is_ok() => {
                Answer::Tabs(rows)
            }
            _ => Answer::NoAnswer(format!(
                "its answer is not a list of tabs: {}",
                reason(stdout)
            )),
        },
        Ended::Exited {
            success: false,
            stderr,
            ..
        } => Answer::NoAnswer(match reason(stderr) {
            r if r.is_empty() => "nerdr failed and said nothing".into(),
            r => r,
        }),
        Ended::TimedOut(after) => Answer::NoAnswer(format!(
            "nothing within {} s (the host, ssh or nerdr there stalled)",
            after.as_secs()
        )),
        Ended::NotRun(why) => Answer::NoAnswer(why),
    }
}

/// Text a host's `nerdr` or ssh wrote, as one plain line: escape
/// sequences and control characters dropped (a remote login's output may
/// be in it), `nerdr: ` taken off, lines joined, cut at
/// [`REASON_CHARS`].
pub fn reason(text: &[u8]) -> String {
    let text = crate::printable::typeable(&String::from_utf8_lossy(text));
    let line = text
        .lines()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .map(|l| l.strip_prefix("nerdr: ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join(" / ")
        .replace('\t', " ");
    match line.char_indices().nth(REASON_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

/// Whether `nerdr tabs --all-hosts` fails: only when no host answered, so
/// that one host being down (the case it is for) is not an error for a
/// script, and nothing answering at all is.
pub fn all_failed(answers: &[(String, Answer)]) -> bool {
    answers
        .iter()
        .all(|(_, a)| matches!(a, Answer::NoAnswer(_)))
}

/// `--json`: every row with its `host`, in host order, and the hosts that
/// did not answer, each with its reason.
pub fn json(answers: &[(String, Answer)]) -> Value {
    let mut tabs = Vec::new();
    let mut failed = Vec::new();
    for (host, a) in answers {
        match a {
            Answer::Tabs(rows) => tabs.extend(rows.iter().cloned().map(|mut row| {
                row["host"] = json!(host);
                row
            })),
            Answer::NoAnswer(why) => failed.push(json!({"host": host, "reason": why})),
        }
    }
    json!({"tabs": tabs, "failed": failed})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machine_first_then_each_host_by_name() {
        let hosts = BTreeMap::from([
            ("zeta".to_owned(), HostConfig::default()),
            ("devbox".to_owned(), HostConfig::default()),
        ]);
        let got = queries(&hosts, false);
        let args: Vec<(&str, String)> = got
            .iter()
            .map(|q| (q.host.as_str(), q.args.join(" ")))
            .collect();
        assert_eq!(
            args,
            [
                ("local", "tabs --json".to_owned()),
                ("devbox", "--host devbox tabs --json".to_owned()),
                ("zeta", "--host zeta tabs --json".to_owned()),
            ]
        );
        let all = queries(&hosts, true);
        assert!(all.iter().all(|q| q.args.ends_with(&["--all".into()])));
        // No hosts configured: this machine alone.
        assert_eq!(queries(&BTreeMap::new(), false).len(), 1);
    }

    #[test]
    fn each_way_a_host_ends_is_its_tabs_or_why_not() {
        let rows = br#"[{"id": "ab12", "name": "x", "folder": "/w", "agent": "sh",
            "command": ["sh"], "sandboxed": false, "state": "running", "pid": 7,
            "exit_code": null}]"#;
        #[rustfmt::skip]
        let cases: Vec<(Ended, Result<usize, &str>)> = vec![
            (Ended::Exited { success: true, stdout: rows, stderr: b"" }, Ok(1)),
            (Ended::Exited { success: true, stdout: b"[]\n", stderr: b"warning" }, Ok(0)),
            (Ended::Exited { success: true, stdout: b"{\"a\":1}", stderr: b"" },
             Err("its answer is not a list of tabs: {\"a\":1}")),
            (Ended::Exited { success: true, stdout: b"[1, 2]", stderr: b"" },
             Err("not a list of tabs")),
            (Ended::Exited { success: true, stdout: br#"[{"id": "ab12"}]"#, stderr: b"" },
             Err("not a list of tabs")),
            (Ended::Exited { success: false, stdout: b"",
                             stderr: b"nerdr: ssh could not reach gone: ssh: connect to host 127.0.0.1 port 9: Connection refused\n" },
             Err("ssh could not reach gone: ssh: connect to host 127.0.0.1 port 9: Connection refused")),
            (Ended::Exited { success: false, stdout: b"", stderr: b"" },
             Err("nerdr failed and said nothing")),
            (Ended::TimedOut(Duration::from_secs(10)),
             Err("nothing within 10 s (the host, ssh or nerdr there stalled)")),
            (Ended::NotRun("cannot run nerdr: gone".into()), Err("cannot run nerdr: gone")),
        ];
        for (ended, want) in cases {
            let shown = format!("{ended:?}");
            match (answer(ended), want) {
                (Answer::Tabs(rows), Ok(n)) => assert_eq!(rows.len(), n, "{shown}"),
                (Answer::NoAnswer(why), Err(w)) => assert!(why.contains(w), "{shown}: {why}"),
                (got, want) => panic!("{shown}: got {got:?}, want {want:?}"),
            }
        }
    }

    /// A reason is one line of plain text, whatever the far end printed.
    #[test]
    fn a_reason_is_one_plain_line() {
        #[rustfmt::skip]
        let cases: &[(&[u8], &str)] = &[
            (b"nerdr: it failed\n", "it failed"),
            (b"line one\n\n  line two  \n", "line one / line two"),
            // A title, a clipboard write, a screen clear: gone whole.
            (b"\x1b]0;pwned\x07a\x1b]52;c;eA==\x07b\x1b[2Jc\r\n", "abc"),
            ("x\u{9b}2Jy\u{202e}z".as_bytes(), "x2Jyz"),
            (b"a\tb", "a b"),
            (b"\xff\xfe bytes", "\u{fffd}\u{fffd} bytes"),
        ];
        for (text, want) in cases {
            assert_eq!(reason(text), *want, "{text:?}");
        }
        let long = reason("é".repeat(1000).as_bytes());
        assert_eq!(long.chars().count(), REASON_CHARS + 1);
        assert!(long.ends_with('…'));
    }

    #[test]
    fn it_fails_only_when_no_host_answered() {
        let ok = || Answer::Tabs(Vec::new());
        let no = || Answer::NoAnswer("x".into());
        #[rustfmt::skip]
        let cases = [
            (vec![ok()], false),
            (vec![ok(), no()], false),
            (vec![no(), ok()], false),
            (vec![no(), no()], true),
            (vec![no()], true),
        ];
        for (answers, failed) in cases {
            let named: Vec<(String, Answer)> = answers
                .into_iter()
                .enumerate()
                .map(|(i, a)| (format!("h{i}"), a))
                .collect();
            assert_eq!(all_failed(&named), failed, "{named:?}");
        }
    }

    #[test]
    fn json_names_each_rows_host_and_each_failure() {
        let answers = vec![
            (
                "local".to_owned(),
                Answer::Tabs(vec![json!({"id": "aa", "number": 1})]),
            ),
            ("gone".to_owned(), Answer::NoAnswer("refused".into())),
            (
                "devbox".to_owned(),
                Answer::Tabs(vec![json!({"id": "bb"}), json!({"id": "cc"})]),
            ),
        ];
        assert_eq!(
            json(&answers),
            json!({
                "tabs": [
                    {"id": "aa", "number": 1, "host": "local"},
                    {"id": "bb", "host": "devbox"},
                    {"id": "cc", "host": "devbox"},
                ],
                "failed": [{"host": "gone", "reason": "refused"}],
            })
        );
    }
}
