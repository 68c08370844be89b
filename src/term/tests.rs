use super::*;

/// Every visible cell's text and style, to compare two screens.
fn cells(s: &Screen) -> Vec<(String, vt100::Color, vt100::Color, bool)> {
    let screen = s.parser.screen();
    let (rows, cols) = screen.size();
    let mut v = Vec::new();
    for r in 0..rows {
        for c in 0..cols {
            let cell = screen.cell(r, c).unwrap();
            v.push((cell.contents(), cell.fgcolor(), cell.bgcolor(), cell.bold()));
        }
    }
    v
}

fn rebuilt(p: &Screen) -> Screen {
    let (rows, cols) = p.size();
    let mut q = Screen::new(rows, cols);
    q.process(&p.snapshot());
    q
}

#[test]
fn shrinking_keeps_the_cursor_line_and_the_newest_output() {
    let mut p = Screen::new(24, 80);
    for i in 1..=30 {
        p.process(format!("line {i}\r\n").as_bytes());
    }
    p.process(b"$ ");
    p.resize(19, 80);
    let text = p.text(None);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 19, "{text}");
    assert_eq!(lines[17], "line 30");
    assert_eq!(lines[18], "$");
    assert_eq!(p.cursor(), (18, 2));
    // Growing, or shrinking below an upper cursor, changes no lines.
    let mut q = Screen::new(24, 80);
    q.process(b"top\r\nnext");
    q.resize(10, 80);
    assert_eq!(q.text(None), "top\nnext");
    q.resize(30, 100);
    assert_eq!(q.text(None), "top\nnext");
}

#[test]
fn text_trims_and_tails() {
    let mut p = Screen::new(5, 20);
    p.process(b"one  \r\ntwo\r\nthree\r\n");
    assert_eq!(p.text(None), "one\ntwo\nthree");
    assert_eq!(p.text(Some(2)), "two\nthree");
    assert_eq!(p.text(Some(0)), "");
    // A full-screen program's redraw replaces what was there.
    p.process(b"\x1b[2J\x1b[H\x1b[3;5Hmid");
    assert_eq!(p.text(None), "\n\n    mid");
}

#[test]
fn a_main_screen_comes_back_cell_for_cell() {
    let mut p = Screen::new(6, 20);
    p.process(
        b"plain\r\n\x1b[31;1mred bold\x1b[0m \x1b[44mblue bg\x1b[0m\r\n\x1b[?25l\x1b[?2004h> ",
    );
    let q = rebuilt(&p);
    assert_eq!(cells(&q), cells(&p));
    assert_eq!(q.cursor(), p.cursor());
    let (a, b) = (p.parser.screen(), q.parser.screen());
    assert_eq!(a.hide_cursor(), b.hide_cursor());
    assert_eq!(a.bracketed_paste(), b.bracketed_paste());
}

#[test]
fn an_alternate_screen_comes_back_with_the_main_screen_behind_it() {
    let mut p = Screen::new(6, 20);
    p.process(
        b"shell line 1\r\n$ ui\x1b[?1049h\x1b[2J\x1b[H\x1b[32mFULL SCREEN UI\x1b[0m\x1b[4;7Hx",
    );
    assert!(p.alternate_screen());
    let mut q = rebuilt(&p);
    assert!(q.alternate_screen());
    assert_eq!(cells(&q), cells(&p));
    assert_eq!(q.cursor(), p.cursor());
    // When the program leaves its alternate screen, both show the same
    // main screen and cursor.
    p.process(b"\x1b[?1049l");
    q.process(b"\x1b[?1049l");
    assert!(
        q.text(None).starts_with("shell line 1\n$ ui"),
        "{:?}",
        q.text(None)
    );
    assert_eq!(cells(&q), cells(&p));
    assert_eq!(q.cursor(), p.cursor());
}

#[test]
fn painting_reproduces_the_screen_and_a_difference_is_smaller() {
    let mut p = Screen::new(5, 20);
    p.process(b"\x1b[31mred\x1b[0m\r\nplain\x1b[3;5Hx");
    let first = p.frame();
    let full = paint(&first, None);
    let mut check = Screen::new(5, 20);
    check.process(&full);
    assert_eq!(cells(&check), cells(&p));
    p.process(b"y");
    let diff = paint(&p.frame(), Some(&first));
    check.process(&diff);
    assert_eq!(cells(&check), cells(&p));
    assert_eq!(check.cursor(), p.cursor());
    assert!(diff.len() < full.len());
}

/// The paint's characters outside cells: control characters (C0, DEL, and
/// C1 as UTF-8, which xterm obeys) the painter did not put there itself.
fn foreign_controls(bytes: &[u8]) -> Vec<char> {
    String::from_utf8_lossy(bytes)
        .chars()
        .filter(|c| c.is_control() && !matches!(c, '\x1b' | '\x07' | '\r' | '\n' | '\x08'))
        .collect()
}

#[test]
fn a_title_with_c1_controls_paints_no_sequence_of_the_programs() {
    // U+009C (ST) ends the outer terminal's OSC, U+009B (CSI) and U+009D
    // (OSC) start the program's own: clear screen, a clipboard write.
    let hostile: &[&[u8]] = &[
        b"\x1b]2;x\xc2\x9c\xc2\x9b2J\x07",
        b"\x1b]0;x\xc2\x9c\xc2\x9d52\x07",
        b"\x1b]1;x\xc2\x9c\xc2\x90q\xc2\x9c\x07",
        b"\x1b]2;x\xc2\x85\xc2\x8d\x7f\x07",
    ];
    for bytes in hostile {
        let mut s = Screen::new(5, 20);
        let before = s.frame();
        s.process(bytes);
        let diff = paint(&s.frame(), Some(&before));
        let whole = paint(&s.frame(), None);
        for out in [&diff, &whole] {
            assert!(
                foreign_controls(out).is_empty(),
                "{bytes:?} painted {:?}",
                String::from_utf8_lossy(out)
            );
            assert!(
                String::from_utf8_lossy(out).contains("\x1b]"),
                "the title still goes"
            );
        }
        // A title that changes to the same cleaned text paints nothing.
        let mut t = Screen::new(5, 20);
        t.process(b"\x1b]2;ab\x07");
        let was = t.frame();
        t.process(b"\x1b]2;a\xc2\x9cb\x07");
        assert!(!String::from_utf8_lossy(&paint(&t.frame(), Some(&was))).contains("\x1b]"));
    }
}

/// A line-insert count is work for the emulator only up to the screen's
/// height: `CSI 65535 L` (8 bytes) must not cost the core (which parses
/// under its state lock, for every tab) more than a screenful. vt100
/// 0.15.2's `Grid::insert_lines` loops `count` times, allocating a row
/// each time: about 0.5 s per sequence at 500x1000 in release.
#[test]
#[ignore = "open hole (issue 17 review): vt100 insert_lines is O(count); needs clamping of CSI L/M counts before vt100 or the emulator swap"]
fn a_huge_line_insert_count_costs_no_more_than_a_screen() {
    let mut s = Screen::new(500, 1000);
    let t = std::time::Instant::now();
    s.process(&b"\x1b[65535L".repeat(4));
    assert!(
        t.elapsed() < std::time::Duration::from_millis(200),
        "{:?}",
        t.elapsed()
    );
}
