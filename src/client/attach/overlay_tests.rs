use super::*;

#[test]
fn the_quit_question_counts_in_words() {
    for (n, want) in [
        (0, "quit: end this session (it has no tabs)? y/n"),
        (1, "quit: stop this session's only tab? y/n"),
        (2, "quit: stop all 2 tabs of this session? y/n"),
        (12, "quit: stop all 12 tabs of this session? y/n"),
    ] {
        assert_eq!(quit_question(n), want);
    }
}

#[test]
fn the_help_names_the_jump_key_and_the_marks_on_80_by_24() {
    let bytes = render(&Mode::Help { over: None }, "C-b", 24, 80);
    let mut p = vt100::Parser::new(24, 80, 0);
    p.process(&bytes);
    let text = p.screen().contents();
    for want in [
        "a or Alt-n",
        "next tab that needs you",
        "! blocked",
        "^ rang its bell",
        "@2 reviews unread",
        "%2 spinoff results wait",
        "? spinoff ended its turn without a report",
        "& work handed to you",
        "report a spinoff's last answer",
        "g              this tab's diff",
        "<3 >5 tabs hidden left/right",
    ] {
        assert!(text.contains(want), "{want:?} missing:\n{text}");
    }
    assert!(text.contains("Any key closes this help."), "{text}");
}

fn picker() -> Mode {
    Mode::Picker {
        agents: agents(2),
        sel: 0,
        typed: String::new(),
        switching: None,
    }
}

fn agents(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("a{i}")).collect()
}

/// The reads typed into a fresh picker of `n` agents: the last effect,
/// the selected entry (None once closed), and the bytes left unused.
fn typed(n: usize, reads: &[&[u8]]) -> (Effect, Option<usize>, Vec<u8>) {
    let mut m = Mode::Picker {
        agents: agents(n),
        sel: 0,
        typed: String::new(),
        switching: None,
    };
    let (mut last, mut left) = (Effect::None, Vec::new());
    for read in reads {
        let used;
        (m, last, used) = feed(m, read);
        left = read[used..].to_vec();
    }
    let sel = match m {
        Mode::Picker { sel, .. } => Some(sel),
        _ => None,
    };
    (last, sel, left)
}

/// (agents, reads, effect, selected entry from 1 while open, bytes left)
type Row<'a> = (usize, &'a [&'a [u8]], Effect, Option<usize>, &'a [u8]);

#[test]
fn picker_keys_in_one_read_or_many() {
    let start = |k: usize| Effect::Start(format!("a{k}"));
    let none = Effect::None;
    #[rustfmt::skip]
    let table: &[Row] = &[
        (2, &[b"\r"], start(1), None, b""),
        (3, &[b"\x1b[B\x1b[B"], none.clone(), Some(3), b""),
        (3, &[b"\x1b[B\x1b[B\r"], start(3), None, b""),
        (3, &[b"\x1bOB\x1bOB\r"], start(3), None, b""),
        (3, &[b"jjk\r"], start(2), None, b""),
        (3, &[b"\x1b[A\r"], start(3), None, b""),
        (3, &[b"\x1b[B", b"\x1b[B", b"\r"], start(3), None, b""),
        // A digit selects; only Enter starts, and takes the Enter.
        (3, &[b"2"], none.clone(), Some(2), b""),
        (3, &[b"2\r"], start(2), None, b""),
        (3, &[b"2", b"\r"], start(2), None, b""),
        (9, &[b"9\r"], start(9), None, b""),
        (3, &[b"9\r"], start(1), None, b""),
        (3, &[b"0"], none.clone(), Some(1), b""),
        // Two digits when a 10th entry exists; a number past the end
        // counts its last digit alone.
        (12, &[b"10\r"], start(10), None, b""),
        (12, &[b"1", b"2\r"], start(12), None, b""),
        (12, &[b"1\r"], start(1), None, b""),
        (12, &[b"15\r"], start(5), None, b""),
        // Keys after the closing key are not the picker's.
        (3, &[b"2\rhello"], start(2), None, b"hello"),
        (3, &[b"\x1bls"], none.clone(), None, b"ls"),
        (3, &[b"q"], none.clone(), None, b""),
        (3, &[b"\x03"], none.clone(), None, b""),
        (3, &[b"x\x1b[C\r"], start(1), None, b""),
    ];
    for (n, reads, effect, sel, left) in table {
        let got = typed(*n, reads);
        let want = (effect.clone(), sel.map(|s| s - 1), left.to_vec());
        assert_eq!(got, want, "{n} agents, {reads:?}");
    }
}

#[test]
fn the_picker_hint_says_numbers_select_and_enter_starts() {
    let bytes = render(&picker(), "C-b", 10, 80);
    let mut p = vt100::Parser::new(10, 80, 0);
    p.process(&bytes);
    let text = p.screen().contents();
    assert!(text.contains("a number selects, Enter starts"), "{text}");
}

#[test]
fn other_overlays_take_every_key_of_a_read() {
    let ask = || Mode::Confirm {
        question: "quit?".into(),
        yes: Effect::Quit,
    };
    let (m, e, used) = feed(ask(), b"zzy rest");
    assert!(matches!(m, Mode::Normal));
    assert_eq!((e, used), (Effect::Quit, 3));
    let (m, e, used) = feed(Mode::Help { over: None }, b"xls");
    assert!(matches!(m, Mode::Normal));
    assert_eq!((e, used), (Effect::None, 1));
    let items = (0..3)
        .map(|i| Waiting {
            id: format!("w{i}"),
            question: "q".into(),
            network: false,
        })
        .collect();
    let (_, e, used) = feed(Mode::Approvals { items, sel: 0 }, b"\x1b[Bjn");
    let denied = Effect::Decide {
        id: "w2".into(),
        approve: false,
        session: false,
    };
    assert_eq!((e, used), (denied, 5));
    let lines = (1..=100).map(|i| format!("line {i}")).collect();
    let (m, _, used) = feed(Mode::Scroll(Scroll::new(lines, 10)), b"gjjqls");
    assert!(matches!(m, Mode::Normal));
    assert_eq!(used, 4);
}

#[test]
fn confirm_rows() {
    let ask = || Mode::Confirm {
        question: "quit?".into(),
        yes: Effect::Quit,
    };
    assert_eq!(feed(ask(), b"y").1, Effect::Quit);
    assert_eq!(feed(ask(), b"n").1, Effect::None);
    assert!(matches!(feed(ask(), b"z").0, Mode::Confirm { .. }));
}

#[test]
fn approvals_show_whole_escaped_questions_and_keep_the_selection_in_view() {
    let long = format!("run `{}` \x1b[2Knpm ci", "x".repeat(100));
    let items: Vec<Waiting> = (0..30)
        .map(|i| Waiting {
            id: format!("id{i:02}"),
            question: if i == 29 {
                long.clone()
            } else {
                format!("q{i}")
            },
            network: false,
        })
        .collect();
    let screen = |sel| {
        let bytes = render(
            &Mode::Approvals {
                items: items.clone(),
                sel,
            },
            "C-b",
            10,
            40,
        );
        let mut p = vt100::Parser::new(10, 40, 0);
        p.process(&bytes);
        p.screen().contents()
    };
    let last = screen(29);
    assert!(last.contains("> id29"), "{last}");
    // Wrapped over several lines, nothing cut, the escape shown as text.
    let text: String = last.lines().map(str::trim).collect();
    assert!(text.contains(&"x".repeat(100)), "{last}");
    assert!(text.contains("\\u{1b}[2Knpm ci"), "{last}");
    assert!(screen(0).contains("> id00"));
}

#[test]
fn approval_keys_follow_the_table() {
    let item = |network| Waiting {
        id: "a1".into(),
        question: "q".into(),
        network,
    };
    let d = |approve, session| Effect::Decide {
        id: "a1".into(),
        approve,
        session,
    };
    // (network question, key, effect; None: the queue stays open)
    #[rustfmt::skip]
    let table: &[(bool, &[u8], Option<Effect>)] = &[
        (false, b"y", Some(d(true, false))),
        (false, b"n", Some(d(false, false))),
        (false, b"s", Some(Effect::None)),
        (true, b"y", Some(d(true, false))),
        (true, b"s", Some(d(true, true))),
        (true, b"S", Some(d(true, true))),
        (true, b"n", Some(d(false, false))),
        (true, b"j", None),
        (true, b"x", Some(Effect::None)),
    ];
    for (network, key, want) in table {
        let (mode, effect, _) = feed(
            Mode::Approvals {
                items: vec![item(*network)],
                sel: 0,
            },
            key,
        );
        match want {
            Some(e) => {
                assert_eq!(&effect, e, "{network} {key:?}");
                assert!(matches!(mode, Mode::Normal), "{network} {key:?}");
            }
            None => assert!(matches!(mode, Mode::Approvals { .. }), "{network} {key:?}"),
        }
    }
    let shown = |network| {
        let bytes = render(
            &Mode::Approvals {
                items: vec![item(network)],
                sel: 0,
            },
            "C-b",
            10,
            90,
        );
        let mut p = vt100::Parser::new(10, 90, 0);
        p.process(&bytes);
        p.screen().contents()
    };
    assert!(shown(true).contains("s for this sandbox run"));
    assert!(!shown(false).contains("s for this sandbox run"));
}

/// Prefix `A`'s picker: the agent chosen replaces the tab's, it starts in
/// no new tab.
#[test]
fn the_switch_picker_switches_the_tab_it_was_opened_on() {
    let m = Mode::Picker {
        agents: agents(2),
        sel: 0,
        typed: String::new(),
        switching: Some(Switching {
            tab: "ab12".into(),
            title: "Switch tab 1 (a-1) from a0 to another agent".into(),
            missing: Vec::new(),
        }),
    };
    let (m, effect, _) = feed(m, b"2");
    assert_eq!(effect, Effect::None);
    let (_, effect, _) = feed(m, b"\r");
    assert_eq!(
        effect,
        Effect::SwitchAgent {
            tab: "ab12".into(),
            agent: "a2".into(),
            no_handoff: false,
        }
    );
}

/// `C-b ?` over the diff view lists the view's own keys, the sending
/// ones among them, not only the prefix's.
#[test]
fn the_help_over_the_diff_view_lists_its_keys() {
    let v = super::diff_view::DiffView::new(
        "t1".into(),
        vec!["diff".into()],
        Default::default(),
        vec![],
        Default::default(),
        22,
    );
    let mode = Mode::Help {
        over: Some(Box::new(v)),
    };
    let mut p = vt100::Parser::new(24, 80, 0);
    p.process(&render(&mode, "C-b", 24, 80));
    let text = p.screen().contents();
    for want in [
        "the diff view's keys",
        "S ",
        "> / <",
        "A ",
        "x ",
        "asks y first",
        "C-b ? over a tab",
    ] {
        assert!(text.contains(want), "{want:?} missing:\n{text}");
    }
}

/// Prefix `A`'s picker names the tab, marks an agent that is not
/// installed, and refuses it at once (nothing is stopped).
#[test]
fn the_switch_picker_has_a_title_and_refuses_an_agent_not_on_path() {
    let m = Mode::Picker {
        agents: agents(2),
        sel: 1,
        typed: String::new(),
        switching: Some(Switching {
            tab: "ab12".into(),
            title: "Switch tab 3 (claude-1) from claude to another agent".into(),
            missing: vec!["a1".into()],
        }),
    };
    let bytes = render(&m, "C-b", 24, 80);
    let mut p = vt100::Parser::new(24, 80, 0);
    p.process(&bytes);
    let text = p.screen().contents();
    assert!(
        text.contains("Switch tab 3 (claude-1) from claude"),
        "{text}"
    );
    assert!(text.contains("1. a1  (not found on PATH)"), "{text}");
    assert!(text.contains("> 2. a2"), "{text}");
    let (m, _, _) = feed(m, b"1");
    let (_, effect, _) = feed(m, b"\r");
    assert_eq!(
        effect,
        Effect::Note("a1: not found on PATH; install it, or pick another agent".into())
    );
}
