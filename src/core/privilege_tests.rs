//! The privilege matrix, every cell, and the facts that pick its target.

use super::CallerKind::{Sandboxed as S, Tab, User};
use super::Operation::*;
use super::Target::{
    Agent as Out, LinkedOutside as Far, Nothing, Own, OwnAuthor as Auth, OwnReviewer as Rev,
    SandboxedAgent as In, Terminal as Term,
};
use super::*;

const CALLERS: [CallerKind; 3] = [User, Tab, S];
const OPS: [Operation; 27] = [
    StartAgent,
    OpenTerminal,
    Restart,
    Close,
    Rename,
    Quit,
    Send,
    Read,
    Resize,
    See,
    ListApprovals,
    Decide,
    RunPlugin,
    Report,
    Query,
    AskNetwork,
    Diff,
    ListWorktrees,
    Merge,
    Clean,
    RequestReview,
    PostReview,
    SpinOff,
    ReportResult,
    Handoff,
    ListHandoffs,
    Switch,
];
const TARGETS: [Target; 8] = [Own, Rev, Auth, Far, In, Out, Term, Nothing];

/// `a` allow, `q` queue, `r` refuse: one letter per target, in the order
/// own tab, its reviewer, its author, its reviewer or author outside every
/// sandbox, sandboxed agent, agent, terminal, nothing.
const SANDBOXED: [(Operation, &str); 27] = [
    (StartAgent, "rrrrarrr"),
    (OpenTerminal, "rrrrrrrr"),
    (Restart, "arrrarrr"),
    (Close, "arrrarrr"),
    (Rename, "arrrarrr"),
    (Quit, "rrrrrrrr"),
    (Send, "arrraqrr"),
    (Read, "aaararrr"),
    (Resize, "arrrarrr"),
    (See, "aaarrrrr"),
    (ListApprovals, "rrrrrrrr"),
    (Decide, "rrrrrrrr"),
    (RunPlugin, "qrrrqqqq"),
    (Report, "arrrrrrr"),
    (Query, "aaaaaaaa"),
    (AskNetwork, "qrrrrrrr"),
    (Diff, "aaarrrrr"),
    (ListWorktrees, "rrrrrrrr"),
    (Merge, "rrrrrrrr"),
    (Clean, "rrrrrrrr"),
    (RequestReview, "arrrarrr"),
    (PostReview, "arrrrrrr"),
    (SpinOff, "arrrrrrr"),
    (ReportResult, "arrrrrrr"),
    (Handoff, "arrraqrr"),
    (ListHandoffs, "rrrrrrrr"),
    (Switch, "arrrrrrr"),
];

/// The same for an unsandboxed tab: everything but deciding, others'
/// network questions and others' reviews, except that its reviewer and
/// its author are only to be looked at.
const TAB: [(Operation, &str); 27] = [
    (StartAgent, "arrraaaa"),
    (OpenTerminal, "arrraaaa"),
    (Restart, "arrraaaa"),
    (Close, "arrraaaa"),
    (Rename, "arrraaaa"),
    (Quit, "arrraaaa"),
    (Send, "arrraaaa"),
    (Read, "aaaraaaa"),
    (Resize, "arrraaaa"),
    (See, "aaaraaaa"),
    (ListApprovals, "arrraaaa"),
    (Decide, "rrrrrrrr"),
    (RunPlugin, "arrraaaa"),
    (Report, "arrraaaa"),
    (Query, "aaaaaaaa"),
    (AskNetwork, "qrrrrrrr"),
    (Diff, "aaaraaaa"),
    (ListWorktrees, "arrraaaa"),
    (Merge, "arrraaaa"),
    (Clean, "arrraaaa"),
    (RequestReview, "arrraaaa"),
    (PostReview, "arrrrrrr"),
    (SpinOff, "arrraaaa"),
    (ReportResult, "arrrrrrr"),
    (Handoff, "arrraaaa"),
    (ListHandoffs, "arrraaaa"),
    (Switch, "arrraaaa"),
];

fn letter(v: &Verdict) -> char {
    match v {
        Verdict::Allow => 'a',
        Verdict::Queue(_) => 'q',
        Verdict::Refuse(_) => 'r',
    }
}

#[test]
fn every_cell_of_the_matrix() {
    let mut cells = 0;
    for caller in CALLERS {
        for (i, op) in OPS.into_iter().enumerate() {
            let row = match caller {
                User => "aaaaaaaa",
                Tab => {
                    assert_eq!(TAB[i].0, op, "table rows follow OPS");
                    TAB[i].1
                }
                S => {
                    assert_eq!(SANDBOXED[i].0, op, "table rows follow OPS");
                    SANDBOXED[i].1
                }
            };
            for (target, want) in TARGETS.into_iter().zip(row.chars()) {
                let got = decide(caller, op, target);
                assert_eq!(letter(&got), want, "{caller:?} {op:?} {target:?}: {got:?}");
                if let Verdict::Refuse(why) | Verdict::Queue(why) = got {
                    assert!(why.len() > 10, "{caller:?} {op:?} {target:?} says why");
                }
                cells += 1;
            }
        }
    }
    assert_eq!(cells, CALLERS.len() * OPS.len() * TARGETS.len());
}

#[test]
fn every_extra_for_every_caller() {
    // Each extra alone, none, and all: only a sandboxed caller is held.
    let alone = [
        Extras {
            foreign_folder: true,
            ..Extras::default()
        },
        Extras {
            extra_args: true,
            ..Extras::default()
        },
        Extras {
            removes_others_worktree: true,
            ..Extras::default()
        },
        Extras {
            unsandboxed_launch: true,
            ..Extras::default()
        },
        Extras {
            no_worktree: true,
            ..Extras::default()
        },
        Extras {
            forced_removal: true,
            ..Extras::default()
        },
        Extras {
            resumes_conversation: true,
            ..Extras::default()
        },
    ];
    let all = Extras {
        no_worktree: true,
        foreign_folder: true,
        extra_args: true,
        removes_others_worktree: true,
        unsandboxed_launch: true,
        forced_removal: true,
        resumes_conversation: true,
    };
    for caller in CALLERS {
        assert_eq!(decide_extras(caller, Extras::default()), Verdict::Allow);
        for extras in alone.iter().chain([&all]) {
            let got = decide_extras(caller, *extras);
            match caller {
                S => assert!(matches!(got, Verdict::Refuse(_)), "{extras:?}"),
                _ => assert_eq!(got, Verdict::Allow, "{caller:?} {extras:?}"),
            }
        }
    }
    let why = |e| match decide_extras(S, e) {
        Verdict::Refuse(w) => w,
        other => panic!("{other:?}"),
    };
    assert!(why(alone[0]).contains("own session's folder"));
    assert!(why(alone[1]).contains("arguments"));
    assert!(why(alone[2]).contains("worktree"));
    assert!(why(alone[3]).contains("outside every sandbox"));
    assert!(why(alone[4]).contains("checkout the user works in"));
    assert!(why(alone[5]).contains("force a worktree's removal"));
    assert!(why(alone[6]).contains("resume a past conversation"));
}

#[test]
fn a_program_run_as_it_is_starts_as_an_agent_outside_every_sandbox() {
    #[rustfmt::skip]
    let rows: &[(&str, Start, Target, [char; 3])] = &[
        // (what, start, target, verdict for user, tab, sandboxed)
        ("a program run as it is is unsandboxed", Start::Program, Out, ['a', 'a', 'r']),
        ("a sandboxed agent", Start::Agent { sandboxed: true }, In, ['a', 'a', 'a']),
        ("an unsandboxed agent", Start::Agent { sandboxed: false }, Out, ['a', 'a', 'r']),
        ("a name the config does not resolve", Start::Unresolved, Out, ['a', 'a', 'r']),
    ];
    for (what, start, target, verdicts) in rows {
        assert_eq!(start_target(*start), *target, "{what}");
        for (caller, want) in CALLERS.iter().zip(verdicts) {
            let got = letter(&decide(*caller, StartAgent, start_target(*start)));
            assert_eq!(got, *want, "{what}, asked by {caller:?}");
        }
    }
}

#[test]
fn which_refusals_read_as_no_such_tab() {
    // One letter per target (own, its reviewer, its author, either
    // outside every sandbox, sandboxed agent, agent, terminal, nothing):
    // `h` hidden, `-` refused with its reason.
    let rows: [(CallerKind, bool, &str); 6] = [
        (User, false, "--------"),
        (User, true, "--------"),
        (Tab, false, "--------"),
        (Tab, true, "--------"),
        (S, false, "-----hh-"),
        (S, true, "-hhhhhh-"),
    ];
    for (caller, foreign, row) in rows {
        for (target, want) in TARGETS.into_iter().zip(row.chars()) {
            assert_eq!(
                hides_tab(caller, target, foreign),
                want == 'h',
                "{caller:?} {target:?} foreign={foreign}"
            );
        }
    }
}

#[test]
fn a_reviewer_and_its_author_only_look_at_each_other() {
    let why = |target| match decide(Tab, Send, target) {
        Verdict::Refuse(w) => w,
        other => panic!("{other:?}"),
    };
    assert!(why(Rev).starts_with("a reviewer answers to the user"));
    assert!(why(Auth).contains("only through its review"));
    for caller in [Tab, S] {
        for op in [
            Restart,
            Close,
            Rename,
            Send,
            Resize,
            PostReview,
            Report,
            RequestReview,
            SpinOff,
        ] {
            for target in [Rev, Auth, Far] {
                let got = decide(caller, op, target);
                assert!(
                    matches!(got, Verdict::Refuse(_)),
                    "{caller:?} {op:?} {target:?}"
                );
            }
        }
    }
}

#[test]
fn how_tabs_stand_to_each_other_in_the_reviews() {
    // Each tab's line of starters. `h1` the author started, `h2` its
    // `h1` started (`h1` closed since, say); `g1` the reviewer started;
    // `x` and `y` no party to a review, `y` started by `x`. `r1` was asked
    // for by `a1` itself (`nerdr request-review` in its tab), but a
    // reviewer's line is empty (`line_of`): it is not `a1`. `k1` and `k2`
    // are helpers `h1` (the author's) and `g1` (the reviewer's) asked a
    // review of: `r3` and `r4` review them; `s1` is `h1`'s sibling.
    let lines: std::collections::BTreeMap<&str, Vec<String>> = [
        ("h1", vec!["a1"]),
        ("h2", vec!["a1", "h1"]),
        ("s1", vec!["a1"]),
        ("g1", vec!["r1"]),
        ("y", vec!["x"]),
    ]
    .into_iter()
    .map(|(t, l)| (t, l.into_iter().map(String::from).collect()))
    .collect();
    let author_of: std::collections::BTreeMap<String, crate::review::store::AuthorLine> =
        [("r1", "a1"), ("r2", "r1"), ("r3", "h1"), ("r4", "g1")]
            .into_iter()
            .map(|(r, a)| {
                let author = crate::review::store::AuthorLine {
                    author: a.to_string(),
                    line: lines.get(a).cloned().unwrap_or_default(),
                };
                (r.to_string(), author)
            })
            .collect();
    let lined = |id: &'static str| Lined {
        id,
        line: lines.get(id).map_or(&[][..], Vec::as_slice),
    };
    #[rustfmt::skip]
    let rows: &[(&str, &str, Link)] = &[
        ("a1", "r1", Link::ItsReviewer),
        ("r1", "a1", Link::ItsAuthor),
        // A reviewer of a reviewer: each stands so to the one next
        // to it, not to the first author.
        ("r1", "r2", Link::ItsReviewer),
        ("r2", "r1", Link::ItsAuthor),
        ("a1", "r2", Link::None),
        ("r2", "a1", Link::None),
        ("a1", "x", Link::None),
        ("x", "r1", Link::None),
        // Started by the author, at one remove or two: the author.
        ("h1", "r1", Link::ItsReviewer),
        ("h2", "r1", Link::ItsReviewer),
        ("r1", "h1", Link::ItsAuthor),
        ("r1", "h2", Link::ItsAuthor),
        // Started by the reviewer: the reviewer.
        ("g1", "a1", Link::ItsAuthor),
        ("a1", "g1", Link::ItsReviewer),
        ("g1", "h2", Link::ItsAuthor),
        ("h2", "g1", Link::ItsReviewer),
        // g1 is r1, and so r2 reviews it; but a1's helper is nothing to
        // r1's reviewer, and a helper nothing to its own starter.
        ("g1", "r2", Link::ItsReviewer),
        ("h1", "r2", Link::None),
        ("h1", "a1", Link::None),
        ("a1", "h1", Link::None),
        ("g1", "r1", Link::None),
        // A reviewer of the author's helper is the author's reviewer too:
        // the author steers the helper (and so does its sibling).
        ("a1", "r3", Link::ItsReviewer),
        ("r3", "a1", Link::ItsAuthor),
        ("h1", "r3", Link::ItsReviewer),
        ("s1", "r3", Link::ItsReviewer),
        ("h2", "r3", Link::ItsReviewer),
        // ... and it stays apart from the author's own reviewer.
        ("r3", "r1", Link::None),
        // A reviewer of the reviewer's helper is the reviewer's reviewer.
        ("r1", "r4", Link::ItsReviewer),
        ("r4", "r1", Link::ItsAuthor),
        ("r4", "a1", Link::None),
        // A line of strangers stays strange.
        ("y", "r1", Link::None),
        ("y", "r3", Link::None),
        ("y", "a1", Link::None),
        ("r1", "y", Link::None),
    ];
    for (caller, tab, want) in rows {
        assert_eq!(
            link(&author_of, lined(caller), lined(tab)),
            *want,
            "{caller} -> {tab}"
        );
    }
}

#[test]
fn a_tabs_line_of_starters() {
    let line = |l: &[&str]| l.iter().map(|t| t.to_string()).collect::<Vec<_>>();
    let (a, h1, s) = (line(&[]), line(&["a"]), line(&["p", "a"]));
    let rows: &[(&str, Vec<Lined>, Vec<String>)] = &[
        ("started by the person", vec![], line(&[])),
        (
            "by a tab with no line",
            vec![Lined { id: "a", line: &a }],
            line(&["a"]),
        ),
        (
            "by a tab with one",
            vec![Lined {
                id: "h1",
                line: &h1,
            }],
            line(&["a", "h1"]),
        ),
        (
            "a spinoff: its starter's, then its parent's, no repeats",
            vec![
                Lined {
                    id: "h1",
                    line: &h1,
                },
                Lined { id: "s", line: &s },
            ],
            line(&["a", "h1", "p", "s"]),
        ),
    ];
    for (what, starters, want) in rows {
        assert_eq!(line_of(starters), *want, "{what}");
    }
}

#[test]
fn what_a_tab_is_to_a_caller() {
    use Link::{ItsAuthor as A, ItsReviewer as R, None as N};
    let f = |own, terminal, sandboxed, link| TabFacts {
        own,
        terminal,
        sandboxed,
        link,
    };
    // (tab, for user, tab, sandboxed caller)
    #[rustfmt::skip]
    let rows: &[(TabFacts, [Target; 3])] = &[
        (f(true, false, true, N), [Own, Own, Own]),
        (f(false, true, false, N), [Term, Term, Term]),
        (f(false, false, true, N), [In, In, In]),
        (f(false, false, false, N), [Out, Out, Out]),
        (f(false, false, true, R), [Rev, Rev, Rev]),
        (f(false, false, true, A), [Auth, Auth, Auth]),
        // Outside every sandbox: a sandboxed caller may not read it, nor
        // have its words to it queued for the person (F4).
        (f(false, false, false, R), [Rev, Rev, Far]),
        (f(false, false, false, A), [Auth, Auth, Far]),
    ];
    for (tab, want) in rows {
        for (caller, want) in CALLERS.into_iter().zip(want) {
            assert_eq!(tab_target(caller, *tab), *want, "{caller:?} {tab:?}");
        }
    }
}

#[test]
fn who_sees_a_session() {
    let rows: [(CallerKind, usize, bool); 6] = [
        (User, 0, true),
        (User, 2, true),
        (Tab, 0, false),
        (Tab, 1, true),
        (S, 0, false),
        (S, 1, true),
    ];
    for (caller, seen, want) in rows {
        assert_eq!(sees_session(caller, seen), want, "{caller:?} {seen}");
    }
}

#[test]
fn operation_names_are_distinct() {
    let names: std::collections::HashSet<_> = OPS.into_iter().map(name).collect();
    assert_eq!(names.len(), OPS.len());
}
