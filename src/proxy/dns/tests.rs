use super::*;

fn reply(id: u16, rcode: u8, answers: &[(u16, &[u8])]) -> Vec<u8> {
    let mut m = encode_query(id, "a.test", TYPE_A).unwrap();
    m[2] |= 0x80;
    m[3] |= rcode;
    m[7] = answers.len() as u8;
    for (t, data) in answers {
        m.extend_from_slice(&[0xc0, 12]);
        m.extend_from_slice(&t.to_be_bytes());
        m.extend_from_slice(&[0, 1, 0, 0, 0, 60]);
        m.extend_from_slice(&(data.len() as u16).to_be_bytes());
        m.extend_from_slice(data);
    }
    m
}

#[test]
fn a_query_is_encoded_as_on_the_wire() {
    let q = encode_query(0x1234, "a.test.", TYPE_AAAA).unwrap();
    assert_eq!(
        q,
        b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x01a\x04test\x00\x00\x1c\x00\x01"
    );
    assert!(encode_query(1, "a..test", TYPE_A).is_err());
}

#[test]
fn answers_are_parsed() {
    let ip = |s: &str| s.parse::<IpAddr>().unwrap();
    let r = reply(
        7,
        0,
        &[
            (TYPE_A, &[127, 0, 0, 1]),
            (5, b"\x01x\x00"),
            (TYPE_AAAA, &[0; 16]),
        ],
    );
    assert_eq!(
        parse_answer(7, &r).unwrap(),
        Some(vec![ip("127.0.0.1"), ip("::")])
    );
    assert_eq!(parse_answer(8, &r).unwrap(), None, "another query's reply");
    let q = encode_query(7, "a.test", TYPE_A).unwrap();
    assert_eq!(parse_answer(7, &q).unwrap(), None, "a query is not a reply");
    assert_eq!(
        parse_answer(7, &reply(7, 3, &[])).unwrap_err().kind(),
        io::ErrorKind::NotFound
    );
    assert!(parse_answer(7, &reply(7, 2, &[])).is_err());
    let mut cut = reply(7, 0, &[(TYPE_A, &[1, 2, 3, 4])]);
    cut.truncate(cut.len() - 2);
    assert!(parse_answer(7, &cut).is_err());
}

#[test]
fn names_that_cannot_be_asked_are_refused() {
    let label = "a".repeat(63);
    let long = [label.as_str(); 4].join("."); // 255 bytes on the wire
    #[rustfmt::skip]
    let table: &[(&str, &str, bool)] = &[
        ("a name with a trailing dot is asked", "a.test.", true),
        ("a 63-byte label is asked", &format!("{label}.test"), true),
        ("a name of 253 characters is asked", &long[..253], true),
        ("an empty label is refused", "a..test", false),
        ("a leading dot is refused", ".a.test", false),
        ("a 64-byte label is refused", &format!("a{label}.test"), false),
        // Stricter than the hand-written encoder, which sent these.
        ("a name past 255 bytes is refused", &format!("{long}.b"), false),
        ("a name outside ASCII is refused", "bücher.test", false),
    ];
    let wrong: Vec<String> = table
        .iter()
        .filter_map(|(sentence, name, asked)| {
            let got = encode_query(1, name, TYPE_A);
            (got.is_ok() != *asked).then(|| format!("{sentence}: got {got:?}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn replies_are_read_or_refused() {
    let ip = |s: &str| s.parse::<IpAddr>().unwrap();
    let cname = reply(7, 0, &[(5, b"\x01b\xc0\x0e"), (TYPE_A, &[192, 0, 2, 1])]);
    let bad_a = reply(7, 0, &[(TYPE_A, &[1, 2, 3, 4, 5])]);
    let mut cut = reply(7, 0, &[(TYPE_A, &[1, 2, 3, 4])]);
    cut.truncate(cut.len() - 2);
    let mut not_ours = cut.clone();
    not_ours[1] ^= 1;
    let mut looped = reply(7, 0, &[]);
    looped.truncate(12);
    looped[5] = 1;
    looped.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1]);
    /// A sentence, the message, and its addresses (`None`: not ours).
    type Row<'a> = (&'a str, &'a [u8], Result<Option<Vec<IpAddr>>, ()>);
    #[rustfmt::skip]
    let table: &[Row] = &[
        ("the address behind an alias is read", &cname, Ok(Some(vec![ip("192.0.2.1")]))),
        ("an answer with no address is an empty list", &reply(7, 0, &[]), Ok(Some(vec![]))),
        ("a damaged message with another id is not ours", &not_ours, Ok(None)),
        ("a message shorter than a header is refused", &[0, 7, 0x81], Err(())),
        ("a reply cut inside an answer is refused", &cut, Err(())),
        ("a server failure is refused", &reply(7, 2, &[]), Err(())),
        // Stricter than the hand-written parser, which read past these.
        ("a name that points at itself is refused", &looped, Err(())),
        ("an IPv4 address of five bytes is refused", &bad_a, Err(())),
    ];
    let wrong: Vec<String> = table
        .iter()
        .filter_map(|(sentence, msg, want)| {
            let got = parse_answer(7, msg).map_err(|_| ());
            (&got != want).then(|| format!("{sentence}: want {want:?}, got {got:?}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
