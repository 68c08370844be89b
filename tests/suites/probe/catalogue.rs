//! Each wrapper in the catalogue and the verdict it gets, as the person
//! sees it.

use super::*;

#[test]
fn each_wrapper_in_the_catalogue_gets_its_verdict() {
    let Some(s) = Setup::start() else { return };
    let rows: &[(&str, Want)] = &[
        (
            "none",
            Want::Refused {
                each: EVERYTHING,
                exact: false,
            },
        ),
        (
            "bindall",
            Want::Refused {
                each: &[
                    "nerdr's config folder",
                    "nerdr's state folder",
                    "the client socket ",
                ],
                exact: false,
            },
        ),
        (
            "rtvisible",
            Want::Refused {
                each: &[
                    "the client socket's folder",
                    "the client socket ",
                    "the client key",
                    "the runtime folder",
                    "/bus (connected)",
                    "/systemd/private (connected)",
                ],
                exact: true,
            },
        ),
        (
            "gitdir",
            Want::Refused {
                each: &["the main checkout's .git", "the git info folder"],
                exact: true,
            },
        ),
        // Found at their other paths, by identity.
        (
            "hostrun",
            Want::Refused {
                each: &[
                    "the client socket's folder",
                    "the client socket ",
                    "the client key",
                    "the runtime folder",
                    "/bus (connected)",
                    "/systemd/private (connected)",
                    "nerdr's config folder",
                ],
                exact: false,
            },
        ),
        (
            "homebind",
            Want::Refused {
                each: &[
                    "the wrapper program",
                    "the agent's program",
                    "the global git",
                    "nerdr's data folder",
                ],
                exact: false,
            },
        ),
        ("relwrap", Want::Unchecked("which the agent may write")),
        ("scriptwrap", Want::Unchecked("which the agent may write")),
        (
            "hooks",
            Want::Refused {
                each: &["the git hooks folder"],
                exact: true,
            },
        ),
        // bwrap's user namespace keeps ptrace, pidfd_getfd, environ and mem
        // out; the core's and holder's open files can still be listed.
        (
            "nopid",
            Want::Refused {
                each: &["the core (pid", "the holder (pid", "/proc/PID/fd"],
                exact: false,
            },
        ),
        (
            "noword",
            Want::NoProgram(
                "agent \"noword\" runs fine inside the sandbox: add program = \"fine\" to \
                 [agents.noword] in",
            ),
        ),
        ("nobin", Want::Unchecked("gave no report")),
        ("fine", Want::Started),
        ("claude", Want::Started),
    ];
    for (agent, want) in rows {
        let (ok, answer) = s.agent(agent);
        let tab = s.tab_of(agent);
        let id = tab["id"].as_str().unwrap().to_string();
        match want {
            Want::Started => {
                assert!(ok, "{agent}: not started: {answer}");
                let screen = s.wait_screen(&id, "AGENT-STARTED");
                assert_eq!(tab["state"], "running", "{agent}: {tab}");
                if *agent == "fine" {
                    assert!(
                        screen.contains("COMMITTED"),
                        "the agent could not commit:\n{screen}"
                    );
                }
                let passed = s.audit(PASSED_ID, &id);
                assert_eq!(passed.len(), 1, "{agent}: one pass entry: {passed:?}");
                assert_eq!(passed[0]["PRIORITY"], "6", "a pass is logged at info level");
            }
            Want::Refused { each, exact } => {
                assert!(!ok, "{agent}: started: {answer}");
                assert_eq!(tab["state"], "refused", "{agent}: {tab}");
                assert!(tab["pid"].is_null(), "{agent}: {tab}");
                let reason = tab["reason"].as_str().unwrap_or_default();
                let entries = s.audit(REFUSED_ID, &id);
                assert_eq!(entries.len(), 1, "{agent}: {entries:?}");
                let e = &entries[0];
                assert_eq!(e["NERDR_AGENT"], *agent);
                assert!(values(&e["NERDR_COMMAND"])[0].contains(agent), "{e}");
                let reached = values(&e["NERDR_REACHED"]);
                for thing in *each {
                    assert!(
                        reached.iter().any(|r| r.contains(thing)),
                        "{agent}: {thing:?} not among {reached:#?}"
                    );
                }
                if *exact {
                    assert_eq!(reached.len(), each.len(), "{agent}: {reached:#?}");
                }
                // Each thing reached is named in the answer, tabs --json and
                // on the tab's screen.
                let screen = s.wait_screen(&id, "to check again");
                for r in &reached {
                    assert!(
                        answer.contains(r.as_str()),
                        "{agent}: answer lacks {r}:\n{answer}"
                    );
                    assert!(
                        reason.contains(r.as_str()),
                        "{agent}: reason lacks {r}:\n{reason}"
                    );
                }
                // The last, as a long list scrolls its start off the screen.
                let last = reached[reached.len() - 1]
                    .chars()
                    .take(40)
                    .collect::<String>();
                assert!(
                    screen.contains(&last),
                    "{agent}: screen lacks {last}:\n{screen}"
                );
            }
            Want::Unchecked(why) => {
                assert!(!ok, "{agent}: started: {answer}");
                assert!(answer.contains(why), "{agent}: {answer}");
                assert!(
                    answer.contains("configure a wrapper that can run both"),
                    "{answer}"
                );
                assert_eq!(tab["state"], "refused", "{agent}: {tab}");
                let entries = s.audit(UNCHECKED_ID, &id);
                assert_eq!(entries.len(), 1, "{agent}: {entries:?}");
                assert_eq!(entries[0]["NERDR_AGENT"], *agent);
                assert!(values(&entries[0]["NERDR_REASON"])[0].contains(why));
                s.wait_screen(&id, "to check again");
            }
            Want::NoProgram(fix) => {
                assert!(!ok, "{agent}: started: {answer}");
                // The id on stdout, then the one line.
                let mut lines = answer.lines();
                assert_eq!(lines.next(), Some(id.as_str()), "{agent}: {answer}");
                let line = lines.next().unwrap_or_default();
                assert!(line.contains(fix), "{agent}: {answer}");
                assert_eq!(lines.next(), None, "{agent}: one line: {answer}");
                assert_eq!(tab["state"], "refused", "{agent}: {tab}");
                assert!(tab["reason"].as_str().unwrap_or_default().contains(fix));
                let entries = s.audit(UNCHECKED_ID, &id);
                assert_eq!(entries.len(), 1, "{agent}: {entries:?}");
                assert!(values(&entries[0]["NERDR_REASON"])[0].contains(fix));
                s.wait_screen(&id, &format!("nerdr restart {id}"));
            }
        }
    }
    // `nerdr log --probe --json` lists the verdicts from the journal.
    let log = s.ok(&["nerdr", "log", "--probe", "--json"]);
    let kinds: Vec<String> = log
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["kind"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    for (kind, n) in [
        ("probe-refused", 8),
        ("probe-unchecked", 4),
        ("probe-passed", 2),
    ] {
        assert_eq!(
            kinds.iter().filter(|k| *k == kind).count(),
            n,
            "{kind} in:\n{log}"
        );
    }
    // Nothing the probe made is left behind.
    let leftovers = s
        .env
        .root_run(&["find", "/", "-xdev", "-name", ".nerdr-probe-*"]);
    assert_eq!(text(&leftovers.stdout), "", "the probe left files behind");
}
