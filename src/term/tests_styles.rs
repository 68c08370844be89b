//! What the screen keeps of each cell's style, in every form programs
//! send it.

use alacritty_terminal::term::cell::{Cell, Flags};
use alacritty_terminal::vte::ansi::{Color, NamedColor, Rgb};

use super::mirror::BLINK;
use super::testgen::{rebuilt, same_state};
use super::*;

/// The first cell after feeding `sgr` then "x".
fn styled(sgr: &str) -> Cell {
    let mut s = Screen::new(3, 10);
    s.process(format!("\x1b[{sgr}mx").as_bytes());
    let cell = s.frame().cells()[0].clone();
    // Whatever is kept comes back from a snapshot, too.
    same_state(&s, &rebuilt(&s)).unwrap();
    cell
}

fn rgb(r: u8, g: u8, b: u8) -> Color {
    Color::Spec(Rgb { r, g, b })
}

#[test]
fn attributes_are_kept() {
    let table = [
        ("1", Flags::BOLD),
        ("2", Flags::DIM),
        ("3", Flags::ITALIC),
        ("4", Flags::UNDERLINE),
        ("4:1", Flags::UNDERLINE),
        ("4:2", Flags::DOUBLE_UNDERLINE),
        ("21", Flags::DOUBLE_UNDERLINE),
        ("4:3", Flags::UNDERCURL),
        ("4:4", Flags::DOTTED_UNDERLINE),
        ("4:5", Flags::DASHED_UNDERLINE),
        ("5", BLINK),
        ("6", BLINK),
        ("7", Flags::INVERSE),
        ("8", Flags::HIDDEN),
        ("9", Flags::STRIKEOUT),
        ("1;3;9", Flags::BOLD | Flags::ITALIC | Flags::STRIKEOUT),
        // Turned off again.
        ("4;4:0", Flags::empty()),
        ("4;24", Flags::empty()),
        ("5;25", Flags::empty()),
        ("1;2;22", Flags::empty()),
        ("7;27", Flags::empty()),
        ("8;28", Flags::empty()),
        ("9;29", Flags::empty()),
        ("1;3;5;0", Flags::empty()),
        // Overline: the crate does not keep it.
        ("53", Flags::empty()),
    ];
    for (sgr, flags) in table {
        assert_eq!(styled(sgr).flags, flags, "SGR {sgr}");
    }
}

#[test]
fn colours_are_kept_in_both_forms() {
    let table = [
        ("31", Color::Named(NamedColor::Red), true),
        ("91", Color::Named(NamedColor::BrightRed), true),
        ("38;5;1", Color::Indexed(1), true),
        ("38:5:200", Color::Indexed(200), true),
        ("38;2;1;2;3", rgb(1, 2, 3), true),
        ("38:2::1:2:3", rgb(1, 2, 3), true),
        ("38:2:1:2:3", rgb(1, 2, 3), true),
        ("44", Color::Named(NamedColor::Blue), false),
        ("104", Color::Named(NamedColor::BrightBlue), false),
        ("48;5;17", Color::Indexed(17), false),
        ("48:2::200:100:0", rgb(200, 100, 0), false),
        ("48;2;200;100;0", rgb(200, 100, 0), false),
    ];
    for (sgr, color, fg) in table {
        let cell = styled(sgr);
        let got = if fg { cell.fg } else { cell.bg };
        assert_eq!(got, color, "SGR {sgr}");
    }
    assert_eq!(styled("31;39").fg, Color::Named(NamedColor::Foreground));
    assert_eq!(styled("41;49").bg, Color::Named(NamedColor::Background));
}

#[test]
fn underline_colours_are_kept() {
    assert_eq!(
        styled("4;58:2::1:2:3").underline_color(),
        Some(rgb(1, 2, 3))
    );
    assert_eq!(styled("4;58;2;1;2;3").underline_color(), Some(rgb(1, 2, 3)));
    assert_eq!(
        styled("4;58;5;9").underline_color(),
        Some(Color::Indexed(9))
    );
    assert_eq!(
        styled("4;58:5:9").underline_color(),
        Some(Color::Indexed(9))
    );
    assert_eq!(styled("4;58;5;9;59").underline_color(), None);
}

#[test]
fn wide_characters_and_combining_marks_are_kept() {
    let mut s = Screen::new(3, 10);
    s.process("中e\u{301}x".as_bytes());
    let cells = s.frame().cells().to_vec();
    assert_eq!(cells[0].c, '中');
    assert!(cells[0].flags.contains(Flags::WIDE_CHAR));
    assert!(cells[1].flags.contains(Flags::WIDE_CHAR_SPACER));
    assert_eq!(cells[2].c, 'e');
    assert_eq!(cells[2].zerowidth(), Some(&['\u{301}'][..]));
    assert_eq!(s.cursor(), (0, 4));
    assert_eq!(s.rows_text()[0], "中e\u{301}x");
    same_state(&s, &rebuilt(&s)).unwrap();
}
