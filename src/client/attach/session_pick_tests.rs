use super::*;

fn session(name: &str, tabs: usize, running: usize, blocked: usize, done: usize) -> Session {
    Session {
        folder: format!("/w/{name}").into(),
        name: name.into(),
        tabs,
        running,
        blocked,
        done,
        here: false,
    }
}

fn one(name: &str) -> Session {
    session(name, 1, 1, 0, 0)
}

fn shown(name: &str) -> Session {
    Session {
        here: true,
        ..one(name)
    }
}

fn host(name: &str) -> Place {
    Place::Host(name.into())
}

fn hosts(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_string()).collect()
}

/// (session, its entry)
#[test]
fn each_session_says_what_its_tabs_need() {
    #[rustfmt::skip]
    let rows = [
        (session("api", 1, 1, 0, 0), "api     1 tab                        /w/api"),
        (session("web", 3, 3, 1, 1), "web     3 tabs, 1 BLOCKED, 1 done    /w/web"),
        (session("docs", 2, 0, 0, 0), "docs    2 tabs, 2 stopped            /w/docs"),
        (Session { here: true, ..session("api", 2, 2, 0, 0) },
         "api     2 tabs                       (this window) /w/api"),
        (session("e\x1b[2J", 0, 0, 0, 0), "e\\u{1b}[2J  0 tabs"),
    ];
    for (s, want) in rows {
        let got = session_line(&s, 6);
        assert!(got.starts_with(want.trim_end()), "{got:?}");
    }
}

/// With no `[hosts]`, this machine's picker is the list it always was:
/// no heading, nothing asked.
#[test]
fn without_hosts_the_list_is_as_it_was() {
    let p = Picker::open(Place::Local, Some(vec![one("a"), one("b")]), &hosts(&[]));
    assert!(p.asking().is_empty());
    let (l, at) = lines(&p, 1, 80);
    assert_eq!(
        l[2].trim_end(),
        "   1. a  1 tab                        /w/a"
    );
    assert!(l[3].starts_with(" > 2. b"), "{l:?}");
    assert_eq!((l.len(), at), (4, 3));
    let empty = Picker::open(Place::Local, Some(vec![]), &hosts(&[]));
    assert_eq!(lines(&empty, 0, 80).0[2], "No sessions.");
    // Not connected: why, not "No sessions."
    let down = Picker::open(Place::Local, None, &hosts(&[]));
    assert_eq!(lines(&down, 0, 80).0[2], "not connected (reconnecting...)");
    assert!(down.asking().is_empty());
}

/// Places in order, each with whether it is asked.
type Groups = Vec<(Place, bool)>;

/// (the window's place, configured hosts) -> the groups in order, and
/// which are asked.
#[test]
fn this_machine_first_then_each_host_by_name_the_shown_place_known_at_once() {
    use Known::*;
    let here = vec![shown("a")];
    #[rustfmt::skip]
    let rows: Vec<(Place, Vec<String>, Groups)> = vec![
        (Place::Local, hosts(&["zeta", "devbox"]),
         vec![(Place::Local, false), (host("devbox"), true), (host("zeta"), true)]),
        // A window over --host: this machine is asked too.
        (host("devbox"), hosts(&["zeta", "devbox"]),
         vec![(Place::Local, true), (host("devbox"), false), (host("zeta"), true)]),
        // ... also when no section names the host it shows.
        (host("me@box"), hosts(&[]),
         vec![(Place::Local, true), (host("me@box"), false)]),
    ];
    for (at, configured, want) in rows {
        let p = Picker::open(at.clone(), Some(here.clone()), &configured);
        let got: Vec<(Place, bool)> = p
            .groups
            .iter()
            .map(|(pl, k)| (pl.clone(), *k == Asking))
            .collect();
        assert_eq!(got, want, "{at:?}");
        let shown_group = p.groups.iter().find(|(pl, _)| *pl == at).unwrap();
        assert_eq!(shown_group.1, Sessions(here.clone()));
        assert_eq!(
            p.asking(),
            want.iter()
                .filter(|(_, a)| *a)
                .map(|(pl, _)| pl.clone())
                .collect::<Vec<_>>()
        );
    }
}

/// Every group under its place's name; the hosts fill in as they answer,
/// a dead one marked with why, the numbers running on across groups.
#[test]
fn groups_are_headed_by_their_place_and_marked_until_and_unless_they_answer() {
    let mut p = Picker::open(
        Place::Local,
        Some(vec![shown("api"), one("web")]),
        &hosts(&["devbox", "gone", "quiet", "slow"]),
    );
    let sel = p.shown();
    assert_eq!(sel, 0);
    let (l, _) = lines(&p, sel, 80);
    assert_eq!(
        l.iter().map(|l| l.trim_end()).collect::<Vec<_>>(),
        [
            "Switch to a session:",
            "",
            " local:",
            "   > 1. api  1 tab                        (this window) /w/api",
            "     2. web  1 tab                        /w/web",
            " devbox: asking...",
            " gone: asking...",
            " quiet: asking...",
            " slow: asking...",
        ]
    );
    let sel = p.answered(&host("devbox"), Ok(vec![one("shop")]), sel);
    let sel = p.answered(
        &host("gone"),
        Err(
            "ssh: connect to host 127.0.0.1 port 9: Connection refused\r\n\x1b]52;c;eA==\x07"
                .into(),
        ),
        sel,
    );
    let sel = p.answered(&host("quiet"), Ok(vec![]), sel);
    let (l, _) = lines(&p, sel, 80);
    assert_eq!(
        l[5..].iter().map(|l| l.trim_end()).collect::<Vec<_>>(),
        [
            " devbox:",
            "     3. shop  1 tab                        /w/shop",
            " gone: no answer: ssh: connect to host 127.0.0.1 port 9: Connection refused",
            " quiet: no sessions",
            " slow: asking...",
        ]
    );
    assert_eq!(p.count(), 3);
    assert_eq!(p.asking(), [host("slow")]);
    // An answer of a place that is not listed changes nothing.
    let before = p.clone();
    assert_eq!(p.answered(&host("other"), Ok(vec![one("x")]), 2), 2);
    assert_eq!(p, before);
}

/// (the entry selected, the place answering above it) -> the same entry
/// stays selected.
#[test]
fn an_answer_above_the_selection_keeps_the_same_entry_selected() {
    // A window over --host devbox: this machine's group, above, answers
    // after the person moved to devbox's second session.
    let mut p = Picker::open(
        host("devbox"),
        Some(vec![shown("shop"), one("api")]),
        &hosts(&["devbox"]),
    );
    assert_eq!(p.shown(), 0);
    let sel = 1;
    assert_eq!(p.entries()[sel].1.name, "api");
    let sel = p.answered(&Place::Local, Ok(vec![one("x"), one("y")]), sel);
    assert_eq!(sel, 3);
    assert_eq!(p.entries()[sel].1.name, "api");
    assert_eq!(p.shown(), 2);
    let (l, at) = lines(&p, sel, 80);
    assert!(l[at].starts_with("   > 4. api"), "{l:?}");
}

/// (the window's place, entry chosen) -> what the window does.
#[test]
fn choosing_stays_switches_here_or_moves_to_the_other_place() {
    let mut p = Picker::open(
        Place::Local,
        Some(vec![shown("api"), one("web")]),
        &hosts(&["devbox"]),
    );
    p.answered(&host("devbox"), Ok(vec![one("shop")]), 0);
    #[rustfmt::skip]
    let rows = [
        (0, Chosen::Stay),
        (1, Chosen::Switch("/w/web".into())),
        (2, Chosen::Move { place: host("devbox"), folder: "/w/shop".into() }),
        // Past the end (a list that changed under a stale index).
        (3, Chosen::Stay),
    ];
    for (i, want) in rows {
        assert_eq!(p.chose(i), want, "entry {i}");
    }
    // From a window over --host, this machine's sessions are a move home.
    let mut p = Picker::open(host("devbox"), Some(vec![shown("shop")]), &hosts(&[]));
    p.answered(&Place::Local, Ok(vec![one("api")]), 0);
    assert_eq!(
        p.chose(0),
        Chosen::Move {
            place: Place::Local,
            folder: "/w/api".into()
        }
    );
    assert_eq!(p.chose(1), Chosen::Stay);
}

/// (what the far end or ssh said) -> the reason shown: one line of text.
#[test]
fn a_reason_is_one_line_of_text() {
    let long = "x".repeat(300);
    #[rustfmt::skip]
    let rows: [(&str, String); 4] = [
        ("ssh: Could not resolve hostname nowhere\n", "ssh: Could not resolve hostname nowhere".into()),
        ("first\r\n\n  second\tpart  \n", "first / second part".into()),
        ("evil \x1b]0;title\x07\x1b[31mred\x1b[0m \u{9b}2J done", "evil red 2J done".into()),
        (long.as_str(), format!("{}...", "x".repeat(200))),
    ];
    for (raw, want) in rows {
        assert_eq!(reason(raw), want, "{raw:?}");
    }
}

#[test]
fn the_selected_line_stays_in_view() {
    let l: Vec<String> = (0..10).map(|i| i.to_string()).collect();
    #[rustfmt::skip]
    let rows = [
        (3, 5, "0"),  // fits: from the top
        (4, 5, "0"),
        (5, 5, "1"),  // one below: one line off the top
        (9, 3, "7"),
    ];
    for (sel, room, first) in rows {
        let v = in_view(l.clone(), sel, room);
        assert_eq!(v[0], first, "{sel} in {room}");
        let at = v.iter().position(|l| *l == sel.to_string()).unwrap();
        assert!(at < room, "{sel} in {room}: {v:?}");
    }
}

/// (text, width) -> its lines: broken at spaces, the rest indented, a
/// word longer than a line cut.
#[test]
fn a_long_reason_wraps_under_its_place() {
    #[rustfmt::skip]
    let rows: &[(&str, usize, &[&str])] = &[
        (" gone: no answer: short", 40, &[" gone: no answer: short"]),
        (" gone: no answer: ssh could not log in to gone (ssh said: Connection refused)", 30,
         &[" gone: no answer: ssh could", "     not log in to gone (ssh", "     said: Connection refused)"]),
        (" x: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa b", 20,
         &[" x:", "     aaaaaaaaaaaaaaa", "     aaaaaaaaaaaaaaa", "     b"]),
    ];
    for (text, cols, want) in rows {
        let got = wrap(text, *cols, "     ");
        assert_eq!(got, *want, "{text:?} in {cols}");
        assert!(got.iter().all(|l| l.chars().count() <= *cols), "{got:?}");
    }
}

/// A place that answers with more sessions than anyone reads is cut at
/// MAX_SESSIONS.
#[test]
fn a_place_lists_at_most_max_sessions() {
    let mut p = Picker::open(Place::Local, Some(vec![one("a")]), &hosts(&["devbox"]));
    let many: Vec<Session> = (0..MAX_SESSIONS + 7)
        .map(|i| one(&format!("s{i}")))
        .collect();
    p.answered(&host("devbox"), Ok(many), 0);
    assert_eq!(p.count(), 1 + MAX_SESSIONS);
}
