//! Random (version 4) UUIDs, the ids nerdr gives a new conversation of an
//! agent that accepts one (`claude --session-id <uuid>`). Built on the
//! kernel's random source through `getrandom`; formatting is pure so the
//! layout is tested on fixed bytes.

/// A fresh random UUID, lowercase `xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx`.
pub fn new_v4() -> String {
    let mut bytes = [0u8; 16];
    // As `protocol::handshake::random_hex`: on Linux and macOS getrandom
    // blocks until seeded and does not fail afterwards.
    getrandom::getrandom(&mut bytes).expect("the kernel's random source is unavailable");
    format_v4(bytes)
}

/// `bytes` as a version 4, RFC 9562 variant UUID: the version nibble and
/// the two variant bits are overwritten, the other 122 bits kept.
pub fn format_v4(mut bytes: [u8; 16]) -> String {
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex = crate::protocol::handshake::hex(&bytes);
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout a UUID v4 must have, checked character by character.
    fn is_v4(s: &str) -> bool {
        let groups: Vec<&str> = s.split('-').collect();
        let lengths: Vec<usize> = groups.iter().map(|g| g.len()).collect();
        lengths == [8, 4, 4, 4, 12]
            && s.bytes()
                .filter(|&b| b != b'-')
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            && groups[2].starts_with('4')
            && groups[3].starts_with(['8', '9', 'a', 'b'])
    }

    #[test]
    fn fixed_bytes_get_the_version_and_variant_bits() {
        let rows: &[([u8; 16], &str)] = &[
            ([0; 16], "00000000-0000-4000-8000-000000000000"),
            ([0xff; 16], "ffffffff-ffff-4fff-bfff-ffffffffffff"),
            (
                [
                    0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x12, 0x34, 0x56, 0x78, 0x9a,
                    0xbc, 0xde, 0xf0,
                ],
                "12345678-9abc-4ef0-9234-56789abcdef0",
            ),
        ];
        for (bytes, want) in rows {
            let got = format_v4(*bytes);
            assert_eq!(got, *want);
            assert!(is_v4(&got), "{got}");
        }
    }

    #[test]
    fn fresh_ids_are_v4_and_differ() {
        let ids: Vec<String> = (0..32).map(|_| new_v4()).collect();
        for id in &ids {
            assert!(is_v4(id), "{id}");
        }
        let mut unique = ids.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), ids.len());
    }

    #[test]
    fn the_checker_rejects_near_misses() {
        for bad in [
            "00000000-0000-3000-8000-000000000000", // version 3
            "00000000-0000-4000-c000-000000000000", // variant bits 11
            "00000000-0000-4000-8000-00000000000",  // short last group
            "00000000-0000-4000-8000-00000000000G", // not hex
            "00000000-0000-4000-8000-00000000000A", // uppercase
        ] {
            assert!(!is_v4(bad), "{bad}");
        }
    }
}
