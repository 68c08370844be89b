use super::*;

/// What a scanner reports for `chunks` fed in order, as words.
fn scan(chunks: &[&[u8]]) -> Vec<String> {
    let mut s = Scanner::default();
    let mut out = Vec::new();
    for c in chunks {
        s.feed(c, |sig| {
            out.push(match sig {
                Signal::Bell => "bell".to_string(),
                Signal::State { state, payload } => format!("{state:?} {payload}"),
            })
        });
    }
    out
}

const CASES: &[(&str, &[u8], &[&str])] = &[
    ("plain text", b"hello world\r\n", &[]),
    ("a bell", b"ding\x07dong", &["bell"]),
    ("two bells", b"\x07\x07", &["bell", "bell"]),
    (
        "7501 ended by ST",
        b"\x1b]7501;state=working:app=codex\x1b\\",
        &["Working state=working:app=codex"],
    ),
    (
        "7501 ended by BEL, which is no bell",
        b"\x1b]7501;state=done:app=codex\x07",
        &["Done state=done:app=codex"],
    ),
    (
        "7501 blocked on a permission",
        b"\x1b]7501;state=blocked:app=codex:kind=permission\x1b\\",
        &["Blocked state=blocked:app=codex:kind=permission"],
    ),
    (
        "7501 idle, state not first",
        b"\x1b]7501;app=codex:state=idle\x07",
        &["Idle app=codex:state=idle"],
    ),
    ("7501 with an unknown state", b"\x1b]7501;state=sleeping\x07", &[]),
    ("7501 with no state", b"\x1b]7501;app=codex\x07", &[]),
    ("another OSC number", b"\x1b]75010;state=done\x07", &[]),
    ("a title OSC ended by BEL: no bell", b"\x1b]0;\xe2\x9c\xb3 Claude\x07text", &[]),
    ("a title OSC ended by ST, then a bell", b"\x1b]2;t\x1b\\\x07", &["bell"]),
    (
        "a title with 7501 in it",
        b"\x1b]0;7501;state=done\x07",
        &[],
    ),
    ("BEL inside a DCS string", b"\x1bPq#0\x07data\x1b\\\x07", &["bell"]),
    ("BEL inside APC and PM", b"\x1b_x\x07\x1b\\\x1b^y\x07\x1b\\", &[]),
    ("a CSI, then a bell", b"\x1b[31mred\x1b[0m\x07", &["bell"]),
    ("a BEL inside a CSI rings", b"\x1b[3\x07m", &["bell"]),
    ("a charset designation then ]", b"\x1b(]\x07", &["bell"]),
    (
        "ESC inside an OSC starts over",
        b"\x1b]0;title\x1b]7501;state=working\x07",
        &["Working state=working"],
    ),
    ("CAN aborts an OSC", b"\x1b]7501;state=done\x18\x07", &["bell"]),
    ("SUB aborts a DCS", b"\x1bPabc\x1a\x07", &["bell"]),
    (
        "a payload too long to be 7501's",
        b"\x1b]7501;state=done:xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\x07",
        &[],
    ),
    (
        "several in a row",
        b"\x1b]7501;state=working\x07x\x07\x1b]7501;state=done\x1b\\",
        &["Working state=working", "bell", "Done state=done"],
    ),
    (
        "UTF-8 text around",
        "✳ Claude ⠐ \x07 ❯\u{a0}".as_bytes(),
        &["bell"],
    ),
];

#[test]
fn every_case_whole() {
    for (name, bytes, want) in CASES {
        assert_eq!(scan(&[bytes]), *want, "{name}");
    }
}

#[test]
fn every_case_split_at_every_byte() {
    for (name, bytes, want) in CASES {
        for cut in 0..=bytes.len() {
            let (a, b) = bytes.split_at(cut);
            assert_eq!(scan(&[a, b]), *want, "{name}, split at {cut}");
        }
        let one_by_one: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(scan(&one_by_one), *want, "{name}, byte by byte");
    }
}

#[test]
fn the_payload_buffer_is_reused_after_a_long_osc() {
    let mut long = b"\x1b]0;".to_vec();
    long.extend(std::iter::repeat_n(b'x', 10_000));
    long.extend(b"\x07\x1b]7501;state=blocked\x07");
    assert_eq!(scan(&[&long]), vec!["Blocked state=blocked"]);
}

#[test]
fn state_fields_parse() {
    let cases: &[(&str, Option<OscState>)] = &[
        ("state=working:app=codex", Some(OscState::Working)),
        (
            "state=blocked:app=codex:kind=permission",
            Some(OscState::Blocked),
        ),
        ("app=codex:state=done", Some(OscState::Done)),
        ("state=idle", Some(OscState::Idle)),
        ("state=", None),
        ("state=Working", None),
        ("xstate=working", None),
        ("", None),
    ];
    for (payload, want) in cases {
        assert_eq!(parse_state(payload), *want, "{payload}");
    }
}
