//! Painting: what a window's terminal is sent reproduces the screen.

use super::testgen::{seen, stream, Rng};
use super::*;

#[test]
fn successive_paints_reproduce_random_screens() {
    for seed in 0..300 {
        let mut rng = Rng::new(seed + 7);
        let rows = 1 + rng.below(12) as u16;
        let cols = 2 + rng.below(30) as u16;
        let mut s = Screen::new(rows, cols);
        let mut outer = Screen::new(rows, cols);
        let mut prev: Option<Frame> = None;
        for step in 0..6 {
            let n = 1 + rng.below(60) as usize;
            s.process(&stream(&mut rng, rows, cols, n));
            let now = s.frame();
            let bytes = paint(&now, prev.as_ref());
            outer.process(&bytes);
            let (a, b) = (seen(&s), seen(&outer));
            if a != b {
                let i = a.iter().zip(&b).position(|(x, y)| x != y).unwrap();
                panic!(
                    "seed {seed} step {step} ({rows}x{cols}) cell {},{}: {:?} != {:?}\npaint: {:?}",
                    i / cols as usize,
                    i % cols as usize,
                    a[i],
                    b[i],
                    String::from_utf8_lossy(&bytes)
                );
            }
            assert_eq!(outer.cursor(), s.cursor(), "seed {seed} step {step}");
            let (m, o) = (s.view().term.mode().bits(), outer.view().term.mode().bits());
            use alacritty_terminal::term::TermMode as M;
            let mirrored = (M::SHOW_CURSOR
                | M::BRACKETED_PASTE
                | M::MOUSE_MODE
                | M::SGR_MOUSE
                | M::APP_CURSOR
                | M::APP_KEYPAD
                | M::FOCUS_IN_OUT)
                .bits();
            assert_eq!(m & mirrored, o & mirrored, "seed {seed} step {step}");
            prev = Some(now);
        }
    }
}

#[test]
fn a_one_character_change_paints_a_few_bytes() {
    let mut s = Screen::new(40, 120);
    for i in 0..39 {
        s.process(format!("\x1b[3{}mline {i} of some output\x1b[m\r\n", i % 8).as_bytes());
    }
    let before = s.frame();
    let full = paint(&before, None);
    s.process(b"x");
    let diff = paint(&s.frame(), Some(&before));
    assert!(
        diff.len() < 40,
        "{} bytes: {:?}",
        diff.len(),
        String::from_utf8_lossy(&diff)
    );
    assert!(full.len() > 1000);
    // Nothing changed, nothing painted.
    let same = s.frame();
    assert_eq!(paint(&same, Some(&s.frame())), b"");
}

#[test]
fn a_full_paint_sets_the_modes_and_cursor() {
    let mut s = Screen::new(5, 20);
    s.process(b"\x1b[?2004h\x1b[?1002h\x1b[?1006h\x1b[?1h\x1b[6 q\x1b[?25l\x1b[2;3H");
    let p = String::from_utf8(paint(&s.frame(), None)).unwrap();
    for want in [
        "\x1b[?2004h",
        "\x1b[?1002h",
        "\x1b[?1006h",
        "\x1b[?1h",
        "\x1b[6 q",
        "\x1b[2;3H",
    ] {
        assert!(p.contains(want), "{want:?} in {p:?}");
    }
    assert!(!p.contains("\x1b[?25h"), "{p:?}");
    // Turning them off paints only that.
    let before = s.frame();
    s.process(b"\x1b[?2004l");
    assert_eq!(paint(&s.frame(), Some(&before)), b"\x1b[?2004l");
}
