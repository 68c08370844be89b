use super::*;

use super::testgen::{rebuilt, same_state, seen as cells};

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
    same_state(&p, &q).unwrap();
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

fn fed(rows: u16, cols: u16, bytes: &[u8]) -> Screen {
    let mut s = Screen::new(rows, cols);
    s.process(bytes);
    s
}

fn mode(s: &Screen) -> alacritty_terminal::term::TermMode {
    *s.view().term.mode()
}

#[test]
fn cursor_shape_visibility_and_title() {
    use alacritty_terminal::vte::ansi::CursorShape;
    let s = fed(5, 20, b"\x1b[5 q\x1b[?25l\x1b]2;my title\x07");
    let style = s.view().term.cursor_style();
    assert_eq!((style.shape, style.blinking), (CursorShape::Beam, true));
    assert!(!mode(&s).contains(alacritty_terminal::term::TermMode::SHOW_CURSOR));
    assert_eq!(s.title(), "my title");
    let s = fed(5, 20, b"\x1b[4 q\x1b]0;other\x1b\\");
    let style = s.view().term.cursor_style();
    assert_eq!(
        (style.shape, style.blinking),
        (CursorShape::Underline, false)
    );
    assert_eq!(s.title(), "other");
    same_state(&s, &rebuilt(&s)).unwrap();
}

#[test]
fn dec_special_graphics_draw_boxes() {
    let s = fed(5, 20, b"\x1b(0lqk\r\nx x\r\nmqj\x1b(B q");
    assert_eq!(s.text(None), "┌─┐\n│ │\n└─┘ q");
    // Through G1, shifted in and out.
    let s = fed(5, 20, b"\x1b)0a\x0elqk\x0fb");
    assert_eq!(s.text(None), "a┌─┐b");
}

#[test]
fn tab_stops_are_set_cleared_and_moved_through() {
    // Default every 8; HTS at 3; CHT two stops; CBT back.
    let mut s = fed(5, 40, b"\x1b[4G\x1bH\r\tA");
    assert_eq!(s.cursor(), (0, 4));
    s.process(b"\r\x1b[2IB");
    assert_eq!(s.cursor(), (0, 9));
    s.process(b"\x1b[2Z");
    assert_eq!(s.cursor(), (0, 3));
    assert_eq!(s.text(None), "   A    B");
    // TBC 3 clears all: a tab goes to the last column.
    s.process(b"\x1b[3g\r\n\tD");
    assert_eq!(s.rows_text()[1].trim(), "D");
    assert_eq!(s.cursor(), (1, 39));
    // A tab leaves no mark in the cells it passes.
    let s = fed(2, 20, b"a\tb");
    assert_eq!(s.frame().cells()[1].c, ' ');
}

#[test]
fn origin_mode_counts_from_the_scroll_region() {
    let mut s = fed(10, 20, b"\x1b[3;6r\x1b[?6h\x1b[1;1HX\x1b[99;1HY");
    assert_eq!(s.rows_text()[2], "X");
    assert_eq!(s.rows_text()[5], "Y");
    s.process(b"\x1b[6n");
    assert_eq!(s.take_replies(), b"\x1b[6;2R");
    // Lines scroll within the region only.
    let s = fed(
        6,
        10,
        b"top\x1b[2;4r\x1b[4;1Ha\r\nb\r\nc\x1b[r\x1b[6;1Hbottom",
    );
    assert_eq!(s.text(None), "top\na\nb\nc\n\nbottom");
}

#[test]
fn editing_sequences() {
    // DECALN fills with E.
    let s = fed(2, 3, b"\x1b#8");
    assert_eq!(s.text(None), "EEE\nEEE");
    // REP repeats the last character.
    assert_eq!(fed(2, 10, b"ab\x1b[3b").text(None), "abbbb");
    // HPA (G and `), VPA, CNL, CPL.
    assert_eq!(
        fed(4, 10, b"\x1b[5Ga\x1b[2`b\x1b[3dc").text(None),
        " b  a\n\n  c"
    );
    let s = fed(5, 10, b"\x1b[3;5H\x1b[2Ex\x1b[3Fy");
    assert_eq!(s.text(None), "\ny\n\n\nx");
    // ICH, DCH, ECH.
    assert_eq!(fed(2, 10, b"abcdef\x1b[1;2H\x1b[2@").text(None), "a  bcdef");
    assert_eq!(fed(2, 10, b"abcdef\x1b[1;2H\x1b[2P").text(None), "adef");
    assert_eq!(fed(2, 10, b"abcdef\x1b[1;2H\x1b[2X").text(None), "a  def");
    // IL and DL.
    assert_eq!(
        fed(4, 5, b"1\r\n2\r\n3\x1b[2;1H\x1b[L").text(None),
        "1\n\n2\n3"
    );
    assert_eq!(fed(4, 5, b"1\r\n2\r\n3\x1b[1;1H\x1b[M").text(None), "2\n3");
}

#[test]
fn wrapping_and_the_last_column() {
    // Writing the last column leaves the cursor there until the next
    // character, which wraps.
    let mut s = fed(3, 5, b"abcde");
    assert_eq!(s.cursor(), (0, 4));
    assert!(s.view().term.grid().cursor.input_needs_wrap);
    same_state(&s, &rebuilt(&s)).unwrap();
    s.process(b"f");
    assert_eq!(s.text(None), "abcde\nf");
    // A carriage return cancels the pending wrap.
    assert_eq!(fed(3, 5, b"abcde\rX").text(None), "Xbcde");
    // Without autowrap the last column is overwritten.
    assert_eq!(fed(3, 5, b"\x1b[?7labcdefg").text(None), "abcdg");
    // A wide character that does not fit goes to the next line.
    let s = fed(3, 5, "abcd中".as_bytes());
    assert_eq!(s.text(None), "abcd\n中");
    same_state(&s, &rebuilt(&s)).unwrap();
}

#[test]
fn alternate_screens_keep_the_main_one_behind() {
    for (on, off) in [
        ("\x1b[?1049h", "\x1b[?1049l"),
        ("\x1b[?1047h", "\x1b[?1047l"),
        ("\x1b[?47h", "\x1b[?47l"),
    ] {
        let mut s = fed(4, 10, b"main\r\n$ ");
        s.process(on.as_bytes());
        assert!(s.alternate_screen(), "{on:?}");
        s.process(b"\x1b[Halt");
        assert_eq!(s.text(None), "alt");
        same_state(&s, &rebuilt(&s)).unwrap();
        s.process(off.as_bytes());
        assert!(!s.alternate_screen());
        assert_eq!(s.text(None), "main\n$");
        assert_eq!(s.cursor(), (1, 2));
    }
}

#[test]
fn input_modes_are_kept() {
    use alacritty_terminal::term::TermMode as M;
    let table: [(&[u8], M); 9] = [
        (b"\x1b[?2004h", M::BRACKETED_PASTE),
        (b"\x1b[?1000h", M::MOUSE_REPORT_CLICK),
        (b"\x1b[?1002h", M::MOUSE_DRAG),
        (b"\x1b[?1003h", M::MOUSE_MOTION),
        (b"\x1b[?1006h", M::SGR_MOUSE),
        (b"\x1b[?1h", M::APP_CURSOR),
        (b"\x1b=", M::APP_KEYPAD),
        (b"\x1b[?1004h", M::FOCUS_IN_OUT),
        (b"\x1b[4h", M::INSERT),
    ];
    for (seq, bit) in table {
        let mut s = fed(3, 10, seq);
        assert!(mode(&s).contains(bit), "{seq:?}");
        same_state(&s, &rebuilt(&s)).unwrap();
        let off = String::from_utf8_lossy(seq)
            .replace('h', "l")
            .replace('=', ">");
        s.process(off.as_bytes());
        assert!(!mode(&s).contains(bit), "{off:?}");
    }
}

#[test]
fn compaction_is_invisible_and_small() {
    let mut s = fed(40, 120, b"\x1b[31mhello\x1b[0m\r\n$ \x1b]2;t\x07");
    let before = (s.text(None), s.cursor(), s.title(), s.snapshot());
    s.compact();
    assert!(matches!(s.model, Model::Compact { .. }));
    assert!(s.snapshot().len() < 100, "{}", s.snapshot().len());
    assert_eq!((s.text(None), s.cursor(), s.title(), s.snapshot()), before);
    s.process(b"more");
    assert!(matches!(s.model, Model::Live(_)));
    assert_eq!(s.text(None), "hello\n$ more");
}

/// The core reads it to decide how to type a long message (core::typing).
#[test]
fn bracketed_paste_is_read_live_and_compact() {
    for (bytes, want) in [
        (&b"$ "[..], false),
        (b"\x1b[?2004h> ", true),
        (b"\x1b[?2004h\x1b[?2004l> ", false),
    ] {
        let mut s = fed(5, 20, bytes);
        assert_eq!(s.bracketed_paste(), want, "live, {bytes:?}");
        s.compact();
        assert_eq!(s.bracketed_paste(), want, "compact, {bytes:?}");
    }
}

#[test]
fn back_tab_goes_to_the_line_start_past_the_first_stop_and_delete_takes_only_what_follows() {
    // Stops at 5 and 15 (1-based) only; from column 16, three back tabs
    // land on 15, 5, then the line's start.
    let mut s = Screen::new(3, 20);
    s.process(b"\x1b[3g\x1b[1;5H\x1bH\x1b[1;15H\x1bH\x1b[1;16H\x1b[3ZW");
    assert_eq!(s.text(None), "W");
    // Three deleted at the second-to-last column take the last two only.
    let mut d = Screen::new(3, 10);
    d.process(b"0123456789\x1b[1;9H\x1b[3P");
    assert_eq!(d.text(None), "01234567");
    d.process(b"\x1b[2;1Habcdefghij\x1b[2;3H\x1b[2P");
    assert_eq!(d.text(None), "01234567\nabefghij");
}
