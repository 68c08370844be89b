//! Queries a program sends its terminal, answered for this screen.

use super::*;

fn asked(rows: u16, cols: u16, bytes: &[u8]) -> String {
    let mut s = Screen::new(rows, cols);
    s.process(bytes);
    String::from_utf8(s.take_replies()).unwrap()
}

#[test]
fn device_attributes_and_status_are_answered() {
    assert_eq!(asked(24, 80, b"\x1b[c"), "\x1b[?1;2c");
    assert_eq!(asked(24, 80, b"\x1b[0c"), "\x1b[?1;2c");
    assert!(asked(24, 80, b"\x1b[>c").starts_with("\x1b[>0;"));
    assert_eq!(asked(24, 80, b"\x1b[5n"), "\x1b[0n");
    // Nothing asked, nothing answered.
    assert_eq!(asked(24, 80, b"plain \x1b[31mtext"), "");
}

#[test]
fn the_cursor_position_is_reported_from_one() {
    assert_eq!(asked(24, 80, b"\x1b[6n"), "\x1b[1;1R");
    assert_eq!(asked(24, 80, b"\x1b[5;10Habc\x1b[6n"), "\x1b[5;13R");
    // Clamped to this screen's size.
    assert_eq!(asked(10, 20, b"\x1b[99;99H\x1b[6n"), "\x1b[10;20R");
}

#[test]
fn the_version_is_answered_in_order_even_when_cut() {
    let v = super::query::XTVERSION;
    assert_eq!(
        v,
        concat!("\x1bP>|nerdr ", env!("CARGO_PKG_VERSION"), "\x1b\\")
    );
    assert_eq!(asked(24, 80, b"\x1b[>q"), v);
    assert_eq!(asked(24, 80, b"\x1b[>0q"), v);
    // In order with the crate's own answers.
    assert_eq!(
        asked(24, 80, b"\x1b[5n\x1b[>q\x1b[6n"),
        format!("\x1b[0n{v}\x1b[1;1R")
    );
    // A query cut between two reads, at each place.
    let q = b"ab\x1b[>0qcd\x1b[6n";
    for cut in 0..q.len() {
        let mut s = Screen::new(24, 80);
        s.process(&q[..cut]);
        s.process(&q[cut..]);
        let got = String::from_utf8(s.take_replies()).unwrap();
        assert_eq!(got, format!("{v}\x1b[1;5R"), "cut at {cut}");
    }
    // Not a query: DECSCUSR and text with 'q'.
    assert_eq!(asked(24, 80, b"\x1b[2 qquit q\x1b[>1q"), "");
}

#[test]
fn the_size_is_reported_in_cells_and_pixels() {
    assert_eq!(asked(40, 120, b"\x1b[18t"), "\x1b[8;40;120t");
    assert_eq!(asked(40, 120, b"\x1b[14t"), "\x1b[4;640;960t");
    let mut s = Screen::new(40, 120);
    s.resize(30, 100);
    s.process(b"\x1b[18t");
    assert_eq!(s.take_replies(), b"\x1b[8;30;100t");
}

#[test]
fn colours_are_answered_with_the_terminator_asked_with() {
    assert_eq!(
        asked(24, 80, b"\x1b]10;?\x07"),
        "\x1b]10;rgb:e5e5/e5e5/e5e5\x07"
    );
    assert_eq!(
        asked(24, 80, b"\x1b]11;?\x1b\\"),
        "\x1b]11;rgb:0000/0000/0000\x1b\\"
    );
    assert_eq!(
        asked(24, 80, b"\x1b]4;1;?\x07"),
        "\x1b]4;1;rgb:cdcd/0000/0000\x07"
    );
    // The 6×6×6 cube and the grey ramp of xterm's 256 colours.
    assert_eq!(
        asked(24, 80, b"\x1b]4;196;?\x1b\\"),
        "\x1b]4;196;rgb:ffff/0000/0000\x1b\\"
    );
    assert_eq!(
        asked(24, 80, b"\x1b]4;67;?\x07"),
        "\x1b]4;67;rgb:5f5f/8787/afaf\x07"
    );
    assert_eq!(
        asked(24, 80, b"\x1b]4;244;?\x07"),
        "\x1b]4;244;rgb:8080/8080/8080\x07"
    );
    // A colour the program set is the one told.
    assert_eq!(
        asked(24, 80, b"\x1b]4;5;rgb:12/34/56\x07\x1b]4;5;?\x07"),
        "\x1b]4;5;rgb:1212/3434/5656\x07"
    );
}

#[test]
fn replies_are_taken_once() {
    let mut s = Screen::new(24, 80);
    s.process(b"\x1b[5n");
    assert_eq!(s.take_replies(), b"\x1b[0n");
    assert!(s.take_replies().is_empty());
    // Answers survive compaction.
    s.process(b"\x1b[6n");
    s.compact();
    assert_eq!(s.take_replies(), b"\x1b[1;1R");
}
