use super::*;

/// What a screen shows, colours, modes and cursor included.
fn seen(s: &Screen) -> (Vec<u8>, (u16, u16), bool, Vec<String>) {
    (
        s.snapshot(),
        s.cursor(),
        s.alternate_screen(),
        s.rows_text(),
    )
}

/// The screen a core gets back from `r`.
fn replayed(r: &Replay) -> Screen {
    let (rows, cols) = r.size();
    let mut s = Screen::new(rows, cols);
    s.process(&r.redraw());
    s
}

/// Coloured lines, a full-screen UI in the alternate screen, a title and
/// wide characters: `n` bytes or more of it.
fn busy_output(n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0u32;
    while out.len() < n {
        out.extend_from_slice(
            format!(
                "\x1b[3{}mline {i} \x1b[1;4{}mbold\x1b[0m é 字 \x1b]0;title {i}\x07\r\n",
                i % 8,
                (i + 3) % 8
            )
            .as_bytes(),
        );
        if i.is_multiple_of(97) {
            out.extend_from_slice(b"\x1b[?1049h\x1b[2J\x1b[H\x1b[42mUI\x1b[0m\x1b[5;9Hhere");
        }
        if i % 97 == 40 {
            out.extend_from_slice(b"\x1b[?1049l");
        }
        i += 1;
    }
    out
}

#[test]
fn a_core_snapshot_replaces_what_it_saw_and_keeps_what_it_did_not() {
    let mut r = Replay::new(5, 20);
    r.output(b"abc");
    r.output(b"def");
    assert_eq!(r.offset(), 6);
    assert_eq!(r.redraw(), b"abcdef");
    // The core had processed 4 bytes when it took this.
    r.snapshot_from_core(4, 5, 20, b"SNAP".to_vec()).unwrap();
    assert_eq!(r.redraw(), b"SNAPef");
    assert_eq!(r.offset(), 6);
    // The same offset again (a quiet spell with nothing new): adopted.
    r.snapshot_from_core(6, 5, 20, b"ALL".to_vec()).unwrap();
    assert_eq!(r.redraw(), b"ALL");
    assert_eq!(r.offset(), 6);
}

#[test]
fn an_idle_tab_keeps_no_room_for_its_last_burst() {
    let mut r = Replay::new(5, 20);
    r.output(&busy_output(40 << 10));
    r.snapshot_from_core(r.offset(), 5, 20, b"SNAP".to_vec())
        .unwrap();
    assert_eq!(r.kept(), 4);
    assert!(r.tail.capacity() <= 4096, "{}", r.tail.capacity());
}

#[test]
fn stale_and_future_snapshots_are_refused_and_change_nothing() {
    let mut r = Replay::new(5, 20);
    r.output(b"0123456789");
    r.snapshot_from_core(4, 5, 20, b"S4".to_vec()).unwrap();
    let before = r.clone();
    let rows: Vec<(&str, u64, Refused)> = vec![
        ("stale", 3, Refused::Stale { offset: 3, base: 4 }),
        (
            "future",
            11,
            Refused::Future {
                offset: 11,
                end: 10,
            },
        ),
    ];
    for (what, offset, want) in rows {
        assert_eq!(
            r.snapshot_from_core(offset, 5, 20, b"X".to_vec()),
            Err(want),
            "{what}"
        );
        assert_eq!(r, before, "{what}");
    }
}

#[test]
fn compaction_bounds_memory_and_keeps_the_screen_exact() {
    let out = busy_output(3 * COMPACT_AT);
    let mut model = Screen::new(24, 80);
    let mut r = Replay::new(24, 80);
    // Odd chunk sizes: sequences and characters are cut everywhere.
    for chunk in out.chunks(4093) {
        model.process(chunk);
        r.output(chunk);
        assert!(r.kept() <= COMPACT_AT + 4093 + 64 * 1024, "{}", r.kept());
    }
    assert_eq!(r.offset(), out.len() as u64);
    assert!(r.tail.len() < out.len(), "never compacted");
    assert_eq!(seen(&replayed(&r)), seen(&model));
}

#[test]
fn a_compaction_cut_inside_a_sequence_finishes_it_in_the_tail() {
    let mut model = Screen::new(4, 30);
    let mut r = Replay::new(4, 30);
    let mut out = vec![b'x'; COMPACT_AT];
    out.extend_from_slice(b"\r\n\x1b[1;3");
    model.process(&out);
    r.output(&out);
    // Compacted before the unfinished CSI, which stays raw.
    assert_eq!(r.tail, b"\x1b[1;3");
    model.process(b"1mred");
    r.output(b"1mred");
    assert_eq!(seen(&replayed(&r)), seen(&model));
}

#[test]
fn a_resize_no_snapshot_followed_is_replayed_at_its_place() {
    let mut model = Screen::new(10, 40);
    let mut r = Replay::new(10, 40);
    let before: Vec<u8> = (0..9)
        .flat_map(|i| format!("row {i}\r\n").into_bytes())
        .collect();
    model.process(&before);
    r.output(&before);
    model.resize(5, 30);
    r.resize(5, 30);
    model.process(b"\x1b[32mafter\x1b[0m");
    r.output(b"\x1b[32mafter\x1b[0m");
    assert_eq!(seen(&replayed(&r)), seen(&model));
    // Once the core's snapshot of its resized model comes, it is plain
    // bytes again.
    r.snapshot_from_core(r.offset(), 5, 30, model.snapshot())
        .unwrap();
    assert!(r.plain());
    assert_eq!(seen(&replayed(&r)), seen(&model));
}

#[test]
fn a_snapshot_taken_before_a_resize_it_arrives_after_keeps_the_resize() {
    let mut model = Screen::new(10, 40);
    let mut r = Replay::new(10, 40);
    model.process(b"one\r\ntwo");
    r.output(b"one\r\ntwo");
    let old = model.snapshot();
    // Resized at offset 8, the snapshot of 8 bytes at the old size lands
    // after it.
    model.resize(6, 20);
    r.resize(6, 20);
    r.snapshot_from_core(8, 10, 40, old).unwrap();
    assert!(!r.plain());
    assert_eq!(seen(&replayed(&r)), seen(&model));
    // Back to the snapshot's size: not nothing (the shrink cut lines).
    model.resize(10, 40);
    r.resize(10, 40);
    assert_eq!(seen(&replayed(&r)), seen(&model));
    // A resize to the size it has is nothing.
    let kept = r.clone();
    r.resize(10, 40);
    assert_eq!(r, kept);
}

#[test]
fn a_clean_prefix_never_ends_inside_a_sequence_or_character() {
    let rows: Vec<(&str, &[u8], usize)> = vec![
        ("empty", b"", 0),
        ("plain", b"hello", 5),
        ("finished CSI", b"a\x1b[31mb", 7),
        ("lone ESC", b"ab\x1b", 2),
        ("CSI without final", b"ab\x1b[1;3", 2),
        ("CSI private without final", b"ab\x1b[?104", 2),
        ("OSC without end", b"ab\x1b]0;tit", 2),
        ("OSC ended by BEL", b"ab\x1b]0;t\x07", 8),
        ("OSC ended by ST", b"ab\x1b]0;t\x1b\\", 9),
        ("OSC cut inside its ST", b"ab\x1b]0;t\x1b", 2),
        ("charset without final", b"ab\x1b(", 2),
        ("charset", b"ab\x1b(B", 5),
        ("two-byte ESC", b"ab\x1b7", 4),
        (
            "half a 2-byte character",
            "aé".as_bytes().split_last().unwrap().1,
            1,
        ),
        ("2/3 of a 3-byte character", &"a字".as_bytes()[..3], 1),
        ("whole 4-byte character", "a😀".as_bytes(), 5),
        ("3/4 of a 4-byte character", &"a😀".as_bytes()[..4], 1),
        ("character cut before a cut CSI", b"\xc3\x1b[", 0),
        ("DCS without end", b"ab\x1bPq#0", 2),
        ("DCS ended by ST", b"ab\x1bPq\x1b\\", 7),
        ("APC: BEL does not end it", b"ab\x1b_G\x07x", 2),
    ];
    for (what, bytes, want) in rows {
        assert_eq!(clean_prefix(bytes), want, "{what}");
    }
}

/// A program's sequence longer than any look-back (a DCS, an OSC, a CSI
/// with many parameters) is unfinished wherever it is cut: a snapshot
/// taken inside it and the rest replayed after would show what the
/// program hid (the string's payload as text).
#[test]
fn a_long_unfinished_sequence_is_never_a_clean_point() {
    let long = "A".repeat(4000);
    let params = "1;".repeat(2000);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("DCS", format!("ok\x1bP{long}").into_bytes()),
        ("OSC", format!("ok\x1b]2;{long}").into_bytes()),
        ("APC", format!("ok\x1b_G{long}").into_bytes()),
        ("CSI", format!("ok\x1b[{params}").into_bytes()),
    ];
    for (what, bytes) in cases {
        assert_eq!(clean_prefix(&bytes), 2, "{what}");
        // A snapshot at the clean point before the stream's end, the rest
        // replayed after it, gives the screen back.
        let mut whole = Screen::new(5, 30);
        whole.process(&bytes);
        whole.process(b"\x1b\\");
        let mut cut = Screen::new(5, 30);
        let at = clean_prefix(&bytes[..bytes.len() - 100]);
        let mut first = Screen::new(5, 30);
        first.process(&bytes[..at]);
        cut.process(&first.snapshot());
        cut.process(&bytes[at..]);
        cut.process(b"\x1b\\");
        assert_eq!(cut.rows_text(), whole.rows_text(), "{what}");
    }
    // The core's tracker sees the same across outputs of any size.
    let mut seq = Sequence::default();
    seq.feed(b"ok\x1bP");
    for _ in 0..100 {
        seq.feed(long.as_bytes());
        assert!(!seq.clean());
    }
    seq.feed(b"\x1b\\");
    assert!(seq.clean());
}

/// A program that opens a string and never ends it: the holder, with no
/// core taking snapshots, still keeps a bounded amount, compacts once per
/// [`COMPACT_AT`], and the rebuilt screen hides the string as the live one.
#[test]
fn a_never_ending_string_keeps_the_holder_bounded() {
    for open in [&b"\x1bP"[..], b"\x1b]2;", b"\x1b_G", b"\x1b[1"] {
        let mut r = Replay::new(5, 30);
        let mut model = Screen::new(5, 30);
        let start = [&b"shown"[..], open].concat();
        r.output(&start);
        model.process(&start);
        let chunk = vec![b'7'; 64 << 10];
        for _ in 0..64 {
            r.output(&chunk);
            model.process(&chunk);
            assert!(
                r.kept() < 2 * COMPACT_AT + (64 << 10),
                "{open:?}: {}",
                r.kept()
            );
        }
        r.output(b"\x1b\\ after");
        model.process(b"\x1b\\ after");
        assert_eq!(replayed(&r).rows_text(), model.rows_text(), "{open:?}");
    }
}

#[test]
fn feeding_skips_text_yet_ends_where_every_byte_would() {
    // Bytes weighted towards what changes the state: ESC, CSI and string
    // starts and ends, UTF-8 leads and continuations, CAN/SUB, text.
    const PICK: &[u8] = b"\x1b\x1b[]P\x07\x9c\x18\x1a\xc3\xe2\xf0\x80\xbf\xf5\xc1a;0m ";
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..2000 {
        let mut bytes = Vec::new();
        for _ in 0..64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            bytes.push(PICK[(x % PICK.len() as u64) as usize]);
        }
        let mut fed = Sequence::default();
        fed.feed(&bytes);
        let mut stepped = Sequence::default();
        for b in &bytes {
            stepped.byte(*b);
        }
        assert_eq!(fed, stepped, "{bytes:?}");
    }
}
