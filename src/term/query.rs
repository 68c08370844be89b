//! The one query the crate does not see: XTVERSION (`CSI > q`, `CSI > 0 q`),
//! found in the bytes so its answer comes in order with the others.

/// `DCS > | name version ST`.
pub const XTVERSION: &str = concat!("\x1bP>|nerdr ", env!("CARGO_PKG_VERSION"), "\x1b\\");

const QUERIES: [&[u8]; 2] = [b"\x1b[>q", b"\x1b[>0q"];

/// Where in `bytes` each XTVERSION query ends. `carry` holds the start of
/// one cut off at the end of the previous bytes, and is left holding this
/// one's.
pub fn xtversion_ends(carry: &mut Vec<u8>, bytes: &[u8]) -> Vec<usize> {
    let mut ends = Vec::new();
    if !carry.is_empty() {
        let mut probe = std::mem::take(carry);
        let had = probe.len();
        probe.extend(bytes.iter().take(5 - had));
        for q in QUERIES {
            if probe.starts_with(q) {
                ends.push(q.len() - had);
            }
        }
        if ends.is_empty() && probe.len() < 5 && is_start(&probe) {
            *carry = probe;
            return ends;
        }
    }
    for i in memchr::memchr_iter(0x1b, bytes) {
        let rest = &bytes[i..];
        if QUERIES.iter().any(|q| rest.starts_with(q)) {
            let len = if rest[3] == b'q' { 4 } else { 5 };
            ends.push(i + len);
        } else if rest.len() < 5 && is_start(rest) {
            *carry = rest.to_vec();
        }
    }
    ends
}

/// Whether `b` may be the start of a query yet to be completed.
fn is_start(b: &[u8]) -> bool {
    QUERIES
        .iter()
        .any(|q| q.starts_with(b) && q.len() > b.len())
}
