use super::*;
use AgentState::*;

#[test]
fn what_waits_comes_before_a_tabs_warning() {
    for (note, n, want) in [
        ("", 0, "C-b ? help"),
        ("", 2, "2 waiting for your approval: C-b F3"),
        ("tab ab: setup not run", 0, "tab ab: setup not run"),
        (
            "tab ab: setup not run",
            1,
            "1 waiting for your approval: C-b F3 | tab ab: setup not run",
        ),
    ] {
        assert_eq!(status_note(note, n, "C-b"), want, "{note:?} {n}");
    }
}

fn tab(id: &str, agent: &str, state: TabState, sandboxed: bool) -> TabInfo {
    TabInfo {
        unread_reviews: 0,
        id: id.into(),
        name: String::new(),
        number: 0,
        folder: "/w".into(),
        agent: agent.into(),
        command: vec![],
        sandboxed,
        kind: Default::default(),
        parent: None,
        worktree: None,
        session_id: None,
        resumable: false,
        state,
        reason: None,
        pid: None,
        exit_code: (state == TabState::Exited).then_some(1),
        warning: None,
        agent_state: None,
        agent_state_since: None,
        bells: 0,
        spun_off_from: None,
        reviews: None,
        results_waiting: 0,
        report_due: false,
        handed_to_you: false,
        switches: Vec::new(),
        limit: None,
    }
}

fn with(mut t: TabInfo, s: Option<AgentState>, bells: u64) -> TabInfo {
    t.agent_state = s;
    t.bells = bells;
    t
}

#[test]
fn status_lines_read_right() {
    let tabs = vec![
        tab("a", "claude", TabState::Running, true),
        tab("b", "sh", TabState::Exited, false),
    ];
    let m = Marks::default();
    assert_eq!(
        plain(&status_line(&tabs, Some("a"), &m, "", 44), 44),
        " 1:claude[sb]* 2:sh exited(1)               "
    );
    assert_eq!(
        plain(&status_line(&[], None, &m, "C-b ? help", 22), 22),
        " no tabs | C-b ? help "
    );
    // Unread reviews: `@` and their count, after the other marks.
    let mut reviewed = tab("a", "claude", TabState::Running, false);
    reviewed.agent_state = Some(Idle);
    reviewed.unread_reviews = 2;
    assert_eq!(
        plain(&status_line(&[reviewed], Some("a"), &m, "", 20), 20),
        " 1:claude.*@2       "
    );
    assert_eq!(fit("abc", 5), "abc  ");
    assert_eq!(fit("abcdef", 3), "abc");
    // Wide characters count two columns; one that would cross the
    // edge is left out.
    assert_eq!(fit("日本語", 5), "日本 ");
    assert_eq!(fit("e\u{301}x", 3), "e\u{301}x ");
}

#[test]
fn a_parent_whose_spinoff_results_wait_is_marked_with_their_count() {
    let mut parent = tab("b", "sh", TabState::Exited, false);
    parent.results_waiting = 2;
    let tabs = vec![tab("a", "claude", TabState::Running, true), parent];
    let m = Marks::default();
    assert_eq!(
        plain(&status_line(&tabs, Some("a"), &m, "", 44), 44),
        " 1:claude[sb]* 2:sh exited(1)%2             "
    );
}

/// Each row: the agent state, the marks (unseen, bell), whether shown;
/// the entry's text and look.
#[test]
fn each_state_has_its_mark_and_look() {
    #[rustfmt::skip]
    type Row<'a> = (Option<AgentState>, (bool, bool), bool, &'a str, Look);
    let rows: &[Row] = &[
        (
            Some(Working),
            (false, false),
            false,
            "1:claude~",
            Look::Working,
        ),
        (
            Some(Blocked),
            (false, false),
            false,
            "1:claude!",
            Look::Blocked,
        ),
        (Some(Done), (false, false), false, "1:claude+", Look::Done),
        (Some(Idle), (false, false), false, "1:claude.", Look::Bar),
        (Some(Unknown), (false, false), false, "1:claude", Look::Bar),
        (None, (false, false), false, "1:claude", Look::Bar),
        (
            Some(Blocked),
            (false, false),
            true,
            "1:claude!*",
            Look::Blocked,
        ),
        (
            Some(Blocked),
            (true, false),
            false,
            "1:claude!#",
            Look::Blocked,
        ),
        (Some(Done), (true, true), false, "1:claude+#^", Look::Done),
        (Some(Idle), (false, true), false, "1:claude.^", Look::Bell),
        (
            Some(Working),
            (false, true),
            false,
            "1:claude~^",
            Look::Bell,
        ),
        (None, (false, true), false, "1:claude^", Look::Bell),
    ];
    for &(state, (unseen, bell), shown, text, want) in rows {
        let t = with(tab("a", "claude", TabState::Running, false), state, 0);
        let got = entry(0, &t, shown, TabMarks { unseen, bell });
        assert_eq!((got.text.as_str(), got.look), (text, want), "{state:?}");
    }
}

fn named(i: usize, s: Option<AgentState>) -> TabInfo {
    let mut t = with(
        tab(&format!("t{i}"), "claude", TabState::Running, false),
        s,
        0,
    );
    t.name = format!("claude-{}", i + 1);
    t
}

/// 13 tabs in 80 columns: a run around the shown tab, a mark on each
/// cut side with how many it hides, and a hidden blocked tab's `!`.
#[test]
fn a_crowded_line_keeps_the_shown_tab_and_marks_what_it_hides() {
    let tabs: Vec<TabInfo> = (0..13)
        .map(|i| named(i, Some(if i == 12 { Blocked } else { Idle })))
        .collect();
    let m = Marks::default();
    // (shown, the line)
    #[rustfmt::skip]
    let rows = [
        ("t0", " 1:claude-1.* 2:claude-2. 3:claude-3. 4:claude-4. 5:claude-5. >8! | C-b ? help"),
        ("t6", " <5 6:claude-6. 7:claude-7.* 8:claude-8. 9:claude-9. >4! | C-b ? help"),
        ("t12", " <9 10:claude-10. 11:claude-11. 12:claude-12. 13:claude-13!* | C-b ? help"),
    ];
    for (shown, want) in rows {
        let line = plain(&status_line(&tabs, Some(shown), &m, "C-b ? help", 80), 80);
        assert_eq!(line.trim_end(), want, "{shown}");
        assert!(line.chars().count() == 80);
    }
    // The mark of a hidden blocked tab stands out like the tab would.
    let spans = status_line(&tabs, Some("t0"), &m, "", 80);
    let mark = spans.iter().find(|s| s.text.starts_with('>')).unwrap();
    assert_eq!((mark.text.as_str(), mark.look), (">7!", Look::Blocked));
    // Room enough: every tab, no mark.
    let line = plain(&status_line(&tabs[..2], Some("t0"), &m, "", 80), 80);
    assert_eq!(line.trim_end(), " 1:claude-1.* 2:claude-2.");
}

/// 13 tabs in 80 columns and a note to act on (a stopped tab's keys,
/// a reconnect): the note is read whole; the tabs keep a quarter of
/// the line at least, with the shown one and the marks.
#[test]
fn a_crowded_line_still_reads_a_note_whole() {
    let mut tabs: Vec<TabInfo> = (0..13).map(|i| named(i, Some(Idle))).collect();
    tabs[11] = with(tab("t11", "sh", TabState::Exited, false), None, 0);
    tabs[11].name = "sh-1".into();
    tabs[11].exit_code = Some(0);
    let hint = stopped_hint(&tabs[11], "C-b").unwrap();
    let m = Marks::default();
    for note in [
        hint.as_str(),
        "reconnecting to the core (3 s): connection refused",
        "lost the core (connection closed): reconnecting...",
    ] {
        let line = plain(&status_line(&tabs, Some("t11"), &m, note, 80), 80);
        assert!(line.trim_end().ends_with(note), "{line:?}");
        assert!(line.contains("12:sh-1 exited(0)*"), "{line:?}");
        assert!(line.starts_with(" <"), "{line:?}");
    }
    // The help hint leaves the tabs their room, as before.
    let line = plain(&status_line(&tabs, Some("t11"), &m, "C-b ? help", 80), 80);
    assert!(line.contains("10:claude-10"), "{line:?}");
}

/// (text, columns, what shows)
#[test]
fn a_long_note_is_cut_at_a_word_with_a_mark() {
    #[rustfmt::skip]
    let rows: &[(&str, usize, &str)] = &[
        ("short", 10, "short"),
        ("exactly ten", 11, "exactly ten"),
        ("config error: unknown key `reviw` in [agents.claude]", 30, "config error: unknown key ..."),
        ("config error: unknown key `reviw` in [agents.claude]", 29, "config error: unknown key ..."),
        ("config error: unknown key `reviw` in [agents.claude]", 28, "config error: unknown ..."),
        ("abcdefghijkl", 8, "abcde..."),
        ("abc defghijkl", 8, "abc ..."),
        ("a b", 0, "..."),
    ];
    for (text, cols, want) in rows {
        let got = elide_words(text, *cols);
        assert_eq!(got, *want, "{text:?} in {cols}");
        assert!(got.chars().count() <= (*cols).max(3), "{got:?}");
    }
    // In the line: the note's last word is whole, and the mark shows.
    let tabs = vec![tab("a", "sh", TabState::Running, false)];
    let note = "config error (see nerdr doctor): /h/config.toml: line 3: \
                unknown field `reviw`, expected one of `command`, `review`";
    let line = plain(
        &status_line(&tabs, Some("a"), &Marks::default(), note, 80),
        80,
    );
    assert!(line.trim_end().ends_with(" ..."), "{line:?}");
    let shown = line.trim_end().trim_end_matches(" ...");
    assert!(note.contains(&shown[shown.find("config").unwrap()..]));
    let last = shown.rsplit(' ').next().unwrap();
    assert!(note.split(' ').any(|w| w == last), "cut mid-word: {line:?}");
}

#[test]
fn a_stopped_tab_says_which_keys_bring_it_back() {
    let mut t = tab("a", "sh", TabState::Exited, false);
    t.name = "sh-1".into();
    assert_eq!(
        stopped_hint(&t, "C-b").as_deref(),
        Some("sh-1 exited(1): C-b R restarts, C-b x closes")
    );
    t.state = TabState::Refused;
    assert_eq!(
        stopped_hint(&t, "C-a").as_deref(),
        Some("sh-1 was refused: C-a R restarts, C-a x closes")
    );
    for state in [TabState::Running, TabState::Starting] {
        t.state = state;
        assert_eq!(stopped_hint(&t, "C-b"), None);
    }
}

#[test]
fn names_and_notes_cannot_smuggle_escapes() {
    let t = tab("a", "evil\x1b[2J", TabState::Running, false);
    let spans = status_line(&[t], None, &Marks::default(), "n\x07", 40);
    let text = plain(&spans, 40);
    assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
}

#[test]
fn rendering_colours_the_states_and_fills_the_width() {
    let tabs = vec![
        with(tab("a", "sh", TabState::Running, false), Some(Idle), 0),
        with(tab("b", "cc", TabState::Running, false), Some(Blocked), 0),
    ];
    let spans = status_line(&tabs, Some("a"), &Marks::default(), "", 80);
    let bytes = render(&spans, 20);
    let mut p = vt100::Parser::new(1, 20, 0);
    p.process(&bytes);
    let s = p.screen();
    assert_eq!(s.contents().trim_end(), " 1:sh.* 2:cc!");
    // The bar is reverse video; the blocked tab white on red, bold.
    assert!(s.cell(0, 1).unwrap().inverse());
    let b = s.cell(0, 8).unwrap();
    assert_eq!(b.contents(), "2");
    assert_eq!(b.bgcolor(), vt100::Color::Idx(1));
    assert!(b.bold() && !b.inverse());
    // Padded to the edge in the bar's look.
    assert!(s.cell(0, 19).unwrap().inverse());
    // Cut exactly at the width.
    let mut p = vt100::Parser::new(1, 20, 0);
    p.process(&render(&spans, 6));
    assert_eq!(p.screen().contents(), " 1:sh.");
}

#[test]
fn every_legend_line_fits_80_columns() {
    for line in super::LEGEND {
        assert!(line.chars().count() <= 80, "{line:?}");
    }
}

#[test]
fn a_spinoff_whose_turn_ended_unreported_is_marked() {
    let mut child = tab("b", "claude", TabState::Running, false);
    child.report_due = true;
    let tabs = vec![tab("a", "claude", TabState::Running, false), child];
    let m = Marks::default();
    assert_eq!(
        plain(&status_line(&tabs, Some("a"), &m, "", 24), 24),
        " 1:claude* 2:claude?    "
    );
}

#[test]
fn a_tab_that_handed_its_work_to_the_person_is_marked() {
    let mut handed = tab("b", "claude", TabState::Running, false);
    handed.handed_to_you = true;
    let tabs = vec![tab("a", "claude", TabState::Running, false), handed];
    let m = Marks::default();
    assert_eq!(
        plain(&status_line(&tabs, Some("a"), &m, "", 24), 24),
        " 1:claude* 2:claude&    "
    );
}
