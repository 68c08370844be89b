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

// Open: REP (CSI b), CHT/CBT (CSI I/Z) and ICH/DL at 65535 run per unit
// (REP: 65535 inputs per 8 bytes); 129 KB took 8.7 s in a debug build.
#[test]
#[ignore = "open: REP/CHT/CBT counts are not capped"]
fn repeats_and_huge_parameters_cost_little() {
    let mut bytes = b"a".to_vec();
    bytes.extend(std::iter::repeat_n(&b"\x1b[65535b"[..], 200).flatten());
    bytes.extend(std::iter::repeat_n(&b"\x1b[65535;65535H\x1b[65535@\x1b[65535L\x1b[65535X\x1b[65535P\x1b[65535M\x1b[65535S\x1b[65535T\x1b[65535I\x1b[65535Z"[..], 200).flatten());
    bytes.extend(
        std::iter::repeat_n(
            &b"\x1b[99999999999999999999999;9999999999999999999999999999r"[..],
            2000,
        )
        .flatten(),
    );
    let start = Instant::now();
    let s = fed(50, 200, &bytes);
    let took = start.elapsed();
    eprintln!("{} bytes in {took:?}", bytes.len());
    assert!(
        took.as_secs_f64() < 2.0,
        "{} bytes took {took:?}",
        bytes.len()
    );
    let _ = s.snapshot();
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
        eprintln!("{:?}: {:?}", String::from_utf8_lossy(seq), start.elapsed());
    }
}
