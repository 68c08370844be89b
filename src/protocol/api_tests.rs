//! The requests' wire, method by method, as the JSON strings nerdr sent
//! before requests wrapped params structs: older clients, scripts on the
//! hook socket and newer cores all read these bytes.

use super::*;

/// `m` goes on the wire as exactly `json`, reads back as itself, and its
/// [`Method::NAME`] is the method the wire names.
fn same_wire<M: Method + Clone>(m: M, json: &str) {
    let req: Request = m.into();
    assert_eq!(serde_json::to_string(&req).unwrap(), json, "{}", M::NAME);
    assert_eq!(
        serde_json::from_str::<Request>(json).unwrap(),
        req,
        "{json}"
    );
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(v["method"], M::NAME, "{json}");
}

fn env() -> Vec<(String, String)> {
    vec![("A".into(), "1".into())]
}

#[test]
fn agent_requests_keep_their_wire() {
    same_wire(
        StartAgent {
            folder: "/w".into(),
            name: "claude".into(),
            extra_args: vec!["-x".into()],
            env: env(),
            worktree: false,
            program: false,
            tab_name: None,
            resume: None,
        },
        r#"{"method":"agent","params":{"folder":"/w","name":"claude","extra_args":["-x"],"env":[["A","1"]],"worktree":false}}"#,
    );
    same_wire(
        StartAgent {
            folder: "/w".into(),
            name: "sh".into(),
            extra_args: vec!["-x".into()],
            env: vec![],
            worktree: true,
            program: true,
            tab_name: Some("fix".into()),
            resume: None,
        },
        r#"{"method":"agent","params":{"folder":"/w","name":"sh","extra_args":["-x"],"env":[],"worktree":true,"program":true,"tab_name":"fix"}}"#,
    );
}

#[test]
fn tabs_requests_keep_their_wire() {
    same_wire(
        ListTabs {
            folder: Some("/w".into()),
            all: false,
        },
        r#"{"method":"tabs","params":{"folder":"/w","all":false}}"#,
    );
    same_wire(
        ListTabs {
            folder: None,
            all: true,
        },
        r#"{"method":"tabs","params":{"folder":null,"all":true}}"#,
    );
}

#[test]
fn read_requests_keep_their_wire() {
    same_wire(
        ReadScreen {
            tab: "ab12".into(),
            lines: Some(3),
            folder: None,
        },
        r#"{"method":"read","params":{"tab":"ab12","lines":3}}"#,
    );
    same_wire(
        ReadScreen {
            tab: "ab12".into(),
            lines: None,
            folder: None,
        },
        r#"{"method":"read","params":{"tab":"ab12","lines":null}}"#,
    );
}

#[test]
fn send_requests_keep_their_wire() {
    same_wire(
        SendText {
            tab: "ab12".into(),
            text: "ls".into(),
            enter: true,
            agent_only: false,
            folder: None,
        },
        r#"{"method":"send","params":{"tab":"ab12","text":"ls","enter":true}}"#,
    );
    same_wire(
        SendText {
            tab: "ab12".into(),
            text: "a.rs:2: why?".into(),
            enter: true,
            agent_only: true,
            folder: None,
        },
        r#"{"method":"send","params":{"tab":"ab12","text":"a.rs:2: why?","enter":true,"agent_only":true}}"#,
    );
}

#[test]
fn resize_requests_keep_their_wire() {
    same_wire(
        Resize {
            tab: "ab12".into(),
            rows: 24,
            cols: 80,
            folder: None,
        },
        r#"{"method":"resize","params":{"tab":"ab12","rows":24,"cols":80}}"#,
    );
}

#[test]
fn terminal_and_restart_requests_keep_their_wire() {
    same_wire(
        OpenTerminal {
            tab: "ab12".into(),
            env: env(),
            folder: None,
        },
        r#"{"method":"terminal","params":{"tab":"ab12","env":[["A","1"]]}}"#,
    );
    same_wire(
        RestartTab {
            tab: "ab12".into(),
            env: vec![],
            folder: None,
        },
        r#"{"method":"restart","params":{"tab":"ab12","env":[]}}"#,
    );
}

#[test]
fn close_and_quit_requests_keep_their_wire() {
    same_wire(
        CloseTab {
            tab: "ab12".into(),
            remove_worktree: true,
            force: false,
            folder: None,
        },
        r#"{"method":"close","params":{"tab":"ab12","remove_worktree":true,"force":false}}"#,
    );
    same_wire(
        QuitSession {
            folder: "/w".into(),
        },
        r#"{"method":"quit","params":{"folder":"/w"}}"#,
    );
}

#[test]
fn methods_without_params_send_none() {
    same_wire(GetStatus, r#"{"method":"status"}"#);
    same_wire(ListAgents, r#"{"method":"agents"}"#);
    same_wire(ListApprovals, r#"{"method":"approvals"}"#);
    same_wire(ListSessions, r#"{"method":"sessions"}"#);
}

#[test]
fn approval_requests_keep_their_wire() {
    same_wire(
        Decide {
            id: "q1".into(),
            approve: true,
            session: false,
        },
        r#"{"method":"decide","params":{"id":"q1","approve":true,"session":false}}"#,
    );
    same_wire(
        AskNetwork {
            host: "example.com".into(),
            port: 443,
        },
        r#"{"method":"ask_network","params":{"host":"example.com","port":443}}"#,
    );
}

#[test]
fn plugin_requests_keep_their_wire() {
    same_wire(
        RunPlugin {
            name: "p".into(),
            args: vec!["a".into()],
            folder: "/w".into(),
        },
        r#"{"method":"plugin","params":{"name":"p","args":["a"],"folder":"/w"}}"#,
    );
}

#[test]
fn report_requests_keep_their_wire() {
    same_wire(
        ReportEvent {
            event: "Stop".into(),
            session_id: Some("s1".into()),
            data: serde_json::json!({"a": 1}),
            seq: Some(42),
        },
        r#"{"method":"report","params":{"event":"Stop","session_id":"s1","data":{"a":1},"seq":42}}"#,
    );
    same_wire(
        ReportEvent {
            event: "Stop".into(),
            session_id: None,
            data: serde_json::Value::Null,
            seq: None,
        },
        // An older hook's report: no sequence number.
        r#"{"method":"report","params":{"event":"Stop","session_id":null,"data":null}}"#,
    );
    same_wire(
        WaitFor {
            tab: "ab12".into(),
            until: Until::Blocked,
            timeout_ms: Some(30_000),
            folder: None,
        },
        r#"{"method":"wait","params":{"tab":"ab12","until":"blocked","timeout_ms":30000}}"#,
    );
    same_wire(
        ExplainTab {
            tab: "ab12".into(),
            folder: None,
        },
        r#"{"method":"explain","params":{"tab":"ab12"}}"#,
    );
    same_wire(
        RenameTab {
            tab: "ab12".into(),
            name: "review".into(),
            folder: None,
        },
        r#"{"method":"rename","params":{"tab":"ab12","name":"review"}}"#,
    );
    same_wire(
        ReportAgent {
            tab: "ab12".into(),
            argv: vec!["claude".into(), "--resume".into()],
        },
        r#"{"method":"report_agent","params":{"tab":"ab12","argv":["claude","--resume"]}}"#,
    );
}

#[test]
fn left_out_params_take_their_defaults() {
    let parsed = |s: &str| serde_json::from_str::<Request>(s);
    assert_eq!(
        parsed(r#"{"method":"tabs","params":{"all":true}}"#).unwrap(),
        Request::Tabs(ListTabs {
            folder: None,
            all: true
        })
    );
    assert_eq!(
        parsed(r#"{"method":"agent","params":{"folder":"/w","name":"c"}}"#).unwrap(),
        Request::Agent(StartAgent {
            folder: "/w".into(),
            name: "c".into(),
            extra_args: vec![],
            env: vec![],
            worktree: true,
            program: false,
            tab_name: None,
            resume: None,
        })
    );
    assert_eq!(
        parsed(r#"{"params":{"tab":"t"},"method":"read"}"#).unwrap(),
        Request::Read(ReadScreen {
            tab: "t".into(),
            lines: None,
            folder: None,
        })
    );
    assert_eq!(
        parsed(r#"{"method":"status","params":null}"#).unwrap(),
        Request::Status
    );
    // As before: a method with params needs them, one without takes none.
    assert!(parsed(r#"{"method":"tabs"}"#).is_err());
    assert!(parsed(r#"{"method":"status","params":{}}"#).is_err());
}

#[test]
fn unknown_methods_are_rejected() {
    assert!(serde_json::from_str::<Request>(r#"{"method":"rm_rf","params":{}}"#).is_err());
}

#[test]
fn a_reply_of_another_shape_names_its_method() {
    let e = decode::<ReadScreen>(serde_json::json!({"tab": "ab12"})).unwrap_err();
    assert_eq!(e.method, "read");
    assert!(
        e.to_string().starts_with(
            "the core's reply to `read` has an unexpected shape (missing field `text`"
        ),
        "{e}"
    );
    let text = decode::<ReadScreen>(serde_json::json!({"text": "$ "})).unwrap();
    assert_eq!(text.text, "$ ");
}

#[test]
fn a_refusal_passes_encoding_untouched() {
    let refused = ApiError::new(ErrorCode::Denied, "no");
    assert_eq!(encode::<ReadScreen>(Err(refused.clone())), Err(refused));
}

#[test]
fn programs_modes_read_back_as_written() {
    for mode in [
        ProgramsMode::HolderScopes,
        ProgramsMode::HolderSessions,
        ProgramsMode::CoreChildren("NERDR_HOLDER=0".into()),
        ProgramsMode::CoreChildren(
            "cannot start the holder: StartTransientUnit failed (Access denied)".into(),
        ),
    ] {
        assert_eq!(ProgramsMode::parse(&mode.to_string()), Some(mode.clone()));
    }
    assert_eq!(
        ProgramsMode::CoreChildren("NERDR_HOLDER=0".into()).to_string(),
        "core children (NERDR_HOLDER=0): programs end with the core"
    );
    assert_eq!(ProgramsMode::parse("in a jar"), None);
}

/// A tab request from the user's shell carries the caller's folder (tab
/// numbers and names count in its session); one without, an older
/// client's, still reads.
#[test]
fn tab_requests_carry_the_callers_folder() {
    same_wire(
        ReadScreen {
            tab: "2".into(),
            lines: None,
            folder: Some("/w/proj".into()),
        },
        r#"{"method":"read","params":{"tab":"2","lines":null,"folder":"/w/proj"}}"#,
    );
    same_wire(
        RenameTab {
            tab: "claude-1".into(),
            name: "review".into(),
            folder: Some("/w".into()),
        },
        r#"{"method":"rename","params":{"tab":"claude-1","name":"review","folder":"/w"}}"#,
    );
    same_wire(
        ExplainTab {
            tab: "1".into(),
            folder: Some("/w".into()),
        },
        r#"{"method":"explain","params":{"tab":"1","folder":"/w"}}"#,
    );
}

/// The requests that bring an agent's work home (issue 18), as the window's
/// diff view and scripts send them.
#[test]
fn work_requests_on_the_wire() {
    same_wire(
        DiffTab {
            tab: "2".into(),
            stat: false,
            folder: Some("/w".into()),
        },
        r#"{"method":"diff","params":{"tab":"2","stat":false,"folder":"/w"}}"#,
    );
    same_wire(ListWorktrees, r#"{"method":"worktrees"}"#);
    same_wire(
        MergeTab {
            tab: "ab12".into(),
            into: None,
            how: MergeHow::FfOnly,
            folder: None,
            identity: Vec::new(),
        },
        r#"{"method":"merge","params":{"tab":"ab12","into":null,"how":"ff_only"}}"#,
    );
    same_wire(
        CleanWorktrees {
            merged: true,
            dry_run: false,
        },
        r#"{"method":"clean","params":{"merged":true,"dry_run":false}}"#,
    );
    // Only the tab: the rest takes its default.
    let req: Request = serde_json::from_str(r#"{"method":"merge","params":{"tab":"x"}}"#).unwrap();
    assert_eq!(
        req,
        Request::Merge(MergeTab {
            tab: "x".into(),
            into: None,
            how: MergeHow::Merge,
            folder: None,
            identity: Vec::new(),
        })
    );
}

#[test]
fn review_requests_keep_their_wire() {
    same_wire(
        RequestReview {
            tab: Some("ab12".into()),
            reviewer: Some("codex".into()),
            env: Vec::new(),
            folder: None,
        },
        r#"{"method":"request_review","params":{"tab":"ab12","reviewer":"codex","env":[]}}"#,
    );
    same_wire(
        RequestReview {
            tab: None,
            reviewer: None,
            env: Vec::new(),
            folder: Some("/w".into()),
        },
        r#"{"method":"request_review","params":{"env":[],"folder":"/w"}}"#,
    );
    same_wire(
        PostReview {
            text: "summary: ok\n".into(),
        },
        r#"{"method":"post_review","params":{"text":"summary: ok\n"}}"#,
    );
    same_wire(
        ListReviews {
            mark_read: false,
            tab: Some("1".into()),
            folder: None,
        },
        r#"{"method":"reviews","params":{"tab":"1"}}"#,
    );
}
