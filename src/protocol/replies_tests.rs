//! Each method's reply, as the JSON the core sent when replies were built
//! by hand (`json!({"tab": id})` and the like): the bytes older clients,
//! hook-socket scripts and `--json` outputs read.

use serde_json::{json, Value};

use super::*;
use crate::protocol::replies::*;

/// `reply`, as method `M` answers, is `wire` on the wire, and `wire` reads
/// back as `reply`.
fn same_wire<M: Method>(reply: M::Reply, wire: Value)
where
    M::Reply: PartialEq + std::fmt::Debug + Clone,
{
    assert_eq!(
        encode::<M>(Ok(reply.clone())),
        Ok(wire.clone()),
        "{}",
        M::NAME
    );
    assert_eq!(decode::<M>(wire).unwrap(), reply, "{}", M::NAME);
}

#[test]
fn a_started_tab_is_its_id() {
    let started = || Started {
        tab: "ab12".into(),
        refused: None,
        session: None,
    };
    same_wire::<StartAgent>(started(), json!({"tab": "ab12"}));
    same_wire::<OpenTerminal>(started(), json!({"tab": "ab12"}));
    same_wire::<RestartTab>(started(), json!({"tab": "ab12"}));
    let refused = Started {
        tab: "ab12".into(),
        refused: Some("add program".into()),
        session: None,
    };
    same_wire::<StartAgent>(refused, json!({"tab": "ab12", "refused": "add program"}));
    let joined = Started {
        session: Some("/h/proj".into()),
        ..started()
    };
    same_wire::<StartAgent>(joined, json!({"tab": "ab12", "session": "/h/proj"}));
}

#[test]
fn a_screen_is_its_text() {
    same_wire::<ReadScreen>(
        ScreenText {
            text: "$ ls\nREADME".into(),
        },
        json!({"text": "$ ls\nREADME"}),
    );
}

#[test]
fn sent_text_is_typed_or_waits_with_its_reason() {
    same_wire::<SendText>(Sent::Typed {}, json!({}));
    same_wire::<SendText>(
        Sent::Queued {
            queued: "q1".into(),
            why: "a sandboxed agent writes to one outside every sandbox".into(),
        },
        json!({"queued": "q1", "why": "a sandboxed agent writes to one outside every sandbox"}),
    );
}

#[test]
fn a_resize_and_a_report_answer_an_empty_object() {
    same_wire::<Resize>(Done {}, json!({}));
    same_wire::<ReportEvent>(Done {}, json!({}));
}

#[test]
fn a_rename_tells_the_id_and_the_name() {
    same_wire::<RenameTab>(
        Renamed {
            tab: "ab12".into(),
            name: "review".into(),
        },
        json!({"tab": "ab12", "name": "review"}),
    );
}

#[test]
fn a_close_tells_what_became_of_the_worktree() {
    same_wire::<CloseTab>(Closed::default(), json!({}));
    // What was closed, for `nerdr close` to say.
    same_wire::<CloseTab>(
        Closed {
            tab: "ab12".into(),
            name: "sh-1".into(),
            ..Default::default()
        },
        json!({"tab": "ab12", "name": "sh-1"}),
    );
    same_wire::<CloseTab>(
        Closed {
            removed: Some(WorktreeRemoved {
                worktree: "/w/ab12".into(),
                saved: Some(SavedWork {
                    reference: "refs/nerdr/saved/ab12".into(),
                    commit: "c0ffee".into(),
                    ignored: vec![],
                }),
                branch: "nerdr/ab12".into(),
                branch_only_commits: Some(2),
                unmerged: None,
            }),
            ..Default::default()
        },
        json!({"removed": {
            "worktree": "/w/ab12",
            "saved": {"reference": "refs/nerdr/saved/ab12", "commit": "c0ffee"},
            "branch": "nerdr/ab12",
            "branch_only_commits": 2,
        }}),
    );
    // Nothing saved, and git could not count: both stay on the wire as null.
    same_wire::<CloseTab>(
        Closed {
            removed: Some(WorktreeRemoved {
                worktree: "/w/ab12".into(),
                saved: None,
                branch: "nerdr/ab12".into(),
                branch_only_commits: None,
                unmerged: None,
            }),
            ..Default::default()
        },
        json!({"removed": {
            "worktree": "/w/ab12", "saved": null, "branch": "nerdr/ab12", "branch_only_commits": null,
        }}),
    );
}

#[test]
fn a_quit_counts_the_closed_tabs() {
    same_wire::<QuitSession>(
        SessionQuit {
            closed: 3,
            left: vec![],
        },
        json!({"closed": 3}),
    );
    same_wire::<QuitSession>(
        SessionQuit {
            closed: 1,
            left: vec!["its worktree /w stays".into()],
        },
        json!({"closed": 1, "left": ["its worktree /w stays"]}),
    );
}

#[test]
fn the_agents_are_a_list_of_names() {
    same_wire::<ListAgents>(
        AgentNames {
            agents: vec!["claude".into(), "codex".into(), "mine".into()],
            programs: Default::default(),
        },
        json!({"agents": ["claude", "codex", "mine"]}),
    );
}

#[test]
fn each_kind_of_approval_keeps_its_fields() {
    let approval = |asked| Approval {
        id: "q1".into(),
        question: "run it?".into(),
        tab: "ab12".into(),
        asked,
    };
    let pending = vec![
        approval(Asked::Setup {
            worktree: "/w/ab12".into(),
            hash: "5e7".into(),
            argv: vec!["npm".into(), "ci".into()],
            once: true,
        }),
        approval(Asked::Message {
            to: "cd34".into(),
            text: "hi\r".into(),
        }),
        approval(Asked::Plugin {
            name: "p".into(),
            args: vec!["a".into()],
        }),
        approval(Asked::Network {
            host: "example.com".into(),
            port: 443,
        }),
    ];
    let head = |kind: &str| json!({"id": "q1", "question": "run it?", "tab": "ab12", "kind": kind});
    let with = |kind: &str, rest: Value| {
        let mut v = head(kind);
        v.as_object_mut()
            .unwrap()
            .extend(rest.as_object().unwrap().clone());
        v
    };
    same_wire::<ListApprovals>(
        ApprovalsList { pending },
        json!({"pending": [
            with("setup", json!({"worktree": "/w/ab12", "hash": "5e7", "argv": ["npm", "ci"], "once": true})),
            with("message", json!({"to": "cd34", "text": "hi\r"})),
            with("plugin", json!({"name": "p", "args": ["a"]})),
            with("network", json!({"host": "example.com", "port": 443})),
        ]}),
    );
    same_wire::<ListApprovals>(ApprovalsList { pending: vec![] }, json!({"pending": []}));
}

#[test]
fn a_decision_names_what_it_ran_and_where_it_typed() {
    same_wire::<Decide>(Decided::default(), json!({"ran": []}));
    same_wire::<Decide>(
        Decided {
            ran: vec!["ef56".into()],
            delivered: None,
        },
        json!({"ran": ["ef56"]}),
    );
    same_wire::<Decide>(
        Decided {
            ran: vec![],
            delivered: Some("cd34".into()),
        },
        json!({"ran": [], "delivered": "cd34"}),
    );
}

#[test]
fn each_network_answer_keeps_its_word() {
    for (answer, wire) in [
        (NetworkAnswer::Once, json!({"answer": "once"})),
        (NetworkAnswer::Session, json!({"answer": "session"})),
        (NetworkAnswer::Deny, json!({"answer": "deny"})),
        (
            NetworkAnswer::NoAnswer { secs: 60 },
            json!({"answer": "no_answer", "secs": 60}),
        ),
        (
            NetworkAnswer::NotAsked {
                why: "no window".into(),
            },
            json!({"answer": "not_asked", "why": "no window"}),
        ),
    ] {
        same_wire::<AskNetwork>(answer, wire);
    }
}

#[test]
fn a_plugin_run_has_its_code_and_output() {
    same_wire::<RunPlugin>(
        PluginRan {
            code: Some(3),
            stdout: "out".into(),
            stderr: "err".into(),
        },
        json!({"code": 3, "stdout": "out", "stderr": "err"}),
    );
    // Killed by a signal: no code, and the wire says so with null.
    same_wire::<RunPlugin>(
        PluginRan {
            code: None,
            stdout: String::new(),
            stderr: String::new(),
        },
        json!({"code": null, "stdout": "", "stderr": ""}),
    );
}

#[test]
fn a_resume_report_is_taken_or_ignored_with_its_reason() {
    same_wire::<ReportAgent>(ReportTaken::default(), json!({}));
    same_wire::<ReportAgent>(
        ReportTaken {
            ignored: Some("the agent is sandboxed".into()),
        },
        json!({"ignored": "the agent is sandboxed"}),
    );
}

#[test]
fn tab_rows_keep_their_fields() {
    let row = TabInfo {
        unread_reviews: 2,
        id: "ab12".into(),
        name: "claude-1".into(),
        number: 1,
        folder: "/w".into(),
        agent: "claude".into(),
        command: vec!["claude".into()],
        sandboxed: true,
        kind: TabKind::Agent,
        parent: None,
        worktree: Some("/w/.nerdr/ab12".into()),
        session_id: Some("s1".into()),
        resumable: false,
        state: TabState::Running,
        reason: None,
        pid: Some(42),
        exit_code: None,
        warning: None,
        agent_state: Some(AgentState::Blocked),
        agent_state_since: Some("2026-12-01T18:41:38.123Z".into()),
        bells: 2,
        spun_off_from: None,
        reviews: None,
        results_waiting: 0,
        report_due: false,
        handed_to_you: false,
        switches: Vec::new(),
        limit: None,
    };
    let refused = TabInfo {
        kind: TabKind::Terminal,
        parent: Some("cd34".into()),
        state: TabState::Refused,
        reason: Some("the sandbox check failed".into()),
        warning: Some("hooks blocked".into()),
        pid: None,
        agent_state: None,
        agent_state_since: None,
        bells: 0,
        ..row.clone()
    };
    same_wire::<ListTabs>(
        vec![row, refused],
        json!([
            {"id": "ab12", "name": "claude-1", "number": 1, "folder": "/w", "agent": "claude", "command": ["claude"],
             "sandboxed": true, "kind": "agent", "parent": null, "worktree": "/w/.nerdr/ab12",
             "session_id": "s1", "resumable": false, "state": "running", "pid": 42,
             "exit_code": null, "agent_state": "blocked",
             "agent_state_since": "2026-12-01T18:41:38.123Z", "bells": 2,
             "unread_reviews": 2},
            {"id": "ab12", "name": "claude-1", "number": 1, "folder": "/w", "agent": "claude", "command": ["claude"],
             "sandboxed": true, "kind": "terminal", "parent": "cd34",
             "worktree": "/w/.nerdr/ab12", "session_id": "s1", "resumable": false,
             "state": "refused", "reason": "the sandbox check failed", "pid": null,
             "exit_code": null, "warning": "hooks blocked", "agent_state": null,
             "agent_state_since": null, "bells": 0, "unread_reviews": 2},
        ]),
    );
}

#[test]
fn the_status_keeps_its_figures() {
    same_wire::<GetStatus>(
        CoreStatus {
            pid: 7,
            version: "0.1.0".into(),
            sessions: 1,
            running: 2,
            tabs: 3,
            activated: true,
            mode: "holder, each program in its own systemd scope".into(),
        },
        json!({"pid": 7, "version": "0.1.0", "sessions": 1, "running": 2, "tabs": 3,
               "activated": true, "mode": "holder, each program in its own systemd scope"}),
    );
}

#[test]
fn sessions_are_listed_with_their_counts() {
    same_wire::<ListSessions>(
        vec![SessionInfo {
            folder: "/w/proj".into(),
            name: "proj".into(),
            tabs: 3,
            running: 2,
            blocked: 1,
            done: 0,
        }],
        json!([{"folder": "/w/proj", "name": "proj", "tabs": 3, "running": 2, "blocked": 1,
                "done": 0}]),
    );
    same_wire::<ListSessions>(vec![], json!([]));
}

#[test]
fn a_wait_says_whether_it_got_there_and_what_it_saw() {
    same_wire::<WaitFor>(
        Waited {
            reached: true,
            state: "blocked".into(),
            never: None,
        },
        json!({"reached": true, "state": "blocked"}),
    );
    same_wire::<WaitFor>(
        Waited {
            reached: false,
            state: "exited".into(),
            never: Some("the agent's program exited".into()),
        },
        json!({"reached": false, "state": "exited", "never": "the agent's program exited"}),
    );
}

#[test]
fn an_explanation_keeps_its_fields() {
    same_wire::<ExplainTab>(
        Explained {
            tab: "ab12".into(),
            agent: "claude".into(),
            state: "running".into(),
            agent_state: Some("blocked".into()),
            agent_state_since: Some("2026-12-01T18:41:38.123Z".into()),
            rules: Some("claude (built-in)".into()),
            cause: "rule \"permission prompt\" (built-in claude.toml)".into(),
            lines: vec!["Do you want to proceed?".into()],
            warning: None,
        },
        json!({"tab": "ab12", "agent": "claude", "state": "running",
               "agent_state": "blocked", "agent_state_since": "2026-12-01T18:41:38.123Z",
               "rules": "claude (built-in)",
               "cause": "rule \"permission prompt\" (built-in claude.toml)",
               "lines": ["Do you want to proceed?"]}),
    );
}

#[test]
fn review_replies_keep_their_fields() {
    use crate::review::format::{Comment, Severity};
    use crate::review::store::Review;
    same_wire::<RequestReview>(
        ReviewStarted {
            tab: "r1".into(),
            agent: "codex".into(),
            author: "ab12".into(),
            base: "b0".into(),
            head: "h1".into(),
            replaced: None,
            refused: None,
        },
        json!({"tab": "r1", "agent": "codex", "author": "ab12", "base": "b0", "head": "h1"}),
    );
    same_wire::<PostReview>(
        ReviewPosted {
            author: "ab12".into(),
            number: 2,
        },
        json!({"author": "ab12", "number": 2}),
    );
    same_wire::<ListReviews>(
        vec![TabReviews {
            program: None,
            tab: "ab12".into(),
            name: "claude-1".into(),
            reviews: vec![ShownReview::of(&Review {
                read: true,
                number: 1,
                reviewer_tab: "r1".into(),
                agent: "codex".into(),
                written_in_sandbox: true,
                base: "b0".into(),
                head: "h1".into(),
                summary: "ok\u{202e}".into(),
                comments: vec![Comment {
                    file: "a.rs".into(),
                    line: 3,
                    severity: Severity::Warning,
                    text: "t".into(),
                }],
            })],
            requested: vec![ReviewRequested {
                reviewer_tab: "r2".into(),
                agent: "claude".into(),
                base: "b0".into(),
                head: "h2".into(),
                automatic: true,
                state: crate::review::status::State::CannotReachNerdr,
                status: "cannot post".into(),
            }],
        }],
        json!([{"tab": "ab12", "name": "claude-1",
                "reviews": [{"number": 1, "reviewer_tab": "r1", "agent": "codex",
                             "written_in_sandbox": true, "base": "b0", "head": "h1",
                             "summary": "ok\\u{202e}", "read": true,
                             "from_sandbox": true, "note": crate::review::SANDBOX_NOTE,
                             "comments": [{"file": "a.rs", "line": 3, "severity": "warning", "text": "t"}]}],
                "requested": [{"reviewer_tab": "r2", "agent": "claude", "base": "b0",
                               "head": "h2", "automatic": true,
                               "state": "cannot_reach_nerdr", "status": "cannot post"}]}]),
    );
}
