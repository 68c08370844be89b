//! Request framing and the head's size limit through the real proxy: a
//! request whose body the proxy and the server behind it could frame
//! differently, or whose head is too long, is refused before any byte of
//! it reaches the server.

use super::*;

/// Review (rev-proxy): `str::trim` took Unicode blanks off a
/// `Transfer-Encoding` token, so `chunked` followed by U+00A0 (which
/// httparse passes as obs-text) was chunked to the proxy and forwarded as
/// it was: an unknown coding to the server, which then reads the chunks
/// as requests of their own. An HTTP/1.0 request with a
/// `Transfer-Encoding` is faulty framing by RFC 9112 (6.1) for the same
/// reason.
#[test]
fn framing_a_server_reads_otherwise_is_refused_before_it_is_sent() {
    let w = world();
    let p = w.open.addr.port();
    let smuggled = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n";
    let chunks = format!("{:x}\r\n{smuggled}\r\n0\r\n\r\n", smuggled.len());
    let requests = [
        format!(
            "POST http://127.0.0.1:{p}/nbsp HTTP/1.1\r\nTransfer-Encoding: chunked\u{a0}\r\n\r\n{chunks}"
        ),
        format!(
            "POST http://127.0.0.1:{p}/em-space HTTP/1.1\r\nTransfer-Encoding: \u{2003}chunked\r\n\r\n{chunks}"
        ),
        format!(
            "POST http://127.0.0.1:{p}/old HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n{chunks}"
        ),
    ];
    for req in &requests {
        let (status, body) = send(&w, req);
        assert_eq!(status, 400, "{req:?}: {body}");
        assert!(body.contains("Transfer-Encoding"), "{req:?}: {body}");
    }
    assert!(
        w.open.seen().is_empty(),
        "a request reached the origin: {:?}",
        w.open.seen()
    );
    // The same body with the framing written plainly is relayed whole.
    let plain = format!(
        "POST http://127.0.0.1:{p}/plain HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n{chunks}"
    );
    assert_eq!(send(&w, &plain), (200, "origin saw /plain".into()));
}

/// Review (rev-proxy): a head whose whole lines fill the 64 KiB room to
/// the byte, with no blank line yet, was refused as "connection closed
/// inside a head" (the read with no room left came back empty, as at the
/// client's end of stream); it is refused as too long.
#[test]
fn a_head_that_fills_its_room_to_the_byte_is_refused_as_too_long() {
    let w = world();
    let p = w.open.addr.port();
    let room = 64 * 1024 + 2;
    let mut head = format!("GET http://127.0.0.1:{p}/ HTTP/1.1\r\n");
    let pad = (room - head.len()) % 4;
    if pad != 0 {
        head.push_str(&format!("b:{}\r\n", "x".repeat(pad)));
    }
    while head.len() < room {
        head.push_str("a:\r\n");
    }
    assert_eq!(head.len(), room);
    let (status, body) = send(&w, &format!("{head}\r\n"));
    assert_eq!(
        (status, body.as_str()),
        (400, "nerdr proxy: bad request: head longer than 64 KiB\n")
    );
    assert!(w.open.seen().is_empty(), "{:?}", w.open.seen());
}

/// Review (rev-proxy): a port written with a sign (`+443`) was read as
/// the number and the authority sent upstream as written; a port is
/// digits only, as the policy's own entries are.
#[test]
fn a_port_with_a_sign_is_refused() {
    let w = world();
    let p = w.open.addr.port();
    for req in [
        connect_req(&format!("127.0.0.1:+{p}")),
        get_req(&format!("http://127.0.0.1:+{p}/signed")),
    ] {
        let (status, body) = send(&w, &req);
        assert_eq!(status, 400, "{req:?}: {body}");
        assert!(body.contains("bad port"), "{req:?}: {body}");
    }
    assert!(w.open.seen().is_empty(), "{:?}", w.open.seen());
    assert_eq!(
        send(&w, &get_req(&format!("http://127.0.0.1:{p}/plain"))),
        (200, "origin saw /plain".into())
    );
}
