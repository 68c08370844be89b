use std::time::{Duration, Instant};

use super::*;
use crate::proxy::decision::Protocol;

fn d(phase: Phase, id: u64, host: &str, rule: &str) -> Decision {
    Decision {
        phase,
        id,
        protocol: Protocol::HttpConnect,
        host: host.into(),
        port: 443,
        allowed: matches!(phase, Phase::Opened | Phase::Closed),
        rule: rule.into(),
        why: None,
        bytes_up: 0,
        bytes_down: 0,
        count: 1,
    }
}

/// What a written line says, short enough for a table.
fn show(lines: &[Decision]) -> Vec<String> {
    lines
        .iter()
        .map(|l| format!("{:?} {} {} x{}", l.phase, l.host, l.rule, l.count))
        .collect()
}

#[derive(Clone, Copy)]
enum Step {
    /// A decision arrives this many ms after the start.
    Push(u64, Phase, u64, &'static str, &'static str),
    /// `due` is asked at this many ms.
    Due(u64),
    Finish,
}

#[test]
fn every_row() {
    use Phase::*;
    use Step::*;
    let cases: &[(&str, &[Step], &[&str])] = &[
        (
            "an open connection is written when it opens and when it closes",
            &[
                Push(0, Opened, 1, "a.test", "allow a"),
                Push(5, Closed, 1, "a.test", "allow a"),
                Finish,
            ],
            &["Opened a.test allow a x1", "Closed a.test allow a x1"],
        ),
        (
            "a connection still open at the end is written as open at exit",
            &[
                Push(0, Opened, 1, "a.test", "allow a"),
                Push(1, Opened, 2, "b.test", "allow b"),
                Push(2, Closed, 1, "a.test", "allow a"),
                Finish,
            ],
            &[
                "Opened a.test allow a x1",
                "Opened b.test allow b x1",
                "Closed a.test allow a x1",
                "OpenAtExit b.test allow b x1",
            ],
        ),
        (
            "questions that could not be put, in a loop, merge as refusals do",
            &[
                Push(0, Asked, 0, "u.test", "asking the user"),
                Push(1, Answered, 0, "u.test", "not asked"),
                Push(10, Asked, 0, "u.test", "asking the user"),
                Push(11, Answered, 0, "u.test", "not asked"),
                Push(20, Asked, 0, "u.test", "asking the user"),
                Push(21, Answered, 0, "u.test", "not asked"),
                Push(30, Answered, 0, "u.test", "allowed once"),
                Due(1000),
                Finish,
            ],
            &[
                "Asked u.test asking the user x1",
                "Answered u.test not asked x1",
                "Answered u.test allowed once x1",
                "Asked u.test asking the user x2",
                "Answered u.test not asked x2",
            ],
        ),
        (
            "a single refusal is written at once, and nothing follows",
            &[Push(0, Refused, 0, "e.test", "deny e"), Due(5000), Finish],
            &["Refused e.test deny e x1"],
        ),
        (
            "repeats within the window become one counted line when it ends",
            &[
                Push(0, Refused, 0, "e.test", "deny e"),
                Push(10, Refused, 0, "e.test", "deny e"),
                Push(20, Refused, 0, "e.test", "deny e"),
                Push(999, Refused, 0, "e.test", "deny e"),
                Due(999),
                Due(1000),
            ],
            &["Refused e.test deny e x1", "Refused e.test deny e x3"],
        ),
        (
            "a steady loop makes one line per window",
            &[
                Push(0, Refused, 0, "e.test", "deny e"),
                Push(500, Refused, 0, "e.test", "deny e"),
                Push(1500, Refused, 0, "e.test", "deny e"),
                Push(1600, Refused, 0, "e.test", "deny e"),
                Due(2000),
                Due(3000),
                Push(3001, Refused, 0, "e.test", "deny e"),
                Due(3500),
                Finish,
            ],
            &[
                "Refused e.test deny e x1",
                "Refused e.test deny e x1",
                "Refused e.test deny e x2",
                "Refused e.test deny e x1",
            ],
        ),
        (
            "a refusal after the window is written at once (no due asked between)",
            &[
                Push(0, Refused, 0, "e.test", "deny e"),
                Push(1000, Refused, 0, "e.test", "deny e"),
            ],
            &["Refused e.test deny e x1", "Refused e.test deny e x1"],
        ),
        (
            "a different host, port or rule is not merged",
            &[
                Push(0, Refused, 0, "e.test", "deny e"),
                Push(1, Refused, 0, "f.test", "deny e"),
                Push(2, Refused, 0, "e.test", "unlisted"),
                Push(3, Unreachable, 0, "e.test", "deny e"),
            ],
            &[
                "Refused e.test deny e x1",
                "Refused f.test deny e x1",
                "Refused e.test unlisted x1",
                "Unreachable e.test deny e x1",
            ],
        ),
        (
            "the end writes what was counted",
            &[
                Push(0, Refused, 0, "e.test", "deny e"),
                Push(1, Refused, 0, "e.test", "deny e"),
                Push(2, Unreachable, 0, "u.test", "allow u"),
                Push(3, Unreachable, 0, "u.test", "allow u"),
                Push(4, Unreachable, 0, "u.test", "allow u"),
                Finish,
            ],
            &[
                "Refused e.test deny e x1",
                "Unreachable u.test allow u x1",
                "Refused e.test deny e x1",
                "Unreachable u.test allow u x2",
            ],
        ),
        (
            "opened and closed lines are never merged",
            &[
                Push(0, Opened, 1, "a.test", "allow a"),
                Push(1, Closed, 1, "a.test", "allow a"),
                Push(2, Opened, 2, "a.test", "allow a"),
                Push(3, Closed, 2, "a.test", "allow a"),
                Finish,
            ],
            &[
                "Opened a.test allow a x1",
                "Closed a.test allow a x1",
                "Opened a.test allow a x1",
                "Closed a.test allow a x1",
            ],
        ),
    ];
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    for (name, steps, want) in cases {
        let mut m = Merger::new(Duration::from_secs(1));
        let mut out = Vec::new();
        for step in *steps {
            match *step {
                Push(ms, phase, id, host, rule) => {
                    out.extend(m.push(d(phase, id, host, rule), at(ms)))
                }
                Due(ms) => out.extend(m.due(at(ms))),
                Finish => out.extend(m.finish()),
            }
        }
        assert_eq!(show(&out), *want, "{name}");
    }
}

#[test]
fn next_due_is_the_earliest_window_end() {
    let t0 = Instant::now();
    let mut m = Merger::new(Duration::from_secs(1));
    assert_eq!(m.next_due(), None);
    m.push(d(Phase::Refused, 0, "e.test", "r"), t0);
    m.push(
        d(Phase::Refused, 0, "f.test", "r"),
        t0 + Duration::from_millis(300),
    );
    assert_eq!(m.next_due(), Some(t0 + Duration::from_secs(1)));
    assert!(!m.has_open());
    m.push(d(Phase::Opened, 7, "a.test", "r"), t0);
    assert!(m.has_open());
}

/// The driver: a refusal loop through the channel becomes two lines, and
/// an open connection is written as open at exit once `stop` fires.
#[test]
fn forward_merges_and_writes_what_is_open_at_the_end() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    for _ in 0..1000 {
        tx.send(d(Phase::Refused, 0, "e.test", "deny e")).unwrap();
    }
    tx.send(d(Phase::Opened, 1, "a.test", "allow a")).unwrap();
    let mut lines = Vec::new();
    rt.block_on(async {
        forward(
            rx,
            tokio::time::sleep(Duration::from_millis(50)),
            Duration::from_millis(20),
            |l| lines.push(l.clone()),
        )
        .await
    });
    drop(tx);
    assert_eq!(
        show(&lines),
        [
            "Refused e.test deny e x1",
            "Opened a.test allow a x1",
            "Refused e.test deny e x999",
            "OpenAtExit a.test allow a x1"
        ]
    );
}

#[test]
fn made_up_host_names_share_one_line_past_the_limit() {
    let t0 = Instant::now();
    let mut m = Merger::new(Duration::from_secs(1));
    let mut lines = Vec::new();
    for i in 0..100 {
        let host = format!("h{i}.invalid");
        lines.extend(m.push(d(Phase::Refused, i, &host, "not in allowedDomains"), t0));
    }
    lines.extend(m.due(t0 + Duration::from_secs(2)));
    // 32 hosts get a line each; the other 68 one shared line (its first
    // refusal at once, the rest counted when the window ends).
    assert!(lines.len() <= 34, "{}", lines.len());
    let counted: u64 = lines.iter().map(|l| l.count).sum();
    assert_eq!(counted, 100);
    assert!(lines.iter().any(|l| l.host == "(more hosts)"));
}
