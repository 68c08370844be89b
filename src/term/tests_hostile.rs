//! A hostile program's output: what it can make the model hold, cost, or
//! send on to the person's terminal.

use std::time::Instant;

use super::*;

fn fed(rows: u16, cols: u16, bytes: &[u8]) -> Screen {
    let mut s = Screen::new(rows, cols);
    s.process(bytes);
    s
}

/// Only printable text and the painter's own CSI/ESC sequences: no other
/// control character, C1 (raw or UTF-8), OSC, DCS, APC or PM.
fn assert_only_painter_bytes(out: &[u8]) {
    let text = String::from_utf8(out.to_vec()).expect("a paint is UTF-8");
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            let n = chars.next().expect("ESC alone");
            assert!(
                matches!(n, '[' | '7' | '8' | '=' | '>' | '(' | ')' | '*' | '+'),
                "ESC {n:?} in {text:?}"
            );
            if n == '[' {
                for c in chars.by_ref() {
                    if ('\x40'..='\x7e').contains(&c) {
                        break;
                    }
                    assert!(c.is_ascii_graphic() || c == ' ', "{c:?} in a CSI");
                }
            }
            continue;
        }
        assert!(
            !c.is_control(),
            "control {c:?} reached the person's terminal: {text:?}"
        );
    }
}

#[test]
fn nothing_but_cells_reaches_the_persons_terminal() {
    let hostile: &[&[u8]] = &[
        b"\x1b]52;c;aGVsbG8=\x07a",
        b"\x1b]0;evil\x1b\\b\x1b]2;x\x07",
        b"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\",
        b"\x1bPq#0;2;0;0;0#0~~\x1b\\\x1b_Gf=100;AAAA\x1b\\\x1b^pm\x1b\\",
        b"\x1b]1337;File=inline=1:AAAA\x07",
        "\u{9b}31m\u{9d}52;c;eA==\u{9c}\u{90}x\u{9c}".as_bytes(),
        b"\x9b31m\x9d0;t\x9c\x90q\x9c\xff\xfe\xc0\xafz",
        b"\x7f\x00\x05\x0e\x0f",
        "\u{202e}rtl\u{200b}\u{2066}x\u{fe0f}".as_bytes(),
        b"\xe4\xb8",
    ];
    for bytes in hostile {
        let s = fed(5, 20, bytes);
        let out = paint(&s.frame(), None);
        assert_only_painter_bytes(&out);
        let again = fed(5, 20, &s.snapshot());
        assert_only_painter_bytes(&paint(&again.frame(), None));
    }
}

#[test]
fn a_flood_of_combining_marks_stays_small() {
    let mut bytes = b"e".to_vec();
    for _ in 0..200_000 {
        bytes.extend_from_slice("\u{301}".as_bytes());
    }
    let s = fed(5, 20, &bytes);
    let painted = paint(&s.frame(), None);
    assert!(painted.len() < 4096, "a paint of {} bytes", painted.len());
    assert!(
        s.snapshot().len() < 4096,
        "a snapshot of {} bytes",
        s.snapshot().len()
    );
    // Also after a wrap, and on the right half of a wide character.
    let mut bytes = b"\x1b[1;20Hx".to_vec();
    bytes.extend_from_slice("\x1b[2;1H中".as_bytes());
    for _ in 0..10_000 {
        bytes.extend_from_slice("\u{301}\u{200d}".as_bytes());
    }
    let s = fed(5, 20, &bytes);
    assert!(
        s.snapshot().len() < 4096,
        "a snapshot of {} bytes",
        s.snapshot().len()
    );
}

#[test]
fn a_huge_title_is_cut() {
    let mut bytes = b"\x1b]2;".to_vec();
    bytes.extend(std::iter::repeat_n(b'x', 1 << 20));
    bytes.extend_from_slice(b"\x07");
    // Pushed many times: the crate keeps a copy per push.
    bytes.extend(std::iter::repeat_n(&b"\x1b[22t"[..], 5000).flatten());
    let s = fed(5, 20, &bytes);
    assert!(
        s.title().len() <= 4096,
        "a title of {} bytes",
        s.title().len()
    );
    assert!(
        s.snapshot().len() < 8192,
        "a snapshot of {} bytes",
        s.snapshot().len()
    );
}

/// Every count-taking sequence at 65535, many times: what it makes the
/// crate print (REP's repeats are prints) stays near the bytes read. The
/// crate alone printed 65535 per REP: 129 KB took 8.7 s in a debug build.
#[test]
fn repeats_and_huge_parameters_cost_little() {
    let mut bytes = b"a".to_vec();
    bytes.extend(std::iter::repeat_n(&b"\x1b[65535b"[..], 200).flatten());
    bytes.extend(std::iter::repeat_n(&b"b\x1b[65535b\x1b[65535;65535H\x1b[65535@\x1b[65535L\x1b[65535X\x1b[65535P\x1b[65535M\x1b[65535S\x1b[65535T\x1b[65535I\x1b[65535Z"[..], 200).flatten());
    bytes.extend(
        std::iter::repeat_n(
            &b"\x1b[99999999999999999999999;9999999999999999999999999999r"[..],
            2000,
        )
        .flatten(),
    );
    let start = Instant::now();
    let mut s = Screen::new(50, 200);
    s.process(&bytes);
    eprintln!("{} bytes in {:?}", bytes.len(), start.elapsed());
    let printed = s.live().printed;
    // A REP prints at most to the line's end: 200 + 200 × 200 here.
    assert!(
        printed <= 200 * 201,
        "{} bytes printed {printed} characters",
        bytes.len()
    );
    let _ = s.snapshot();
}

/// REP as tmux 3.3a does it, each case checked in a tmux pane at 80
/// columns (`capture-pane`, `#{cursor_x},#{cursor_y}`).
#[test]
fn a_repeat_does_what_tmux_does() {
    let pad = |n: usize, s: &str| format!("{}{s}", " ".repeat(n));
    let a80 = "a".repeat(80);
    // (bytes, rows shown, cursor)
    type Case<'a> = (&'a [u8], Vec<String>, (u16, u16));
    let cases: Vec<Case> = vec![
        (b"a\x1b[200b", vec![a80.clone()], (0, 79)),
        (b"a\x1b[200bX", vec![a80.clone(), "X".into()], (1, 1)),
        (b"a\x1b[3b\x1b[3b", vec!["aaaa".into()], (0, 4)),
        (b"ab\x1b[3b", vec!["abbbb".into()], (0, 5)),
        ("中\x1b[3bZ".as_bytes(), vec!["中Z".into()], (0, 3)),
        (b"a\x1b[10C\x1b[3b", vec!["a".into()], (0, 11)),
        (b"a\r\n\x1b[3b", vec!["a".into()], (1, 0)),
        (b"a\x7f\x1b[3b", vec!["aaaa".into()], (0, 4)),
        (b"a\x1b[?7l\x1b[200b", vec!["a".into()], (0, 1)),
        (
            b"\x1b[?7l\x1b[75Ga\x1b[200bX",
            vec![pad(74, "aaaaaX")],
            (0, 79),
        ),
        (b"a\x1b[1m\x1b[3b", vec!["a".into()], (0, 1)),
        (
            b"\x1b[79Ga\x1b[3bX",
            vec![pad(78, "aa"), "X".into()],
            (1, 1),
        ),
        (b"\x1b[80Ga\x1b[3bX", vec![pad(79, "a"), "X".into()], (1, 1)),
        (b"a\x1b[0b", vec!["aa".into()], (0, 2)),
        (b"a\x1b[;3b", vec!["aa".into()], (0, 2)),
        (b"a\x1b[3;5b", vec!["aaaa".into()], (0, 4)),
        (b"a\x1b[?3b", vec!["a".into()], (0, 1)),
    ];
    for (bytes, rows, cursor) in cases {
        let s = fed(10, 80, bytes);
        let mut want = rows.clone();
        want.resize(10, String::new());
        let what = String::from_utf8_lossy(bytes);
        assert_eq!(s.rows_text(), want, "{what:?}");
        assert_eq!(s.cursor(), cursor, "{what:?}");
    }
}

/// `ESC ]` and then megabytes: dropped whole past the limit (as tmux
/// drops it), and the screen keeps working after it.
#[test]
fn an_endless_osc_is_dropped_and_the_screen_goes_on() {
    let mut s = Screen::new(5, 20);
    s.process(b"\x1b]2;kept\x07\x1b]2;");
    let chunk = vec![b'x'; 64 * 1024];
    for _ in 0..128 {
        s.process(&chunk);
    }
    s.process(b"\x07hello");
    assert_eq!(s.title(), "kept", "the 8 MiB title was not dropped");
    assert_eq!(s.text(None), "hello");
    // Ended by ESC, the next sequence is read as such.
    s.process(b"\x1b]2;");
    for _ in 0..4 {
        s.process(&chunk);
    }
    s.process(b"\x1b[2J\x1b[Hnext\x1b]2;t\x07");
    assert_eq!(s.text(None), "next");
    assert_eq!(s.title(), "t");
}

/// The crate keeps 4096 pushed titles and shifts them all per push past
/// that; here a few are kept and more pushes are dropped.
#[test]
fn pushed_titles_are_few() {
    let mut s = Screen::new(5, 20);
    for i in 0..20 {
        s.process(format!("\x1b]2;{i}\x07\x1b[22t").as_bytes());
    }
    s.process(b"\x1b]2;end\x07\x1b[23t");
    assert_eq!(s.title(), "15", "more than 16 pushes were kept");
    s.process(&b"\x1b[23t".repeat(30));
    assert_eq!(s.title(), "0");
    // And popped ones make room again.
    s.process(b"\x1b]2;again\x07\x1b[22t\x1b]2;x\x07\x1b[23t");
    assert_eq!(s.title(), "again");
}

#[test]
fn replies_carry_no_attacker_text() {
    let mut s = Screen::new(5, 20);
    s.process(b"\x1b]4;1;?;2;?\x07\x1b]10;?\x1b\\\x1b]11;rm -rf ~\x07\x1b]11;?\x07\x1bP$qm\x1b\\\x1bP+q6b6279\x1b\\\x1b[?2026$p\x1b[?12345$p");
    let r = String::from_utf8(s.take_replies()).unwrap();
    eprintln!("{r:?}");
    assert!(!r.contains("rm"), "{r:?}");
    assert!(!r.contains('\n') && !r.contains('\r'), "{r:?}");
}

/// Prints the time one read of 200 of each costs, through the screen and
/// through the crate alone (what the core did before the gate).
#[test]
#[ignore = "measurement"]
fn cost_of_each_count() {
    for seq in [
        &b"\x1b[65535b"[..],
        b"\x1b[65535I",
        b"\x1b[65535Z",
        b"\x1b[65535@",
        b"\x1b[65535L",
        b"\x1b[65535S",
        b"\x1b[65535X",
        b"\x1b[65535P",
    ] {
        let mut bytes = b"a".to_vec();
        bytes.extend(std::iter::repeat_n(seq, 200).flatten());
        let start = Instant::now();
        fed(50, 200, &bytes);
        let screen = start.elapsed();
        let start = Instant::now();
        crate_alone(50, 200, &bytes);
        eprintln!(
            "{:?}: screen {screen:?}, the crate alone {:?}",
            String::from_utf8_lossy(seq),
            start.elapsed()
        );
    }
}

fn crate_alone(rows: usize, cols: usize, bytes: &[u8]) {
    use alacritty_terminal::event::VoidListener;
    use alacritty_terminal::term::{test::TermSize, Config, Term};
    use alacritty_terminal::vte::ansi::{Processor, StdSyncHandler};
    let config = Config {
        scrolling_history: 0,
        ..Config::default()
    };
    let mut term = Term::new(config, &TermSize::new(cols, rows), VoidListener);
    let mut parser = Processor::<StdSyncHandler>::new();
    parser.advance(&mut term, bytes);
}

/// OSC 8 links are never painted, but the crate keeps each one, whole,
/// on the cells written under it: a 60 KiB link per cell made a 50×200
/// screen hold 600 MB (twice, with the alternate screen) for as many
/// bytes read, bounded by nothing but the OSC limit.
#[test]
fn links_are_not_kept_on_cells() {
    let mut s = Screen::new(5, 20);
    let uri = "x".repeat(60 * 1024);
    for _ in 0..100 {
        s.process(format!("\x1b]8;id=a;http://{uri}\x1b\\y").as_bytes());
    }
    let emu = s.live();
    let held: usize = emu
        .term
        .grid()
        .display_iter()
        .filter_map(|c| c.cell.hyperlink())
        .map(|h| h.uri().len())
        .sum();
    assert!(held < 64 * 1024, "the cells hold {held} bytes of links");
}

#[test]
#[ignore = "measurement"]
fn cost_at_the_largest_size() {
    for seq in [
        &b"abcdefgh"[..],
        b"\x1b#8",
        b"\x1b[2J",
        b"\x1b[J",
        b"\x1b[S",
        b"\x1b[65535S",
        b"\x1b[65535T",
        b"\x1b[65535L",
        b"\x1b[65535M",
        b"\x1b[?1049h\x1b[?1049l",
        b"\x1b[?47h\x1b[?47l",
        b"\x1b[?3h",
        b"\x1bc",
        b"\n",
        b"\x1b]8;;x\x07",
        b"\x1b[?5W",
    ] {
        let bytes: Vec<u8> = std::iter::repeat_n(seq, 64 * 1024 / seq.len())
            .flatten()
            .copied()
            .collect();
        let mut s = Screen::new(500, 1000);
        let start = Instant::now();
        s.process(&bytes[..4096]);
        eprintln!(
            "{:?}: 4 KiB in {:?}",
            String::from_utf8_lossy(seq),
            start.elapsed()
        );
    }
}

/// At the largest size a tab may have (500×1000), a sequence of 3 to 8
/// bytes that touches every cell: DECALN fills them, ED 2 and DECCOLM
/// clear them (the crate's `clear_viewport` first walks all of them back
/// to front), 47/1049 copy the grid. 100 of them, a few hundred bytes,
/// took seconds in a debug build, all under the core's state lock; a
/// 64 KiB read of them freezes every tab for long. tmux costs as much per
/// sequence; bounding it needs a work budget per read (or the parse out
/// of the lock), not a byte filter.
#[test]
#[ignore = "open: whole-screen operations cost O(rows×cols) per few bytes under the state lock"]
fn whole_screen_operations_cost_little_at_the_largest_size() {
    for seq in [
        &b"\x1b#8"[..],
        b"\x1b[2J",
        b"\x1b[?3h",
        b"\x1b[?1049h\x1b[?1049l",
    ] {
        let bytes = seq.repeat(100);
        let mut s = Screen::new(500, 1000);
        let start = Instant::now();
        s.process(&bytes);
        let took = start.elapsed();
        assert!(
            took < std::time::Duration::from_millis(500),
            "{} bytes of {:?} took {took:?}",
            bytes.len(),
            String::from_utf8_lossy(seq)
        );
    }
}
