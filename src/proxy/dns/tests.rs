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
